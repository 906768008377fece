package exec

import (
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// keyProbeOp is the right side of a semi or anti join whose key range
// alone decides a match (plan.Apply.KeyProbe): it yields one row, all
// NULL, when the range holds an index entry (or a row key), and none
// otherwise; it reads no row's value. A NULL key value matches nothing.
type keyProbeOp struct {
	c     *Ctx
	s     *plan.Scan
	width int
	done  bool
	scan  *scanOp // built at the first probe
}

func newKeyProbe(c *Ctx, s *plan.Scan) *keyProbeOp {
	return &keyProbeOp{c: c, s: s, width: len(s.Columns())}
}

func (p *keyProbeOp) Next() ([]Row, error) {
	if p.done {
		return nil, nil
	}
	p.done = true
	vals := p.s.Point
	if vals == nil {
		vals = p.s.Start.Values
	}
	for _, v := range vals {
		if r := v.(*plan.OuterRef); r.Idx < len(p.c.Outer) && p.c.Outer[r.Idx].IsNull() {
			return nil, nil
		}
	}
	// The scan is built once and its keys evaluated again per probe
	// (rebind.go).
	if p.scan == nil {
		op, err := newScan(p.c, p.s)
		if err != nil {
			return nil, err
		}
		p.scan = op.(*scanOp)
	} else if err := p.scan.bindKeys(); err != nil {
		return nil, err
	}
	found, err := p.scan.exists()
	if err != nil || !found {
		return nil, err
	}
	return []Row{make(Row, p.width)}, nil
}

func (p *keyProbeOp) Close() {
	if p.scan != nil {
		p.scan.Close()
	}
}

// exists reports whether the scan's key ranges (or point) hold a row, from
// the keys alone where an index answers.
func (s *scanOp) exists() (bool, error) {
	tid := storage.TableID(s.s.Table.ID)
	if s.point {
		var ok bool
		var err error
		if s.index != 0 {
			_, ok, err = s.c.Txn.GetUnique(tid, s.index, s.pointKey)
		} else {
			_, ok, err = s.c.Txn.Get(tid, s.pointKey)
		}
		return ok, err
	}
	for _, r := range s.ranges {
		if s.index != 0 {
			if ok, err := s.c.Txn.HasIndexEntry(tid, s.index, r.start, r.end); ok || err != nil {
				return ok, err
			}
			continue
		}
		it := s.c.Txn.Scan(tid, r.start, r.end)
		ok := it.Next()
		if err := it.Close(); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}
