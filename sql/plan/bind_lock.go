package plan

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// LockMode is a table lock mode of LOCK TABLE, numbered as PostgreSQL
// numbers them (1 = ACCESS SHARE … 8 = ACCESS EXCLUSIVE).
type LockMode int32

// The table lock modes.
const (
	LockAccessShare          LockMode = 1
	LockRowShare             LockMode = 2
	LockRowExclusive         LockMode = 3
	LockShareUpdateExclusive LockMode = 4
	LockShare                LockMode = 5
	LockShareRowExclusive    LockMode = 6
	LockExclusive            LockMode = 7
	LockAccessExclusive      LockMode = 8
)

var lockModeNames = [...]string{"", "ACCESS SHARE", "ROW SHARE", "ROW EXCLUSIVE",
	"SHARE UPDATE EXCLUSIVE", "SHARE", "SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"}

// String is the mode as LOCK TABLE spells it.
func (m LockMode) String() string {
	if m < 1 || int(m) >= len(lockModeNames) {
		return "ACCESS EXCLUSIVE"
	}
	return lockModeNames[m]
}

// Privileges lists the table privileges of which the mode needs one, as
// PostgreSQL 15 checks them: SELECT for ACCESS SHARE; INSERT, UPDATE,
// DELETE or TRUNCATE for ROW EXCLUSIVE; UPDATE, DELETE or TRUNCATE for
// the others.
func (m LockMode) Privileges() []byte {
	switch m {
	case LockAccessShare:
		return []byte{catalog.PrivSelect}
	case LockRowExclusive:
		return []byte{catalog.PrivInsert, catalog.PrivUpdate, catalog.PrivDelete, catalog.PrivTruncate}
	}
	return []byte{catalog.PrivUpdate, catalog.PrivDelete, catalog.PrivTruncate}
}

// LockTable is a bound LOCK TABLE statement.
type LockTable struct {
	Tables []*catalog.Table
	Mode   LockMode
	NoWait bool
}

// BindLock binds LOCK [TABLE] name [, …] [IN mode MODE] [NOWAIT]: each
// relation must be a table or a view (42809 "cannot lock relation" otherwise, as PostgreSQL).
func (b *Binder) BindLock(ls *pg_query.LockStmt) (*LockTable, error) {
	l := &LockTable{Mode: LockMode(ls.Mode), NoWait: ls.Nowait}
	if l.Mode < LockAccessShare || l.Mode > LockAccessExclusive {
		l.Mode = LockAccessExclusive
	}
	for _, r := range ls.Relations {
		rv := r.GetRangeVar()
		t, err := b.resolveTable(rv)
		if err != nil {
			return nil, err
		}
		if t.Kind != catalog.KindTable && t.Kind != catalog.KindView {
			return nil, b.errAt(rv.Location, pgerror.WrongObjectType, "cannot lock relation \"%s\"", t.Name)
		}
		l.Tables = append(l.Tables, t)
	}
	return l, nil
}

// Unsupported is the 0A000 for the modes that would block other writers:
// nothing here takes table locks (a transaction reads one snapshot, and
// of two concurrent writes of a row the second to commit fails with
// 40001), so only the modes that keep DDL away are accepted; nil for those.
func (l *LockTable) Unsupported() error {
	if l.Mode <= LockRowExclusive {
		return nil
	}
	return pgerror.New(pgerror.FeatureNotSupported,
		"LOCK TABLE … IN %s MODE is not supported: mvserver takes no table locks that block other writers; transactions read one snapshot, and of two concurrent writes of the same row the second to commit fails with 40001", l.Mode)
}
