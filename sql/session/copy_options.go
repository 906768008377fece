package session

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/copyfmt"
	"github.com/mvserver/mvserver/sql/parse"
)

// COPY's option list (R-T2), checked as PostgreSQL 15's ProcessCopyOptions
// does: the same checks in the same order, with its SQLSTATEs, messages and
// positions. Both spellings reach here as pg_query DefElems: the list in
// parentheses, and the old WITH CSV HEADER DELIMITER ',' NULL AS '' form.

// headerChoice is the HEADER option: no header line, one to skip, or one
// to match against the COPY's column names (COPY FROM only).
type headerChoice uint8

const (
	headerNone headerChoice = iota
	headerTrue
	headerMatch
)

// copyOptions is the statement's option list, checked.
type copyOptions struct {
	// freeze is accepted and has no effect: rows are visible to others
	// only once the transaction commits anyway, and pgbench -i asks for
	// it.
	csv, binary, freeze        bool
	delim, null, quote, escape *string // nil: not given
	header                     headerChoice
	forceQuoteAll              bool
	forceQuote                 []string
	forceNotNull, forceNull    []string

	// Which options were given (each may appear once).
	formatSet, freezeSet, headerSet, encodingSet bool
	forceQuoteSet, forceNotNullSet, forceNullSet bool
}

