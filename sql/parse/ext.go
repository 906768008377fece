package parse

import (
	"strconv"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
)

// Ext is one of mvserver's own statements.
type Ext interface{ extNode() }

// Name is a possibly qualified object name ([catalog.][schema.]name), each
// part already case-folded (unquoted parts lower-cased).
type Name struct {
	Parts []string
	Pos   int32 // 1-based character position in the client's query
}

// String joins the parts with dots.
func (n Name) String() string { return strings.Join(n.Parts, ".") }

// Property is one TBLPROPERTIES entry.
type Property struct {
	Key, Value string
}

// DescribeHistory is DESCRIBE HISTORY name (R-T4).
type DescribeHistory struct{ Name Name }

// DescribeTable is DESCRIBE [TABLE] [EXTENDED] name (R-O2).
type DescribeTable struct {
	Name     Name
	Extended bool
}

// ShowTblProperties is SHOW TBLPROPERTIES name [(key)] (R-T5).
type ShowTblProperties struct {
	Name Name
	Key  string
}

// AlterTblProperties is ALTER TABLE name SET TBLPROPERTIES (…) or
// UNSET TBLPROPERTIES [IF EXISTS] (…) (R-T5).
type AlterTblProperties struct {
	Name     Name
	Set      []Property
	Unset    []string
	IfExists bool
}

// ShowDatasets is SHOW MATERIALIZED VIEWS / SHOW STREAMING TABLES [IN schema] (R-O3).
type ShowDatasets struct {
	Streaming bool
	Schema    string
}

// CancelRefresh is CANCEL REFRESH name: stop the running refresh of a view (R-S5).
type CancelRefresh struct{ Name Name }

// Vacuum is VACUUM name [RETAIN n HOURS]: drop the table's change-feed
// records older than the retention (R-T9).
type Vacuum struct {
	Name Name
	// RetainHours is the RETAIN clause's number of hours; -1 when absent
	// (the default retention applies).
	RetainHours float64
}

func (*Vacuum) extNode() {}

func (*CancelRefresh) extNode()      {}
func (*ShowDatasets) extNode()       {}
func (*DescribeHistory) extNode()    {}
func (*DescribeTable) extNode()      {}
func (*ShowTblProperties) extNode()  {}
func (*AlterTblProperties) extNode() {}

// CreateTableExtras are the Databricks clauses after CREATE TABLE's column
// list, which PostgreSQL's grammar lacks.
type CreateTableExtras struct {
	Using         string
	PartitionedBy []string
	ClusterBy     []string
	Comment       string
	Properties    []Property
	Location      string
}

// extParser is a small recursive-descent parser over significant tokens.
type extParser struct {
	src   string
	toks  []token
	i     int
	st    *Statement
	blank [][2]int // byte ranges of src to blank before pg_query (CREATE TABLE extras)
}

func (p *extParser) peek(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return token{kind: tokEOF, start: len(p.src), end: len(p.src)}
}

func (p *extParser) word(k int) string {
	t := p.peek(k)
	if t.kind != tokIdent {
		return ""
	}
	return strings.ToLower(t.text(p.src))
}

func (p *extParser) accept(words ...string) bool {
	for k, w := range words {
		if p.word(k) != w {
			return false
		}
	}
	p.i += len(words)
	return true
}

func (p *extParser) errAt(t token, format string, args ...any) *pgerror.Error {
	e := pgerror.New(pgerror.SyntaxError, format, args...)
	e.Position = p.st.Position(int32(t.start))
	return e
}

func (p *extParser) syntaxErr() error {
	t := p.peek(0)
	if t.kind == tokEOF {
		return p.errAt(t, "syntax error at end of input")
	}
	return p.errAt(t, "syntax error at or near \"%s\"", t.text(p.src))
}

func (p *extParser) expectOp(op string) error {
	if t := p.peek(0); t.kind == tokOp && t.text(p.src) == op {
		p.i++
		return nil
	}
	return p.syntaxErr()
}

func (p *extParser) isOp(k int, op string) bool {
	t := p.peek(k)
	return t.kind == tokOp && t.text(p.src) == op
}

func (p *extParser) atEnd() bool { return p.i >= len(p.toks) }

