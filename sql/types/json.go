package types

import (
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
)

// json and jsonb (PostgreSQL's two JSON types). A json value is its input
// text, validated; a jsonb value is its normalized text: objects keep the
// last of duplicate keys, sorted shorter first and then bytewise, numbers
// in numeric's output form, and ", " / ": " between items, as jsonb's
// output shows them. Both are held in Datum.S.

// JSONKind is the kind of a parsed JSON value.
type JSONKind uint8

// JSON value kinds.
const (
	JSONNull JSONKind = iota
	JSONBool
	JSONNumber
	JSONString
	JSONArray
	JSONObject
)

// JSONValue is a parsed JSON value. Raw is its text in the input (json's
// operators return it as it was written); Str the decoded string of a
// string, the number's text of a number; Keys and Elems the members.
type JSONValue struct {
	Kind  JSONKind
	Raw   string
	Str   string
	Bool  bool
	Keys  []string
	Elems []*JSONValue
}

// Field is the value of an object's key (the last one, as jsonb keeps).
func (v *JSONValue) Field(k string) (*JSONValue, bool) {
	if v.Kind != JSONObject {
		return nil, false
	}
	for i := len(v.Keys) - 1; i >= 0; i-- {
		if v.Keys[i] == k {
			return v.Elems[i], true
		}
	}
	return nil, false
}

// Index is an array's element i, counted from the end when negative.
func (v *JSONValue) Index(i int) (*JSONValue, bool) {
	if v.Kind != JSONArray {
		return nil, false
	}
	if i < 0 {
		i += len(v.Elems)
	}
	if i < 0 || i >= len(v.Elems) {
		return nil, false
	}
	return v.Elems[i], true
}

func jsonSyntax(s, detail string) error {
	e := pgerror.New(pgerror.InvalidTextRepresentation, "invalid input syntax for type json").WithDetail("%s", detail)
	e.Where = "JSON data, line 1: " + s + "..."
	return e
}

// ParseJSON parses a JSON text (22P02 on a syntax error, with
// PostgreSQL's words).
func ParseJSON(s string) (*JSONValue, error) {
	p := &jsonParser{s: s}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, p.tokenErr()
	}
	return v, nil
}

type jsonParser struct {
	s string
	i int
}

const maxJSONDepth = 6400

func (p *jsonParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

// tokenErr reports the token at p.i as PostgreSQL does.
func (p *jsonParser) tokenErr() error {
	if p.i >= len(p.s) {
		return jsonSyntax(p.s, "The input string ended unexpectedly.")
	}
	j := p.i
	for j < len(p.s) && (isJSONWordByte(p.s[j])) {
		j++
	}
	if j == p.i {
		_, n := utf8.DecodeRuneInString(p.s[p.i:])
		j = p.i + n
	}
	return jsonSyntax(p.s[:j], "Token \""+p.s[p.i:j]+"\" is invalid.")
}

func isJSONWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '+' || c == '.' || c >= 0x80
}

func (p *jsonParser) value(depth int) (*JSONValue, error) {
	if depth > maxJSONDepth {
		return nil, pgerror.New(pgerror.StatementTooComplex, "stack depth limit exceeded")
	}
	if p.i >= len(p.s) {
		return nil, p.tokenErr()
	}
	start := p.i
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		v := &JSONValue{Kind: JSONObject}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			v.Raw = p.s[start:p.i]
			return v, nil
		}
		for {
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != '"' {
				return nil, p.tokenErr()
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, p.tokenErr()
			}
			p.i++
			p.space()
			e, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.Keys, v.Elems = append(v.Keys, k.Str), append(v.Elems, e)
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				v.Raw = p.s[start:p.i]
				return v, nil
			}
			return nil, p.tokenErr()
		}
	case c == '[':
		p.i++
		v := &JSONValue{Kind: JSONArray}
		p.space()
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			v.Raw = p.s[start:p.i]
			return v, nil
		}
		for {
			p.space()
			e, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.Elems = append(v.Elems, e)
			p.space()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.s) && p.s[p.i] == ']' {
				p.i++
				v.Raw = p.s[start:p.i]
				return v, nil
			}
			return nil, p.tokenErr()
		}
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		for _, w := range []struct {
			word string
			v    JSONValue
		}{{"true", JSONValue{Kind: JSONBool, Bool: true}}, {"false", JSONValue{Kind: JSONBool}}, {"null", JSONValue{Kind: JSONNull}}} {
			if strings.HasPrefix(p.s[p.i:], w.word) && (p.i+len(w.word) == len(p.s) || !isJSONWordByte(p.s[p.i+len(w.word)])) {
				p.i += len(w.word)
				v := w.v
				v.Raw = w.word
				return &v, nil
			}
		}
		return nil, p.tokenErr()
	}
}