// processCopyOptions is PostgreSQL's ProcessCopyOptions.
func processCopyOptions(st *parse.Statement, list []*pg_query.Node, isFrom bool) (*copyOptions, error) {
	o := &copyOptions{}
	posErr := func(d *pg_query.DefElem, code, format string, args ...any) *pgerror.Error {
		return pgerror.New(code, format, args...).WithPosition(st.Position(d.Location))
	}
	conflict := func(d *pg_query.DefElem) error {
		return posErr(d, pgerror.SyntaxError, "conflicting or redundant options")
	}
	setString := func(d *pg_query.DefElem, dst **string) error {
		if *dst != nil {
			return conflict(d)
		}
		v, err := defString(d)
		if err != nil {
			return err
		}
		*dst = &v
		return nil
	}
	setList := func(d *pg_query.DefElem, set *bool, dst *[]string, star *bool) error {
		if *set {
			return conflict(d)
		}
		*set = true
		if star != nil {
			if _, ok := d.Arg.GetNode().(*pg_query.Node_AStar); ok {
				*star = true
				return nil
			}
		}
		l, ok := d.Arg.GetNode().(*pg_query.Node_List)
		if d.Arg == nil || !ok {
			return posErr(d, pgerror.InvalidParameterValue, "argument to option \"%s\" must be a list of column names", d.Defname)
		}
		for _, it := range l.List.Items {
			*dst = append(*dst, it.GetString_().GetSval())
		}
		return nil
	}
	for _, n := range list {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		var err error
		switch d.Defname {
		case "format":
			if o.formatSet {
				return nil, conflict(d)
			}
			o.formatSet = true
			f, err := defString(d)
			if err != nil {
				return nil, err
			}
			switch f {
			case "text":
			case "csv":
				o.csv = true
			case "binary":
				o.binary = true
			default:
				return nil, posErr(d, pgerror.InvalidParameterValue, "COPY format \"%s\" not recognized", f)
			}
		case "freeze":
			if o.freezeSet {
				return nil, conflict(d)
			}
			o.freezeSet = true
			o.freeze, err = defBool(d)
		case "delimiter":
			err = setString(d, &o.delim)
		case "null":
			err = setString(d, &o.null)
		case "header":
			if o.headerSet {
				return nil, conflict(d)
			}
			o.headerSet = true
			o.header, err = defHeader(d, isFrom)
		case "quote":
			err = setString(d, &o.quote)
		case "escape":
			err = setString(d, &o.escape)
		case "force_quote":
			err = setList(d, &o.forceQuoteSet, &o.forceQuote, &o.forceQuoteAll)
		case "force_not_null":
			err = setList(d, &o.forceNotNullSet, &o.forceNotNull, nil)
		case "force_null":
			err = setList(d, &o.forceNullSet, &o.forceNull, nil)
		case "encoding":
			if o.encodingSet {
				return nil, conflict(d)
			}
			o.encodingSet = true
			name, err := defString(d)
			if err != nil {
				return nil, err
			}
			switch encodingName(name) {
			case "":
				return nil, posErr(d, pgerror.InvalidParameterValue, "argument to option \"%s\" must be a valid encoding name", d.Defname)
			case "utf8":
			default:
				return nil, pgerror.New(pgerror.FeatureNotSupported, "COPY encoding \"%s\" is not supported; mvserver speaks UTF8 only", name)
			}
		default:
			return nil, posErr(d, pgerror.SyntaxError, "option \"%s\" not recognized", d.Defname)
		}
		if err != nil {
			return nil, err
		}
	}

	if o.binary && o.delim != nil {
		return nil, pgerror.New(pgerror.SyntaxError, "cannot specify DELIMITER in BINARY mode")
	}
	if o.binary && o.null != nil {
		return nil, pgerror.New(pgerror.SyntaxError, "cannot specify NULL in BINARY mode")
	}
	delim, null := "\t", `\N`
	if o.csv {
		delim, null = ",", ""
	}
	if o.delim != nil {
		delim = *o.delim
	}
	if o.null != nil {
		null = *o.null
	}
	o.delim, o.null = &delim, &null
	if o.csv {
		if o.quote == nil {
			q := `"`
			o.quote = &q
		}
		if o.escape == nil {
			o.escape = o.quote
		}
	}
	notSupported := func(msg string) error { return pgerror.New(pgerror.FeatureNotSupported, "%s", msg) }
	invalid := func(format string, args ...any) error {
		return pgerror.New(pgerror.InvalidParameterValue, format, args...)
	}
	switch {
	case len(delim) != 1:
		return nil, notSupported("COPY delimiter must be a single one-byte character")
	case delim == "\r" || delim == "\n":
		return nil, invalid("COPY delimiter cannot be newline or carriage return")
	case strings.ContainsAny(null, "\r\n"):
		return nil, invalid("COPY null representation cannot use newline or carriage return")
	case !o.csv && strings.Contains(`\.abcdefghijklmnopqrstuvwxyz0123456789`, delim):
		return nil, invalid("COPY delimiter cannot be \"%s\"", delim)
	case o.binary && o.header != headerNone:
		return nil, notSupported("cannot specify HEADER in BINARY mode")
	case !o.csv && o.quote != nil:
		return nil, notSupported("COPY quote available only in CSV mode")
	case o.csv && len(*o.quote) != 1:
		return nil, notSupported("COPY quote must be a single one-byte character")
	case o.csv && delim[0] == (*o.quote)[0]:
		return nil, invalid("COPY delimiter and quote must be different")
	case !o.csv && o.escape != nil:
		return nil, notSupported("COPY escape available only in CSV mode")
	case o.csv && len(*o.escape) != 1:
		return nil, notSupported("COPY escape must be a single one-byte character")
	case !o.csv && o.forceQuoteSet:
		return nil, notSupported("COPY force quote available only in CSV mode")
	case o.forceQuoteSet && isFrom:
		return nil, notSupported("COPY force quote only available using COPY TO")
	case !o.csv && o.forceNotNullSet:
		return nil, notSupported("COPY force not null available only in CSV mode")
	case o.forceNotNullSet && !isFrom:
		return nil, notSupported("COPY force not null only available using COPY FROM")
	case !o.csv && o.forceNullSet:
		return nil, notSupported("COPY force null available only in CSV mode")
	case o.forceNullSet && !isFrom:
		return nil, notSupported("COPY force null only available using COPY FROM")
	case strings.Contains(null, delim):
		return nil, notSupported("COPY delimiter must not appear in the NULL specification")
	case o.csv && strings.Contains(null, *o.quote):
		return nil, notSupported("CSV quote character must not appear in the NULL specification")
	}
	return o, nil
}

