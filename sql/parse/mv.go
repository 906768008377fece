package parse

import (
	"strconv"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
)

// CreateMode says how a CREATE of a dataset treats an existing one (R-M1).
type CreateMode uint8

// Create modes.
const (
	CreatePlain       CreateMode = iota // CREATE: error if it exists
	CreateIfNotExists                   // CREATE … IF NOT EXISTS
	CreateOrReplace                     // CREATE OR REPLACE
	CreateOrRefresh                     // CREATE OR REFRESH
)

// RefreshPolicy is REFRESH POLICY (R-I7).
type RefreshPolicy string

// Refresh policies.
const (
	PolicyAuto              RefreshPolicy = "AUTO"
	PolicyIncremental       RefreshPolicy = "INCREMENTAL"
	PolicyIncrementalStrict RefreshPolicy = "INCREMENTAL STRICT"
	PolicyFull              RefreshPolicy = "FULL"
)

// Schedule is SCHEDULE [REFRESH] EVERY n unit | CRON 'expr' [AT TIME ZONE 'tz'] (R-S2).
type Schedule struct {
	Every    int    // EVERY n …
	Unit     string // HOUR, DAY or WEEK (singular, upper case)
	Cron     string // Quartz expression
	TimeZone string // AT TIME ZONE (default UTC)
}

// Trigger is TRIGGER ON UPDATE [AT MOST EVERY INTERVAL n unit] (R-S3).
type Trigger struct {
	// AtMostEverySeconds is the throttle window (0 = none).
	AtMostEverySeconds int64
}

// ColumnSpec is one entry of a dataset's column list: a column (name,
// optional type, NOT NULL, COMMENT) or an expectation (R-M2).
type ColumnSpec struct {
	Name    string
	Type    string // type as written, "" = from the query
	NotNull bool
	Comment string
}

// Expectation is CONSTRAINT name EXPECT (e) [ON VIOLATION …] or CHECK (e)
// [ON MISMATCH …] (R-M2).
type Expectation struct {
	Name string
	// Expr is the boolean expression's SQL text.
	Expr string
	// Action: "" (keep and count), "DROP ROW" or "FAIL UPDATE".
	Action string
	// Pos is the 1-based position of the expression in the query string.
	Pos int32
}

// DatasetClauses are the view clauses (R-M1), each given at most once.
type DatasetClauses struct {
	PartitionedBy []string
	ClusterBy     []string
	Comment       *string
	Properties    []Property
	Policy        RefreshPolicy
	Schedule      *Schedule
	Trigger       *Trigger
}

// CreateMaterializedView is CREATE … MATERIALIZED [LAKE] VIEW (R-M1) and,
// with Streaming, CREATE … STREAMING TABLE (R-ST1).
type CreateMaterializedView struct {
	Mode         CreateMode
	Streaming    bool
	Name         Name
	Columns      []ColumnSpec
	Expectations []Expectation
	Clauses      DatasetClauses
	// Query is the defining query, parsed (after the Databricks pass).
	Query *Statement
	// Explain: EXPLAIN CREATE MATERIALIZED VIEW (R-I8).
	Explain bool
	// NoData: PostgreSQL's trailing WITH NO DATA: the view is created
	// unpopulated (WITH DATA, the default, is accepted too).
	NoData bool
}

// RefreshDataset is REFRESH MATERIALIZED [LAKE] VIEW name [FULL] and
// REFRESH STREAMING TABLE name [FULL | RESET CHECKPOINTS] (R-M4, R-ST3).
type RefreshDataset struct {
	Streaming        bool
	Name             Name
	Full             bool
	ResetCheckpoints bool
	Explain          bool // EXPLAIN REFRESH (R-I8)
	// Concurrently: PostgreSQL's REFRESH MATERIALIZED VIEW CONCURRENTLY
	// (every refresh here leaves readers unblocked; PostgreSQL's rules
	// for it are checked). NoData: WITH NO DATA empties the view and
	// leaves it unpopulated.
	Concurrently bool
	NoData       bool
}

