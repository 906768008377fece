package plan

import (
	"math"
	"math/bits"
	"sort"

	"github.com/mvserver/mvserver/sql/types"
)

// The join-order rule. The binder joins FROM items in the order they are
// written and puts each WHERE conjunct on the lowest join that sees its
// columns (pushdown.go), so `FROM a, b, c WHERE a.x = c.x AND b.y = c.y`
// starts with a cross product of a and b. This rule takes each island of
// inner joins — inner and cross joins, and the projections of plain
// columns between them (JOIN … USING, derived tables) — as a join graph:
// its relations (the leaves: scans, outer joins, aggregates, anything
// else, each ordered on its own first) and its predicates (the join keys
// and residuals, over the island's row). It then
//
//  1. merges column equalities (a = b, same type) into equivalence
//     classes: a = b AND b = c also joins a with c, and a class holding a
//     constant (a = b AND b = 5, from a relation's filter) filters every
//     member by it (a = 5);
//  2. moves the predicates that read one relation into its filter;
//  3. searches the join orders: by dynamic programming over the connected
//     subsets of relations up to maxDPLeaves of them, greedily (the pair
//     whose join is smallest first) beyond, never joining two sets no
//     predicate connects while one does (a graph in several pieces
//     joins its pieces last, smallest first);
//  4. costs each join with the estimator (estimate.go): a hash join
//     reads its probe side, builds its right side (the smaller one) and
//     emits its rows; a join without keys compares every pair;
//  5. builds the cheapest tree — equalities across its sides as hash
//     keys, the rest as residuals — under a projection that puts the
//     columns back in the island's order, so the output never changes.
//
// Outer, semi and anti joins stay where they are: they are leaves of the
// island around them and their inputs islands of their own. An island
// whose predicates call a volatile function is left alone (reordering
// would change how often it runs). The rule reports a change only when the
// tree it builds is cheaper than the island's current one, so it finds
// nothing to do in its own output.

// maxDPLeaves is the most relations an island orders by dynamic
// programming (3^n splits); larger islands are ordered greedily. With
// every pair connected (one equality class over all: a star joined on one
// key) 10 relations take 8-10 ms to plan, 11 about 60, 12 about 80
// (BenchmarkJoinOrder, 2 loaded cores); chains take a few ms at any size.
const maxDPLeaves = 10

// maxIslandLeaves is the most relations an island may have to be ordered
// at all (the sets are bit masks).
const maxIslandLeaves = 64

func orderJoins(o *Optimizer, n Node) (Node, bool, error) {
	return o.orderIn(n)
}

// orderIn orders the islands of n, outermost first: an island's leaves
// are ordered before the island.
func (o *Optimizer) orderIn(n Node) (Node, bool, error) {
	if islandRoot(n) {
		return o.orderIsland(n)
	}
	ch := n.Children()
	if len(ch) == 0 {
		return n, false, nil
	}
	out := make([]Node, len(ch))
	changed := false
	for i, c := range ch {
		nc, cc, err := o.orderIn(c)
		if err != nil {
			return nil, false, err
		}
		out[i], changed = nc, changed || cc
	}
	if !changed {
		return n, false, nil
	}
	nn, err := n.WithChildren(out...)
	return nn, true, err
}

// islandRoot reports whether n is an inner or cross join, or a projection
// of plain columns over one.
func islandRoot(n Node) bool {
	switch x := n.(type) {
	case *Join:
		return x.Kind == JoinInner || x.Kind == JoinCross
	case *Project:
		return plainColumns(x) && islandRoot(x.Input)
	}
	return false
}

// plainColumns reports whether every expression of p is a column.
func plainColumns(p *Project) bool {
	for _, e := range p.Exprs {
		if _, ok := e.(*ColRef); !ok {
			return false
		}
	}
	return true
}