// identPart reads one identifier (plain: lower-cased; quoted: as written).
func (p *extParser) identPart() (string, bool) {
	t := p.peek(0)
	switch t.kind {
	case tokIdent:
		p.i++
		return strings.ToLower(t.text(p.src)), true
	case tokQuoted:
		p.i++
		s := t.text(p.src)
		return strings.ReplaceAll(s[1:len(s)-1], `""`, `"`), true
	case tokBacktick:
		p.i++
		s := t.text(p.src)
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`"), true
	}
	return "", false
}

func (p *extParser) name() (Name, error) {
	t := p.peek(0)
	var n Name
	n.Pos = p.st.Position(int32(t.start))
	part, ok := p.identPart()
	if !ok {
		return n, p.syntaxErr()
	}
	n.Parts = append(n.Parts, part)
	for p.isOp(0, ".") {
		p.i++
		part, ok := p.identPart()
		if !ok {
			return n, p.syntaxErr()
		}
		n.Parts = append(n.Parts, part)
	}
	if len(n.Parts) > 3 {
		return n, p.errAt(t, "improper qualified name (too many dotted names): %s", n.String())
	}
	return n, nil
}

func (p *extParser) end() error {
	if !p.atEnd() {
		return p.syntaxErr()
	}
	return nil
}

// parseExtension recognises mvserver's own statements by their leading
// keywords. It returns handled=false for statements pg_query parses (after
// noting any CREATE TABLE extras to blank out).
func (p *extParser) parseExtension() (bool, error) {
	if p.word(0) == "alter" && p.peekDataset(1) && !p.postgresAlterMatview() {
		return true, p.parseAlterDataset()
	}
	switch p.word(0) {
	case "describe", "desc":
		p.i++
		if p.accept("history") {
			n, err := p.name()
			if err != nil {
				return true, err
			}
			p.st.Ext = &DescribeHistory{Name: n}
			return true, p.end()
		}
		p.accept("table")
		ext := p.accept("extended") || p.accept("formatted")
		n, err := p.name()
		if err != nil {
			return true, err
		}
		p.st.Ext = &DescribeTable{Name: n, Extended: ext}
		return true, p.end()
	case "show":
		if p.word(1) == "materialized" && p.word(2) == "views" || p.word(1) == "streaming" && p.word(2) == "tables" {
			s := &ShowDatasets{Streaming: p.word(1) == "streaming"}
			p.i += 3
			if p.accept("in") || p.accept("from") {
				n, err := p.name()
				if err != nil {
					return true, err
				}
				s.Schema = n.Parts[len(n.Parts)-1]
			}
			p.st.Ext = s
			return true, p.end()
		}
		if p.word(1) != "tblproperties" {
			return false, nil
		}
		p.i += 2
		n, err := p.name()
		if err != nil {
			return true, err
		}
		s := &ShowTblProperties{Name: n}
		if p.isOp(0, "(") {
			p.i++
			k, err := p.propertyKey()
			if err != nil {
				return true, err
			}
			s.Key = k
			if err := p.expectOp(")"); err != nil {
				return true, err
			}
		}
		p.st.Ext = s
		return true, p.end()
	case "alter":
		if p.word(1) != "table" {
			return false, nil
		}
		save := p.i
		p.i += 2
		p.accept("if", "exists")
		n, err := p.name()
		if err != nil {
			p.i = save
			return false, nil
		}
		switch {
		case p.accept("set", "tblproperties"):
			props, err := p.properties()
			if err != nil {
				return true, err
			}
			p.st.Ext = &AlterTblProperties{Name: n, Set: props}
			return true, p.end()
		case p.accept("unset", "tblproperties"):
			a := &AlterTblProperties{Name: n}
			a.IfExists = p.accept("if", "exists")
			if err := p.expectOp("("); err != nil {
				return true, err
			}
			for {
				k, err := p.propertyKey()
				if err != nil {
					return true, err
				}
				a.Unset = append(a.Unset, k)
				if p.isOp(0, ",") {
					p.i++
					continue
				}
				break
			}
			if err := p.expectOp(")"); err != nil {
				return true, err
			}
			p.st.Ext = a
			return true, p.end()
		}
		p.i = save
		return false, nil
	case "create":
		k := 1
		if p.word(1) == "or" && (p.word(2) == "replace" || p.word(2) == "refresh") {
			k = 3
		}
		if p.peekDataset(k) {
			return true, p.parseCreateDataset(false)
		}
		return false, p.createTableExtras()
	case "refresh":
		return true, p.parseRefresh(false)
	case "cancel":
		if p.word(1) == "refresh" {
			p.i += 2
			p.datasetKind() // optional MATERIALIZED VIEW / STREAMING TABLE
			n, err := p.name()
			if err != nil {
				return true, err
			}
			p.st.Ext = &CancelRefresh{Name: n}
			return true, p.end()
		}
	case "explain":
		switch {
		case p.word(1) == "create":
			k := 2
			if p.word(2) == "or" && (p.word(3) == "replace" || p.word(3) == "refresh") {
				k = 4
			}
			if p.peekDataset(k) {
				p.i++
				return true, p.parseCreateDataset(true)
			}
		case p.word(1) == "refresh":
			p.i++
			return true, p.parseRefresh(true)
		}
	case "drop":
		if p.peekDataset(1) {
			return true, p.parseDropDataset()
		}
	case "check":
		if p.peekDataset(1) {
			return true, p.parseCheckDataset()
		}
	case "vacuum":
		// VACUUM name [RETAIN n HOURS]; PostgreSQL's own forms (VACUUM,
		// VACUUM FULL/ANALYZE/VERBOSE/FREEZE, VACUUM (options)) are left
		// to pg_query.
		switch p.word(1) {
		case "", "full", "freeze", "verbose", "analyze", "analyse":
			if t := p.peek(1); t.kind != tokQuoted && t.kind != tokBacktick {
				return false, nil
			}
		}
		return true, p.parseVacuum()
	}
	return false, nil
}

// parseVacuum parses VACUUM name [RETAIN n HOURS] (p.i at VACUUM).
func (p *extParser) parseVacuum() error {
	p.i++ // VACUUM
	n, err := p.name()
	if err != nil {
		return err
	}
	v := &Vacuum{Name: n, RetainHours: -1}
	if p.accept("retain") {
		t := p.peek(0)
		if t.kind != tokNumber {
			return p.syntaxErr()
		}
		h, err := strconv.ParseFloat(t.text(p.src), 64)
		if err != nil {
			return p.errAt(t, "invalid number \"%s\" in RETAIN", t.text(p.src))
		}
		p.i++
		if w := p.word(0); w != "hours" && w != "hour" {
			return p.syntaxErr()
		}
		p.i++
		v.RetainHours = h
	}
	p.st.Ext = v
	return p.end()
}

// createTableExtras finds the Databricks clauses after the column list of a
// CREATE [OR REPLACE] TABLE, records them and marks them for blanking.
func (p *extParser) createTableExtras() error {
	k := 1
	if p.word(1) == "or" && p.word(2) == "replace" {
		k = 3
	}
	if p.word(k) != "table" {
		return nil
	}
	// find the column list's closing parenthesis
	j := p.i + k + 1
	for j < len(p.toks) && !(p.toks[j].kind == tokOp && p.toks[j].text(p.src) == "(") {
		if w := strings.ToLower(p.toks[j].text(p.src)); w == "as" {
			return nil
		}
		j++
	}
	if j >= len(p.toks) {
		return nil
	}
	depth := 0
	for ; j < len(p.toks); j++ {
		s := p.toks[j].text(p.src)
		if p.toks[j].kind == tokOp && s == "(" {
			depth++
		} else if p.toks[j].kind == tokOp && s == ")" {
			depth--
			if depth == 0 {
				break
			}
		}
	}
	if j >= len(p.toks) {
		return nil
	}
	p.i = j + 1
	var ex CreateTableExtras
	found := false
	for !p.atEnd() {
		start := p.peek(0).start
		switch {
		case p.accept("using"):
			w, ok := p.identPart()
			if !ok {
				return p.syntaxErr()
			}
			if w != "delta" {
				return p.errAt(p.toks[p.i-1], "table format \"%s\" is not supported; mvserver stores every table as a versioned table (USING DELTA)", w)
			}
			ex.Using = w
		case p.accept("partitioned", "by"):
			cols, err := p.columnList()
			if err != nil {
				return err
			}
			ex.PartitionedBy = cols
		case p.accept("cluster", "by"):
			cols, err := p.columnList()
			if err != nil {
				return err
			}
			ex.ClusterBy = cols
		case p.accept("comment"):
			s, err := p.stringLit()
			if err != nil {
				return err
			}
			ex.Comment = s
		case p.accept("tblproperties"):
			props, err := p.properties()
			if err != nil {
				return err
			}
			ex.Properties = append(ex.Properties, props...)
		case p.accept("location"):
			s, err := p.stringLit()
			if err != nil {
				return err
			}
			ex.Location = s
		default:
			if found {
				return p.syntaxErr()
			}
			return nil // leave it to pg_query (e.g. PARTITION BY of PostgreSQL)
		}
		found = true
		p.blank = append(p.blank, [2]int{start, p.toks[p.i-1].end})
	}
	if found {
		p.st.CreateExtras = &ex
	}
	return nil
}

func (p *extParser) columnList() ([]string, error) {
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	var cols []string
	for {
		c, ok := p.identPart()
		if !ok {
			return nil, p.syntaxErr()
		}
		cols = append(cols, c)
		if p.isOp(0, ",") {
			p.i++
			continue
		}
		break
	}
	return cols, p.expectOp(")")
}

func (p *extParser) stringLit() (string, error) {
	t := p.peek(0)
	if t.kind != tokString {
		return "", p.syntaxErr()
	}
	p.i++
	return unquoteString(t.text(p.src)), nil
}

// unquoteString returns the value of a '…' or E'…' literal.
func unquoteString(s string) string {
	if len(s) >= 2 && (s[0] == 'E' || s[0] == 'e') && s[1] == '\'' {
		body := s[2 : len(s)-1]
		var b strings.Builder
		for i := 0; i < len(body); i++ {
			c := body[i]
			if c == '\\' && i+1 < len(body) {
				i++
				switch body[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'r':
					b.WriteByte('\r')
				default:
					b.WriteByte(body[i])
				}
				continue
			}
			if c == '\'' && i+1 < len(body) && body[i+1] == '\'' {
				i++
			}
			b.WriteByte(c)
		}
		return b.String()
	}
	if len(s) >= 2 && s[0] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}

// propertyKey reads a property key: 'quoted' or dotted words (delta.enableChangeDataFeed).
func (p *extParser) propertyKey() (string, error) {
	t := p.peek(0)
	if t.kind == tokString {
		p.i++
		return unquoteString(t.text(p.src)), nil
	}
	var parts []string
	for {
		t := p.peek(0)
		if t.kind != tokIdent && t.kind != tokQuoted && t.kind != tokBacktick {
			return "", p.syntaxErr()
		}
		s := t.text(p.src)
		if t.kind != tokIdent {
			s = s[1 : len(s)-1]
		}
		parts = append(parts, s)
		p.i++
		if p.isOp(0, ".") {
			p.i++
			continue
		}
		break
	}
	return strings.Join(parts, "."), nil
}

func (p *extParser) properties() ([]Property, error) {
	if err := p.expectOp("("); err != nil {
		return nil, err
	}
	var props []Property
	for {
		k, err := p.propertyKey()
		if err != nil {
			return nil, err
		}
		if p.isOp(0, "=") {
			p.i++
		}
		t := p.peek(0)
		var v string
		switch t.kind {
		case tokString:
			v = unquoteString(t.text(p.src))
		case tokIdent, tokNumber:
			v = t.text(p.src)
		case tokOp:
			if t.text(p.src) == "-" && p.peek(1).kind == tokNumber {
				p.i++
				v = "-" + p.peek(0).text(p.src)
			} else {
				return nil, p.syntaxErr()
			}
		default:
			return nil, p.syntaxErr()
		}
		p.i++
		props = append(props, Property{Key: k, Value: v})
		if p.isOp(0, ",") {
			p.i++
			continue
		}
		break
	}
	return props, p.expectOp(")")
}
