// Package session implements the wire layer's Session for one client
// connection: it parses each statement, binds and plans it against the
// catalog snapshot of its transaction, runs it with sql/exec, and owns the
// transaction state (implicit per statement or Sync, explicit between BEGIN
// and COMMIT, failed until ROLLBACK), the session settings and the
// encoding of results in text or binary.
//
// Invariants:
//  1. Every statement runs inside a storage transaction; outside BEGIN, a
//     simple-query message or an extended-protocol batch (up to Sync) is one
//     implicit transaction, as in PostgreSQL.
//  2. A failed statement changes nothing: its transaction is rolled back, or,
//     inside BEGIN, marked failed (25P02) until ROLLBACK.
//  3. DDL and DML of one transaction commit atomically: catalog descriptors
//     and rows go through the same storage transaction.
//  4. It is the one place that will call refresh/ and scheduler/.
//  5. Every statement checks the session role's privileges (privileges.go,
//     over catalog/privileges.go) before it reads or changes anything, and
//     every view it reads the view owner's (the binder's CheckRead), a
//     superuser's statement too.
//
// Imports: server (for the Session interface types it implements), sql/*,
// catalog, storage, pgerror.
package session