// island is one join graph. Its row is every leaf's columns, leaf after
// leaf (leaf i from offset off[i]); predicates read that row.
type island struct {
	o      *Optimizer
	leaves []Node
	off    []int
	width  int
	colOf  []int // island column → its leaf
	preds  []jpred
	ecs    []*eqClass
	top    []Expr // predicates reading no leaf
	// filters are the conditions moved or derived into each leaf (over
	// the leaf's row).
	filters [][]Expr
	// existing is the island's current tree, for its cost.
	existing *shape
	out      []int // the island columns of the root's output columns
	// ndvOf caches colNDV for the leaves ndvFor.
	ndvOf  []float64
	ndvFor []Node
	// keysOf caches leafKeys (joinorder_lookup.go), keysDone says which
	// leaves it has.
	keysOf   [][][]int
	keysDone []bool
}

// jpred is one predicate over the island row and the leaves it reads.
type jpred struct {
	e    Expr
	mask uint64
}

// eqClass is a set of island columns a conjunction of equalities makes
// equal, and the constant they equal (nil: none known).
type eqClass struct {
	cols  []int
	mask  uint64
	konst Expr
	// leafNDV caches, for the leaves leafFor, the most distinct values
	// of the class's members in each leaf (maxNDV).
	leafNDV []float64
	leafFor []Node
}

// shape is the island's current join tree (projections skipped).
type shape struct {
	leaf    int // a leaf's index when l is nil
	l, r    *shape
	hasKeys bool
}

// collect walks the island rooted at n: it numbers the leaves and
// gathers the predicates, returning the island columns of n's output.
func (is *island) collect(n Node) ([]int, *shape) {
	switch x := n.(type) {
	case *Join:
		if x.Kind == JoinInner || x.Kind == JoinCross {
			lo, ls := is.collect(x.Left)
			ro, rs := is.collect(x.Right)
			row := append(append([]int(nil), lo...), ro...)
			for i := range x.LeftKeys {
				is.addPred(&Binary{Op: OpEq, L: remapCols(x.LeftKeys[i], lo), R: remapCols(x.RightKeys[i], ro), T: types.Bool})
			}
			if x.Residual != nil {
				for _, c := range conjuncts(x.Residual) {
					is.addPred(remapCols(c, row))
				}
			}
			return row, &shape{l: ls, r: rs, hasKeys: len(x.LeftKeys) > 0}
		}
	case *Project:
		if plainColumns(x) && islandRoot(x.Input) {
			in, sh := is.collect(x.Input)
			out := make([]int, len(x.Exprs))
			for i, e := range x.Exprs {
				out[i] = in[e.(*ColRef).Idx]
			}
			return out, sh
		}
	}
	i := len(is.leaves)
	w := len(n.Columns())
	is.leaves = append(is.leaves, n)
	is.off = append(is.off, is.width)
	out := make([]int, w)
	for k := range out {
		out[k] = is.width + k
		is.colOf = append(is.colOf, i)
	}
	is.width += w
	return out, &shape{leaf: i}
}

// remapCols renumbers e's columns: column i becomes to[i].
func remapCols(e Expr, to []int) Expr {
	return Rewrite(e, func(x Expr) Expr {
		if c, ok := x.(*ColRef); ok {
			return &ColRef{Idx: to[c.Idx], T: c.T, Name: c.Name}
		}
		return x
	})
}

func (is *island) addPred(e Expr) {
	is.preds = append(is.preds, jpred{e: e})
}

// maskOf returns the leaves e reads.
func (is *island) maskOf(e Expr) uint64 {
	var m uint64
	Walk(e, func(x Expr) bool {
		if c, ok := x.(*ColRef); ok {
			m |= 1 << is.colOf[c.Idx]
		}
		return true
	})
	return m
}

// volatileExpr reports whether e calls a volatile function.
func volatileExpr(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		switch y := x.(type) {
		case *Func:
			found = found || y.Fn != nil && !y.Fn.Deterministic && y.Name != "now"
		case *Subquery:
			found = found || y.Volatile
		}
		return !found
	})
	return found
}