// DropDataset is DROP MATERIALIZED [LAKE] VIEW / STREAMING TABLE (R-M6).
type DropDataset struct {
	Streaming bool
	// Names are the relations dropped, in the order written (PostgreSQL's
	// DROP takes a list).
	Names    []Name
	IfExists bool
	Cascade  bool
}

// AlterDataset is one ALTER MATERIALIZED VIEW / STREAMING TABLE form (R-M6).
type AlterDataset struct {
	Streaming bool
	Name      Name
	// Exactly one of the following is set.
	SetSchedule       *Schedule // ADD/ALTER SCHEDULE
	AddSchedule       bool      // ADD (true) or ALTER (false) SCHEDULE
	DropSchedule      bool
	SetTrigger        *Trigger // ADD/ALTER TRIGGER ON UPDATE
	AddTrigger        bool
	DropTrigger       bool
	SetPolicy         RefreshPolicy
	SetProperties     []Property
	EnableIncremental bool
	// SetOwner is OWNER TO role (a role name, or CURRENT_USER /
	// SESSION_USER / CURRENT_ROLE as written, lower-cased).
	SetOwner string
}

// CheckDataset is CHECK MATERIALIZED VIEW name: compare the view's rows
// with its query on the snapshot of its last refresh (R-M5).
type CheckDataset struct {
	Name Name
}

func (*CreateMaterializedView) extNode() {}
func (*RefreshDataset) extNode()         {}
func (*DropDataset) extNode()            {}
func (*AlterDataset) extNode()           {}
func (*CheckDataset) extNode()           {}

// datasetKind reads MATERIALIZED [LAKE] VIEW or STREAMING TABLE; ok=false if
// neither follows.
func (p *extParser) datasetKind() (streaming, ok bool) {
	switch {
	case p.accept("materialized", "lake", "view"), p.accept("materialized", "view"):
		return false, true
	case p.accept("streaming", "table"), p.accept("streaming", "live", "table"):
		return true, true
	}
	return false, false
}

// peekDataset reports whether MATERIALIZED … VIEW / STREAMING TABLE starts at k.
func (p *extParser) peekDataset(k int) bool {
	switch p.word(k) {
	case "materialized":
		return p.word(k+1) == "view" || (p.word(k+1) == "lake" && p.word(k+2) == "view")
	case "streaming":
		return p.word(k+1) == "table" || (p.word(k+1) == "live" && p.word(k+2) == "table")
	}
	return false
}

// postgresAlterMatview reports whether an ALTER MATERIALIZED VIEW (p.i at
// ALTER) is one of PostgreSQL's forms pg_query parses: IF EXISTS, RENAME
// [COLUMN] … TO, SET SCHEMA.
func (p *extParser) postgresAlterMatview() bool {
	if p.word(1) != "materialized" || p.word(2) != "view" {
		return false
	}
	if p.word(3) == "if" {
		return true
	}
	save := p.i
	defer func() { p.i = save }()
	p.i += 3
	if _, err := p.name(); err != nil {
		return false
	}
	return p.word(0) == "rename" || p.word(0) == "set" && p.word(1) == "schema"
}

// parseCreateDataset parses from CREATE (p.i at CREATE).
func (p *extParser) parseCreateDataset(explain bool) error {
	c := &CreateMaterializedView{Explain: explain}
	p.i++ // CREATE
	switch {
	case p.accept("or", "replace"):
		c.Mode = CreateOrReplace
	case p.accept("or", "refresh"):
		c.Mode = CreateOrRefresh
	}
	streaming, _ := p.datasetKind()
	c.Streaming = streaming
	if p.accept("if", "not", "exists") {
		if c.Mode != CreatePlain {
			return p.errAt(p.toks[p.i-1], "IF NOT EXISTS cannot be combined with OR REPLACE or OR REFRESH")
		}
		c.Mode = CreateIfNotExists
	}
	n, err := p.name()
	if err != nil {
		return err
	}
	c.Name = n
	if p.isOp(0, "(") {
		if err := p.columnSpecs(c); err != nil {
			return err
		}
	}
	if err := p.datasetClauses(&c.Clauses, c.Streaming); err != nil {
		return err
	}
	if !p.accept("as") {
		return p.syntaxErr()
	}
	if p.atEnd() {
		return p.syntaxErr()
	}
	end := len(p.src)
	if !c.Streaming {
		var n int
		if n, c.NoData = p.trailingData(); n > 0 {
			end = p.toks[len(p.toks)-n].start
		}
	}
	q, err := p.subStatementTo(p.toks[p.i].start, end)
	if err != nil {
		return err
	}
	if q.AST == nil || q.AST.GetSelectStmt() == nil {
		return pgerror.New(pgerror.SyntaxError, "the query of a materialized view must be a SELECT").WithPosition(p.st.Position(int32(p.toks[p.i].start)))
	}
	c.Query = q
	p.st.Ext = c
	return nil
}

