//go:build clients

package clienttest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPgDump dumps schema.sql and testdata/clients/pgdump_schema.sql (tables with primary
// keys, UNIQUE, CHECK and FOREIGN KEY constraints, an index, serial,
// identity and free-standing sequences, two schemas, views and a
// materialized view) with pg_dump 15 in the plain, custom (-Fc) and
// schema-only (-s) formats and restores each dump with psql or
// pg_restore, stopping at the first error:
//   - mvserver's dump into a new PostgreSQL database and into a fresh
//     mvserver; each restored database must equal the one of its own kind
//     the schema was loaded into (objects, columns, constraints, indexes,
//     sequence positions, the SQL text of indexes and views as the
//     server prints it, and every table's and view's rows);
//   - PostgreSQL's dump into a fresh mvserver, which must equal the
//     mvserver the schema was loaded into (all but the definitions' text,
//     which PostgreSQL spells its own way);
//   - each dump's constraints, restored into PostgreSQL and into
//     mvserver, must print alike (pg_get_constraintdef: mvserver prints
//     a CHECK as PostgreSQL does).
//
// Then pg_dumpall --schema-only must complete against both servers.
func TestPgDump(t *testing.T) {
	pgDump, pgRestore, psql, pgDumpall := need(t, "pg_dump"), need(t, "pg_restore"), need(t, "psql"), need(t, "pg_dumpall")
	targets := startTargets(t, sessionOpts{})
	stmts, err := readStatements(testdata("pgdump_schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if err := execAll(tg.conn, stmts); err != nil {
			t.Fatalf("loading testdata/clients/pgdump_schema.sql into %s: %v", tg.name, err)
		}
	}
	pg, mv := targets[0], targets[1]
	if a, b := dbSnapshot(t, pg.conn, snapshotOpts{data: true}), dbSnapshot(t, mv.conn, snapshotOpts{data: true}); a != b {
		t.Fatalf("the loaded databases differ before any dump (postgres, then mvserver):\n%s", lineDiff(strings.Split(a, "\n"), strings.Split(b, "\n")))
	}
	dir := t.TempDir()
	formats := []struct {
		name   string
		args   []string
		custom bool // restored with pg_restore
		data   bool
	}{
		{name: "plain", data: true},
		{name: "custom", args: []string{"-Fc"}, custom: true, data: true},
		{name: "schema-only", args: []string{"-s"}},
	}
	for _, f := range formats {
		t.Run(f.name, func(t *testing.T) {
			opts := snapshotOpts{defs: true, data: f.data}
			restore := func(file string, into connSettings) {
				t.Helper()
				argv := []string{psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", file}
				if f.custom {
					argv = []string{pgRestore, "--exit-on-error", "-d", into.Database, file}
				}
				if out, err := runTool(into, argv...); err != nil {
					t.Fatalf("restoring %s into %s: %v\n%s", filepath.Base(file), into, err, out)
				}
			}
			dumpOf := func(tg target) string {
				t.Helper()
				file := filepath.Join(dir, fmt.Sprintf("%s-%s.dump", tg.name, f.name))
				args := append([]string{pgDump, "-f", file}, f.args...)
				if tg.name == "postgres" {
					// The oracle's empty schema system stands for mvserver's
					// built-in one (oraclePrelude); it is no user object.
					args = append(args, "--exclude-schema=system")
				}
				if out, err := runTool(tg.conn, args...); err != nil {
					t.Fatalf("pg_dump %s of %s: %v\n%s", strings.Join(f.args, " "), tg.name, err, out)
				}
				return file
			}
			check := func(what string, got, want connSettings, o snapshotOpts) {
				t.Helper()
				if a, b := dbSnapshot(t, want, o), dbSnapshot(t, got, o); a != b {
					t.Errorf("%s differs (want, then got):\n%s", what, lineDiff(strings.Split(a, "\n"), strings.Split(b, "\n")))
				}
			}
			// Each restored database equals the loaded one of its kind
			// (the definitions' text of indexes and views included), and
			// the dump's constraints read alike into both servers: a
			// restored CHECK can print otherwise than the loaded one (a
			// varchar IN list's array cast, read back, becomes one cast per
			// element), in PostgreSQL as in mvserver.
			mvFile := dumpOf(mv)
			pgDB := freshPostgres(t, pg.conn)
			restore(mvFile, pgDB)
			check("mvserver's dump restored into PostgreSQL", pgDB, pg.conn, opts)
			mvDB := freshMvserver(t, mv.conn)
			restore(mvFile, mvDB)
			check("mvserver's dump restored into mvserver", mvDB, mv.conn, opts)
			check("the constraints of mvserver's dump, restored into PostgreSQL and into mvserver", mvDB, pgDB, snapshotOpts{cons: true})

			pgFile := dumpOf(pg)
			mvDB2 := freshMvserver(t, mv.conn)
			restore(pgFile, mvDB2)
			check("PostgreSQL's dump restored into mvserver", mvDB2, mv.conn, snapshotOpts{data: f.data})
			pgDB2 := freshPostgres(t, pg.conn)
			restore(pgFile, pgDB2)
			check("the constraints of PostgreSQL's dump, restored into PostgreSQL and into mvserver", mvDB2, pgDB2, snapshotOpts{cons: true})
		})
	}
	for _, tg := range targets {
		argv := []string{pgDumpall, "--schema-only"}
		if tg.name == "postgres" {
			// The oracle has no template1 or postgres (oraclePrelude);
			// mvserver answers to both names (issue 22).
			argv = append(argv, "-l", clientDatabase)
		}
		out, err := runTool(tg.conn, argv...)
		if err != nil {
			t.Errorf("pg_dumpall --schema-only against %s: %v\n%s", tg.name, err, out)
			continue
		}
		for _, want := range []string{"CREATE ROLE " + clientUser, "CREATE TABLE shop.orders", "CREATE MATERIALIZED VIEW shop.customer_totals", "CREATE VIEW public.noted"} {
			if !strings.Contains(out, want) {
				t.Errorf("pg_dumpall --schema-only of %s lacks %q", tg.name, want)
			}
		}
	}
}

// snapshotOpts choose what dbSnapshot shows besides the objects' shape.
type snapshotOpts struct {
	defs bool // the SQL text of indexes and views
	cons bool // the SQL text of constraints
	data bool // the rows of every table and view, the sequences' positions
}

// dbSnapshot describes the user objects of pgdump_schema.sql in c's
// database as text, with an empty search path (every name qualified).
func dbSnapshot(t *testing.T, c connSettings, o snapshotOpts) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgconn.Connect(ctx, c.url())
	if err != nil {
		t.Fatalf("snapshot of %s: %v", c, err)
	}
	defer conn.Close(context.Background())
	const schemas = "('public', 'reporting', 'shop')"
	queries := []string{
		"SET search_path = ''",
		"SELECT n.nspname, c.relname, c.relkind::text FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname IN " + schemas + " ORDER BY 1, 2",
		"SELECT table_schema, table_name, column_name, data_type, is_nullable, column_default IS NOT NULL, is_identity, identity_generation FROM information_schema.columns WHERE table_schema IN " + schemas + " AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE') ORDER BY 1, 2, ordinal_position",
		"SELECT conrelid::pg_catalog.regclass::text, conname, contype::text, condeferrable FROM pg_catalog.pg_constraint WHERE connamespace IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN " + schemas + ") ORDER BY 1, 2",
		"SELECT schemaname, tablename, indexname FROM pg_catalog.pg_indexes WHERE schemaname IN " + schemas + " ORDER BY 1, 2, 3",
		"SELECT schemaname, sequencename, data_type::text, start_value, increment_by FROM pg_catalog.pg_sequences WHERE schemaname IN " + schemas + " ORDER BY 1, 2",
	}
	if o.cons {
		queries = append(queries,
			"SELECT conrelid::pg_catalog.regclass::text, conname, pg_catalog.pg_get_constraintdef(oid) FROM pg_catalog.pg_constraint WHERE connamespace IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname IN "+schemas+") ORDER BY 1, 2")
	}
	if o.defs {
		queries = append(queries,
			"SELECT indexdef FROM pg_catalog.pg_indexes WHERE schemaname IN "+schemas+" ORDER BY 1",
			"SELECT schemaname, viewname, definition FROM pg_catalog.pg_views WHERE schemaname IN "+schemas+" ORDER BY 1, 2",
			"SELECT schemaname, matviewname, definition FROM pg_catalog.pg_matviews WHERE schemaname IN "+schemas+" ORDER BY 1, 2")
	}
	if o.data {
		for _, seq := range []string{"shop.order_seq", "shop.items_id_seq", "shop.notes_n_seq"} {
			queries = append(queries, "SELECT last_value, is_called FROM "+seq)
		}
		for _, rel := range []string{"public.customers", "public.orders", "public.big_orders", "public.sales_by_customer", "public.noted",
			"shop.customers", "shop.orders", "shop.items", "shop.notes", "shop.big_orders", "shop.customer_totals"} {
			queries = append(queries, "SELECT * FROM "+rel+" ORDER BY 1, 2")
		}
	}
	var b strings.Builder
	for _, q := range queries {
		fmt.Fprintf(&b, "> %s\n", q)
		res := conn.ExecParams(ctx, q, nil, nil, nil, nil).Read()
		if res.Err != nil {
			fmt.Fprintf(&b, "ERROR %v\n", res.Err)
			continue
		}
		for _, row := range res.Rows {
			vals := make([]string, len(row))
			for i, v := range row {
				if v == nil {
					vals[i] = "NULL"
				} else {
					vals[i] = string(v)
				}
			}
			fmt.Fprintf(&b, "%s\n", strings.Join(vals, " | "))
		}
	}
	return b.String()
}

// freshMvserver starts an empty mvserver like the one of like (user,
// password, database name) and returns where it listens.
func freshMvserver(t *testing.T, like connSettings) connSettings {
	t.Helper()
	bin, feat := mvserverBinary(t)
	dir, err := os.MkdirTemp(workRoot, "restore-")
	if err != nil {
		t.Fatal(err)
	}
	c := like
	c.Port = 0
	startMvserver(t, bin, feat, filepath.Join(dir, "mvdata"), &c)
	return c
}

// freshPostgres starts a PostgreSQL oracle from the template cluster (one
// empty database, as a fresh mvserver has) like the one of like.
func freshPostgres(t *testing.T, like connSettings) connSettings {
	t.Helper()
	dir, err := os.MkdirTemp(workRoot, "restore-pg-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := like
	startPostgres(t, oracleTemplate(t), filepath.Join(dir, "pgdata"), &c)
	return c
}

// runTool runs a PostgreSQL client program against c (libpq's
// environment) and returns what it printed.
func runTool(c connSettings, argv ...string) (string, error) {
	home, err := os.MkdirTemp(workRoot, "home-")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = clientEnv(home, c)
	cmd.Dir = home
	out, err := cmd.CombinedOutput()
	return string(out), err
}
