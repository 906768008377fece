package exec

import (
	"errors"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// lockRowsOp runs a plan.LockRows: it locks, in the statement's
// transaction, the target rows of each row it passes on (storage's
// row_locks.go says what a lock is), and drops a row one of whose target
// rows SKIP LOCKED found locked. Under a LIMIT it locks no more rows than
// the limit takes (max), as PostgreSQL's LockRows under its Limit does.
type lockRowsOp struct {
	c       *Ctx
	in      Operator
	targets []lockTarget
	max     int64 // rows to pass on at most; 0 = all
	passed  int64
	done    bool
	key     []byte
}

type lockTarget struct {
	plan.LockTarget
	id       storage.TableID
	strength storage.LockStrength
	wait     storage.LockWait
}

var lockStrengths = map[plan.LockStrength]storage.LockStrength{
	plan.LockForKeyShare:    storage.LockKeyShare,
	plan.LockForShare:       storage.LockShare,
	plan.LockForNoKeyUpdate: storage.LockNoKeyUpdate,
	plan.LockForUpdate:      storage.LockUpdate,
}

var lockWaits = map[plan.LockWait]storage.LockWait{
	plan.LockWaitDefault: storage.LockAlongside,
	plan.LockNoWait:      storage.LockNoWait,
	plan.LockSkipLocked:  storage.LockSkip,
}

func newLockRows(c *Ctx, l *plan.LockRows, in Operator) (Operator, error) {
	if c.Txn == nil {
		in.Close()
		return nil, pgerror.New(pgerror.InternalError, "row locks need a transaction")
	}
	op := &lockRowsOp{c: c, in: in}
	for _, t := range l.Targets {
		op.targets = append(op.targets, lockTarget{LockTarget: t, id: StorageInfo(t.Table).ID,
			strength: lockStrengths[t.Strength], wait: lockWaits[t.Wait]})
	}
	return op, nil
}

func (l *lockRowsOp) Next() ([]Row, error) {
	for !l.done {
		b, err := l.in.Next()
		if err != nil || b == nil {
			return nil, err
		}
		out := b[:0]
		for _, r := range b {
			if l.max > 0 && l.passed >= l.max {
				l.done = true
				break
			}
			ok, err := l.lock(r)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, r)
				l.passed++
			}
		}
		if len(out) > 0 {
			return out, nil
		}
		if err := l.c.Context.Err(); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// lock locks r's target rows; false when SKIP LOCKED skipped one.
func (l *lockRowsOp) lock(r Row) (bool, error) {
	for i := range l.targets {
		t := &l.targets[i]
		l.key = l.key[:0]
		if t.RowID {
			d := r[t.Key[0]]
			if d.IsNull() {
				continue // no row of this table (cannot happen: outer joins are refused)
			}
			l.key = append(l.key, storage.RowIDKey(d.I)...)
		} else {
			var err error
			for _, k := range t.Key {
				if l.key, err = appendKeyDatum(l.key, r[k]); err != nil {
					return false, err
				}
			}
		}
		ok, err := l.c.Txn.LockRow(t.id, l.key, t.strength, t.wait)
		switch {
		case errors.Is(err, storage.ErrLockNotAvailable):
			return false, pgerror.New(pgerror.LockNotAvailable, "could not obtain lock on row in relation \"%s\"", t.Table.Name)
		case errors.Is(err, storage.ErrSerialization):
			return false, pgerror.New(pgerror.SerializationFailure, "could not serialize access due to concurrent update")
		case err != nil:
			return false, err
		case !ok:
			return false, nil
		}
	}
	return true, nil
}

func (l *lockRowsOp) Close() { l.in.Close() }