// orderIsland orders the island rooted at n.
func (o *Optimizer) orderIsland(n Node) (Node, bool, error) {
	is := &island{o: o}
	out, sh := is.collect(n)
	is.out, is.existing = out, sh
	// Each leaf is ordered on its own first.
	leavesChanged := false
	for i, l := range is.leaves {
		nl, c, err := o.orderIn(l)
		if err != nil {
			return nil, false, err
		}
		is.leaves[i], leavesChanged = nl, leavesChanged || c
	}
	if len(is.leaves) > maxIslandLeaves {
		return is.keep(n, leavesChanged)
	}
	for i := range is.preds {
		if volatileExpr(is.preds[i].e) {
			return is.keep(n, leavesChanged)
		}
		is.preds[i].mask = is.maskOf(is.preds[i].e)
	}
	is.classify()
	// The current tree is costed with the same classes and predicates
	// (over the leaves without the conditions moved into them), so the
	// rule's own output costs what it did when built.
	oldCost := is.cost(is.existing, is.leaves)
	newLeaves := is.filteredLeaves()
	tree := is.search(newLeaves)
	if tree.cost >= oldCost*(1-1e-9) {
		return is.keep(n, leavesChanged)
	}
	root, pos := is.build(tree, newLeaves)
	if len(is.top) > 0 {
		root = &Filter{Input: root, Cond: andOf(remapAll(is.top, pos))}
	}
	cols := n.Columns()
	identity := len(cols) == len(root.Columns())
	exprs := make([]Expr, len(cols))
	for i, c := range cols {
		p := pos[is.out[i]]
		identity = identity && p == i
		exprs[i] = &ColRef{Idx: p, T: c.T, Name: c.Name}
	}
	if identity {
		return root, true, nil
	}
	return &Project{Input: root, Exprs: exprs, Cols: cols}, true, nil
}

// keep returns the island as it was, over its reordered leaves.
func (is *island) keep(n Node, leavesChanged bool) (Node, bool, error) {
	if !leavesChanged {
		return n, false, nil
	}
	i := 0
	var rebuild func(n Node) (Node, error)
	rebuild = func(n Node) (Node, error) {
		switch x := n.(type) {
		case *Join:
			if x.Kind == JoinInner || x.Kind == JoinCross {
				l, err := rebuild(x.Left)
				if err != nil {
					return nil, err
				}
				r, err := rebuild(x.Right)
				if err != nil {
					return nil, err
				}
				return x.WithChildren(l, r)
			}
		case *Project:
			if plainColumns(x) && islandRoot(x.Input) {
				in, err := rebuild(x.Input)
				if err != nil {
					return nil, err
				}
				return x.WithChildren(in)
			}
		}
		l := is.leaves[i]
		i++
		return l, nil
	}
	out, err := rebuild(n)
	return out, true, err
}

// classify sorts the predicates: column equalities into equivalence
// classes, predicates of one leaf into its filters, those of none to the
// top; the others stay join predicates.
func (is *island) classify() {
	parent := make([]int, is.width)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	inClass := make([]bool, is.width)
	is.filters = make([][]Expr, len(is.leaves))
	var rest []jpred
	for _, p := range is.preds {
		if a, b, ok := colEquality(p.e); ok {
			parent[find(a)] = find(b)
			inClass[a], inClass[b] = true, true
			continue
		}
		rest = append(rest, p)
	}
	byRoot := map[int]*eqClass{}
	for c := 0; c < is.width; c++ {
		if !inClass[c] {
			continue
		}
		r := find(c)
		ec := byRoot[r]
		if ec == nil {
			ec = &eqClass{}
			byRoot[r] = ec
			is.ecs = append(is.ecs, ec)
		}
		ec.cols = append(ec.cols, c)
		ec.mask |= 1 << is.colOf[c]
	}
	// Constants a class's columns are filtered by, in the leaves' own
	// filters or in predicates of one leaf.
	classOf := map[int]*eqClass{}
	for _, ec := range is.ecs {
		for _, c := range ec.cols {
			classOf[c] = ec
		}
	}
	noteConst := func(e Expr, shift int) {
		if col, k, ok := colConstant(e); ok {
			if ec := classOf[col+shift]; ec != nil && ec.konst == nil {
				ec.konst = k
			}
		}
	}
	for i, l := range is.leaves {
		if f, ok := l.(*Filter); ok {
			for _, c := range conjuncts(f.Cond) {
				noteConst(c, is.off[i])
			}
		}
	}
	is.preds = nil
	for _, p := range rest {
		switch bits.OnesCount64(p.mask) {
		case 0:
			is.top = append(is.top, p.e)
		case 1:
			noteConst(p.e, 0)
			leaf := bits.TrailingZeros64(p.mask)
			is.filters[leaf] = append(is.filters[leaf], remapToLeaf(p.e, is.off[leaf]))
		default:
			is.preds = append(is.preds, p)
			is.restrictOr(p)
		}
	}
	// What the classes imply inside each leaf: its members equal each
	// other, and the class's constant.
	for _, ec := range is.ecs {
		first := map[int]int{}
		for _, c := range ec.cols {
			leaf := is.colOf[c]
			ref := &ColRef{Idx: c - is.off[leaf], T: is.colType(c), Name: is.colName(c)}
			if ec.konst != nil {
				is.filters[leaf] = append(is.filters[leaf], &Binary{Op: OpEq, L: ref, R: ec.konst, T: types.Bool})
			}
			if f, ok := first[leaf]; ok {
				is.filters[leaf] = append(is.filters[leaf], &Binary{Op: OpEq, L: &ColRef{Idx: f - is.off[leaf], T: ref.T, Name: is.colName(f)}, R: ref, T: types.Bool})
			} else {
				first[leaf] = c
			}
		}
	}
}

