package session

import (
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// lockTables runs LOCK TABLE. Tables here take no locks: a transaction
// reads one snapshot, and of two concurrent writes of a row the second to
// commit fails with 40001. So the modes that only keep DDL away (ACCESS
// SHARE, ROW SHARE, ROW EXCLUSIVE, what pg_dump and most applications
// take) are checked as PostgreSQL checks them and then have nothing to
// do; the modes that would block other writers are refused with 0A000
// rather than pretending to block them.
func (s *Session) lockTables(st *parse.Statement, ls *pg_query.LockStmt) (string, error) {
	if !s.explicit {
		return "", pgerror.New(pgerror.NoActiveSQLTransaction, "LOCK TABLE can only be used in transaction blocks")
	}
	l, err := s.binder(st, nil).BindLock(ls)
	if err != nil {
		return "", err
	}
	for _, t := range l.Tables {
		if err := s.requireAny(t, l.Mode.Privileges()...); err != nil {
			return "", err
		}
	}
	if err := l.Unsupported(); err != nil {
		return "", err
	}
	return "LOCK TABLE", nil
}
