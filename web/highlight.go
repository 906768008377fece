package web

import (
	"fmt"
	"html"
	"html/template"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A small SQL highlighter for the dataset page: it splits the text into
// keywords, identifiers, strings, numbers, comments and punctuation; the
// page colours them by class. It never fails: text it does not recognise
// is plain.

type tokenClass string

const (
	tokKeyword tokenClass = "kw"
	tokIdent   tokenClass = "id"
	tokString  tokenClass = "str"
	tokNumber  tokenClass = "num"
	tokComment tokenClass = "com"
	tokPunct   tokenClass = "op"
	tokSpace   tokenClass = ""
)

type sqlToken struct {
	class tokenClass
	text  string
	pos   int // 0-based rune offset in the text
}

var sqlKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`
		select from where group by having order limit offset as and or not in is null
		true false case when then else end join inner left right full outer cross on
		using union all intersect except distinct with recursive over partition rows
		range between preceding following unbounded current row window qualify asc desc
		nulls first last interval cast exists any some like ilike similar escape
		values lateral semi anti filter within create materialized view streaming table
		refresh schedule cron every trigger update at most time zone policy auto
		incremental strict tblproperties comment partitioned cluster constraint expect
		check violation fail drop insert delete into set stream hour hours day days
		week weeks minute minutes second seconds date timestamp
	`) {
		sqlKeywords[k] = true
	}
}

// tokenizeSQL splits text into tokens that concatenate back to text.
func tokenizeSQL(text string) []sqlToken {
	var out []sqlToken
	pos := 0 // rune offset
	i := 0   // byte offset
	emit := func(class tokenClass, end int) {
		s := text[i:end]
		out = append(out, sqlToken{class: class, text: s, pos: pos})
		pos += utf8.RuneCountInString(s)
		i = end
	}
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		rest := text[i:]
		switch {
		case unicode.IsSpace(r):
			j := i
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if !unicode.IsSpace(r2) {
					break
				}
				j += s2
			}
			emit(tokSpace, j)
		case strings.HasPrefix(rest, "--"):
			j := strings.IndexByte(rest, '\n')
			if j < 0 {
				j = len(rest)
			}
			emit(tokComment, i+j)
		case strings.HasPrefix(rest, "/*"):
			j := strings.Index(rest[2:], "*/")
			if j < 0 {
				emit(tokComment, len(text))
			} else {
				emit(tokComment, i+2+j+2)
			}
		case r == '\'' || ((r == 'E' || r == 'e') && strings.HasPrefix(rest[1:], "'")):
			start := 1
			if r != '\'' {
				start = 2
			}
			emit(tokString, i+quotedEnd(rest, start, '\'', r != '\''))
		case r == '"' || r == '`':
			emit(tokIdent, i+quotedEnd(rest, 1, byte(r), false))
		case r >= '0' && r <= '9' || (r == '.' && len(rest) > 1 && rest[1] >= '0' && rest[1] <= '9'):
			j := 0
			for j < len(rest) && (rest[j] >= '0' && rest[j] <= '9' || rest[j] == '.' || rest[j] == 'e' || rest[j] == 'E' ||
				((rest[j] == '+' || rest[j] == '-') && j > 0 && (rest[j-1] == 'e' || rest[j-1] == 'E'))) {
				j++
			}
			emit(tokNumber, i+j)
		case r == '_' || unicode.IsLetter(r):
			j := i
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				if r2 != '_' && r2 != '$' && !unicode.IsLetter(r2) && !unicode.IsDigit(r2) {
					break
				}
				j += s2
			}
			class := tokIdent
			if sqlKeywords[strings.ToLower(text[i:j])] {
				class = tokKeyword
			}
			emit(class, j)
		default:
			emit(tokPunct, i+size)
		}
	}
	return out
}

// quotedEnd is the byte length of the quoted token at the start of s whose
// body starts at from: a doubled quote is one quote; with backslash, a
// backslash escapes the next byte (E'…' strings). Unterminated: all of s.
func quotedEnd(s string, from int, q byte, backslash bool) int {
	for j := from; j < len(s); j++ {
		switch {
		case backslash && s[j] == '\\':
			j++
		case s[j] == q:
			if j+1 < len(s) && s[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(s)
}

// sqlMark is a place in the text to flag: a blocker's construct.
type sqlMark struct {
	Pos   int // 1-based character position (refresh.Blocker.Position)
	Label string
	Title string
}

// highlightSQL renders text as HTML spans; the token at each mark's
// position is wrapped in a <mark> with its label and title.
func highlightSQL(text string, marks []sqlMark) template.HTML {
	var b strings.Builder
	for _, t := range tokenizeSQL(text) {
		n := utf8.RuneCountInString(t.text)
		var hits []sqlMark
		for _, m := range marks {
			if m.Pos-1 >= t.pos && m.Pos-1 < t.pos+n {
				hits = append(hits, m)
			}
		}
		if len(hits) > 0 {
			var titles []string
			for _, h := range hits {
				titles = append(titles, h.Title)
			}
			fmt.Fprintf(&b, `<mark class="blocker" title="%s">`, html.EscapeString(strings.Join(titles, "\n")))
		}
		if t.class == tokSpace {
			b.WriteString(html.EscapeString(t.text))
		} else {
			fmt.Fprintf(&b, `<span class="%s">%s</span>`, t.class, html.EscapeString(t.text))
		}
		if len(hits) > 0 {
			var labels []string
			for _, h := range hits {
				labels = append(labels, h.Label)
			}
			fmt.Fprintf(&b, `<sup>%s</sup></mark>`, html.EscapeString(strings.Join(labels, ",")))
		}
	}
	return template.HTML(b.String())
}
