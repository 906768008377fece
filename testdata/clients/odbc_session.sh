#!/usr/bin/env bash
# psqlODBC session of the client suite (clienttest.TestODBC), through
# unixODBC's isql: Debian's odbc-postgresql ("PostgreSQL Unicode" driver,
# psqlodbcw.so) and unixodbc.
#
# The DSN is written to a private odbc.ini/odbcinst.ini (ODBCINI,
# ODBCSYSINI) from PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD and
# PGSSLMODE; nothing outside a temporary directory is read or written.
# Each step is one isql run (a connection of its own: psqlODBC's own
# queries on connect, then the step), printed after a line "=== NAME".
# isql's error lines "[SQLSTATE]message" become "ERROR [SQLSTATE]"
# (compared) and "# message" (not compared).
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sslmode=${PGSSLMODE:-prefer}
case $sslmode in
prefer | require | disable | allow) ;;
*) sslmode=prefer ;;
esac
cat >"$tmp/odbcinst.ini" <<INI
[PostgreSQL Unicode]
Description = PostgreSQL ODBC driver (Unicode version)
Driver      = psqlodbcw.so
Setup       = libodbcpsqlS.so
Debug       = 0
CommLog     = 0
INI
cat >"$tmp/odbc.ini" <<INI
[clients]
Description = mvserver client suite
Driver      = PostgreSQL Unicode
Servername  = ${PGHOST:-127.0.0.1}
Port        = ${PGPORT:-5432}
Database    = ${PGDATABASE:-postgres}
Username    = ${PGUSER:-postgres}
Password    = ${PGPASSWORD:-}
SSLmode     = $sslmode
CommLog     = 0
Debug       = 0
INI
export ODBCSYSINI="$tmp" ODBCINI="$tmp/odbc.ini"

# step NAME INPUT: runs isql in batch mode on one line of input.
step() {
	echo "=== $1"
	local rc=0
	printf '%s\n' "$2" | isql -b -v clients >"$tmp/out" 2>&1 || rc=$?
	sed -E 's/^\[([0-9A-Z]{5})\](.*)$/ERROR [\1]\n# \2/' "$tmp/out"
	if ((rc != 0)); then
		echo "isql exit status $rc"
	fi
}

step "SELECT customers" "SELECT id, name, email, created_at FROM customers ORDER BY id"
step "SELECT numeric and timestamp" "SELECT order_id, amount, ordered_at FROM orders WHERE amount > 1 ORDER BY order_id"
step "SELECT view" "SELECT * FROM big_orders ORDER BY order_id"
step "SELECT matview" "SELECT * FROM sales_by_customer ORDER BY customer_id"
step "SELECT expressions" "SELECT 1 AS one, 'two' AS two, 3.5 AS three, NULL AS four, true AS five"
step "UPDATE" "UPDATE customers SET name = name WHERE id = 1"
step "help (SQLTables)" "help"
step "help customers (SQLColumns)" "help customers"
step "help orders (SQLColumns)" "help orders"
step "help sales_by_customer (SQLColumns of a materialized view)" "help sales_by_customer"
step "error" "SELECT * FROM no_such_table"
