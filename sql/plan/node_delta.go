package plan

import "github.com/mvserver/mvserver/sql/types"

// Nodes for incremental refresh: a refresh computes the changes of a view
// from the changes of its sources by running plans over change sets (R-I1).

// Given is a relation of rows computed before the plan runs: the rows a
// source gained or lost since a view's checkpoint, or a view's aggregate
// rows rebuilt from stored state. Rows hold one value per column.
type Given struct {
	Cols []Column
	Rows [][]types.Datum
}

// Columns returns the output columns.
func (g *Given) Columns() []Column { return g.Cols }

// KeyIn keeps the input rows whose key, Keys evaluated on the row, is in
// Set. A key is its values appended one after the other by types.HashKey,
// the encoding GROUP BY groups by (NULLs equal, 1.0 equals 1.00).
type KeyIn struct {
	Input Node
	Keys  []Expr
	Set   map[string]struct{}
}

// Columns returns the input's columns.
func (k *KeyIn) Columns() []Column { return k.Input.Columns() }
