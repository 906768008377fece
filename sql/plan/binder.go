package plan

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/types"
)

// Binder binds one statement.
type Binder struct {
	Cat        *catalog.Catalog
	SearchPath []string
	Stmt       *parse.Statement
	Env        *types.Env
	// CheckRead, when set, is asked about every relation the statement
	// reads — by name, or through table_changes — and fails the bind with
	// its error (privileges). view is the view whose query names t (the
	// innermost being expanded), nil for the statement's own: a view reads
	// with its owner's rights, which PostgreSQL checks at every read.
	CheckRead func(t, view *catalog.Table) error
	// CheckSystem, when set, is asked about every pg_catalog or
	// information_schema relation the statement reads (pg_authid is for
	// superusers only), with view as for CheckRead.
	CheckSystem func(r *SystemRelation, view *catalog.Table) error
	// DefinitionOnly: the statement is bound to be stored, not run (CREATE
	// VIEW, CREATE MATERIALIZED VIEW … WITH NO DATA), so it may read a
	// materialized view that is not populated; a query that runs fails
	// with 55000 on one, as in PostgreSQL.
	DefinitionOnly bool
	// Optimize runs Optimize (optimize.go: join order, secondary-index
	// scans, index nested-loop joins) on the plans of the statements it
	// binds. Off for a view's query, which a refresh analyzes as bound and
	// optimizes only what it evaluates (refresh/evalplan.go).
	Optimize bool
	// Stats, when set, tell the optimizer the tables' sizes (estimate.go).
	Stats Stats
	// AllowModifyingWith lets the statement's top-level WITH hold INSERT,
	// UPDATE and DELETE queries (statements the session runs; not views,
	// refreshes or cursors).
	AllowModifyingWith bool
	// AllowRowLocks lets SELECT … FOR UPDATE / SHARE lock rows (a
	// LockRows node); elsewhere the clause is 0A000 (bind_row_locks.go).
	AllowRowLocks bool
	// lockReq is the locking clauses of the SELECT level being bound.
	lockReq *lockRequest
	// mod tracks the statement's data-modifying WITH queries.
	mod modifyingState
	// inline holds the arguments of the SQL functions whose bodies are
	// being bound (bind_sqlfunc.go), innermost last.
	inline []inlineFrame
	// assignTo names the column an assignment coercion targets (messages).
	assignTo string
	// consts hands out the constants of literals (newConst).
	consts []Const
	// Params holds the type of each parameter: preset from the client's
	// Parse message (Unknown = infer), filled in as the binder infers them.
	Params []types.T

	// outer is the scope of the query enclosing the one being bound (nil
	// at the top); lvl its evaluation level (see scope.go).
	outer *scope
	lvl   *level
	// ctes are the WITH queries visible where the binder is.
	ctes *cteEnv
	// cteStack are the WITH queries whose bodies are being bound.
	cteStack []*cteDef
	// outerTargets records, per column reference bound as an OuterRef, the
	// level it reads (a CTE body reading none above its own level is
	// uncorrelated and can be shared).
	outerTargets []*level
	// volatile counts calls of non-deterministic functions bound.
	volatile int
	// subqueries numbers Subquery expressions.
	subqueries int
	// views are the views being expanded, innermost last (cycle check).
	views []uint32
	// uses, when set, collects the column uses of the statement's own
	// references (column_uses.go).
	uses *[]ColumnUse
	// relUses, when set, collects the relation names of the statement's
	// own text (relation_uses.go).
	relUses *[]RelationUse
	// siblings are the FROM items left of the derived table being bound,
	// which it cannot see (for the error message).
	siblings []string
}

// estimator returns the estimator Optimize uses.
func (b *Binder) estimator() *Estimator { return NewEstimator(b.Cat, b.Stats) }

// init sets up the top evaluation level.
func (b *Binder) init() {
	if b.lvl == nil {
		b.lvl = &level{}
	}
}

func (b *Binder) errAt(loc int32, code, format string, args ...any) *pgerror.Error {
	e := pgerror.New(code, format, args...)
	if loc >= 0 && b.Stmt != nil {
		e.Position = b.Stmt.Position(loc)
	}
	return e
}

