package exec

import (
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// scanOp reads a table's rows at the transaction's snapshot.
type scanOp struct {
	c        *Ctx
	s        *plan.Scan
	it       *storage.Iterator
	dec      *types.RowDecoder
	outIdx   []int // output index of each decoded column
	nTable   int
	width    int
	wantRID  bool
	wantVer  bool
	point    bool
	pointKey []byte
	done     bool
	batch    int // rows in the last batch (batches grow to BatchSize)
	scratch  []types.Datum
}

func newScan(c *Ctx, s *plan.Scan) (Operator, error) {
	t := s.Table
	op := &scanOp{c: c, s: s, nTable: len(t.Columns), width: len(s.Columns())}
	var ids []uint32
	for i, col := range t.Columns {
		if s.Needed[i] {
			ids = append(ids, col.ID)
			op.outIdx = append(op.outIdx, i)
		}
	}
	op.dec = types.NewRowDecoder(ids)
	op.scratch = make([]types.Datum, len(ids))
	op.wantRID = s.Needed[op.nTable]
	op.wantVer = s.Needed[op.nTable+1]
	tid := storage.TableID(t.ID)
	evalKey := func(vals []plan.Expr) ([]byte, error) {
		var b []byte
		for _, e := range vals {
			f, err := compile(e, c)
			if err != nil {
				return nil, err
			}
			d, err := f(nil)
			if err != nil {
				return nil, err
			}
			if b, err = appendKeyDatum(b, d); err != nil {
				return nil, err
			}
		}
		return b, nil
	}
	if s.Point != nil {
		key, err := evalKey(s.Point)
		if err != nil {
			return nil, err
		}
		op.point, op.pointKey = true, key
		return op, nil
	}
	var start, end []byte
	if s.Start != nil {
		k, err := evalKey(s.Start.Values)
		if err != nil {
			return nil, err
		}
		if s.Start.Inclusive {
			start = k
		} else {
			start = storage.PrefixEnd(k)
		}
	}
	if s.End != nil {
		k, err := evalKey(s.End.Values)
		if err != nil {
			return nil, err
		}
		if s.End.Inclusive {
			end = storage.PrefixEnd(k)
		} else {
			end = k
		}
	}
	op.it = c.Txn.Scan(tid, start, end)
	return op, nil
}

func (s *scanOp) Next() ([]Row, error) {
	if s.done {
		return nil, nil
	}
	if err := s.c.Context.Err(); err != nil {
		return nil, err
	}
	if s.point {
		s.done = true
		r, ok, err := s.c.Txn.Get(storage.TableID(s.s.Table.ID), s.pointKey)
		if err != nil || !ok {
			return nil, err
		}
		if _, skip := s.s.Exclude[r.RowID]; skip {
			return nil, nil
		}
		row := make(Row, s.width)
		if err := s.fill(row, r); err != nil {
			return nil, err
		}
		return []Row{row}, nil
	}
	// Batches start small and double up to BatchSize: a scan that finds a
	// few rows (a filtered or key-range read) does not allocate and zero a
	// full batch for them.
	size := min(max(2*s.batch, 16), BatchSize)
	s.batch = size
	backing := make([]types.Datum, size*s.width)
	out := make([]Row, 0, size)
	for len(out) < size {
		if !s.it.Next() {
			s.done = true
			if err := s.it.Err(); err != nil {
				return nil, err
			}
			break
		}
		if s.s.Exclude != nil {
			if _, skip := s.s.Exclude[s.it.Row().RowID]; skip {
				continue
			}
		}
		n := len(out)
		row := backing[n*s.width : (n+1)*s.width : (n+1)*s.width]
		if err := s.fill(row, s.it.Row()); err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// fill decodes the needed columns of a stored row into row.
func (s *scanOp) fill(row Row, r storage.Row) error {
	if len(s.outIdx) > 0 {
		if err := s.dec.Decode(r.Value, s.scratch); err != nil {
			return err
		}
		for i, oi := range s.outIdx {
			row[oi] = s.scratch[i]
		}
	}
	if s.wantRID {
		row[s.nTable] = types.NewInt8(r.RowID)
	}
	if s.wantVer && r.CommitVersion >= 0 {
		row[s.nTable+1] = types.NewInt8(r.CommitVersion)
	}
	return nil
}

func (s *scanOp) Close() {
	if s.it != nil {
		s.it.Close()
		s.it = nil
	}
}
