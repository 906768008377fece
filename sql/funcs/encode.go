package funcs

import (
	"crypto/md5"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// Digests and binary encodings (R-Q3): md5 (text), sha224/256/384/512
// (bytea), encode/decode in PostgreSQL's hex, base64 and escape formats.
func init() {
	text, bytea := types.Text, types.Bytea
	md5Fn := func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		sum := md5.Sum([]byte(a[0].S))
		return types.NewText(hex.EncodeToString(sum[:])), nil
	}
	pure("md5", strict(params(text), text, md5Fn), strict(params(bytea), text, md5Fn))
	digest := func(name string, sum func([]byte) []byte) {
		pure(name, strict(params(bytea), bytea, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			return types.NewBytea(sum([]byte(a[0].S))), nil
		}))
	}
	digest("sha224", func(b []byte) []byte { s := sha256.Sum224(b); return s[:] })
	digest("sha256", func(b []byte) []byte { s := sha256.Sum256(b); return s[:] })
	digest("sha384", func(b []byte) []byte { s := sha512.Sum384(b); return s[:] })
	digest("sha512", func(b []byte) []byte { s := sha512.Sum512(b); return s[:] })
	pure("encode", strict(params(bytea, text), text, func(c *Ctx, a []types.Datum) (types.Datum, error) {
		// A copy of the bytes and a text of up to four times them
		// (escape; base64 builds its lines from a first encoding).
		held, err := c.Reserve("function encode", 5*int64(len(a[0].S)))
		if err != nil {
			return types.Datum{}, err
		}
		defer c.Release(held)
		b := []byte(a[0].S)
		switch strings.ToLower(a[1].S) {
		case "hex":
			return types.NewText(hex.EncodeToString(b)), nil
		case "base64":
			return types.NewText(base64Lines(b)), nil
		case "escape":
			return types.NewText(escapeBytea(b)), nil
		}
		return types.Datum{}, unknownEncoding(a[1].S)
	}))
	pure("decode", strict(params(text, text), bytea, func(c *Ctx, a []types.Datum) (types.Datum, error) {
		held, err := c.Reserve("function decode", 2*int64(len(a[0].S)))
		if err != nil {
			return types.Datum{}, err
		}
		defer c.Release(held)
		s := a[0].S
		switch strings.ToLower(a[1].S) {
		case "hex":
			return decodeHex(s)
		case "base64":
			return decodeBase64(s)
		case "escape":
			return decodeEscape(s)
		}
		return types.Datum{}, unknownEncoding(a[1].S)
	}))
}

func unknownEncoding(name string) error {
	return pgerror.New(pgerror.InvalidParameterValue, "unrecognized encoding: \"%s\"", name)
}

// base64Lines is base64 with a newline after every 76 characters, as
// PostgreSQL's encode writes it.
func base64Lines(b []byte) string {
	s := base64.StdEncoding.EncodeToString(b)
	var out strings.Builder
	for len(s) > 76 {
		out.WriteString(s[:76])
		out.WriteByte('\n')
		s = s[76:]
	}
	out.WriteString(s)
	return out.String()
}

// escapeBytea writes zero bytes and bytes with the high bit set as \ooo
// and doubles backslashes.
func escapeBytea(b []byte) string {
	var out strings.Builder
	for _, c := range b {
		switch {
		case c == '\\':
			out.WriteString(`\\`)
		case c == 0 || c >= 0x80:
			fmt.Fprintf(&out, `\%03o`, c)
		default:
			out.WriteByte(c)
		}
	}
	return out.String()
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// decodeHex reads pairs of hex digits; whitespace between pairs is skipped.
func decodeHex(s string) (types.Datum, error) {
	out := make([]byte, 0, len(s)/2)
	for i := 0; i < len(s); {
		c := s[i]
		if c == ' ' || c == '\n' || c == '\t' || c == '\r' {
			i++
			continue
		}
		hi, ok := hexVal(c)
		if !ok {
			return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "invalid hexadecimal digit: \"%s\"", s[i:i+utf8Len(s[i:])])
		}
		if i+1 >= len(s) {
			return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "invalid hexadecimal data: odd number of digits")
		}
		lo, ok := hexVal(s[i+1])
		if !ok {
			return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "invalid hexadecimal digit: \"%s\"", s[i+1:i+1+utf8Len(s[i+1:])])
		}
		out = append(out, hi<<4|lo)
		i += 2
	}
	return types.NewBytea(out), nil
}

func utf8Len(s string) int {
	for i := range s {
		if i > 0 {
			return i
		}
	}
	return len(s)
}

// decodeBase64 reads base64, skipping whitespace, with PostgreSQL's
// messages for a bad symbol or end.
func decodeBase64(s string) (types.Datum, error) {
	var clean []byte
	pad := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\n' || c == '\t' || c == '\r':
			continue
		case c == '=':
			pad++
		case c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/':
			if pad > 0 {
				return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "invalid base64 end sequence").
					WithHint("Input data is missing padding, is truncated, or is otherwise corrupted.")
			}
		default:
			return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "invalid symbol \"%s\" found while decoding base64 sequence", s[i:i+utf8Len(s[i:])])
		}
		clean = append(clean, c)
	}
	if len(clean)%4 != 0 || pad > 2 {
		return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "invalid base64 end sequence").
			WithHint("Input data is missing padding, is truncated, or is otherwise corrupted.")
	}
	out, err := base64.StdEncoding.DecodeString(string(clean))
	if err != nil {
		return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "invalid base64 end sequence").
			WithHint("Input data is missing padding, is truncated, or is otherwise corrupted.")
	}
	return types.NewBytea(out), nil
}

// decodeEscape reads bytea's escape format: \\ and \ooo.
func decodeEscape(s string) (types.Datum, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		switch {
		case i+1 < len(s) && s[i+1] == '\\':
			out = append(out, '\\')
			i++
		case i+3 < len(s) && isOct(s[i+1], '3') && isOct(s[i+2], '7') && isOct(s[i+3], '7'):
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 3
		default:
			return types.Datum{}, pgerror.New(pgerror.InvalidTextRepresentation, "invalid input syntax for type bytea")
		}
	}
	return types.NewBytea(out), nil
}

func isOct(c, hi byte) bool { return c >= '0' && c <= hi }
