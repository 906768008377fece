// Package acl holds PostgreSQL 15's privilege rules that act on roles
// rather than on one object: GRANT and REVOKE of role membership (and
// CREATE ROLE's IN ROLE / ROLE / ADMIN), who may see and signal another
// session's backend, and who a session acts as (identity.go: SET ROLE and
// SET SESSION AUTHORIZATION decide current_user and session_user, which
// the session keeps as settings so transactions and SET LOCAL undo them). It works over a catalog
// (catalog/membership.go, catalog/privileges.go keep the model) and
// returns what changed; sql/session persists it and sends the notices.
//
// Invariants:
//  1. Every function is pure over the catalog it is given: nothing is
//     persisted here, so a failed statement changes nothing.
//  2. A superuser passes every check; the predefined roles
//     (pg_read_all_stats, pg_signal_backend) widen a role's reach only
//     through has_privs_of_role, as in PostgreSQL, so a member without
//     INHERIT gains nothing by them.
//
// Imports: catalog, pgerror.
package acl
