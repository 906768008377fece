package plan

// DistinctOn is SELECT DISTINCT ON (keys): of each run of input rows equal
// on Keys (NULLs equal, as DISTINCT compares them) it keeps the first. The
// binder puts it over a Sort whose leading keys are the DISTINCT ON
// expressions, so "first" is the first row of each group in ORDER BY order
// and the groups are adjacent, as PostgreSQL's Unique node needs them.
// Keys are ColRefs into the input's columns.
type DistinctOn struct {
	Input Node
	Keys  []Expr
}

// Columns returns the input's columns.
func (d *DistinctOn) Columns() []Column { return d.Input.Columns() }

// Children returns the input.
func (d *DistinctOn) Children() []Node { return []Node{d.Input} }

// WithChildren returns d over ch[0].
func (d *DistinctOn) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(d, ch, 1); err != nil {
		return nil, err
	}
	cp := *d
	cp.Input = ch[0]
	return &cp, nil
}
