package session

import (
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// wireColumns describes result columns for RowDescription.
func wireColumns(cols []plan.Column, formats []int16) []server.Column {
	if cols == nil {
		return nil
	}
	out := make([]server.Column, len(cols))
	for i, c := range cols {
		t := c.T
		if t.Kind == types.KindNull || t.Kind == types.KindUnknown {
			t = types.Text
		}
		out[i] = server.Column{Name: c.Name, TableOID: c.Table, AttrNum: c.AttrNum, TypeOID: t.OID(), TypeSize: t.Size(), TypeModifier: t.Modifier(), Format: formatFor(formats, i)}
	}
	return out
}

// formatFor applies the protocol's format-code rule: none = text, one = all,
// else one per column.
func formatFor(formats []int16, i int) int16 {
	switch len(formats) {
	case 0:
		return 0
	case 1:
		return formats[0]
	}
	if i < len(formats) {
		return formats[i]
	}
	return 0
}

var empty = []byte{}

// rowEncoder turns rows into DataRow values.
type rowEncoder struct {
	cols    []plan.Column
	formats []int16
	env     *types.Env
	vals    [][]byte
	buf     []byte
}

func (e *rowEncoder) encode(row []types.Datum) ([][]byte, error) {
	if e.vals == nil {
		e.vals = make([][]byte, len(e.cols))
	}
	e.buf = e.buf[:0]
	// encode into one buffer, then slice it (the writer copies before we reuse it)
	offs := make([]int, 0, len(e.cols)*2)
	for i := range e.cols {
		d := row[i]
		if d.IsNull() {
			offs = append(offs, -1, -1)
			continue
		}
		start := len(e.buf)
		if formatFor(e.formats, i) == 1 {
			var err error
			if e.buf, err = types.AppendBinary(e.buf, d, e.cols[i].T); err != nil {
				return nil, err
			}
		} else {
			e.buf = types.AppendText(e.buf, d, e.env)
		}
		offs = append(offs, start, len(e.buf))
	}
	for i := range e.cols {
		if offs[2*i] < 0 {
			e.vals[i] = nil
			continue
		}
		if offs[2*i] == offs[2*i+1] {
			e.vals[i] = empty // an empty value, which nil (NULL) is not
			continue
		}
		e.vals[i] = e.buf[offs[2*i]:offs[2*i+1]:offs[2*i+1]]
	}
	return e.vals, nil
}