// formatOptions are the checked options for copyfmt (without the FORCE
// flags, which depend on the columns).
func (o *copyOptions) formatOptions() copyfmt.Options {
	f := copyfmt.TextOptions()
	if o.csv {
		f = copyfmt.CSVOptions()
		f.Quote, f.Escape = (*o.quote)[0], (*o.escape)[0]
	}
	f.Delimiter, f.Null = (*o.delim)[0], *o.null
	f.ForceQuoteAll = o.forceQuoteAll
	return f
}

// defString is PostgreSQL's defGetString.
func defString(d *pg_query.DefElem) (string, error) {
	if d.Arg == nil {
		return "", pgerror.New(pgerror.SyntaxError, "%s requires a parameter", d.Defname)
	}
	switch a := d.Arg.Node.(type) {
	case *pg_query.Node_String_:
		return a.String_.Sval, nil
	case *pg_query.Node_Integer:
		return fmt.Sprint(a.Integer.Ival), nil
	case *pg_query.Node_Float:
		return a.Float.Fval, nil
	case *pg_query.Node_Boolean:
		if a.Boolean.Boolval {
			return "true", nil
		}
		return "false", nil
	}
	return "", pgerror.New(pgerror.SyntaxError, "%s requires a parameter", d.Defname)
}

// defBool is PostgreSQL's defGetBoolean.
func defBool(d *pg_query.DefElem) (bool, error) {
	if d.Arg == nil {
		return true, nil
	}
	if i, ok := d.Arg.Node.(*pg_query.Node_Integer); ok {
		switch i.Integer.Ival {
		case 0:
			return false, nil
		case 1:
			return true, nil
		}
	} else if v, err := defString(d); err == nil {
		switch strings.ToLower(v) {
		case "true", "on":
			return true, nil
		case "false", "off":
			return false, nil
		}
	}
	return false, pgerror.New(pgerror.SyntaxError, "%s requires a Boolean value", d.Defname)
}

// defHeader is PostgreSQL's defGetCopyHeaderChoice.
func defHeader(d *pg_query.DefElem, isFrom bool) (headerChoice, error) {
	if d.Arg == nil {
		return headerTrue, nil
	}
	if i, ok := d.Arg.Node.(*pg_query.Node_Integer); ok {
		switch i.Integer.Ival {
		case 0:
			return headerNone, nil
		case 1:
			return headerTrue, nil
		}
	} else if v, err := defString(d); err == nil {
		switch strings.ToLower(v) {
		case "true", "on":
			return headerTrue, nil
		case "false", "off":
			return headerNone, nil
		case "match":
			if !isFrom {
				return headerNone, pgerror.New(pgerror.FeatureNotSupported, "cannot use \"%s\" with HEADER in COPY TO", v)
			}
			return headerMatch, nil
		}
	}
	return headerNone, pgerror.New(pgerror.SyntaxError, "%s requires a Boolean value or \"match\"", d.Defname)
}

// encodingName normalizes an encoding name as PostgreSQL does (lower case,
// letters and digits only): "utf8" for UTF-8, another name for the other
// encodings PostgreSQL knows, "" for an unknown one.
func encodingName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		}
	}
	n := b.String()
	switch n {
	case "utf8", "unicode":
		return "utf8"
	case "sqlascii", "eucjp", "euccn", "euckr", "euctw", "eucjis2004", "muleinternal", "koi8", "koi8r", "koi8u",
		"win", "alt", "abc", "tcvn", "tcvn5712", "vscii", "sjis", "mskanji", "shiftjis", "shiftjis2004", "big5",
		"gbk", "uhc", "gb18030", "johab":
		return n
	}
	for _, p := range []string{"latin", "iso8859", "win", "windows"} {
		if rest, ok := strings.CutPrefix(n, p); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
			return n
		}
	}
	return ""
}
