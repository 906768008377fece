//go:build clients

package clienttest

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mvserver/mvserver/logictest"
)

// oracleFiles are the logic-test files whose every answer and error is
// PostgreSQL 15's: TestLogicOnPostgres runs them on a real PostgreSQL and
// requires the same results there (go test ./logictest runs them on
// mvserver). Files left out test mvserver's own statements (materialized
// views, Databricks spellings, its catalog's OIDs, its messages).
var oracleFiles = []string{
	"alter_table.slt", "array.slt", "cte.slt", "cursor.slt", "from.slt", "onconflict.slt", "returning.slt",
	"sequence.slt", "setop.slt", "srf.slt", "subquery.slt", "types.slt", "window.slt",
	"select.slt", "dml.slt", "errors.slt", "txn.slt", "readonly.slt", "serializable.slt", "index.slt", "unique.slt", "temp.slt",
	"func_string.slt", "func_math.slt", "func_datetime.slt", "func_agg.slt", "func_misc.slt", "join_order.slt", "numbers.slt",
	"analyze.slt",
	"decorrelate.slt",
	"set_role.slt",
	"foreign_key.slt", "check_constraint.slt", "identity.slt",
	"modifying_with.slt", "tableoid.slt", "lock_table.slt", "update_from.slt", "prepare.slt", "distinct_on.slt",
	"const_in.slt", "returning_from.slt", "database_owner.slt", "grouping_sets.slt", "tablesample.slt", "pg_proc_types.slt",
	"enum.slt", "merge.slt", "sql_function.slt",
	"view_column_deps.slt", "view_rename_deps.slt", "row_locks.slt", "refresh_errors.slt", "check_constraint_text.slt",
	"do_plpgsql.slt", "alter_column_type.slt", "matview_create_tag.slt",
}

// TestLogicOnPostgres is the PostgreSQL differential suite of the query
// engine (issue 3): each file above runs in a fresh database of a real
// PostgreSQL 15 through the same runner, in the simple protocol.
func TestLogicOnPostgres(t *testing.T) {
	targets := startTargets(t, sessionOpts{})
	pg := targets[0].conn
	total := 0
	for _, name := range oracleFiles {
		path := filepath.Join(repoRoot, "testdata", name)
		f, err := logictest.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		total += f.Records("postgresql")
		// Each file starts from an empty public schema (the test has its
		// PostgreSQL to itself), owned as a fresh database's is.
		if err := execAll(pg, []string{"DROP SCHEMA public CASCADE", "CREATE SCHEMA public", "ALTER SCHEMA public OWNER TO pg_database_owner"}); err != nil {
			t.Fatal(err)
		}
		t.Run(strings.TrimSuffix(name, ".slt"), func(t *testing.T) {
			f.Path = "testdata/" + name
			f.Run(t, logictest.Config{Protocol: logictest.Simple, Engine: "postgresql",
				Connect: func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, pg.url()) }})
		})
	}
	t.Logf("%d statements and queries of %d files answered alike by PostgreSQL 15", total, len(oracleFiles))
}
