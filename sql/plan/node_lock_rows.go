package plan

import "github.com/mvserver/mvserver/catalog"

// LockRows is SELECT … FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE over
// the rows of its input: for each row it passes on, it locks the row of
// every target table that the row came from (sql/exec, storage's
// row_locks.go for what a lock means here). Under SKIP LOCKED a row
// whose lock another transaction holds is dropped, so the binder puts
// LockRows below LIMIT, as PostgreSQL's planner does.
type LockRows struct {
	Input   Node
	Targets []LockTarget
}

// LockStrength is a locking clause's strength, weakest first (PostgreSQL's
// LockClauseStrength).
type LockStrength uint8

const (
	LockForKeyShare LockStrength = iota + 1
	LockForShare
	LockForNoKeyUpdate
	LockForUpdate
)

// String is the clause as PostgreSQL's messages write it.
func (s LockStrength) String() string {
	switch s {
	case LockForKeyShare:
		return "FOR KEY SHARE"
	case LockForShare:
		return "FOR SHARE"
	case LockForNoKeyUpdate:
		return "FOR NO KEY UPDATE"
	}
	return "FOR UPDATE"
}

// LockWait is a locking clause's wait policy.
type LockWait uint8

const (
	// LockWaitDefault never waits here: of the transactions that lock or
	// write a row, the first to commit wins.
	LockWaitDefault LockWait = iota
	LockNoWait
	LockSkipLocked
)

// LockTarget is one table whose rows a LockRows locks: Key are the input
// columns holding the row's storage key (the primary key's columns in key
// order, or the row id of a table without one).
type LockTarget struct {
	Table    *catalog.Table
	Key      []int
	RowID    bool
	Strength LockStrength
	Wait     LockWait
}

// Columns returns the input's columns.
func (l *LockRows) Columns() []Column { return l.Input.Columns() }

// Children returns the input.
func (l *LockRows) Children() []Node { return []Node{l.Input} }

// WithChildren returns l over ch[0].
func (l *LockRows) WithChildren(ch ...Node) (Node, error) {
	if err := childCount(l, ch, 1); err != nil {
		return nil, err
	}
	cp := *l
	cp.Input = ch[0]
	return &cp, nil
}