// restrictOr adds to each leaf what an OR of several leaves implies of it
// alone (PostgreSQL's extract_restriction_or_clauses): when every arm has
// conjuncts reading only that leaf, their OR. The OR itself stays a join
// predicate; the leaf's filter only drops rows no arm could accept, so the
// join reads fewer (TPC-H Q19's part and lineitem conditions).
func (is *island) restrictOr(p jpred) {
	or, ok := p.e.(*Or)
	if !ok {
		return
	}
	for m := p.mask; m != 0; m &= m - 1 {
		leaf := bits.TrailingZeros64(m)
		arms := make([]Expr, 0, len(or.Args))
		for _, arm := range or.Args {
			var own []Expr
			for _, c := range conjuncts(arm) {
				if is.maskOf(c) == 1<<leaf && !volatileExpr(c) {
					own = append(own, remapToLeaf(c, is.off[leaf]))
				}
			}
			if len(own) == 0 {
				arms = nil
				break
			}
			arms = append(arms, andOf(own))
		}
		if arms != nil {
			is.filters[leaf] = append(is.filters[leaf], &Or{Args: arms})
		}
	}
}

// colEquality matches a = b between two columns of one type.
func colEquality(e Expr) (int, int, bool) {
	b, ok := e.(*Binary)
	if !ok || b.Op != OpEq {
		return 0, 0, false
	}
	l, lok := b.L.(*ColRef)
	r, rok := b.R.(*ColRef)
	if !lok || !rok || l.T != r.T {
		return 0, 0, false
	}
	return l.Idx, r.Idx, true
}

// colConstant matches col = constant (a literal or a parameter) of the
// column's type.
func colConstant(e Expr) (int, Expr, bool) {
	b, ok := e.(*Binary)
	if !ok || b.Op != OpEq {
		return 0, nil, false
	}
	col, k := b.L, b.R
	if _, isCol := col.(*ColRef); !isCol {
		col, k = b.R, b.L
	}
	c, isCol := col.(*ColRef)
	if !isCol || k.Type() != c.T {
		return 0, nil, false
	}
	switch x := k.(type) {
	case *Const:
		if x.D.IsNull() {
			return 0, nil, false
		}
	case *Param:
	default:
		return 0, nil, false
	}
	return c.Idx, k, true
}

func (is *island) colType(c int) types.T {
	leaf := is.colOf[c]
	return is.leaves[leaf].Columns()[c-is.off[leaf]].T
}

func (is *island) colName(c int) string {
	leaf := is.colOf[c]
	return is.leaves[leaf].Columns()[c-is.off[leaf]].Name
}

