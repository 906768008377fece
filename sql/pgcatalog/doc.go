// Package pgcatalog is mvserver's pg_catalog and information_schema (R-P3):
// the relations and functions psql, JDBC and ODBC drivers and BI tools read
// to learn what a database holds. Nothing here is stored. Every relation is
// computed from the catalog snapshot the statement bound against
// (plan.CatalogRelArg), so it always agrees with the catalog: a table
// created in the current transaction shows at once, a rolled-back one never.
//
// # OIDs
//
// User objects' OIDs are their catalog ids (≥ 16384, stable across
// restarts), secondary indexes and UNIQUE constraints included. Objects a
// table implies get OIDs derived from its id, also stable: its row type
// (typrelid), the index and constraint of its primary key, and its column
// defaults (pg_attrdef). Built-in objects have
// PostgreSQL's OIDs where clients know them (types, pg_catalog's own
// relations, namespaces 11 and 2200-like ids for user schemas, role 10) and
// otherwise fixed ones from this package.
//
// # What is empty
//
// Relations for features mvserver does not have (triggers, policies,
// rewrite rules, publications, statistics objects, partitioned tables,
// sequences, foreign tables) exist with PostgreSQL's columns and no rows,
// so the queries clients send bind and answer as they would on a database
// without such objects.
package pgcatalog
