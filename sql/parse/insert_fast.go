package parse

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// A fast path for the bulk INSERT … VALUES of literals that loaders and
// mvbench send: pg_query parses it in C, serialises the tree to protobuf
// and Go unmarshals it again, half the CPU of a 1000-row INSERT. For
//
//	INSERT INTO [schema.]name [(col, …)] VALUES (lit, …) [, (lit, …)]…
//
// where a name is an unquoted identifier that is no keyword (unreserved
// keywords are identifiers) or a quoted identifier, and a lit is an
// integer, a decimal, a string constant ('…' with '' escapes), NULL, TRUE,
// FALSE, -number, type 'string' or 'string'::type for the types of
// fastTypes, insertFast builds the very tree pg_query builds, locations
// included. Anything else (DEFAULT, RETURNING, ON CONFLICT, expressions,
// E'' or dollar quotes, string continuation, $n, …) returns nil and goes
// to pg_query. TestInsertFastPath and FuzzInsertFastPath compare the two
// trees with proto.Equal.

// insertFast returns pg_query's statement for src, the text of one
// statement (Parse has split the query and trimmed space and comments
// around it) whose significant tokens are sig, or nil when src is not of
// the fast path's form.
func insertFast(src string, sig []token) *pg_query.Node {
	if strings.IndexByte(src, 0) >= 0 {
		// pg_query reads a C string: a NUL byte ends its input.
		return nil
	}
	f := fastInsert{src: src, sig: sig}
	ins := f.parse()
	if ins == nil {
		return nil
	}
	return &pg_query.Node{Node: &pg_query.Node_InsertStmt{InsertStmt: ins}}
}

// fastInsert is the state of one insertFast. The tree's nodes of the
// values come from slabs: a 1000-row INSERT has some 20 000 of them, and
// one allocation per node was most of the fast path's time.
type fastInsert struct {
	src string
	sig []token
	i   int

	nodes   slab[pg_query.Node]
	aconsts slab[pg_query.Node_AConst]
	consts  slab[pg_query.A_Const]
	ivals   slab[pg_query.A_Const_Ival]
	ints    slab[pg_query.Integer]
	svals   slab[pg_query.A_Const_Sval]
	strs    slab[pg_query.String]
	fvals   slab[pg_query.A_Const_Fval]
	floats  slab[pg_query.Float]
	casts   slab[pg_query.Node_TypeCast]
	tcasts  slab[pg_query.TypeCast]
	tnames  slab[pg_query.TypeName]
	lists   slab[pg_query.Node_List]
	plists  slab[pg_query.List]
	strNode slab[pg_query.Node_String_]
	ptrs    []*pg_query.Node // backs the items and names slices
}

// nodeSlice returns a copy of xs from ptrs, its capacity its length.
func (f *fastInsert) nodeSlice(xs []*pg_query.Node) []*pg_query.Node {
	if len(f.ptrs) < len(xs) {
		f.ptrs = make([]*pg_query.Node, max(len(xs), 4096))
	}
	out := f.ptrs[:len(xs):len(xs)]
	f.ptrs = f.ptrs[len(xs):]
	copy(out, xs)
	return out
}

// slab hands out zero Ts from chunks that grow to 1024.
type slab[T any] struct {
	free []T
	n    int
}