// remapToLeaf turns an expression over the island row that reads one
// leaf into one over that leaf's row.
func remapToLeaf(e Expr, off int) Expr {
	return Rewrite(e, func(x Expr) Expr {
		if c, ok := x.(*ColRef); ok {
			return &ColRef{Idx: c.Idx - off, T: c.T, Name: c.Name}
		}
		return x
	})
}

// filteredLeaves returns the leaves with their moved and derived
// conditions added to their filter (a condition the filter already has is
// not added twice).
func (is *island) filteredLeaves() []Node {
	out := make([]Node, len(is.leaves))
	for i, l := range is.leaves {
		out[i] = l
		if len(is.filters[i]) == 0 {
			continue
		}
		var have []Expr
		input := l
		if f, ok := l.(*Filter); ok {
			have, input = conjuncts(f.Cond), f.Input
		}
		conds := append([]Expr(nil), have...)
		for _, c := range is.filters[i] {
			dup := false
			for _, h := range conds {
				dup = dup || sameExpr(h, c) || isSymmetricCopy(h, c)
			}
			if !dup {
				conds = append(conds, c)
			}
		}
		if len(conds) > len(have) {
			out[i] = &Filter{Input: input, Cond: andOf(conds)}
		}
	}
	return out
}

// isSymmetricCopy reports whether a and b are the same equality with its
// sides exchanged.
func isSymmetricCopy(a, b Expr) bool {
	x, ok1 := a.(*Binary)
	y, ok2 := b.(*Binary)
	return ok1 && ok2 && x.Op == OpEq && y.Op == OpEq && sameExpr(x.L, y.R) && sameExpr(x.R, y.L)
}

// jtree is a join tree over leaves: a leaf, or a join of two trees.
type jtree struct {
	mask       uint64
	leaf       int
	l, r       *jtree
	rows, cost float64
}

// split holds what joining two sets of leaves takes: the hash keys (as
// pairs of island expressions) and the residual predicates.
type split struct {
	lkeys, rkeys []Expr
	residual     []Expr
	nkeys        int
	sel          float64
}

// splitOf returns the predicates that join sets a (left) and b (right)
// and their selectivity; ok is false when none connects them. Without
// build only nkeys and sel are set (the search's many trials).
func (is *island) splitOf(a, b uint64, leaves []Node, rowsA, rowsB float64, build bool) (split, bool) {
	s := split{sel: 1}
	connected := false
	// The keys' distinct combinations on each side, for the composite
	// clamp below.
	keySel, ndA, ndB, nsel := 1.0, 1.0, 1.0, 0
	for _, ec := range is.ecs {
		if ec.mask&a == 0 || ec.mask&b == 0 {
			continue
		}
		connected = true
		s.nkeys++
		if build {
			ca, cb := ec.first(is, a), ec.first(is, b)
			s.lkeys = append(s.lkeys, &ColRef{Idx: ca, T: is.colType(ca), Name: is.colName(ca)})
			s.rkeys = append(s.rkeys, &ColRef{Idx: cb, T: is.colType(cb), Name: is.colName(cb)})
		}
		if ec.konst == nil {
			// Whichever members the key takes, the class joins a and b
			// once: by its most distinct member on each side.
			na, nb := ec.maxNDV(is, a, leaves, rowsA), ec.maxNDV(is, b, leaves, rowsB)
			keySel /= math.Max(na, nb)
			ndA, ndB, nsel = ndA*na, ndB*nb, nsel+1
		}
	}
	both := a | b
	for _, p := range is.preds {
		if p.mask&^both != 0 || p.mask&a == 0 || p.mask&b == 0 {
			continue
		}
		connected = true
		if bin, ok := p.e.(*Binary); ok && bin.Op == OpEq {
			lm, rm := is.maskOf(bin.L), is.maskOf(bin.R)
			l, r := bin.L, bin.R
			if lm&^b == 0 && rm&^a == 0 && lm != 0 && rm != 0 {
				l, r, lm, rm = r, l, rm, lm
			}
			if lm&^a == 0 && rm&^b == 0 && lm != 0 && rm != 0 {
				s.nkeys++
				if build {
					s.lkeys, s.rkeys = append(s.lkeys, l), append(s.rkeys, r)
				}
				ks, na, nb := is.keySelectivity(l, r, leaves, rowsA, rowsB)
				keySel *= ks
				ndA, ndB, nsel = ndA*na, ndB*nb, nsel+1
				continue
			}
		}
		if build {
			s.residual = append(s.residual, p.e)
		}
		s.sel *= is.o.est.Selectivity(p.e, nil)
	}
	s.sel *= compositeKeySel(keySel, nsel, ndA, ndB, rowsA, rowsB)
	return s, connected
}

