package session_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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

// TestPreparedResultTypeChange prepares SELECT * before a column is added
// (as pgx's statement cache does for GORM): its next Execute fails with
// PostgreSQL's 0A000 "cached plan must not change result type" instead of
// sending rows wider than the RowDescription the client holds; a
// statement prepared afterwards reads the new shape.
func TestPreparedResultTypeChange(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	c := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{`CREATE TABLE w (id INT PRIMARY KEY, v TEXT)`, `INSERT INTO w VALUES (1, 'one')`} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	pc := c.PgConn()
	if _, err := pc.Prepare(ctx, "star", `SELECT * FROM w`, nil); err != nil {
		t.Fatal(err)
	}
	if res := pc.ExecPrepared(ctx, "star", nil, nil, nil).Read(); res.Err != nil || len(res.FieldDescriptions) != 2 {
		t.Fatalf("before: %v, %d fields", res.Err, len(res.FieldDescriptions))
	}
	if _, err := c.Exec(ctx, `ALTER TABLE w ADD COLUMN extra INT NOT NULL DEFAULT 1`); err != nil {
		t.Fatal(err)
	}
	res := pc.ExecPrepared(ctx, "star", nil, nil, nil).Read()
	var pe *pgconn.PgError
	if !errors.As(res.Err, &pe) || pe.Code != "0A000" || pe.Message != "cached plan must not change result type" {
		t.Fatalf("after ADD COLUMN: got %v, want 0A000 cached plan must not change result type", res.Err)
	}
	if _, err := pc.Prepare(ctx, "star2", `SELECT * FROM w`, nil); err != nil {
		t.Fatal(err)
	}
	if res := pc.ExecPrepared(ctx, "star2", nil, nil, nil).Read(); res.Err != nil || len(res.Rows) != 1 || len(res.Rows[0]) != 3 {
		t.Fatalf("prepared again: %v, %v", res.Err, res.Rows)
	}
}
