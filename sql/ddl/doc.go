// Package ddl applies data-definition statements to a catalog clone: the
// DESIGN.md target where sql/session keeps the connection and hands DDL
// here. Each statement is one file (enum.go: CREATE TYPE … AS ENUM,
// ALTER TYPE … ADD VALUE, DROP TYPE; function.go: CREATE and DROP
// FUNCTION; comment.go: COMMENT ON) with its test beside it; logic tests in testdata/ run them
// over the wire.
//
// Invariants:
//  1. A statement changes only the clone in Env.Cat and reports the ids
//     of the objects it wrote or removed (Result); the session persists
//     them in its transaction, so a rolled-back CREATE TYPE leaves nothing.
//  2. Errors carry PostgreSQL 15's SQLSTATEs and messages.
//  3. ddl imports the catalog and sql/plan (to bind expressions), never
//     sql/session, storage or the executor.
package ddl
