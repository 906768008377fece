package exec

import (
	"sync/atomic"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// A filter right above a table scan runs inside the scan: each stored row
// is first decoded into a scratch row with only the condition's columns,
// the condition is evaluated there, and only a row that passes is decoded
// whole into the batch handed out. A selective filter thus neither
// allocates nor clears a batch of full-width rows per thousand rows read
// (most of a TPC-H Q12's CPU, issue 21), nor decodes the columns it does
// not test (a decimal costs an allocation) for the rows it drops. The
// rows, their order and the errors are those of a Filter over the Scan:
// the condition sees the same values, row by row, in key order.
//
// It applies to a scan of key ranges (not a point lookup) whose filter has
// no subquery (a subquery's evaluation builds operators of its own per
// row), when EXPLAIN ANALYZE does not count the two nodes' rows apart.
//
// The condition's functions run on the statement's goroutine only, so a
// scan filtering inside its reads does not read ahead, unless its
// condition calls no function and runs by kernel: such a whole-table
// scan reads the rest of its table in parallel ranges instead
// (scan_parallel.go). When most rows
// pass, though (TPC-H Q13's o_comment NOT LIKE keeps 99%), decoding only
// the condition's columns first saves little, and reading ahead — the
// other core decoding whole rows while this one tests them — is worth
// more (Q13 lost half its speed to the fused filter): at the point a
// plain scan would turn to readahead, a filtering scan whose rows so far
// passed more often than not does, and the condition moves to the
// batches it hands out (nextFiltered), row by row in key order as before.

// filteredReadaheads counts the filtering scans that turned to readahead.
var filteredReadaheads atomic.Int64

// scanFilterCheckEvery is how many rows a filtering scan drops between two
// checks for cancellation (a batch may take many reads to fill).
const scanFilterCheckEvery = 4096

// newFilteredScan returns the scan s with cond evaluated inside it, or
// nil when the filter must run as an operator of its own.
func newFilteredScan(c *Ctx, s *plan.Scan, cond plan.Expr) (Operator, error) {
	if (c.stmt != nil && c.stmt.analyze != nil) || s.Point != nil || hasSubquery(cond) {
		return nil, nil
	}
	op, err := newScan(c, s)
	if err != nil {
		return nil, err
	}
	sc := op.(*scanOp)
	f, err := compile(cond, c)
	if err != nil {
		sc.Close()
		return nil, err
	}
	// The condition's table columns, decoded at their places in the row.
	var ids []uint32
	var at []int
	seen := map[int]bool{}
	plan.Walk(cond, func(e plan.Expr) bool {
		if r, ok := e.(*plan.ColRef); ok && r.Idx < sc.nTable && !seen[r.Idx] && s.Needed[r.Idx] {
			seen[r.Idx] = true
			ids, at = append(ids, s.Table.Columns[r.Idx].ID), append(at, r.Idx)
		}
		return true
	})
	sc.pred, sc.condExpr = f, cond
	sc.predDec = types.NewRowDecoderAt(ids, at)
	sc.scratch = make(Row, sc.width)
	sc.vf = newBatchFilter(c, s, cond)
	return sc, nil
}

// hasSubquery reports whether e holds a subquery.
func hasSubquery(e plan.Expr) bool {
	found := false
	plan.Walk(e, func(x plan.Expr) bool {
		if _, ok := x.(*plan.Subquery); ok {
			found = true
		}
		return !found
	})
	return found
}

// test reports whether the stored row r passes the scan's condition,
// and counts it.
func (s *scanOp) test(r storage.Row) (bool, error) {
	ok, err := s.eval(r)
	if err != nil || ok {
		return ok, err
	}
	s.dropped++
	if s.dropped%scanFilterCheckEvery == 0 {
		if err := s.c.Context.Err(); err != nil {
			return false, err
		}
	}
	return false, nil
}

// eval reports whether the stored row r passes the scan's condition
// (evaluated row at a time), and counts it if so.
func (s *scanOp) eval(r storage.Row) (bool, error) {
	ok, err := s.evalRow(s.pred, s.scratch, r)
	if ok {
		s.passed++
	}
	return ok, err
}

// evalRow evaluates pred, the scan's condition, on the stored row r
// decoded into row; it changes nothing of s (parallel readers call it,
// scan_parallel.go).
func (s *scanOp) evalRow(pred evalFn, row Row, r storage.Row) (bool, error) {
	// Only the condition's columns are ever written to the scratch row,
	// so only they are cleared (clearing the full-width row per stored
	// row was a fifth of a TPC-H Q12 scan).
	if err := s.predDec.DecodeWanted(r.Value, row); err != nil {
		return false, err
	}
	if s.wantRID {
		row[s.nTable] = types.NewInt8(r.RowID)
	}
	if s.wantVer {
		row[s.nTable+1] = types.Datum{}
		if r.CommitVersion >= 0 {
			row[s.nTable+1] = types.NewInt8(r.CommitVersion)
		}
	}
	d, err := pred(row)
	if err != nil {
		return false, err
	}
	return d.K == types.KindBool && d.I != 0, nil
}

// readFiltered is read (scan.go) for a scan whose condition is tested a
// batch at a time (s.vf, scan_vfilter.go): it hands out the rows of the
// tested batch that passed, then tests the next batch of s.it.
func (s *scanOp) readFiltered(out []Row, backing []types.Datum, keep bool) (_ []Row, more bool, err error) {
	vf := s.vf
	for len(out) < cap(out) {
		if s.vnext >= len(vf.pass) {
			if more, err := s.testBatch(); err != nil || !more {
				return out, more, err
			}
			continue
		}
		r := vf.row(vf.pass[s.vnext])
		s.vnext++
		if s.cut != nil && s.cut.past(r) {
			s.cut.skipped++
			continue
		}
		if out, err = s.emit(out, backing, r, keep); err != nil {
			return nil, false, err
		}
	}
	return out, true, nil
}

// testBatch reads the next batch of s.it into s.vf and tests it; more is
// false when s.it had no row left (or failed: err).
func (s *scanOp) testBatch() (more bool, err error) {
	vf := s.vf
	vf.reset()
	s.vnext = 0
	for vf.len() < BatchSize && s.it.Next() {
		r := s.it.Row()
		if s.s.Exclude != nil {
			if _, skip := s.s.Exclude[r.RowID]; skip {
				continue
			}
		}
		if err := vf.add(r); err != nil {
			return false, err
		}
	}
	if vf.len() == 0 {
		return false, s.it.Err()
	}
	passed := s.passed
	if err := vf.test(s.eval); err != nil {
		return false, err
	}
	// eval counted the rows it passed, the kernel none.
	s.passed = passed + int64(len(vf.pass))
	s.dropped += int64(vf.len() - len(vf.pass))
	return true, s.c.Context.Err()
}

// filterDrained reports whether the scan holds no tested rows it has yet
// to hand out: only then may it turn to readahead.
func (s *scanOp) filterDrained() bool {
	return s.vf == nil || s.vnext >= len(s.vf.pass)
}

// nextFiltered returns the rows of the next batches read ahead that pass
// the condition (post); nil at the end.
func (s *scanOp) nextFiltered() ([]Row, error) {
	for {
		b, err := s.ra.next(s)
		if err != nil || b == nil {
			return nil, err
		}
		out, err := keepPassing(b, s.post)
		if err != nil || len(out) > 0 {
			return out, err
		}
		if err := s.c.Context.Err(); err != nil {
			return nil, err
		}
	}
}
