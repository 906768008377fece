package session

import (
	"context"
	"fmt"
	"math"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Cursor options of DECLARE (PostgreSQL's CURSOR_OPT_* bits).
const (
	cursorBinary   = 0x01
	cursorScroll   = 0x02
	cursorNoScroll = 0x04
	cursorHold     = 0x20
)

// cursor is a DECLAREd cursor (psycopg2's named cursors). A forward-only
// cursor streams its query's rows from the operator tree as FETCH asks for
// them, inside its transaction. A scrollable cursor keeps the rows it has
// read so it can move back: one declared SCROLL, or one declared without
// SCROLL or NO SCROLL whose plan PostgreSQL could run backward
// (backwardCapable). A WITH HOLD cursor reads all its rows when its
// transaction commits and lives on until CLOSE or the session's end.
type cursor struct {
	name    string
	cols    []plan.Column
	scroll  bool
	hold    bool
	op      exec.Operator // nil once every row is read
	c       *exec.Ctx
	pending []exec.Row // read from op, not yet fetched (streaming)
	rows    []exec.Row // every row read so far (scroll and hold)
	pos     int        // rows fetched: 0 = before the first, len+1 = after the last
	held    bool       // materialized at commit: survives the transaction
}

// next reads the next row from the operator (nil at the end).
func (cu *cursor) next() (exec.Row, error) {
	for len(cu.pending) == 0 {
		if cu.op == nil {
			return nil, nil
		}
		rows, err := cu.op.Next()
		if err != nil {
			return nil, err
		}
		if rows == nil {
			cu.op.Close()
			cu.op = nil
			return nil, nil
		}
		cu.pending = rows
	}
	r := cu.pending[0]
	cu.pending = cu.pending[1:]
	return r, nil
}

// fill reads rows until n are known (or the end), for scroll and hold.
func (cu *cursor) fill(n int) error {
	for len(cu.rows) < n {
		r, err := cu.next()
		if err != nil {
			return err
		}
		if r == nil {
			return nil
		}
		cu.rows = append(cu.rows, r)
	}
	return nil
}

func (cu *cursor) close() {
	if cu.op != nil {
		cu.op.Close()
		cu.op = nil
	}
}

// declareCursor runs DECLARE name [BINARY] [SCROLL] CURSOR [WITH HOLD] FOR query.
func (s *Session) declareCursor(ctx context.Context, st *parse.Statement, d *pg_query.DeclareCursorStmt, params []types.Datum) (string, error) {
	hold := d.Options&cursorHold != 0
	if d.Options&cursorBinary != 0 {
		return "", pgerror.New(pgerror.FeatureNotSupported, "BINARY cursors are not supported; use the extended protocol's binary result format")
	}
	if !s.explicit && !hold {
		return "", pgerror.New(pgerror.NoActiveSQLTransaction, "DECLARE CURSOR can only be used in transaction blocks")
	}
	if _, ok := s.cursors[d.Portalname]; ok {
		return "", pgerror.New(pgerror.DuplicateCursor, "cursor \"%s\" already exists", d.Portalname)
	}
	sel := d.Query.GetSelectStmt()
	if sel == nil {
		return "", pgerror.New(pgerror.FeatureNotSupported, "DECLARE CURSOR takes a SELECT or VALUES query")
	}
	if err := refuseModifyingWith(sel, "DECLARE CURSOR must not contain data-modifying statements in WITH"); err != nil {
		return "", err
	}
	b := s.binder(st, nil)
	b.Optimize = true
	b.AllowRowLocks = true
	q, err := b.BindSelect(sel)
	if err != nil {
		return "", err
	}
	c, err := s.execCtx(ctx, params)
	if err != nil {
		return "", err
	}
	op, err := exec.Build(c, q.Root)
	if err != nil {
		return "", err
	}
	scroll := d.Options&cursorScroll != 0 || d.Options&cursorNoScroll == 0 && backwardCapable(q.Root)
	cu := &cursor{name: d.Portalname, cols: q.Cols, scroll: scroll, hold: hold, op: op, c: c}
	if s.cursors == nil {
		s.cursors = map[string]*cursor{}
	}
	s.cursors[d.Portalname] = cu
	return "DECLARE CURSOR", nil
}

// backwardCapable reports whether PostgreSQL would let a cursor declared
// without SCROLL move backward over plan n: it does when its executor can
// run the plan backward — table and VALUES scans, and sorts (which keep
// their output), under filters, projections and limits — and refuses for
// joins, aggregates, DISTINCT, set operations, window functions and the
// rest (their nodes only go forward). Our plans are not PostgreSQL's, so
// this follows the node kinds both planners use for the same query.
func backwardCapable(n plan.Node) bool {
	switch n := n.(type) {
	case *plan.Scan, *plan.Values, *plan.Sort:
		return true
	case *plan.Filter:
		return backwardCapable(n.Input)
	case *plan.Project:
		return backwardCapable(n.Input)
	case *plan.Limit:
		return backwardCapable(n.Input)
	}
	return false
}

// prepareFetch binds FETCH/MOVE: a FETCH returns the cursor's columns,
// computed when it runs; a MOVE only repositions.
func (s *Session) prepareFetch(p *prepared, f *pg_query.FetchStmt) error {
	cu, ok := s.cursors[f.Portalname]
	if !ok {
		return pgerror.New(pgerror.InvalidCursorName, "cursor \"%s\" does not exist", f.Portalname)
	}
	if f.Ismove {
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) {
			n, err := s.fetch(ctx, cu, f, nil)
			return fmt.Sprintf("MOVE %d", n), err
		}
		return nil
	}
	p.cols, p.rowsTag = cu.cols, "FETCH"
	p.node = &plan.Rows{Cols: cu.cols, Gen: genDeferred, Arg: deferredRows(func(c *exec.Ctx) ([]exec.Row, error) {
		var out []exec.Row
		_, err := s.fetch(c.Context, cu, f, func(r exec.Row) { out = append(out, r) })
		return out, err
	})}
	return nil
}

// fetch moves cu as f says, handing each row it passes over to emit (nil for
// MOVE), and returns how many rows that was.
func (s *Session) fetch(ctx context.Context, cu *cursor, f *pg_query.FetchStmt, emit func(exec.Row)) (int64, error) {
	if cu.c != nil {
		cu.c.Context = ctx
	}
	count := f.HowMany
	if count == math.MaxInt64 || count < 0 && f.Direction != pg_query.FetchDirection_FETCH_ABSOLUTE && f.Direction != pg_query.FetchDirection_FETCH_RELATIVE {
		count = math.MaxInt64 // ALL
	}
	buffered := cu.scroll || cu.held
	switch f.Direction {
	case pg_query.FetchDirection_FETCH_FORWARD:
		if !buffered {
			var n int64
			for n < count {
				r, err := cu.next()
				if err != nil {
					return n, err
				}
				if r == nil {
					break
				}
				if emit != nil {
					emit(r)
				}
				n++
			}
			return n, nil
		}
		return cu.step(int64(count), emit)
	case pg_query.FetchDirection_FETCH_BACKWARD:
		if !buffered {
			return 0, pgerror.New(pgerror.ObjectNotInPrerequisiteState, "cursor can only scan forward").
				WithHint("Declare it with SCROLL option to enable backward scan.")
		}
		return cu.step(-int64(count), emit)
	case pg_query.FetchDirection_FETCH_ABSOLUTE, pg_query.FetchDirection_FETCH_RELATIVE:
		if !buffered {
			if f.Direction == pg_query.FetchDirection_FETCH_RELATIVE && count >= 0 || f.Direction == pg_query.FetchDirection_FETCH_ABSOLUTE && count > 0 {
				return 0, pgerror.New(pgerror.FeatureNotSupported, "FETCH ABSOLUTE and RELATIVE need a SCROLL cursor here")
			}
			return 0, pgerror.New(pgerror.ObjectNotInPrerequisiteState, "cursor can only scan forward").
				WithHint("Declare it with SCROLL option to enable backward scan.")
		}
		target := count
		if f.Direction == pg_query.FetchDirection_FETCH_RELATIVE {
			target = int64(cu.pos) + count
		} else if count < 0 {
			if err := cu.fill(math.MaxInt32); err != nil {
				return 0, err
			}
			target = int64(len(cu.rows)) + 1 + count
		}
		if target < 0 {
			target = 0
		}
		if err := cu.fill(int(min(target, math.MaxInt32))); err != nil {
			return 0, err
		}
		if target > int64(len(cu.rows)) {
			cu.pos = len(cu.rows) + 1
			return 0, nil
		}
		cu.pos = int(target)
		if cu.pos == 0 {
			return 0, nil
		}
		if emit != nil {
			emit(cu.rows[cu.pos-1])
		}
		return 1, nil
	}
	return 0, pgerror.New(pgerror.FeatureNotSupported, "this FETCH direction is not supported")
}

// step moves a buffered cursor n rows (negative: backward), emitting each
// row it lands on, as FETCH FORWARD/BACKWARD n do.
func (cu *cursor) step(n int64, emit func(exec.Row)) (int64, error) {
	var moved int64
	for moved < n || moved < -n {
		next := cu.pos + 1
		if n < 0 {
			next = cu.pos - 1
		}
		if next < 1 {
			cu.pos = 0
			break
		}
		if err := cu.fill(next); err != nil {
			return moved, err
		}
		if next > len(cu.rows) {
			cu.pos = len(cu.rows) + 1
			break
		}
		cu.pos = next
		if emit != nil {
			emit(cu.rows[next-1])
		}
		moved++
	}
	return moved, nil
}

// closeCursor runs CLOSE name | ALL.
func (s *Session) closeCursor(name string) (string, error) {
	if name == "" {
		for n, cu := range s.cursors {
			cu.close()
			delete(s.cursors, n)
		}
		return "CLOSE CURSOR ALL", nil
	}
	cu, ok := s.cursors[name]
	if !ok {
		return "", pgerror.New(pgerror.InvalidCursorName, "cursor \"%s\" does not exist", name)
	}
	cu.close()
	delete(s.cursors, name)
	return "CLOSE CURSOR", nil
}

// endCursors runs at the end of a transaction. A commit reads the rest of
// each WITH HOLD cursor declared in it (so it survives without the
// transaction) and closes the others; a rollback closes every cursor the
// transaction declared.
func (s *Session) endCursors(commit bool) error {
	var err error
	for name, cu := range s.cursors {
		if cu.held {
			continue
		}
		if commit && cu.hold && err == nil {
			// The statement that declared it may be over: reading the
			// rest belongs to the commit, which is not canceled.
			cu.c.Context = context.Background()
			if err = cu.fill(math.MaxInt32); err == nil {
				cu.close()
				cu.held, cu.c = true, nil
				continue
			}
		}
		cu.close()
		delete(s.cursors, name)
	}
	return err
}
