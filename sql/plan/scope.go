package plan

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// scopeCol is a column visible to expressions: its relation alias, name,
// type and whether * expands to it.
type scopeCol struct {
	rel  string
	name string
	t    types.T
	// hidden columns are not expanded by * (row-tracking columns, and
	// unnamed slots that cannot be referenced at all).
	hidden bool
	// qualifiedOnly columns answer only to rel.name and rel.*: a USING
	// column's copy on either side of the join, whose merged column takes
	// the unqualified name and the place in * (PostgreSQL's rule).
	qualifiedOnly bool
	table         uint32
	attnum        int16
	scanIdx       int   // index within its scan (for marking Needed), -1 if none
	scan          *Scan // the scan that produces it, if any
	// fields are a record column's fields (Column.Fields).
	fields []Column
}

// scope is the list of columns of the current FROM clause, in row order,
// and the chain of scopes of the enclosing queries.
type scope struct {
	cols []scopeCol
	rels []string // relation aliases in order (for missing FROM-entry errors)
	// relIDs[i] is the table id when rels[i] is an unaliased table, else 0
	// (two unaliased tables of different schemas may share a name).
	relIDs []uint32
	// outer is the scope of the enclosing query whose columns this query
	// may reference (a subquery in an expression, a LATERAL item); nil at
	// the top. A derived table in FROM sees the outer scope of the query it
	// is in, not its sibling FROM items (R-Q2).
	outer *scope
	// lvl is the evaluation level the row of this scope belongs to.
	lvl *level
	// hidden are relations of the query this scope cannot reach (hidden by
	// a join alias), for PostgreSQL's "invalid reference" message.
	hidden []string
	// oids are the OIDs of the tables and system relations in scope, by
	// alias, for their tableoid column (tableoid.go).
	oids map[string]uint32
}

// level is one evaluation level of a statement: the top query, or a query
// the executor runs once per row of an enclosing level (a subquery in an
// expression, a LATERAL item). Derived tables and CTE bodies share the level
// of the query they are bound in.
type level struct {
	parent *level
	// params are expressions over the parent level's row whose values the
	// level's OuterRefs read; keys dedupe them.
	params []Expr
	keys   map[string]int
	// aggs collects the parent query's aggregates where the subquery sits
	// (nil where they are not allowed, aggClause saying where that is).
	aggs      *aggCollector
	aggClause string
}

func (s *scope) hasRel(rel string) bool {
	for _, r := range s.rels {
		if r == rel {
			return true
		}
	}
	return false
}

// find returns the index of the column rel.name (rel "" = unqualified) in
// s alone, -1 if absent, or a 42702 error when several match.
func (s *scope) find(rel, name string, b *Binder, parts []string, loc int32) (int, error) {
	found := -1
	for i, c := range s.cols {
		if c.name != name || c.name == "" {
			continue
		}
		if rel == "" && c.qualifiedOnly || rel != "" && c.rel != rel {
			continue
		}
		if found >= 0 {
			return 0, b.errAt(loc, pgerror.AmbiguousColumn, "column reference \"%s\" is ambiguous", strings.Join(parts, "."))
		}
		found = i
	}
	return found, nil
}

// markNeeded marks the scan column behind scope column i as read.
func (s *scope) markNeeded(i int) {
	c := s.cols[i]
	if c.scan != nil && c.scanIdx >= 0 {
		c.scan.Needed[c.scanIdx] = true
	}
}