// trailingData reports a trailing WITH [NO] DATA of PostgreSQL's CREATE
// MATERIALIZED VIEW … AS query: how many tokens it is (0: none) and NO.
func (p *extParser) trailingData() (int, bool) {
	word := func(fromEnd int) string {
		k := len(p.toks) - fromEnd
		if k < p.i || p.toks[k].kind != tokIdent {
			return ""
		}
		return strings.ToLower(p.toks[k].text(p.src))
	}
	switch {
	case word(1) == "data" && word(2) == "no" && word(3) == "with":
		return 3, true
	case word(1) == "data" && word(2) == "with":
		return 2, false
	}
	return 0, false
}

// subStatement parses src[start:] (the rest of the statement) as a
// statement of its own, positions mapped into the client's text.
func (p *extParser) subStatement(start int) (*Statement, error) {
	return p.subStatementTo(start, len(p.src))
}

// subStatementTo parses src[start:stop] as a statement of its own.
func (p *extParser) subStatementTo(start, stop int) (*Statement, error) {
	abs := p.st.offset + start
	end := p.st.offset + stop
	toks := lex(p.st.query[abs:end])
	for i := range toks {
		toks[i].start += abs
		toks[i].end += abs
	}
	st, err := parseOne(p.st.query, toks, true, false)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, p.syntaxErr()
	}
	return st, nil
}

// columnSpecs parses ( col [type] [NOT NULL] [COMMENT '…'] | CONSTRAINT … , … ).
func (p *extParser) columnSpecs(c *CreateMaterializedView) error {
	p.i++ // (
	for {
		if p.accept("constraint") {
			nameTok := p.peek(0)
			name, ok := p.identPart()
			if !ok {
				return p.syntaxErr()
			}
			var ex Expectation
			ex.Name = name
			kind := p.word(0)
			if kind != "expect" && kind != "check" {
				return p.syntaxErr()
			}
			p.i++
			text, pos, err := p.parenText()
			if err != nil {
				return err
			}
			ex.Expr, ex.Pos = text, pos
			switch kind {
			case "expect":
				if p.accept("on", "violation") {
					switch {
					case p.accept("fail", "update"):
						ex.Action = "FAIL UPDATE"
					case p.accept("drop", "row"):
						ex.Action = "DROP ROW"
					default:
						return p.syntaxErr()
					}
				}
			case "check":
				if p.accept("on", "mismatch") {
					switch {
					case p.accept("drop"):
						ex.Action = "DROP ROW"
					case p.accept("fail"):
						ex.Action = "FAIL UPDATE"
					default:
						return p.syntaxErr()
					}
				}
			}
			for _, e := range c.Expectations {
				if e.Name == ex.Name {
					return p.errAt(nameTok, "expectation \"%s\" is defined more than once", ex.Name)
				}
			}
			c.Expectations = append(c.Expectations, ex)
		} else {
			name, ok := p.identPart()
			if !ok {
				return p.syntaxErr()
			}
			col := ColumnSpec{Name: name}
			// optional type: words up to NOT/COMMENT/,/)
			var typ []string
			for {
				w := p.word(0)
				t := p.peek(0)
				if t.kind == tokEOF || p.isOp(0, ",") || p.isOp(0, ")") || w == "not" || w == "comment" {
					break
				}
				if p.isOp(0, "(") {
					text, _, err := p.parenText()
					if err != nil {
						return err
					}
					typ = append(typ, "("+text+")")
					continue
				}
				typ = append(typ, t.text(p.src))
				p.i++
			}
			col.Type = strings.Join(typ, " ")
			if p.accept("not", "null") {
				col.NotNull = true
			}
			if p.accept("comment") {
				s, err := p.stringLit()
				if err != nil {
					return err
				}
				col.Comment = s
			}
			for _, e := range c.Columns {
				if e.Name == col.Name {
					return p.errAt(p.toks[p.i-1], "column \"%s\" specified more than once", col.Name)
				}
			}
			c.Columns = append(c.Columns, col)
		}
		if p.isOp(0, ",") {
			p.i++
			continue
		}
		return p.expectOp(")")
	}
}