// compositeKeySel clamps the selectivity of several equality keys
// (keySel, the product of each one's 1/max(ndv)): each side holds at most
// as many distinct key combinations as it has rows, so the join keeps at
// least 1/max(combinations) of the pairs — the containment rule applied
// to the keys together. Without it correlated keys multiply into
// nothing: lineitem joined with part ⋈ partsupp on partkey and suppkey
// (TPC-H Q9) was estimated at 97 rows for 32,965.
func compositeKeySel(keySel float64, nkeys int, ndA, ndB, rowsA, rowsB float64) float64 {
	if nkeys < 2 {
		return keySel
	}
	floor := 1 / math.Max(1, math.Max(math.Min(ndA, rowsA), math.Min(ndB, rowsB)))
	return math.Max(keySel, floor)
}

// maxNDV returns the most distinct values a member of the class in set m
// has (at most rows), from the class's most distinct member per leaf.
func (ec *eqClass) maxNDV(is *island, m uint64, leaves []Node, rows float64) float64 {
	if ec.leafFor == nil || &ec.leafFor[0] != &leaves[0] {
		ec.leafFor = leaves
		ec.leafNDV = make([]float64, len(leaves))
		for _, c := range ec.cols {
			l := is.colOf[c]
			ec.leafNDV[l] = math.Max(ec.leafNDV[l], is.colNDV(c, leaves))
		}
	}
	n := 1.0
	for b := m & ec.mask; b != 0; b &= b - 1 {
		if v := ec.leafNDV[bits.TrailingZeros64(b)]; v > n {
			n = v
		}
	}
	return math.Min(n, math.Max(rows, 1))
}

// first returns the class's first column in leaves set m.
func (ec *eqClass) first(is *island, m uint64) int {
	for _, c := range ec.cols {
		if m&(1<<is.colOf[c]) != 0 {
			return c
		}
	}
	return -1
}

// colNDV estimates the distinct values of island column c in its leaf
// (computed once per set of leaves: the search asks again and again).
func (is *island) colNDV(c int, leaves []Node) float64 {
	if is.ndvOf == nil || &is.ndvFor[0] != &leaves[0] {
		is.ndvFor = leaves
		is.ndvOf = make([]float64, is.width)
		for i := range is.ndvOf {
			is.ndvOf[i] = -1
		}
	}
	if n := is.ndvOf[c]; n >= 0 {
		return n
	}
	leaf := is.colOf[c]
	n := is.o.est.ndv(&ColRef{Idx: c - is.off[leaf], T: is.colType(c)}, leaves[leaf])
	is.ndvOf[c] = n
	return n
}

// keySelectivity is an equality key's: 1/max(ndv) of two columns, the
// default equality's otherwise; and the distinct values of each side.
func (is *island) keySelectivity(l, r Expr, leaves []Node, rowsA, rowsB float64) (sel, ndA, ndB float64) {
	lc, lok := l.(*ColRef)
	rc, rok := r.(*ColRef)
	if !lok || !rok {
		return defaultEqSel, math.Min(defaultNDV, rowsA), math.Min(defaultNDV, rowsB)
	}
	na, nb := math.Min(is.colNDV(lc.Idx, leaves), rowsA), math.Min(is.colNDV(rc.Idx, leaves), rowsB)
	return 1 / math.Max(na, nb), na, nb
}