func (p *jsonParser) number() (*JSONValue, error) {
	start := p.i
	j := p.i
	if j < len(p.s) && p.s[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		return j - k
	}
	bad := func() (*JSONValue, error) {
		for j < len(p.s) && isJSONWordByte(p.s[j]) {
			j++
		}
		return nil, jsonSyntax(p.s[:j], "Token \""+p.s[start:j]+"\" is invalid.")
	}
	if n := digits(); n == 0 || n > 1 && p.s[start] == '0' || n > 1 && p.s[start] == '-' && p.s[start+1] == '0' {
		return bad()
	}
	if j < len(p.s) && p.s[j] == '.' {
		j++
		if digits() == 0 {
			return bad()
		}
	}
	if j < len(p.s) && (p.s[j] == 'e' || p.s[j] == 'E') {
		j++
		if j < len(p.s) && (p.s[j] == '+' || p.s[j] == '-') {
			j++
		}
		if digits() == 0 {
			return bad()
		}
	}
	if j < len(p.s) && isJSONWordByte(p.s[j]) {
		return bad()
	}
	p.i = j
	return &JSONValue{Kind: JSONNumber, Raw: p.s[start:j], Str: p.s[start:j]}, nil
}

func (p *jsonParser) str() (*JSONValue, error) {
	start := p.i
	p.i++
	var b strings.Builder
	for {
		if p.i >= len(p.s) {
			return nil, jsonSyntax(p.s, "The input string ended unexpectedly.")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return &JSONValue{Kind: JSONString, Raw: p.s[start:p.i], Str: b.String()}, nil
		case c < 0x20:
			return nil, jsonSyntax(p.s[:p.i+1], "Character with value 0x"+strconv.FormatInt(int64(c)|0x100, 16)[1:]+" must be escaped.")
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return nil, jsonSyntax(p.s, "The input string ended unexpectedly.")
			}
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, ok := p.hex4()
				if !ok {
					return nil, jsonSyntax(p.s[:min(p.i, len(p.s))], "\"\\u\" must be followed by four hexadecimal digits.")
				}
				if utf16.IsSurrogate(r) {
					if strings.HasPrefix(p.s[p.i:], "\\u") {
						p.i += 2
						r2, ok := p.hex4()
						if !ok {
							return nil, jsonSyntax(p.s[:min(p.i, len(p.s))], "\"\\u\" must be followed by four hexadecimal digits.")
						}
						r = utf16.DecodeRune(r, r2)
					}
					if r == utf8.RuneError {
						return nil, jsonSyntax(p.s[:p.i], "Unicode low surrogate must follow a high surrogate.")
					}
				}
				if r == 0 {
					return nil, pgerror.New(pgerror.UntranslatableCharacter, "unsupported Unicode escape sequence").
						WithDetail("\\u0000 cannot be converted to text.")
				}
				b.WriteRune(r)
			default:
				return nil, jsonSyntax(p.s[:p.i], "Escape sequence \"\\"+string(e)+"\" is invalid.")
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	n, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

// NormalizeJSONB is the jsonb text of v.
func NormalizeJSONB(v *JSONValue) string {
	return string(AppendJSONB(nil, v))
}

// AppendJSONB appends v as jsonb shows it.
func AppendJSONB(buf []byte, v *JSONValue) []byte {
	switch v.Kind {
	case JSONNull:
		return append(buf, "null"...)
	case JSONBool:
		if v.Bool {
			return append(buf, "true"...)
		}
		return append(buf, "false"...)
	case JSONNumber:
		if d, _, err := apd.NewFromString(v.Str); err == nil {
			return appendNumeric(buf, NewNumeric(d))
		}
		return append(buf, v.Str...)
	case JSONString:
		return AppendJSONString(buf, v.Str)
	case JSONArray:
		buf = append(buf, '[')
		for i, e := range v.Elems {
			if i > 0 {
				buf = append(buf, ", "...)
			}
			buf = AppendJSONB(buf, e)
		}
		return append(buf, ']')
	}
	// Object: the last of duplicate keys, shorter keys first.
	last := map[string]int{}
	for i, k := range v.Keys {
		last[k] = i
	}
	keys := make([]string, 0, len(last))
	for k := range last {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) < len(keys[j])
		}
		return keys[i] < keys[j]
	})
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ", "...)
		}
		buf = AppendJSONString(buf, k)
		buf = append(buf, ": "...)
		buf = AppendJSONB(buf, v.Elems[last[k]])
	}
	return append(buf, '}')
}

// AppendJSONString appends s as a JSON string literal, escaped as
// PostgreSQL's escape_json does.
func AppendJSONString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			buf = append(buf, '\\', '"')
		case '\\':
			buf = append(buf, '\\', '\\')
		case '\b':
			buf = append(buf, '\\', 'b')
		case '\f':
			buf = append(buf, '\\', 'f')
		case '\n':
			buf = append(buf, '\\', 'n')
		case '\r':
			buf = append(buf, '\\', 'r')
		case '\t':
			buf = append(buf, '\\', 't')
		default:
			if c < 0x20 {
				buf = append(buf, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
			} else {
				buf = append(buf, c)
			}
		}
	}
	return append(buf, '"')
}
