// Package parse turns a query string as a client sent it into statements:
// it splits the string, recognises mvserver's own statements (DESCRIBE
// HISTORY, SHOW TBLPROPERTIES, ALTER TABLE … SET/UNSET TBLPROPERTIES, the
// Databricks clauses of CREATE TABLE, VACUUM … RETAIN, the materialized-view
// statements including CHECK MATERIALIZED VIEW) with a small
// recursive-descent parser over its own tokens,
// rewrites the Databricks/Spark spellings PostgreSQL's grammar lacks, and
// hands every other statement to pg_query (PostgreSQL's own parser).
//
// Invariants:
//  1. Every rewrite keeps a map from the rewritten text back to the client's
//     text, so every error position (pg_query's or the binder's) points into
//     the statement exactly as the client sent it (1-based characters).
//  2. Rewrites act on tokens, never inside string literals, quoted
//     identifiers or comments.
//  3. Each rewrite is a row of the rewrites table with its own test.
//  4. The INSERT … VALUES fast path (insert_fast.go) builds, for the
//     literal-only bulk inserts it takes, exactly the tree pg_query
//     builds, locations included; it takes a statement only when no
//     rewrite applied, and returns nil for anything else (differential
//     tests and FuzzInsertFastPath hold it to pg_query).
//  5. No statement reaches pg_query's C code deeper than its thread stack
//     takes (depth.go): the nesting is estimated on tokens before parsing,
//     the tree is unpacked with protobuf's recursion limit, and Deparse
//     measures the tree first; too deep is 54001, as in PostgreSQL
//     (TestTokenDepthBoundsTree and FuzzDeepChain hold the estimate to the
//     trees pg_query builds). The front end's own passes (lexer, rewrites,
//     the extension parser) are iterative and linear.
//
// locate.go finds constructs in a parsed query (a function call, a
// relation, WITH RECURSIVE, LIMIT, a subquery) and turns their locations
// into a line and column of the statement's own text, for messages that say
// where in a view's query something is (R-I8).
//
// The one rewrite that needs more than text is LEFT SEMI/ANTI JOIN: the
// keywords are blanked to a plain JOIN of the same length and, once
// pg_query has parsed the statement, that JoinExpr's type is set to
// pg_query's JOIN_SEMI/JOIN_ANTI (semijoin.go), which the binder binds.
//
// QUALIFY (qualify.go) likewise: the condition is carried in a WINDOW
// definition named QualifyWindow, which the binder takes back out, and
// Deparse spells it QUALIFY again.
//
// STREAM(name) in a streaming table's FROM (R-ST1) is no rewrite:
// PostgreSQL's grammar reads it as a function in FROM, and
// ExtractStreams (stream.go) turns those items back into relations for the
// session, which records which ones are streams.
//
// It is a leaf: it imports only pgerror, pg_query and protobuf reflection
// (to walk pg_query's tree).
package parse