// joinCost is the cost of joining l (probe) and r (build) into rows
// rows: a join keeps its right side's rows (dearer per row than reading
// the left's: they are held and hashed), a hash join reads l once, a join
// without keys compares every pair, and both emit their rows.
func joinCost(l, r *jtree, rows float64, hashed bool) float64 {
	if hashed {
		return l.cost + r.cost + l.rows + 2*r.rows + rows
	}
	return l.cost + r.cost + l.rows*r.rows + 2*r.rows + rows
}

func (is *island) leafTree(i int, leaves []Node) *jtree {
	rows := is.o.est.Rows(leaves[i])
	return &jtree{mask: 1 << i, leaf: i, rows: rows, cost: rows}
}

// join returns the cheaper orientation of joining a and b, or nil when no
// predicate connects them and cross is false.
func (is *island) join(a, b *jtree, leaves []Node, cross bool) *jtree {
	t, ok := is.trial(a, b, leaves, cross)
	if !ok {
		return nil
	}
	return &t
}

// trial is join without an allocation (the search's inner loop keeps
// only the trials that beat its best).
func (is *island) trial(a, b *jtree, leaves []Node, cross bool) (jtree, bool) {
	s, ok := is.splitOf(a.mask, b.mask, leaves, a.rows, b.rows, false)
	if !ok && !cross {
		return jtree{}, false
	}
	rows := math.Max(1, a.rows*b.rows*s.sel)
	l, r, cost := is.bestJoin(a, b, leaves, rows, s.nkeys > 0, true)
	return jtree{mask: a.mask | b.mask, leaf: -1, l: l, r: r, rows: rows, cost: cost}, true
}

// cost returns the cost of the island's current tree sh over leaves.
func (is *island) cost(sh *shape, leaves []Node) float64 {
	var walk func(sh *shape) *jtree
	walk = func(sh *shape) *jtree {
		if sh.l == nil {
			return is.leafTree(sh.leaf, leaves)
		}
		l, r := walk(sh.l), walk(sh.r)
		s, _ := is.splitOf(l.mask, r.mask, leaves, l.rows, r.rows, false)
		rows := math.Max(1, l.rows*r.rows*s.sel)
		_, _, cost := is.bestJoin(l, r, leaves, rows, sh.hasKeys, false)
		return &jtree{mask: l.mask | r.mask, l: l, r: r, rows: rows, cost: cost}
	}
	return walk(sh).cost
}

// search returns the cheapest tree over all leaves: each connected piece
// of the graph ordered on its own, the pieces then joined smallest first.
func (is *island) search(leaves []Node) *jtree {
	var pieces []*jtree
	for _, comp := range is.components() {
		var t *jtree
		if len(comp) <= maxDPLeaves {
			t = is.dp(comp, leaves)
		}
		if t == nil {
			t = is.greedy(comp, leaves)
		}
		pieces = append(pieces, t)
	}
	sort.SliceStable(pieces, func(i, j int) bool { return pieces[i].rows < pieces[j].rows })
	t := pieces[0]
	for _, p := range pieces[1:] {
		t = is.join(t, p, leaves, true)
	}
	return t
}

// components splits the leaves into the connected pieces of the graph.
func (is *island) components() [][]int {
	n := len(is.leaves)
	seen := make([]bool, n)
	var out [][]int
	for s := 0; s < n; s++ {
		if seen[s] {
			continue
		}
		var comp []int
		var mask uint64 = 1 << s
		seen[s] = true
		for grew := true; grew; {
			grew = false
			for i := 0; i < n; i++ {
				if seen[i] {
					continue
				}
				if is.touches(mask, 1<<i) {
					mask |= 1 << i
					seen[i], grew = true, true
				}
			}
		}
		for i := 0; i < n; i++ {
			if mask&(1<<i) != 0 {
				comp = append(comp, i)
			}
		}
		out = append(out, comp)
	}
	return out
}

// touches reports whether some predicate or class reads both a leaf of a
// and one of b.
func (is *island) touches(a, b uint64) bool {
	for _, ec := range is.ecs {
		if ec.mask&a != 0 && ec.mask&b != 0 {
			return true
		}
	}
	for _, p := range is.preds {
		if p.mask&a != 0 && p.mask&b != 0 {
			return true
		}
	}
	return false
}