// resolveColumn binds a column reference: a ColRef when it names a column
// of s, an OuterRef when it names a column of an enclosing query (the
// nearest one that has it, as PostgreSQL searches).
func (b *Binder) resolveColumn(s *scope, ref *pg_query.ColumnRef, parts []string, loc int32) (Expr, error) {
	var rel, name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		rel, name = parts[0], parts[1]
	case 3:
		rel, name = parts[1], parts[2]
	default:
		return nil, b.errAt(loc, pgerror.SyntaxError, "improper qualified name (too many dotted names): %s", strings.Join(parts, "."))
	}
	for cur := s; cur != nil; cur = cur.outer {
		i, err := cur.find(rel, name, b, parts, loc)
		if err != nil {
			return nil, err
		}
		if i < 0 && name == TableOIDColumn {
			e, ok, err := cur.tableOID(b, rel, loc)
			if err != nil {
				return nil, err
			}
			if ok {
				return e, nil
			}
		}
		if i < 0 {
			if rel != "" && cur.hasRel(rel) {
				// The relation is here, so the column must be too.
				e := b.errAt(loc, pgerror.UndefinedColumn, "column %s does not exist", strings.Join(parts, "."))
				e.Hint = s.suggestColumn(rel, name)
				return nil, e
			}
			continue
		}
		cur.markNeeded(i)
		c := cur.cols[i]
		b.noteUse(ref, c)
		b.noteQualifier(cur, ref, rel)
		cr := &ColRef{Idx: i, T: c.t, Name: c.name}
		if cur.lvl == s.lvl {
			return cr, nil
		}
		b.outerTargets = append(b.outerTargets, cur.lvl)
		return b.outerRef(s.lvl, cur.lvl, cr)
	}
	if rel != "" {
		if b.isHidden(s, rel) {
			return nil, b.errAt(loc, pgerror.UndefinedTable, "invalid reference to FROM-clause entry for table \"%s\"", rel).
				WithHint("There is an entry for table \"%s\", but it cannot be referenced from this part of the query.", rel)
		}
		return nil, b.errAt(loc, pgerror.UndefinedTable, "missing FROM-clause entry for table \"%s\"", rel)
	}
	var e *pgerror.Error
	if len(parts) > 1 {
		e = b.errAt(loc, pgerror.UndefinedColumn, "column %s does not exist", strings.Join(parts, "."))
	} else {
		e = b.errAt(loc, pgerror.UndefinedColumn, "column \"%s\" does not exist", name)
	}
	if (name == HiddenRowID || name == HiddenCommitVersion) && s.hasUntrackedScan() {
		e.Hint = "Row tracking is off for this table: ALTER TABLE … SET TBLPROPERTIES (delta.enableRowTracking = true)."
	} else {
		e.Hint = s.suggestColumn(rel, name)
	}
	return nil, e
}

// suggestColumn is PostgreSQL's hint for a column that does not exist: the
// column (of relation rel, when given) whose name is closest by edit
// distance, if at most half its letters differ, or the two closest of two
// relations; none when one relation has two equally close columns
// (ambiguous) or nothing is close.
func (s *scope) suggestColumn(rel, name string) string {
	type cand struct{ rel, col string }
	best := -1
	var found []cand
	for cur := s; cur != nil; cur = cur.outer {
		for _, c := range cur.cols {
			if c.name == "" || c.hidden || c.rel == "" || rel != "" && c.rel != rel {
				continue
			}
			d := levenshtein(name, c.name)
			switch {
			case d > len(c.name)/2 || best >= 0 && d > best:
			case best < 0 || d < best:
				best, found = d, []cand{{c.rel, c.name}}
			default:
				found = append(found, cand{c.rel, c.name})
			}
		}
	}
	if len(found) == 0 || len(found) > 2 || len(found) == 2 && found[0].rel == found[1].rel {
		return ""
	}
	hint := "Perhaps you meant to reference the column \"" + found[0].rel + "." + found[0].col + "\""
	if len(found) == 2 {
		hint += " or the column \"" + found[1].rel + "." + found[1].col + "\""
	}
	return hint + "."
}

