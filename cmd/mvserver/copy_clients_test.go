//go:build clients

package main

// COPY (R-T2) with the real clients against the real binary: psql's \copy
// both ways and COPY … FROM stdin with inline data in a script (psql sends
// the \. line too), and pgbench -i, which loads pgbench_accounts with COPY
// … FROM STDIN WITH (FREEZE ON), one CopyData per row and the old \. end
// line. Run with `go test -tags clients ./cmd/mvserver`; the test fails,
// it does not skip, when psql or pgbench is missing (apt-get install
// postgresql-client).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// clientTool finds a PostgreSQL client program.
func clientTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found on PATH (apt-get install postgresql-client): %v", name, err)
	}
	return path
}

// runClient runs a client program against p and returns its stdout; it
// fails the test when the program fails, unless wantFail.
func runClient(t *testing.T, p *proc, wantFail bool, name string, args ...string) (string, string) {
	t.Helper()
	host, port, _ := strings.Cut(p.addr, ":")
	cmd := exec.Command(clientTool(t, name), append([]string{"-h", host, "-p", port, "-U", "mvtest"}, args...)...)
	cmd.Env = append(cleanEnv(), "PGCONNECT_TIMEOUT=10")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if (err != nil) != wantFail {
		t.Fatalf("%s %v: %v (want failure: %v)\nstdout:\n%s\nstderr:\n%s", name, args, err, wantFail, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

func psql(t *testing.T, p *proc, wantFail bool, args ...string) (string, string) {
	t.Helper()
	return runClient(t, p, wantFail, "psql", append([]string{"-X", "-v", "ON_ERROR_STOP=1", "-d", databaseOf(p)}, args...)...)
}

func TestPsqlCopy(t *testing.T) {
	p := startServer(t, t.TempDir(), nil)
	conn := p.connect(t)
	mustExec(t, conn, `CREATE TABLE t (id INT PRIMARY KEY, name TEXT NOT NULL, score NUMERIC(6,2), note TEXT DEFAULT 'none')`)
	dir := t.TempDir()

	// \copy FROM a file: 20,000 rows in psql's chunks, values with escapes.
	var in strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprintf(&in, "%d\tname %d\\twith tab\t%d.%02d\t\\N\n", i, i, i%1000, i%100)
	}
	src := filepath.Join(dir, "in.tsv")
	if err := os.WriteFile(src, []byte(in.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _ := psql(t, p, false, "-c", `\copy t from '`+src+`'`); strings.TrimSpace(out) != "COPY 20000" {
		t.Fatalf("\\copy from: %q", out)
	}
	// \copy TO a file gives back the same bytes.
	dst := filepath.Join(dir, "out.tsv")
	if out, _ := psql(t, p, false, "-c", `\copy t to '`+dst+`'`); strings.TrimSpace(out) != "COPY 20000" {
		t.Fatalf("\\copy to: %q", out)
	}
	if got, _ := os.ReadFile(dst); string(got) != in.String() {
		t.Fatalf("\\copy to wrote %d bytes, want the %d read", len(got), in.Len())
	}

	// CSV with a header both ways, a column list and the default.
	csv := filepath.Join(dir, "in.csv")
	os.WriteFile(csv, []byte("id,name\n30001,\"Smith, J.\"\n30002,\"say \"\"hi\"\"\"\n"), 0o644)
	if out, _ := psql(t, p, false, "-c", `\copy t (id, name) from '`+csv+`' with (format csv, header)`); strings.TrimSpace(out) != "COPY 2" {
		t.Fatalf("\\copy csv: %q", out)
	}
	csvOut := filepath.Join(dir, "out.csv")
	psql(t, p, false, "-c", `\copy (SELECT id, name, note FROM t WHERE id > 30000 ORDER BY id) to '`+csvOut+`' with csv header`)
	if got, _ := os.ReadFile(csvOut); string(got) != "id,name,note\n30001,\"Smith, J.\",none\n30002,\"say \"\"hi\"\"\",none\n" {
		t.Fatalf("\\copy to csv: %q", got)
	}

	// A bad row: psql shows the error and its CONTEXT line; nothing is kept.
	bad := filepath.Join(dir, "bad.tsv")
	os.WriteFile(bad, []byte("40001\ta\t1\tx\n4000two\tb\t2\tx\n"), 0o644)
	_, stderr := psql(t, p, true, "-c", `\copy t from '`+bad+`'`)
	if !strings.Contains(stderr, `invalid input syntax for type integer: "4000two"`) ||
		!strings.Contains(stderr, `CONTEXT:  COPY t, line 2, column id: "4000two"`) {
		t.Fatalf("psql stderr:\n%s", stderr)
	}
	if n := queryInt(t, conn, `SELECT count(*) FROM t WHERE id > 40000`); n != 0 {
		t.Fatalf("%d rows of the failed COPY kept", n)
	}

	// COPY … FROM stdin inline in a script, ended by \. (pg_dump's form).
	script := filepath.Join(dir, "load.sql")
	os.WriteFile(script, []byte("COPY t (id, name) FROM stdin;\n50001\tfrom script\n50002\tagain\n\\.\nSELECT count(*) FROM t WHERE id > 50000;\n"), 0o644)
	out, _ := psql(t, p, false, "-At", "-f", script)
	if out != "COPY 2\n2\n" {
		t.Fatalf("script: %q", out)
	}
}

func TestPgbenchInitCopy(t *testing.T) {
	p := startServer(t, t.TempDir(), nil)
	// d: drop, t: create tables, g: generate data client-side (the COPY);
	// the vacuum and primary-key steps need statements mvserver lacks.
	runClient(t, p, false, "pgbench", "-i", "-I", "dtg", "-s", "2", databaseOf(p))
	conn := p.connect(t)
	if n := queryInt(t, conn, `SELECT count(*) FROM pgbench_accounts`); n != 200000 {
		t.Fatalf("pgbench_accounts has %d rows, want 200000", n)
	}
	if n := queryInt(t, conn, `SELECT count(*) FROM pgbench_accounts WHERE filler <> '' OR abalance <> 0`); n != 0 {
		t.Fatalf("%d rows with a filler or a balance", n)
	}
	var ctx = context.Background()
	var maxAid int64
	if err := conn.QueryRow(ctx, `SELECT max(aid) FROM pgbench_accounts`).Scan(&maxAid); err != nil || maxAid != 200000 {
		t.Fatalf("max(aid) %d, %v", maxAid, err)
	}
}
