// Package catalog owns the schema objects of the one database a server
// holds: schemas, tables, views, materialized views and streaming tables
// (later functions), their columns, keys, secondary indexes and UNIQUE
// constraints (index.go, R-T10), partitioning and table properties (R-T1,
// R-T5), the roles that log in (roles.go), and who may do what: owners and
// grants of relations and schemas (acl.go) and PostgreSQL 15's rules over
// them (privileges.go; MaySeeDetails is what the session and the web
// console ask before showing a dataset's refresh errors). Descriptors are
// persisted through storage's metadata key space in the same transaction
// as the data they describe. The planner statistics ANALYZE collects
// (statistics.go) live in the same key space beside the descriptors, not
// in them: writing them is not DDL, and they are dropped with their table.
//
// Invariants:
//  1. A *Catalog is an immutable snapshot; DDL works on a Clone and persists
//     the changed descriptors with Persist in the DDL's transaction.
//  2. Every DDL writes the generation key, so concurrent DDL conflicts
//     (first committer wins) and a transaction's catalog always matches its
//     storage snapshot (Manager.Snapshot reads the generation in the snapshot).
//  3. Object ids are never reused; they are the PostgreSQL OIDs of the
//     objects and stay stable across restarts.
//  4. A column id is never reused within a table, so stored rows decode under
//     any later schema.
//  5. System views are never stored. A computed one (mv_insights) is
//     resolved to a view over the rows its registered function makes from
//     the resolving snapshot, so it always agrees with that snapshot.
//  6. Index names share the relation namespace of their schema (NameTaken):
//     no table, view, sequence, index or primary-key index of a schema has
//     the name of another.
//  7. A session's temporary relations live in its schema pg_temp_N
//     (temp.go), ordinary descriptors that no other session resolves a
//     name to; the session drops the schema when it ends and the server
//     drops every pg_temp_N when it starts.
//  8. Every object has an owner (0: the bootstrap superuser); an owner id
//     always names a role, as DROP ROLE refuses a role that owns or holds
//     anything. A view's sources are checked with its owner's rights
//     wherever its query runs (CheckViewSource).
//
// Imports: sql/types, storage, pgerror. Never sql/plan, sql/exec or server.
package catalog
