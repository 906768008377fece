package session_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestPreparedPlanFollowsChanges executes one prepared SELECT again and
// again while what its plan was bound under changes: the search path, the
// catalog (DDL by another session and by its own transaction), and checks
// each Execute answers from what is current (the plan is reused only while
// nothing changed).
func TestPreparedPlanFollowsChanges(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	c := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	other := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{
		`CREATE SCHEMA s1`, `CREATE SCHEMA s2`,
		`CREATE TABLE s1.t (id INT PRIMARY KEY, v TEXT)`, `INSERT INTO s1.t VALUES (1, 'one')`,
		`CREATE TABLE s2.t (id INT PRIMARY KEY, v TEXT)`, `INSERT INTO s2.t VALUES (1, 'two')`,
		`SET search_path = s1`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	pc := c.PgConn()
	if _, err := pc.Prepare(ctx, "q", `SELECT v FROM t WHERE id = $1`, nil); err != nil {
		t.Fatal(err)
	}
	read := func(want string) {
		t.Helper()
		res := pc.ExecPrepared(ctx, "q", [][]byte{[]byte("1")}, nil, nil).Read()
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if len(res.Rows) != 1 || string(res.Rows[0][0]) != want {
			t.Fatalf("got %q, want %q", res.Rows, want)
		}
	}
	read("one")
	read("one")
	if _, err := c.Exec(ctx, `SET search_path = s2`); err != nil {
		t.Fatal(err)
	}
	read("two")
	for _, q := range []string{`DROP TABLE s2.t`, `CREATE TABLE s2.t (id INT PRIMARY KEY, v TEXT)`, `INSERT INTO s2.t VALUES (1, 'three')`} {
		if _, err := other.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	read("three")
	// DDL in the reading session's own transaction.
	if _, err := c.Exec(ctx, `BEGIN`); err != nil {
		t.Fatal(err)
	}
	read("three")
	for _, q := range []string{`ALTER TABLE s2.t RENAME TO old`, `CREATE TABLE s2.t (id INT PRIMARY KEY, v TEXT)`, `INSERT INTO s2.t VALUES (1, 'four')`} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	read("four")
	if _, err := c.Exec(ctx, `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	read("three")
}
