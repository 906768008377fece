package plan

import (
	"fmt"

	"github.com/mvserver/mvserver/pgerror"
)

// A node's children (STYLE: plans are data). Children lists the nodes a
// node reads, in a fixed order; WithChildren returns a copy of the node
// reading others in their place, every other field kept, and never
// modifies the node it is called on. Rewrites (the optimizer's rules,
// refresh's change plans) rebuild a node through WithChildren, so a field
// added to a node is carried over, not lost in a hand-written copy.
//
// Children are every input node, also those of another evaluation level
// (an Apply's Right); the plans of subqueries in expressions are not
// children (they belong to the expressions). NodeInputs keeps the inputs
// at a node's own level.

// childCount checks the number of children a WithChildren call got.
func childCount(n Node, got []Node, want int) error {
	if len(got) != want {
		return errInternal("%s takes %d children, not %d", nodeName(n), want, len(got))
	}
	return nil
}

func nodeName(n Node) string { return fmt.Sprintf("%T", n)[len("*plan."):] }

// Leaves: nothing to replace, so the node itself is its copy.

// Children returns nil: a scan reads a table.
func (s *Scan) Children() []Node { return nil }

// WithChildren returns s (a leaf).
func (s *Scan) WithChildren(ch ...Node) (Node, error) { return s, childCount(s, ch, 0) }

// Children returns nil.
func (v *Values) Children() []Node { return nil }

// WithChildren returns v (a leaf).
func (v *Values) WithChildren(ch ...Node) (Node, error) { return v, childCount(v, ch, 0) }

// Children returns nil.
func (g *Given) Children() []Node { return nil }

// WithChildren returns g (a leaf).
func (g *Given) WithChildren(ch ...Node) (Node, error) { return g, childCount(g, ch, 0) }

// Children returns nil.
func (r *Rows) Children() []Node { return nil }

// WithChildren returns r (a leaf).
func (r *Rows) WithChildren(ch ...Node) (Node, error) { return r, childCount(r, ch, 0) }

// Children returns nil.
func (t *TableChanges) Children() []Node { return nil }

// WithChildren returns t (a leaf).
func (t *TableChanges) WithChildren(ch ...Node) (Node, error) { return t, childCount(t, ch, 0) }

// Children returns nil: the rows it reads are its recursive query's
// previous round, not a child.
func (w *WorkTableScan) Children() []Node { return nil }

// WithChildren returns w (a leaf).
func (w *WorkTableScan) WithChildren(ch ...Node) (Node, error) { return w, childCount(w, ch, 0) }

// One input.

// Children returns the input.
func (f *Filter) Children() []Node { return []Node{f.Input} }

// WithChildren returns f over ch[0].
func (f *Filter) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(f, ch, 1); err != nil {
		return nil, err
	}
	cp := *f
	cp.Input = ch[0]
	return &cp, nil
}

// Children returns the input.
func (p *Project) Children() []Node { return []Node{p.Input} }

// WithChildren returns p over ch[0].
func (p *Project) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(p, ch, 1); err != nil {
		return nil, err
	}
	cp := *p
	cp.Input = ch[0]
	return &cp, nil
}

// Children returns the input.
func (a *Aggregate) Children() []Node { return []Node{a.Input} }

// WithChildren returns a over ch[0].
func (a *Aggregate) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(a, ch, 1); err != nil {
		return nil, err
	}
	cp := *a
	cp.Input = ch[0]
	return &cp, nil
}

// Children returns the input.
func (s *Sort) Children() []Node { return []Node{s.Input} }

// WithChildren returns s over ch[0].
func (s *Sort) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(s, ch, 1); err != nil {
		return nil, err
	}
	cp := *s
	cp.Input = ch[0]
	return &cp, nil
}

// Children returns the input.
func (l *Limit) Children() []Node { return []Node{l.Input} }

// WithChildren returns l over ch[0].
func (l *Limit) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(l, ch, 1); err != nil {
		return nil, err
	}
	cp := *l
	cp.Input = ch[0]
	return &cp, nil
}

// Children returns the input.
func (d *Distinct) Children() []Node { return []Node{d.Input} }

// WithChildren returns d over ch[0].
func (d *Distinct) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(d, ch, 1); err != nil {
		return nil, err
	}
	cp := *d
	cp.Input = ch[0]
	return &cp, nil
}

// Children returns the input.
func (k *KeyIn) Children() []Node { return []Node{k.Input} }

// WithChildren returns k over ch[0].
func (k *KeyIn) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(k, ch, 1); err != nil {
		return nil, err
	}
	cp := *k
	cp.Input = ch[0]
	return &cp, nil
}

// Children returns the input.
func (w *Window) Children() []Node { return []Node{w.Input} }

// WithChildren returns w over ch[0].
func (w *Window) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(w, ch, 1); err != nil {
		return nil, err
	}
	cp := *w
	cp.Input = ch[0]
	return &cp, nil
}

// Children returns the input.
func (p *ProjectSet) Children() []Node { return []Node{p.Input} }

// WithChildren returns p over ch[0] (its columns computed afresh).
func (p *ProjectSet) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(p, ch, 1); err != nil {
		return nil, err
	}
	cp := *p
	cp.Input, cp.cols = ch[0], nil
	return &cp, nil
}

// Children returns the WITH query bound at this reference.
func (c *CTEScan) Children() []Node { return []Node{c.Input} }

// WithChildren returns c reading ch[0]; the copy names the same CTE, so a
// shared one is still computed once.
func (c *CTEScan) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(c, ch, 1); err != nil {
		return nil, err
	}
	cp := *c
	cp.Input = ch[0]
	return &cp, nil
}

// Two inputs.

// Children returns Left and Right.
func (j *Join) Children() []Node { return []Node{j.Left, j.Right} }

// WithChildren returns j joining ch[0] and ch[1] (its columns computed
// afresh).
func (j *Join) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(j, ch, 2); err != nil {
		return nil, err
	}
	cp := *j
	cp.Left, cp.Right, cp.cols = ch[0], ch[1], nil
	return &cp, nil
}

// Children returns Left and Right (Right is a level down: it reads Params).
func (a *Apply) Children() []Node { return []Node{a.Left, a.Right} }

// WithChildren returns a over ch[0] and ch[1] (its columns computed
// afresh).
func (a *Apply) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(a, ch, 2); err != nil {
		return nil, err
	}
	cp := *a
	cp.Left, cp.Right, cp.cols = ch[0], ch[1], nil
	return &cp, nil
}

// Children returns Left and Right.
func (s *SetOp) Children() []Node { return []Node{s.Left, s.Right} }

// WithChildren returns s over ch[0] and ch[1].
func (s *SetOp) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(s, ch, 2); err != nil {
		return nil, err
	}
	cp := *s
	cp.Left, cp.Right = ch[0], ch[1]
	return &cp, nil
}

// Children returns NonRec and Rec.
func (r *RecursiveUnion) Children() []Node { return []Node{r.NonRec, r.Rec} }

// WithChildren returns r over ch[0] and ch[1]; the copy keeps r's Work
// table, which the WorkTableScans in Rec read.
func (r *RecursiveUnion) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(r, ch, 2); err != nil {
		return nil, err
	}
	cp := *r
	cp.NonRec, cp.Rec = ch[0], ch[1]
	return &cp, nil
}

// errInternal is a broken planner invariant (XX000): a bug, never a
// user's mistake.
func errInternal(format string, args ...any) error {
	return pgerror.New(pgerror.InternalError, format, args...)
}