// FinishParams gives every parameter whose type could not be inferred the
// type text, as PostgreSQL treats unknown.
func (b *Binder) FinishParams() {
	for i, t := range b.Params {
		if t.Kind == types.KindUnknown || t.Kind == types.KindNull {
			b.Params[i] = types.Text
		}
	}
}

func (b *Binder) param(n int) types.T {
	for len(b.Params) < n {
		b.Params = append(b.Params, types.Unknown)
	}
	return b.Params[n-1]
}

// implicitCast reports whether PostgreSQL converts from → to without a cast.
func implicitCast(from, to types.T) bool {
	if from.IsArray() || to.IsArray() {
		return from.Kind == types.KindNull || from.Kind == types.KindUnknown || arrayImplicitCast(from, to)
	}
	if from.Kind == to.Kind {
		return sameEnum(from, to)
	}
	switch from.Kind {
	case types.KindNull, types.KindUnknown:
		return true
	case types.KindOid, types.KindRegclass, types.KindRegtype, types.KindRegproc, types.KindRegnamespace, types.KindRegrole:
		return to.IsOidAlias() || to.Kind == types.KindInt8
	case types.KindInt2:
		return to.Kind == types.KindInt4 || to.Kind == types.KindInt8 || to.Kind == types.KindNumeric || to.Kind == types.KindFloat4 || to.Kind == types.KindFloat8
	case types.KindInt4:
		return to.Kind == types.KindInt8 || to.Kind == types.KindNumeric || to.Kind == types.KindFloat4 || to.Kind == types.KindFloat8 || to.Kind == types.KindOid
	case types.KindInt8:
		return to.Kind == types.KindNumeric || to.Kind == types.KindFloat4 || to.Kind == types.KindFloat8
	case types.KindNumeric:
		return to.Kind == types.KindFloat4 || to.Kind == types.KindFloat8
	case types.KindFloat4:
		return to.Kind == types.KindFloat8
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName:
		return to.Kind == types.KindText || to.Kind == types.KindVarchar || to.Kind == types.KindName || to.Kind == types.KindChar
	case types.KindDate:
		return to.Kind == types.KindTimestamp || to.Kind == types.KindTimestampTZ
	case types.KindTimestamp:
		return to.Kind == types.KindTimestampTZ
	}
	return false
}

// assignCast reports whether a value of type from may be stored in a column
// of type to (PostgreSQL's assignment casts).
func assignCast(from, to types.T) bool {
	if implicitCast(from, to) {
		return true
	}
	if from.IsArray() && to.Kind == types.KindArray {
		return assignCast(from.ElemType(), to.ElemType())
	}
	if to.IsString() {
		return true
	}
	switch {
	case from.IsNumeric() && to.IsNumeric():
		return true
	case from.Kind == types.KindTimestamp && to.Kind == types.KindDate,
		from.Kind == types.KindTimestampTZ && (to.Kind == types.KindDate || to.Kind == types.KindTimestamp):
		return true
	case from.Kind == types.KindJSON && to.Kind == types.KindJSONB, from.Kind == types.KindJSONB && to.Kind == types.KindJSON:
		// pg_cast's json <-> jsonb casts are assignment casts: a jsonb
		// parameter (postgres.js's sql.json) goes into a json column.
		return true
	}
	return false
}

