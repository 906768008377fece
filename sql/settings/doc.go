// Package settings is PostgreSQL 15's table of configuration parameters
// (pg15.tsv: each parameter's name, its default as SHOW and pg_settings
// show it on a freshly initialised cluster, type, unit, context, allowed
// values and range, category and description), and the checks SET applies
// to a value by the parameter's type.
//
// The session (sql/session) keeps its own definitions of the parameters
// mvserver acts on; every other PostgreSQL parameter comes from here, so
// SET, SHOW, RESET and pg_settings accept and list all of them, as
// PostgreSQL does, though they change nothing (their description says so).
// Paths of PostgreSQL's own files (data_directory, config_file, hba_file,
// ident_file) are empty, and listen_addresses, port and
// unix_socket_directories have PostgreSQL's built-in defaults.
//
// # Invariants
//
//  1. Check accepts exactly what PostgreSQL 15 accepts for the
//     parameter's type (bool, integer and real with their units and range,
//     enum, string) and returns the value as SHOW shows it afterwards;
//     what it refuses fails with PostgreSQL's SQLSTATE (22023) and words.
//  2. Context says when a value may change (ChangeError): internal never,
//     postmaster and sighup not in a session (55P02), backend and
//     superuser-backend not after the connection started, superuser only
//     for superusers (the caller checks).
package settings