// parenText reads a balanced ( … ) and returns the inner text and the
// position of its first character.
func (p *extParser) parenText() (string, int32, error) {
	if err := p.expectOp("("); err != nil {
		return "", 0, err
	}
	start := p.peek(0).start
	depth := 1
	for !p.atEnd() {
		t := p.peek(0)
		if t.kind == tokOp && t.text(p.src) == "(" {
			depth++
		} else if t.kind == tokOp && t.text(p.src) == ")" {
			depth--
			if depth == 0 {
				text := strings.TrimSpace(p.src[start:t.start])
				p.i++
				if text == "" {
					return "", 0, p.errAt(t, "syntax error at or near \")\"")
				}
				return text, p.st.Position(int32(start)), nil
			}
		}
		p.i++
	}
	return "", 0, p.syntaxErr()
}

// datasetClauses parses view clauses in any order, each at most once (R-M1).
func (p *extParser) datasetClauses(c *DatasetClauses, streaming bool) error {
	seen := map[string]bool{}
	once := func(name string) error {
		if seen[name] {
			return p.errAt(p.toks[p.i-1], "%s is specified more than once", name)
		}
		seen[name] = true
		return nil
	}
	for {
		switch {
		case p.accept("partitioned", "by"):
			if err := once("PARTITIONED BY"); err != nil {
				return err
			}
			cols, err := p.columnList()
			if err != nil {
				return err
			}
			c.PartitionedBy = cols
		case p.accept("cluster", "by"):
			if err := once("CLUSTER BY"); err != nil {
				return err
			}
			cols, err := p.columnList()
			if err != nil {
				return err
			}
			c.ClusterBy = cols
		case p.accept("comment"):
			if err := once("COMMENT"); err != nil {
				return err
			}
			s, err := p.stringLit()
			if err != nil {
				return err
			}
			c.Comment = &s
		case p.accept("tblproperties"):
			if err := once("TBLPROPERTIES"); err != nil {
				return err
			}
			props, err := p.properties()
			if err != nil {
				return err
			}
			c.Properties = props
		case p.word(0) == "refresh" && p.word(1) == "policy":
			p.i += 2
			if err := once("REFRESH POLICY"); err != nil {
				return err
			}
			if streaming {
				return p.errAt(p.toks[p.i-1], "REFRESH POLICY does not apply to streaming tables")
			}
			pol, err := p.policy()
			if err != nil {
				return err
			}
			c.Policy = pol
		case p.accept("schedule"):
			if err := once("SCHEDULE"); err != nil {
				return err
			}
			s, err := p.schedule()
			if err != nil {
				return err
			}
			c.Schedule = s
		case p.word(0) == "trigger" && p.word(1) == "on":
			p.i++
			if err := once("TRIGGER ON UPDATE"); err != nil {
				return err
			}
			p.i--
			tr, err := p.trigger()
			if err != nil {
				return err
			}
			c.Trigger = tr
		default:
			if c.Schedule != nil && c.Trigger != nil {
				return pgerror.New(pgerror.InvalidObjectDefinition, "a dataset cannot have both a SCHEDULE and a TRIGGER ON UPDATE").
					WithHint("Keep one of them; ALTER … ALTER SCHEDULE / ALTER TRIGGER ON UPDATE switches later.")
			}
			return nil
		}
	}
}