// coerce converts e to type t: untyped literals and parameters take t,
// otherwise an implicit (or, when assign, assignment) cast is added.
func (b *Binder) coerce(e Expr, t types.T, assign bool, loc int32) (Expr, error) {
	et := e.Type()
	switch x := e.(type) {
	case *Const:
		if et.Kind == types.KindUnknown || et.Kind == types.KindNull {
			if x.D.IsNull() {
				return b.newConst(types.NullDatum, t), nil
			}
			d, err := types.ParseText(x.D.S, t, b.Env)
			if err != nil {
				if pe, ok := err.(*pgerror.Error); ok && pe.Position == 0 && loc >= 0 {
					pe.Position = b.Stmt.Position(loc)
				}
				return nil, err
			}
			return b.newConst(d, t), nil
		}
	case *Param:
		if et.Kind == types.KindUnknown {
			b.Params[x.N-1] = t
			return &Param{N: x.N, T: t}, nil
		}
	}
	if et.Kind == t.Kind && et.Elem == t.Elem && et.Width == t.Width && et.Precision == t.Precision && et.Scale == t.Scale && sameEnum(et, t) {
		return e, nil
	}
	if et.Kind == t.Kind && et.Elem == t.Elem && !assign && sameEnum(et, t) {
		return e, nil
	}
	ok := implicitCast(et, t)
	if assign {
		ok = assignCast(et, t)
	}
	if !ok {
		if assign {
			col := "column"
			if b.assignTo != "" {
				col = "column \"" + b.assignTo + "\""
			}
			return nil, b.errAt(loc, pgerror.DatatypeMismatch, "%s is of type %s but expression is of type %s", col, types.T{Kind: t.Kind, Elem: t.Elem}.String(), types.T{Kind: et.Kind, Elem: et.Elem}.String()).
				WithHint("You will need to rewrite or cast the expression.")
		}
		return nil, b.errAt(loc, pgerror.DatatypeMismatch, "cannot convert %s to %s", et.String(), t.String())
	}
	// Fold casts of constants now.
	if c, ok := e.(*Const); ok {
		d, err := types.Cast(c.D, t, b.Env, false)
		if err != nil {
			return nil, err
		}
		return b.newConst(d, t), nil
	}
	return &Cast{E: e, T: t}, nil
}

// newConst returns a constant from a chunk of them: a 1000-row INSERT …
// VALUES binds thousands of literals, one allocation each before.
func (b *Binder) newConst(d types.Datum, t types.T) *Const {
	if len(b.consts) == 0 {
		b.consts = make([]Const, 64)
	}
	c := &b.consts[0]
	b.consts = b.consts[1:]
	c.D, c.T = d, t
	return c
}

// numericRank orders number types for promotion.
func numericRank(k types.Kind) int {
	switch k {
	case types.KindInt2:
		return 1
	case types.KindInt4:
		return 2
	case types.KindInt8:
		return 3
	case types.KindNumeric:
		return 4
	case types.KindFloat4:
		return 5
	case types.KindFloat8:
		return 6
	}
	return 0
}

// commonType finds the type two operands are compared or combined in.
func commonType(a, b types.T) (types.T, bool) {
	ua := a.Kind == types.KindUnknown || a.Kind == types.KindNull
	ub := b.Kind == types.KindUnknown || b.Kind == types.KindNull
	switch {
	case ua && ub:
		return types.Text, true
	case ua:
		return b, true
	case ub:
		return a, true
	case a.IsArray() && b.IsArray():
		return arrayCommonType(a, b)
	case a.IsArray() || b.IsArray():
		return types.T{}, false
	case !sameEnum(a, b):
		return types.T{}, false
	case a.Kind == b.Kind:
		// A type modifier survives only when every input has the same one
		// (PostgreSQL's select_common_typmod).
		if a != b && (a.Kind == types.KindNumeric || a.Kind == types.KindVarchar || a.Kind == types.KindChar) {
			return types.T{Kind: a.Kind}, true
		}
		return a, true
	case a.IsOidAlias() && b.IsOidAlias():
		// regclass = oid compares as oid (PostgreSQL's binary coercion).
		return types.Oid, true
	case a.IsOidAlias() && (b.Kind == types.KindInt4 || b.Kind == types.KindInt2),
		b.IsOidAlias() && (a.Kind == types.KindInt4 || a.Kind == types.KindInt2):
		return types.Oid, true
	}
	if a.IsNumeric() && b.IsNumeric() {
		ra, rb := numericRank(a.Kind), numericRank(b.Kind)
		if a.Kind == types.KindOid || b.Kind == types.KindOid {
			return types.Int8, true
		}
		hi := a
		if rb > ra {
			hi = b
		}
		// real mixed with an integer or numeric is computed in double
		if (a.Kind == types.KindFloat4 || b.Kind == types.KindFloat4) && hi.Kind == types.KindFloat4 && a.Kind != b.Kind {
			return types.Float8, true
		}
		if hi.Kind == types.KindNumeric {
			return types.Numeric, true
		}
		return hi, true
	}
	if a.IsString() && b.IsString() {
		return types.Text, true
	}
	if a.IsTime() && b.IsTime() {
		if a.Kind == types.KindTimestampTZ || b.Kind == types.KindTimestampTZ {
			return types.TimestampTZ, true
		}
		return types.Timestamp, true
	}
	return types.T{}, false
}
