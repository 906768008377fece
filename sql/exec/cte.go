package exec

// WITH queries (R-Q2): the one materialization of a shared WITH query, and
// the rounds of WITH RECURSIVE.

import (
	"github.com/mvserver/mvserver/sql/plan"
)

// bufferOp returns rows kept in memory, in batches, without letting its
// consumers share a batch slice (they may filter a batch in place).
type bufferOp struct {
	c    *Ctx
	rows []Row
}

func (o *bufferOp) Next() ([]Row, error) {
	if len(o.rows) == 0 {
		return nil, nil
	}
	if err := o.c.Context.Err(); err != nil {
		return nil, err
	}
	n := min(len(o.rows), BatchSize)
	out := make([]Row, n)
	copy(out, o.rows[:n])
	o.rows = o.rows[n:]
	return out, nil
}

func (o *bufferOp) Close() {}

// newCTEScan reads a WITH query: inlined, or, when shared, from the one
// materialization the statement computes at its first reference.
func newCTEScan(c *Ctx, x *plan.CTEScan) (Operator, error) {
	if !x.CTE.Shared {
		return Build(c, x.Input)
	}
	st := c.state()
	rows, ok := st.ctes[x.CTE]
	if !ok {
		// The rows stay for the whole statement: the charge is never given
		// back (the budget ends with the statement).
		var err error
		if rows, err = collectCharged(c, x.Input, "WITH query"); err != nil {
			return nil, err
		}
		if st.ctes == nil {
			st.ctes = map[*plan.CTE][]Row{}
		}
		st.ctes[x.CTE] = rows
	}
	return &bufferOp{c: c, rows: rows}, nil
}

// collectCharged runs n to the end and returns its rows, charging them as
// they arrive, for what, to the statement's budget until it ends: past
// it, the statement fails there and then, not after it has them all.
func collectCharged(c *Ctx, n plan.Node, what string) ([]Row, error) {
	op, err := Build(c, n)
	if err != nil {
		return nil, err
	}
	acct := c.account(what)
	var rows []Row
	err = Drain(op, func(b []Row) error {
		// Each row, and its slot in rows (which doubles as it grows).
		if err := acct.grow(rowsBytes(b) + 24*int64(len(b))); err != nil {
			return err
		}
		rows = append(rows, b...)
		return c.Context.Err()
	})
	return rows, err
}

// recursiveOp evaluates WITH RECURSIVE lazily: it streams the rows of the
// non-recursive term, then of each round of the recursive term (built anew
// per round over the previous round's rows), so a LIMIT above it stops the
// recursion early. As in PostgreSQL, the rounds are not bounded: a
// recursion that does not end runs until its working table (the last two
// rounds' rows, and the rows seen under UNION) passes the memory budget
// (53200), or until statement_timeout or a cancel stops it (57014); it
// checks for both every round and every batch.
type recursiveOp struct {
	c    *Ctx
	node *plan.RecursiveUnion
	cur  Operator
	next []Row // rows of the round being produced
	seen map[string]struct{}
	buf  []byte
	// mem holds the rows of the last two rounds and the seen keys.
	mem     memAccount
	workMem int64 // the charge for the previous round's rows (st.work)
	nextMem int64 // the charge for o.next
}

func newRecursive(c *Ctx, x *plan.RecursiveUnion) (Operator, error) {
	op := &recursiveOp{c: c, node: x, mem: c.account("recursive query")}
	if !x.All {
		op.seen = map[string]struct{}{}
	}
	var err error
	if op.cur, err = Build(c, x.NonRec); err != nil {
		return nil, err
	}
	return op, nil
}

func (o *recursiveOp) Next() ([]Row, error) {
	for {
		if err := o.c.Context.Err(); err != nil {
			return nil, err
		}
		if o.cur == nil {
			if len(o.next) == 0 {
				return nil, nil
			}
			st := o.c.state()
			if st.work == nil {
				st.work = map[*plan.WorkTable][]Row{}
			}
			st.work[o.node.Work] = o.next
			o.next = nil
			// The round before last is gone: give its rows back.
			o.mem.shrink(o.workMem)
			o.workMem, o.nextMem = o.nextMem, 0
			var err error
			if o.cur, err = Build(o.c, o.node.Rec); err != nil {
				return nil, err
			}
		}
		b, err := o.cur.Next()
		if err != nil {
			return nil, err
		}
		if b == nil {
			o.cur.Close()
			o.cur = nil
			continue
		}
		var size int64
		if o.seen != nil {
			out := b[:0]
			for _, r := range b {
				o.buf = rowKey(o.buf, r)
				if _, dup := o.seen[string(o.buf)]; dup {
					continue
				}
				o.seen[string(o.buf)] = struct{}{}
				size += int64(len(o.buf)) + mapEntryOverhead
				out = append(out, r)
			}
			b = out
		}
		if len(b) == 0 {
			continue
		}
		rows := rowsBytes(b)
		if err := o.mem.grow(size + rows); err != nil {
			return nil, err
		}
		o.nextMem += rows
		o.next = append(o.next, b...)
		return b, nil
	}
}

func (o *recursiveOp) Close() {
	o.mem.release()
	if o.cur != nil {
		o.cur.Close()
		o.cur = nil
	}
	if st := o.c.stmt; st != nil {
		delete(st.work, o.node.Work)
	}
}

func newWorkTableScan(c *Ctx, x *plan.WorkTableScan) (Operator, error) {
	return &bufferOp{c: c, rows: c.state().work[x.Work]}, nil
}

// RunModifyingWith runs a statement's data-modifying WITH queries (nil:
// none) before its main query runs in the same context: first it copies
// the tables the statement reads after one of them writes them (so every
// part reads the tables as they were at the statement's start), then it
// runs each INSERT, UPDATE and DELETE once, in order, keeping its
// RETURNING rows for the references to it, and noting the rows each
// changes, which the later ones skip (changed_rows.go).
func RunModifyingWith(c *Ctx, w *plan.ModifyingWith) error {
	if w == nil {
		return nil
	}
	st := c.state()
	if st.ctes == nil {
		st.ctes = map[*plan.CTE][]Row{}
	}
	// Kept for the whole statement, like a shared WITH query's rows.
	acct := c.account("WITH query")
	keep := func(cte *plan.CTE, rows []Row) error {
		if err := acct.grow(rowsBytes(rows)); err != nil {
			return err
		}
		st.ctes[cte] = rows
		return nil
	}
	for _, s := range w.Snapshots {
		scan := plan.NewScan(s.Table)
		for i := range scan.Needed {
			scan.Needed[i] = true
		}
		rows, err := collectCharged(c, scan, "WITH query")
		if err != nil {
			return err
		}
		st.ctes[s.CTE] = rows
	}
	if len(w.CTEs) > 0 {
		c.trackChanges()
	}
	for _, m := range w.CTEs {
		var rows []Row
		var err error
		switch s := m.Stmt.(type) {
		case *plan.Insert:
			if s.Returning != nil {
				rows, err = ExecReturning(c, s)
			} else {
				_, err = ExecInsert(c, s)
			}
		case *plan.Update:
			if s.Returning != nil {
				rows, err = ExecReturning(c, s)
			} else {
				_, err = ExecUpdate(c, s)
			}
		case *plan.Delete:
			if s.Returning != nil {
				rows, err = ExecReturning(c, s)
			} else {
				_, err = ExecDelete(c, s)
			}
		}
		if err != nil {
			return err
		}
		if err := keep(m.CTE, rows); err != nil {
			return err
		}
	}
	return nil
}