// dp orders the leaves comp by dynamic programming over their connected
// subsets; nil when no tree joins them all without a cross product.
func (is *island) dp(comp []int, leaves []Node) *jtree {
	// Masks over comp's positions, mapped to leaf masks.
	k := len(comp)
	full := 1<<k - 1
	leafMask := make([]uint64, 1<<k)
	for m := 1; m <= full; m++ {
		low := bits.TrailingZeros(uint(m))
		leafMask[m] = leafMask[m&(m-1)] | 1<<comp[low]
	}
	best := make([]*jtree, 1<<k)
	for i, l := range comp {
		best[1<<i] = is.leafTree(l, leaves)
	}
	for m := 1; m <= full; m++ {
		if bits.OnesCount(uint(m)) < 2 {
			continue
		}
		low := m & -m
		// Each unordered split once: the part with m's lowest bit.
		for a := (m - 1) & m; a > 0; a = (a - 1) & m {
			if a&low == 0 {
				continue
			}
			b := m ^ a
			if best[a] == nil || best[b] == nil {
				continue
			}
			t, ok := is.trial(best[a], best[b], leaves, false)
			if ok && (best[m] == nil || t.cost < best[m].cost) {
				kept := t
				best[m] = &kept
			}
		}
	}
	return best[full]
}

// greedy orders the leaves comp by joining, again and again, the two
// trees whose join is smallest (cheapest on a tie), among those a
// predicate connects when there are such.
func (is *island) greedy(comp []int, leaves []Node) *jtree {
	trees := make([]*jtree, len(comp))
	for i, l := range comp {
		trees[i] = is.leafTree(l, leaves)
	}
	for len(trees) > 1 {
		var pick *jtree
		pi, pj := -1, -1
		for _, cross := range []bool{false, true} {
			for i := range trees {
				for j := i + 1; j < len(trees); j++ {
					t := is.join(trees[i], trees[j], leaves, cross)
					if t == nil {
						continue
					}
					if pick == nil || t.rows < pick.rows || t.rows == pick.rows && t.cost < pick.cost {
						pick, pi, pj = t, i, j
					}
				}
			}
			if pick != nil {
				break
			}
		}
		trees[pi] = pick
		trees = append(trees[:pj], trees[pj+1:]...)
	}
	return trees[0]
}

// build makes the plan of tree t over leaves; pos maps each island column
// the plan holds to its position in the plan's row.
func (is *island) build(t *jtree, leaves []Node) (Node, []int) {
	if t.l == nil {
		pos := make([]int, is.width)
		for i := range pos {
			pos[i] = -1
		}
		for k := range leaves[t.leaf].Columns() {
			pos[is.off[t.leaf]+k] = k
		}
		return leaves[t.leaf], pos
	}
	ln, lpos := is.build(t.l, leaves)
	rn, rpos := is.build(t.r, leaves)
	nl := len(ln.Columns())
	s, _ := is.splitOf(t.l.mask, t.r.mask, leaves, t.l.rows, t.r.rows, true)
	j := &Join{Kind: JoinInner, Left: ln, Right: rn}
	for i := range s.lkeys {
		j.LeftKeys = append(j.LeftKeys, remapCols(s.lkeys[i], lpos))
		j.RightKeys = append(j.RightKeys, remapCols(s.rkeys[i], rpos))
	}
	pos := make([]int, is.width)
	for i := range pos {
		switch {
		case lpos[i] >= 0:
			pos[i] = lpos[i]
		case rpos[i] >= 0:
			pos[i] = nl + rpos[i]
		default:
			pos[i] = -1
		}
	}
	if len(s.residual) > 0 {
		j.Residual = andOf(remapAll(s.residual, pos))
	}
	if len(j.LeftKeys) == 0 && j.Residual == nil {
		j.Kind = JoinCross
	}
	return j, pos
}

func remapAll(es []Expr, pos []int) []Expr {
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = remapCols(e, pos)
	}
	return out
}