// levenshtein is the edit distance of two names (bytes, as PostgreSQL's
// varstr_levenshtein counts).
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// outerRef returns an expression valid at level cur for e, an expression
// valid at level target (an ancestor of cur): each level between relays the
// value as one of its params.
func (b *Binder) outerRef(cur, target *level, e Expr) (Expr, error) {
	if cur == target {
		return e, nil
	}
	if cur == nil {
		return nil, pgerror.New(pgerror.InternalError, "outer reference to a level that does not enclose the query")
	}
	inner, err := b.outerRef(cur.parent, target, e)
	if err != nil {
		return nil, err
	}
	key := inner.String() + "/" + inner.Type().String()
	if cur.keys == nil {
		cur.keys = map[string]int{}
	}
	idx, ok := cur.keys[key]
	if !ok {
		idx = len(cur.params)
		cur.params = append(cur.params, inner)
		cur.keys[key] = idx
	}
	name := ""
	switch x := inner.(type) {
	case *ColRef:
		name = x.Name
	case *OuterRef:
		name = x.Name
	}
	return &OuterRef{Idx: idx, T: inner.Type(), Name: name}, nil
}

// resolve finds the row index of a column reference in s itself (no outer
// scopes): for clauses that must name a column of this query.
func (s *scope) resolve(parts []string, b *Binder, loc int32) (int, error) {
	inner := &scope{cols: s.cols, rels: s.rels, lvl: s.lvl}
	e, err := b.resolveColumn(inner, nil, parts, loc)
	if err != nil {
		return 0, err
	}
	return e.(*ColRef).Idx, nil
}

// hasUntrackedScan reports whether a table in scope has row tracking off
// (its hidden columns occupy unnamed slots).
func (s *scope) hasUntrackedScan() bool {
	for _, c := range s.cols {
		if c.hidden && c.name == "" {
			return true
		}
	}
	return false
}

func (s *scope) add(o *scope) *scope {
	return &scope{
		cols:   append(append([]scopeCol(nil), s.cols...), o.cols...),
		rels:   append(append([]string(nil), s.rels...), o.rels...),
		relIDs: append(append([]uint32(nil), s.relIDs...), o.relIDs...),
		hidden: append(append([]string(nil), s.hidden...), o.hidden...),
		oids:   mergeOIDs(s.oids, o.oids),
		outer:  s.outer, lvl: s.lvl,
	}
}

// newScope returns an empty scope of the query being bound: it sees the
// enclosing queries' columns only.
func (b *Binder) newScope() *scope {
	b.init()
	return &scope{outer: b.outer, lvl: b.lvl}
}

// scanScope builds the scope of a table scan under alias rel.
func (b *Binder) scanScope(sc *Scan, rel string, rowTracking bool) *scope {
	s := b.newScope()
	s.rels, s.relIDs = []string{rel}, []uint32{0}
	s.withTableOID(rel, sc.Table.ID)
	for i, c := range sc.Columns() {
		hidden := i >= len(sc.Table.Columns)
		if hidden && !rowTracking {
			// still occupies a slot in the row, but cannot be referenced
			s.cols = append(s.cols, scopeCol{rel: "", name: "", t: c.T, hidden: true, scanIdx: i, scan: sc})
			continue
		}
		s.cols = append(s.cols, scopeCol{rel: rel, name: c.Name, t: c.T, hidden: hidden, table: c.Table, attnum: c.AttrNum, scanIdx: i, scan: sc})
	}
	return s
}

// visible returns the indexes of the columns * expands to, in order.
func (s *scope) visible() []int {
	var out []int
	for i, c := range s.cols {
		if !c.hidden && !c.qualifiedOnly && c.name != "" {
			out = append(out, i)
		}
	}
	return out
}

// isHidden reports whether rel names a relation of the statement that is
// out of reach where s is: hidden by a join alias, or a sibling of the
// derived table being bound.
func (b *Binder) isHidden(s *scope, rel string) bool {
	for cur := s; cur != nil; cur = cur.outer {
		for _, h := range cur.hidden {
			if h == rel {
				return true
			}
		}
	}
	for _, h := range b.siblings {
		if h == rel {
			return true
		}
	}
	return false
}
