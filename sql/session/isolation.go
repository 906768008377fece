package session

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/storage"
)

// Transaction isolation levels (R-Q5). SERIALIZABLE transactions are
// storage's serializable ones (storage/serializable.go): a commit that
// writes fails with 40001 when a transaction that committed after its
// snapshot wrote what it read. REPEATABLE READ is snapshot isolation, and
// READ COMMITTED and READ UNCOMMITTED run as it too: one snapshot per
// transaction, which the standard allows (a level may be stronger than
// asked). transaction_isolation shows the level asked for, as PostgreSQL
// shows READ UNCOMMITTED though it runs READ COMMITTED.
//
// The level is fixed by the first statement that takes a snapshot, as in
// PostgreSQL: BEGIN's modes, SET TRANSACTION and SET transaction_isolation
// may change it before (the transaction then starts over on a snapshot of
// the right kind: storage's snapshot is taken at BEGIN), not after (25001).
//
// A SERIALIZABLE READ ONLY transaction needs no storage serializable
// transaction: one that writes nothing is never checked (storage/
// serializable.go), so it reads a plain snapshot and records nothing, and
// while it is open other commits keep no write history for it. READ ONLY
// cannot be turned off once a statement took the snapshot (25001, as in
// PostgreSQL), so such a transaction never writes.

const isolationSerializable = "serializable"

// isolationLevels are the values of default_transaction_isolation and
// transaction_isolation, in PostgreSQL's order.
var isolationLevels = []string{"serializable", "repeatable read", "read committed", "read uncommitted"}

// checkIsolationOf checks a value of the named isolation setting.
func checkIsolationOf(name string) func(string) (string, error) {
	return func(v string) (string, error) {
		l := strings.ToLower(strings.TrimSpace(v))
		for _, lvl := range isolationLevels {
			if l == lvl {
				return lvl, nil
			}
		}
		return "", pgerror.New(pgerror.InvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", name, v).
			WithHint("Available values: %s.", strings.Join(isolationLevels, ", "))
	}
}

// beginStorage starts the storage transaction of isolation level.
func (s *Session) beginStorage(level string, readOnly bool) *storage.Txn {
	if serializableStorage(level, readOnly) {
		return s.eng.DB.BeginSerializable()
	}
	return s.eng.DB.Begin()
}

// serializableStorage reports whether a transaction of level and
// readOnly needs storage's serializable transaction.
func serializableStorage(level string, readOnly bool) bool {
	return level == isolationSerializable && !readOnly
}

// transactionIsolation is transaction_isolation's value: the open
// transaction's level, else the level the next one takes.
func (s *Session) transactionIsolation() string {
	if s.txn != nil && s.isolation != "" {
		return s.isolation
	}
	return s.setting("default_transaction_isolation")
}

// setIsolation changes the open transaction's isolation level (BEGIN
// ISOLATION LEVEL, SET TRANSACTION, SET transaction_isolation).
func (s *Session) setIsolation(v string) error {
	level, err := checkIsolationOf("transaction_isolation")(v)
	if err != nil {
		return err
	}
	if s.txn == nil || level == s.isolation {
		return nil
	}
	if s.snapshotTaken {
		return pgerror.New(pgerror.ActiveSQLTransaction, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
	}
	s.isolation = level
	return s.matchStorage()
}

// setReadOnly sets the open transaction's READ ONLY mode.
func (s *Session) setReadOnly(readOnly bool) error {
	if s.txn != nil && s.readOnly && !readOnly && s.snapshotTaken {
		return pgerror.New(pgerror.ActiveSQLTransaction, "transaction read-write mode must be set before any query")
	}
	s.readOnly = readOnly
	return s.matchStorage()
}

// matchStorage starts the storage transaction over when its kind no
// longer fits the transaction's level and mode and nothing has read its
// snapshot yet. (READ ONLY set after a query keeps the serializable one:
// recording reads is then only wasted.)
func (s *Session) matchStorage() error {
	want := serializableStorage(s.isolation, s.readOnly)
	if s.txn == nil || s.snapshotTaken || want == s.txn.Serializable() {
		return nil
	}
	txn := s.beginStorage(s.isolation, s.readOnly)
	cat, err := s.eng.Catalog.Snapshot(txn)
	if err != nil {
		txn.Rollback()
		return err
	}
	s.txn.Rollback()
	s.txn, s.cat = txn, cat
	return nil
}

// beginModes are the isolation level ("" none) and READ ONLY mode (nil
// none) among BEGIN's modes.
func beginModes(opts []*pg_query.Node) (level string, readOnly *bool) {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch d.Defname {
		case "transaction_isolation":
			level = constString(d.Arg)
		case "transaction_read_only":
			ro := constInt(d.Arg) != 0
			readOnly = &ro
		}
	}
	return level, readOnly
}

// noteSnapshot records that st, about to run in the open transaction,
// takes its snapshot: from then on the isolation level is fixed. As in
// PostgreSQL, transaction control, SET and SHOW take none.
func (s *Session) noteSnapshot(st *parse.Statement) {
	if s.snapshotTaken || st == nil {
		return
	}
	if st.AST != nil {
		switch st.AST.Node.(type) {
		case *pg_query.Node_TransactionStmt, *pg_query.Node_VariableSetStmt, *pg_query.Node_VariableShowStmt:
			return
		}
	}
	s.snapshotTaken = true
}

// readDependencyErr is PostgreSQL's error for a serializable transaction
// whose reads a concurrent commit overwrote.
func readDependencyErr() error {
	return pgerror.New(pgerror.SerializationFailure, "could not serialize access due to read/write dependencies among transactions").
		WithDetail("Reason code: Canceled on conflict out to a transaction that committed first and wrote what this transaction read.").
		WithHint("The transaction might succeed if retried.")
}
