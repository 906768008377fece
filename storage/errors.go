package storage

import (
	"errors"
	"fmt"
)

// Sentinel errors. The SQL layer maps them to SQLSTATEs (ErrSerialization →
// 40001, ErrDuplicateKey → 23505, …); storage itself knows no SQLSTATE.
var (
	// ErrSerialization: a write-write conflict (first committer wins) or a
	// CheckUnchanged key written by a transaction that committed after Begin.
	ErrSerialization = errors.New("storage: could not serialize access due to concurrent update")
	// ErrReadDependency: a serializable transaction's commit found that a
	// transaction that committed after its Begin wrote what it read
	// (serializable.go). It wraps ErrSerialization.
	ErrReadDependency = fmt.Errorf("%w: read/write dependencies among transactions", ErrSerialization)
	// ErrDuplicateKey: an insert (or an update's new key) hits an existing row.
	// The error is a *DuplicateKeyError.
	ErrDuplicateKey = errors.New("storage: duplicate key")
	// ErrNotFound: Update or Delete of a key that has no row.
	ErrNotFound = errors.New("storage: row not found")
	// ErrLocked: Open found the data directory locked by another process (or
	// by another DB in this process).
	ErrLocked = errors.New("storage: data directory is locked")
	// ErrTxnDone: the transaction already committed or rolled back.
	ErrTxnDone = errors.New("storage: transaction already committed or rolled back")
	// ErrClosed: the DB is closed.
	ErrClosed = errors.New("storage: database is closed")
	// ErrTableExists: CreateTable of a table that already has versions.
	ErrTableExists = errors.New("storage: table already exists")
	// ErrIndexMismatch: a row write whose TableInfo does not list exactly
	// the indexes the table has (BuildIndex, DropIndex) as the transaction
	// sees them. A bug in the caller: the entries would be wrong.
	ErrIndexMismatch = errors.New("storage: the write does not name the table's indexes")
	// ErrChangesUnavailable: Changes asked for versions whose change data feed
	// was never recorded (CDF off) or was vacuumed. The error is a
	// *ChangesUnavailableError (R-T7, R-T9).
	ErrChangesUnavailable = errors.New("storage: change data feed not available")
)

// DuplicateKeyError is the ErrDuplicateKey error: it names the table and the
// key (as the caller encoded it) so the SQL layer can report the key values.
// Index is 0 for a row key; otherwise the unique index whose entry is
// taken, Key then being the entry's columns (IndexKeyFunc's encoding).
type DuplicateKeyError struct {
	Table TableID
	Index IndexID
	Key   []byte
}

func (e *DuplicateKeyError) Error() string {
	if e.Index != 0 {
		return fmt.Sprintf("storage: duplicate key %x in index %d of table %d", e.Key, e.Index, e.Table)
	}
	return fmt.Sprintf("storage: duplicate key %x in table %d", e.Key, e.Table)
}

// Is makes errors.Is(err, ErrDuplicateKey) true.
func (e *DuplicateKeyError) Is(target error) bool { return target == ErrDuplicateKey }

// ChangesUnavailableError is the ErrChangesUnavailable error (R-T7: "asking for
// versions before CDF was on is an error that says from which version it is
// available").
type ChangesUnavailableError struct {
	Table TableID
	// Start is the first version asked for.
	Start int64
	// AvailableFrom is the first version from which changes are available up
	// to the table's current version, or -1 when the current version itself
	// was committed without the change data feed.
	AvailableFrom int64
	// Vacuumed is true when the versions asked for had records that VACUUM
	// removed (R-T9); false when the feed was off for them.
	Vacuumed bool
	// Rewritten is the latest version among those asked for that a
	// rewrite committed (its rows written anew as a generation, with no
	// change records: generation.go), or -1.
	Rewritten int64
}

func (e *ChangesUnavailableError) Error() string {
	if e.AvailableFrom < 0 {
		return fmt.Sprintf("storage: change data feed of table %d is not available at its current version", e.Table)
	}
	why := "was not enabled"
	if e.Vacuumed {
		why = "was vacuumed"
	} else if e.Rewritten >= 0 {
		why = "has no records (the table was rewritten whole)"
	}
	return fmt.Sprintf("storage: change data feed of table %d %s for version %d; it is available from version %d",
		e.Table, why, e.Start, e.AvailableFrom)
}

// Is makes errors.Is(err, ErrChangesUnavailable) true.
func (e *ChangesUnavailableError) Is(target error) bool { return target == ErrChangesUnavailable }

// lockedError is Open's error for a locked data directory.
type lockedError struct {
	dir   string
	cause error
}

func (e *lockedError) Error() string {
	return fmt.Sprintf("data directory %s is in use by another mvserver process", e.dir)
}

func (e *lockedError) Unwrap() []error { return []error{ErrLocked, e.cause} }