func (p *extParser) policy() (RefreshPolicy, error) {
	switch {
	case p.accept("auto"):
		return PolicyAuto, nil
	case p.accept("incremental", "strict"):
		return PolicyIncrementalStrict, nil
	case p.accept("incremental"):
		return PolicyIncremental, nil
	case p.accept("full"):
		return PolicyFull, nil
	}
	return "", p.syntaxErr()
}

// schedule parses after SCHEDULE: [REFRESH] EVERY n unit | CRON 'expr' [AT TIME ZONE 'tz'].
func (p *extParser) schedule() (*Schedule, error) {
	p.accept("refresh")
	s := &Schedule{}
	switch {
	case p.accept("every"):
		t := p.peek(0)
		if t.kind != tokNumber {
			return nil, p.syntaxErr()
		}
		n, err := strconv.Atoi(t.text(p.src))
		if err != nil {
			return nil, p.errAt(t, "invalid number \"%s\" in SCHEDULE EVERY", t.text(p.src))
		}
		p.i++
		unit := strings.TrimSuffix(p.word(0), "s")
		limits := map[string]int{"hour": 72, "day": 31, "week": 8}
		max, ok := limits[unit]
		if !ok {
			if unit == "minute" || unit == "second" {
				return nil, p.errAt(p.peek(0), "SCHEDULE EVERY accepts HOURS, DAYS or WEEKS").WithHint("For intervals under an hour use SCHEDULE CRON, e.g. CRON '0 */15 * * * ?'.")
			}
			return nil, p.syntaxErr()
		}
		unitTok := p.peek(0)
		p.i++
		if n < 1 || n > max {
			e := p.errAt(t, "SCHEDULE EVERY %d %s is out of range: %s must be between 1 and %d", n, strings.ToUpper(unitTok.text(p.src)), strings.ToUpper(unit)+"S", max)
			e.Code = pgerror.InvalidParameterValue
			return nil, e
		}
		s.Every, s.Unit = n, strings.ToUpper(unit)
	case p.accept("cron"):
		t := p.peek(0)
		expr, err := p.stringLit()
		if err != nil {
			return nil, err
		}
		if err := ValidateQuartzCron(expr); err != nil {
			if pe, ok := err.(*pgerror.Error); ok {
				pe.Position = p.st.Position(int32(t.start))
			}
			return nil, err
		}
		s.Cron = expr
		if p.accept("at", "time", "zone") {
			tt := p.peek(0)
			tz, err := p.stringLit()
			if err != nil {
				return nil, err
			}
			if err := validateZone(tz); err != nil {
				e := p.errAt(tt, "%s", err.Error())
				e.Code = pgerror.InvalidParameterValue
				return nil, e
			}
			s.TimeZone = tz
		}
	default:
		return nil, p.syntaxErr()
	}
	return s, nil
}

// trigger parses TRIGGER ON UPDATE [AT MOST EVERY [INTERVAL] n unit].
func (p *extParser) trigger() (*Trigger, error) {
	if !p.accept("trigger", "on", "update") {
		return nil, p.syntaxErr()
	}
	tr := &Trigger{}
	if p.accept("at", "most", "every") {
		p.accept("interval")
		t := p.peek(0)
		var n int64
		var unit string
		switch t.kind {
		case tokNumber:
			v, err := strconv.ParseInt(t.text(p.src), 10, 64)
			if err != nil {
				return nil, p.errAt(t, "invalid number \"%s\"", t.text(p.src))
			}
			n = v
			p.i++
			unit = p.word(0)
			p.i++
		case tokString:
			// INTERVAL '5 minutes'
			f := strings.Fields(unquoteString(t.text(p.src)))
			if len(f) != 2 {
				return nil, p.errAt(t, "AT MOST EVERY needs an interval such as INTERVAL 5 MINUTES")
			}
			v, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return nil, p.errAt(t, "invalid number \"%s\"", f[0])
			}
			n, unit = v, strings.ToLower(f[1])
			p.i++
		default:
			return nil, p.syntaxErr()
		}
		mult := map[string]int64{"second": 1, "minute": 60, "hour": 3600}[strings.TrimSuffix(unit, "s")]
		if mult == 0 {
			return nil, p.errAt(p.toks[p.i-1], "AT MOST EVERY accepts SECONDS, MINUTES or HOURS, not \"%s\"", unit)
		}
		if n <= 0 {
			return nil, p.errAt(t, "AT MOST EVERY must be positive")
		}
		tr.AtMostEverySeconds = n * mult
	}
	return tr, nil
}