func (s *slab[T]) new() *T {
	if len(s.free) == 0 {
		s.n = min(max(2*s.n, 8), 1024)
		s.free = make([]T, s.n)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	return p
}

func (f *fastInsert) parse() *pg_query.InsertStmt {
	if !f.word("insert") || !f.word("into") {
		return nil
	}
	rel := &pg_query.RangeVar{Inh: true, Relpersistence: "p", Location: f.loc()}
	name, ok := f.name()
	if !ok {
		return nil
	}
	if f.op(".") {
		rel.Schemaname = name
		if name, ok = f.name(); !ok {
			return nil
		}
	}
	rel.Relname = name
	ins := &pg_query.InsertStmt{Relation: rel, Override: pg_query.OverridingKind_OVERRIDING_NOT_SET}
	if f.op("(") {
		for {
			loc := f.loc()
			col, ok := f.name()
			if !ok {
				return nil
			}
			ins.Cols = append(ins.Cols, &pg_query.Node{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{Name: col, Location: loc}}})
			if f.op(")") {
				break
			}
			if !f.op(",") {
				return nil
			}
		}
	}
	if !f.word("values") {
		return nil
	}
	sel := &pg_query.SelectStmt{LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT, Op: pg_query.SetOperation_SETOP_NONE}
	var row []*pg_query.Node
	for {
		if !f.op("(") {
			return nil
		}
		row = row[:0]
		for {
			v := f.literal()
			if v == nil {
				return nil
			}
			row = append(row, v)
			if f.op(")") {
				break
			}
			if !f.op(",") {
				return nil
			}
		}
		n, l, pl := f.nodes.new(), f.lists.new(), f.plists.new()
		pl.Items = f.nodeSlice(row)
		l.List = pl
		n.Node = l
		sel.ValuesLists = append(sel.ValuesLists, n)
		if f.i == len(f.sig) {
			break
		}
		if !f.op(",") {
			return nil
		}
	}
	ins.SelectStmt = &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}
	return ins
}

// loc is the location of the next token.
func (f *fastInsert) loc() int32 {
	if f.i < len(f.sig) {
		return int32(f.sig[f.i].start)
	}
	return -1
}

func (f *fastInsert) peek() (token, bool) {
	if f.i < len(f.sig) {
		return f.sig[f.i], true
	}
	return token{}, false
}

// word consumes the unquoted keyword w (lower case). ASCII letters only:
// strings.EqualFold would take "inſert" (a long s) for INSERT.
func (f *fastInsert) word(w string) bool {
	if t, ok := f.peek(); ok && t.kind == tokIdent && t.end-t.start == len(w) && lowerASCII(t.text(f.src)) == w {
		f.i++
		return true
	}
	return false
}

// op consumes the operator or punctuation token s.
func (f *fastInsert) op(s string) bool {
	if t, ok := f.peek(); ok && t.kind == tokOp && t.text(f.src) == s {
		f.i++
		return true
	}
	return false
}

// maxIdentLen is PostgreSQL's NAMEDATALEN-1: a longer name is truncated
// (with a NOTICE), which the fast path leaves to pg_query.
const maxIdentLen = 63

// name consumes a ColId: an identifier that is no keyword, an unreserved
// keyword, or a quoted identifier.
func (f *fastInsert) name() (string, bool) {
	t, ok := f.peek()
	if !ok {
		return "", false
	}
	s := t.text(f.src)
	switch t.kind {
	case tokIdent:
		if len(s) > maxIdentLen {
			return "", false
		}
		s = lowerASCII(s)
		if keywords[s] {
			return "", false
		}
	case tokQuoted:
		if len(s) < 3 || s[len(s)-1] != '"' {
			return "", false
		}
		var ok bool
		if s, ok = unquote(s, '"'); !ok || len(s) == 0 || len(s) > maxIdentLen {
			return "", false
		}
	default:
		return "", false
	}
	f.i++
	return s, true
}

