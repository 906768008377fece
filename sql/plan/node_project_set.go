package plan

import (
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// SRFCall is one call of a set-returning function (funcs.Overload.SRF):
// its arguments are evaluated on the input row.
type SRFCall struct {
	Name     string
	Fn       *funcs.Func
	Overload *funcs.Overload
	Args     []Expr
	// Cols are the columns each row of the call has.
	Cols []Column
}

// ProjectSet runs set-returning functions on each input row (R-Q2: a
// function in FROM, LATERAL over the items to its left, and PostgreSQL
// 10's set-returning functions in a select list). For an input row the
// calls run side by side: it gives as many rows as the longest call, each
// the input row, then every call's columns (NULL once a call has run out),
// then, with Ordinality, the row's number (from 1) among those of its
// input row. An input row for which every call is empty gives no row.
//
// A function in FROM that reads no column to its left has a one-row Values
// without columns as Input. Over a table, ProjectSet is linear in its input
// row, as a projection is (refresh differentiates it row by row).
type ProjectSet struct {
	Input      Node
	Calls      []SRFCall
	Ordinality bool
	cols       []Column
}

// Columns returns the input's columns, the calls' columns and the
// ordinality column.
func (p *ProjectSet) Columns() []Column {
	if p.cols == nil {
		p.cols = append([]Column(nil), p.Input.Columns()...)
		for _, c := range p.Calls {
			p.cols = append(p.cols, c.Cols...)
		}
		if p.Ordinality {
			p.cols = append(p.cols, Column{Name: "ordinality", T: types.Int8})
		}
	}
	return p.cols
}

// WithInput returns a copy of p reading in (refresh builds the change
// plans of its input this way).
func (p *ProjectSet) WithInput(in Node) *ProjectSet {
	return &ProjectSet{Input: in, Calls: p.Calls, Ordinality: p.Ordinality}
}

// SRFRef stands for column Col of set-returning call Idx of a select list
// until the ProjectSet that computes it is placed (bind_srf.go).
type SRFRef struct {
	Idx, Col int
	T        types.T
	loc      int32 // the call's position in the query text
}

// Type returns the column's type.
func (e *SRFRef) Type() types.T { return e.T }

func (e *SRFRef) String() string { return "srf#" + itoaInt(e.Idx) + "." + itoaInt(e.Col) }

func itoaInt(i int) string { return types.NewInt8(int64(i)).String() }
