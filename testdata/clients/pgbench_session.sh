#!/usr/bin/env bash
# pgbench session of the client suite (clienttest.TestPgbench). libpq takes
# the connection from PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD and
# PGSSLMODE.
#
# pgbench -i -s 1 drops and creates the pgbench_* tables, loads them with
# COPY ... FROM STDIN (one CopyData per row, then the old end marker \.),
# vacuums and adds primary keys; then the select-only script runs a fixed
# number of transactions (not a duration, so the counts compare) in each
# query mode: simple (Query), extended (unnamed Parse/Bind/Execute each
# time) and prepared (Parse P_0 once, then Bind/Execute).
set -uo pipefail
clients=2
per_client=${PGBENCH_TRANSACTIONS:-250}

step() {
	echo "=== $1"
	shift
	"$@" 2>&1
	local rc=$?
	if ((rc != 0)); then
		echo "exit status $rc"
	fi
}

step "pgbench -i -s 1" pgbench -i -s 1
step "rows after -i" psql -X -At -c "SELECT (SELECT count(*) FROM pgbench_branches) AS branches,
  (SELECT count(*) FROM pgbench_tellers) AS tellers, (SELECT count(*) FROM pgbench_accounts) AS accounts,
  (SELECT count(*) FROM pgbench_history) AS history, (SELECT sum(abalance) FROM pgbench_accounts) AS balance,
  (SELECT count(DISTINCT bid) FROM pgbench_accounts) AS account_branches"
for mode in simple extended prepared; do
	step "pgbench -S -M $mode" pgbench -S -M "$mode" -c "$clients" -j "$clients" -t "$per_client"
done
step "rows after -S" psql -X -At -c "SELECT count(*), sum(abalance) FROM pgbench_accounts"