// literal consumes one literal of the fast path's forms.
func (f *fastInsert) literal() *pg_query.Node {
	t, ok := f.peek()
	if !ok {
		return nil
	}
	loc := int32(t.start)
	switch t.kind {
	case tokNumber:
		f.i++
		return f.number(t.text(f.src), false, loc)
	case tokOp:
		if t.text(f.src) != "-" || f.i+1 >= len(f.sig) || f.sig[f.i+1].kind != tokNumber {
			return nil
		}
		// -5 is folded into the constant, located at the sign; a cast
		// binds tighter (-5::int is an operator), as does anything after.
		f.i += 2
		if f.castNext() {
			return nil
		}
		return f.number(f.sig[f.i-1].text(f.src), true, loc)
	case tokString:
		s, ok := stringConst(t.text(f.src))
		if !ok {
			return nil
		}
		f.i++
		c := f.aConstString(s, loc)
		if !f.castNext() {
			return c
		}
		// 'string'::type
		castLoc := f.loc()
		f.i++
		tt, ok := f.peek()
		if !ok || tt.kind != tokIdent {
			return nil
		}
		ft, ok := fastTypes[lowerASCII(tt.text(f.src))]
		if !ok {
			return nil
		}
		f.i++
		return f.typeCast(c, ft, int32(tt.start), castLoc)
	case tokIdent:
		w := lowerASCII(t.text(f.src))
		switch w {
		case "null":
			f.i++
			n, c := f.aConst(loc)
			c.Isnull = true
			return n
		case "true", "false":
			f.i++
			n, c := f.aConst(loc)
			c.Val = &pg_query.A_Const_Boolval{Boolval: &pg_query.Boolean{Boolval: w == "true"}}
			return n
		}
		// type 'string'
		ft, ok := fastTypes[w]
		if !ok || f.i+1 >= len(f.sig) || f.sig[f.i+1].kind != tokString {
			return nil
		}
		st := f.sig[f.i+1]
		s, ok := stringConst(st.text(f.src))
		if !ok {
			return nil
		}
		f.i += 2
		if f.castNext() {
			return nil
		}
		return f.typeCast(f.aConstString(s, int32(st.start)), ft, loc, -1)
	}
	return nil
}

// castNext reports whether a :: follows.
func (f *fastInsert) castNext() bool {
	t, ok := f.peek()
	return ok && t.kind == tokOp && t.text(f.src) == "::"
}

// number is the constant of a numeric token: an Integer when it fits in
// 32 bits, a Float holding the text otherwise (PostgreSQL's scanner), or
// nil for a form the fast path leaves to pg_query (exponent without
// digits, 1_000, several points).
func (f *fastInsert) number(s string, neg bool, loc int32) *pg_query.Node {
	k, digits := 0, 0
	for ; k < len(s) && s[k] >= '0' && s[k] <= '9'; k++ {
		digits++
	}
	integer := k == len(s)
	if k < len(s) && s[k] == '.' {
		for k++; k < len(s) && s[k] >= '0' && s[k] <= '9'; k++ {
			digits++
		}
	}
	if digits == 0 {
		return nil
	}
	if k < len(s) && (s[k] == 'e' || s[k] == 'E') {
		k++
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		exp := k
		for ; k < len(s) && s[k] >= '0' && s[k] <= '9'; k++ {
		}
		if k == exp {
			return nil
		}
	}
	if k != len(s) {
		return nil
	}
	if integer {
		if v, err := strconv.ParseInt(s, 10, 32); err == nil {
			if neg {
				v = -v
			}
			n, c := f.aConst(loc)
			iv, in := f.ivals.new(), f.ints.new()
			in.Ival = int32(v)
			iv.Ival = in
			c.Val = iv
			return n
		}
	}
	if neg {
		s = "-" + s
	}
	n, c := f.aConst(loc)
	fv, fl := f.fvals.new(), f.floats.new()
	fl.Fval = s
	fv.Fval = fl
	c.Val = fv
	return n
}

// stringConst is the value of a standard string token ('…', ” for a
// quote, backslashes literal as standard_conforming_strings has them).
func stringConst(s string) (string, bool) {
	if len(s) < 2 || s[0] != '\'' {
		return "", false // E'', X'', B'', N'', $$…$$
	}
	return unquote(s, '\'')
}

// unquote strips the quotes q around s and undoubles the inner ones; it
// fails for an unterminated s.
func unquote(s string, q byte) (string, bool) {
	inner := s[1:]
	if strings.IndexByte(inner, q) == len(inner)-1 {
		return inner[:len(inner)-1], true // no doubled quote: no copy
	}
	var b strings.Builder
	b.Grow(len(inner))
	for k := 0; k < len(inner); k++ {
		c := inner[k]
		if c != q {
			b.WriteByte(c)
			continue
		}
		if k == len(inner)-1 {
			return b.String(), true
		}
		if inner[k+1] != q {
			return "", false
		}
		b.WriteByte(q)
		k++
	}
	return "", false // unterminated
}

