package server

import "github.com/mvserver/mvserver/pgerror"

// Aborter may be implemented by a Session that wants PostgreSQL's rule that
// every ERROR aborts the current transaction to cover the errors the wire
// layer raises itself in the extended protocol: an unknown statement or
// portal (26000, 34000), a duplicate name (42P05, 42P03), a Bind whose shape
// does not match its statement (08P01, 22023). The session never sees those
// messages, so without this it would commit at the next Sync an implicit
// transaction PostgreSQL would roll back, or leave an explicit block usable
// that PostgreSQL would mark failed ('E').
type Aborter interface {
	// AbortTransaction marks the current transaction failed, as if a
	// statement in it had returned cause. It is called before the
	// ErrorResponse is sent; the next Sync (or ROLLBACK) ends it.
	AbortTransaction(cause *pgerror.Error)
}