// parseRefresh parses [EXPLAIN] REFRESH … (p.i at REFRESH).
func (p *extParser) parseRefresh(explain bool) error {
	p.i++
	streaming, ok := p.datasetKind()
	if !ok {
		return p.syntaxErr()
	}
	r := &RefreshDataset{Streaming: streaming, Explain: explain}
	if !streaming && p.word(0) == "concurrently" && p.peek(1).kind != tokEOF {
		p.i++
		r.Concurrently = true
	}
	n, err := p.name()
	if err != nil {
		return err
	}
	r.Name = n
	switch {
	case p.accept("full"):
		r.Full = true
	case streaming && p.accept("reset", "checkpoints"):
		r.ResetCheckpoints = true
	case !streaming && p.accept("with", "no", "data"):
		r.NoData = true
	case !streaming && p.accept("with", "data"):
	}
	p.st.Ext = r
	return p.end()
}

// parseDropDataset parses DROP MATERIALIZED [LAKE] VIEW / STREAMING TABLE.
func (p *extParser) parseDropDataset() error {
	p.i++ // DROP
	streaming, _ := p.datasetKind()
	d := &DropDataset{Streaming: streaming}
	d.IfExists = p.accept("if", "exists")
	for {
		n, err := p.name()
		if err != nil {
			return err
		}
		d.Names = append(d.Names, n)
		if !p.isOp(0, ",") {
			break
		}
		p.i++
	}
	switch {
	case p.accept("cascade"):
		d.Cascade = true
	case p.accept("restrict"):
	}
	p.st.Ext = d
	return p.end()
}

// parseAlterDataset parses every ALTER MATERIALIZED VIEW / STREAMING TABLE
// form of R-M6.
func (p *extParser) parseAlterDataset() error {
	p.i++ // ALTER
	streaming, _ := p.datasetKind()
	n, err := p.name()
	if err != nil {
		return err
	}
	a := &AlterDataset{Streaming: streaming, Name: n}
	switch {
	case p.word(0) == "add" || p.word(0) == "alter":
		add := p.word(0) == "add"
		p.i++
		switch {
		case p.accept("schedule"):
			s, err := p.schedule()
			if err != nil {
				return err
			}
			a.SetSchedule, a.AddSchedule = s, add
		case p.word(0) == "trigger":
			tr, err := p.trigger()
			if err != nil {
				return err
			}
			a.SetTrigger, a.AddTrigger = tr, add
		default:
			return p.syntaxErr()
		}
	case p.accept("drop", "schedule"):
		a.DropSchedule = true
	case p.accept("drop", "trigger", "on", "update"):
		a.DropTrigger = true
	case p.accept("set", "refresh", "policy"):
		if streaming {
			return p.errAt(p.toks[p.i-1], "REFRESH POLICY does not apply to streaming tables")
		}
		pol, err := p.policy()
		if err != nil {
			return err
		}
		a.SetPolicy = pol
	case p.accept("set", "tblproperties"):
		props, err := p.properties()
		if err != nil {
			return err
		}
		a.SetProperties = props
	case p.accept("enable", "incremental"):
		a.EnableIncremental = true
	case p.accept("owner", "to"):
		role, ok := p.identPart()
		if !ok {
			return p.syntaxErr()
		}
		a.SetOwner = role
	default:
		return p.syntaxErr()
	}
	p.st.Ext = a
	return p.end()
}

// parseCheckDataset parses CHECK MATERIALIZED [LAKE] VIEW name (p.i at CHECK).
func (p *extParser) parseCheckDataset() error {
	p.i++ // CHECK
	if streaming, ok := p.datasetKind(); !ok || streaming {
		return p.syntaxErr()
	}
	n, err := p.name()
	if err != nil {
		return err
	}
	p.st.Ext = &CheckDataset{Name: n}
	return p.end()
}