// aConst returns a new constant at loc and the node holding it.
func (f *fastInsert) aConst(loc int32) (*pg_query.Node, *pg_query.A_Const) {
	n, ac, c := f.nodes.new(), f.aconsts.new(), f.consts.new()
	c.Location = loc
	ac.AConst = c
	n.Node = ac
	return n, c
}

func (f *fastInsert) aConstString(s string, loc int32) *pg_query.Node {
	n, c := f.aConst(loc)
	sv := f.svals.new()
	sv.Sval = f.str(s)
	c.Val = sv
	return n
}

func (f *fastInsert) str(s string) *pg_query.String {
	p := f.strs.new()
	p.Sval = s
	return p
}

// fastType is a type name of the fast path's casts and how PostgreSQL's
// grammar names it: a keyword type (INT) as pg_catalog.int4, a plain name
// (DATE) as itself.
type fastType struct {
	catalog bool
	name    string
}

var fastTypes = map[string]fastType{
	"date": {false, "date"}, "timestamptz": {false, "timestamptz"}, "text": {false, "text"},
	"uuid": {false, "uuid"}, "int2": {false, "int2"}, "int4": {false, "int4"}, "int8": {false, "int8"},
	"timestamp": {true, "timestamp"}, "int": {true, "int4"}, "integer": {true, "int4"},
	"smallint": {true, "int2"}, "bigint": {true, "int8"}, "numeric": {true, "numeric"},
	"decimal": {true, "numeric"}, "boolean": {true, "bool"}, "real": {true, "float4"},
}

func (f *fastInsert) typeCast(arg *pg_query.Node, ft fastType, typeLoc, castLoc int32) *pg_query.Node {
	var names [2]*pg_query.Node
	k := 0
	if ft.catalog {
		names[k] = f.strNodeOf("pg_catalog")
		k++
	}
	names[k] = f.strNodeOf(ft.name)
	k++
	n, nc, tc, tn := f.nodes.new(), f.casts.new(), f.tcasts.new(), f.tnames.new()
	tn.Names, tn.Typemod, tn.Location = f.nodeSlice(names[:k]), -1, typeLoc
	tc.Arg, tc.TypeName, tc.Location = arg, tn, castLoc
	nc.TypeCast = tc
	n.Node = nc
	return n
}

// strNodeOf is pg_query.MakeStrNode from the slabs.
func (f *fastInsert) strNodeOf(s string) *pg_query.Node {
	n, sn := f.nodes.new(), f.strNode.new()
	sn.String_ = f.str(s)
	n.Node = sn
	return n
}

// lowerASCII folds ASCII letters as PostgreSQL folds an unquoted
// identifier (bytes of multibyte characters stay); it does not allocate
// for a name already in lower case.
func lowerASCII(s string) string {
	for k := 0; k < len(s); k++ {
		if c := s[k]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := k; j < len(b); j++ {
				if c := b[j]; 'A' <= c && c <= 'Z' {
					b[j] = c + 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// keywords are PostgreSQL 17's reserved, column-name and type/function-name
// keywords (kwlist.h): none is a plain identifier everywhere a name may
// stand. Unreserved keywords are. TestKeywords checks the list against
// pg_query's scanner.
var keywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric authorization
		between bigint binary bit boolean both case cast char character check coalesce collate collation
		column concurrently constraint create cross current_catalog current_date current_role
		current_schema current_time current_timestamp current_user dec decimal default deferrable desc
		distinct do else end except exists extract false fetch float for foreign freeze from full grant
		greatest group grouping having ilike in initially inner inout int integer intersect interval
		into is isnull join json json_array json_arrayagg json_exists json_object json_objectagg
		json_query json_scalar json_serialize json_table json_value lateral leading least left like
		limit localtime localtimestamp merge_action national natural nchar none normalize not notnull
		null nullif numeric offset on only or order out outer overlaps overlay placing position
		precision primary real references returning right row select session_user setof similar
		smallint some substring symmetric system_user table tablesample then time timestamp to trailing
		treat trim true union unique user using values varchar variadic verbose when where window with
		xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot
		xmlserialize xmltable`) {
		m[w] = true
	}
	return m
}()
