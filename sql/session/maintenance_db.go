package session

// maintenanceDatabase reports whether a startup message's database is one
// of the names PostgreSQL's tools connect to when they have no database
// in mind: postgres (pgcli -l, createdb, pg_dumpall's fallback) and
// template1 (pg_dumpall, for the roles and the list of databases). A
// server holds one database; a session naming either of these opens it,
// and pg_database lists only it, so pg_dumpall dumps that one database.
func maintenanceDatabase(name string) bool {
	return name == "postgres" || name == "template1"
}
