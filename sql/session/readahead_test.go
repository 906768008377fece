package session_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/mvserver/mvserver/sql/exec"
)

// Long scans read ahead on a second goroutine (sql/exec/readahead.go):
// the answers, their order and every way a statement can stop early —
// LIMIT, an error half-way, a cursor closed or left open at COMMIT, a
// table written while it is scanned — are as without it, and no reader is
// left behind (the package's goleak check).
func TestScanReadahead(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	url := startServer(t)
	ctx := context.Background()
	c := connect(t, url, pgx.QueryExecModeCacheStatement)
	exec1 := func(q string) {
		t.Helper()
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const n = 100_000
	exec1(`CREATE TABLE big (id INT PRIMARY KEY, g INT, v BIGINT)`)
	exec1(`INSERT INTO big SELECT i, i % 7, i * 3 FROM generate_series(1, 100000) AS i`)
	before := exec.ReadaheadScans()

	var count, sumV, sumIG int64
	if err := c.QueryRow(ctx, `SELECT count(*), sum(v), sum(id * g) FROM big`).Scan(&count, &sumV, &sumIG); err != nil {
		t.Fatal(err)
	}
	var wantIG int64
	for i := int64(1); i <= n; i++ {
		wantIG += i * (i % 7)
	}
	if count != n || sumV != 3*n*(n+1)/2 || sumIG != wantIG {
		t.Fatalf("count %d sum(v) %d sum(id*g) %d; want %d %d %d", count, sumV, sumIG, n, 3*n*(n+1)/2, wantIG)
	}

	readIDs := func(q string, args ...any) []int32 {
		t.Helper()
		rows, err := c.Query(ctx, q, args...)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return ids
	}
	inOrder := func(what string, ids []int32, want int) {
		t.Helper()
		if len(ids) != want {
			t.Fatalf("%s: %d rows, want %d", what, len(ids), want)
		}
		for i, id := range ids {
			if id != int32(i+1) {
				t.Fatalf("%s: row %d is id %d", what, i, id)
			}
		}
	}
	inOrder("full scan", readIDs(`SELECT id FROM big`), n)
	inOrder("LIMIT", readIDs(`SELECT id FROM big LIMIT 20000`), 20000)
	inOrder("filtered", readIDs(`SELECT id FROM big WHERE v > $1 AND id <= 60000`, int64(0)), 60000)

	// An error half-way through ends the statement, not the session.
	if _, err := c.Exec(ctx, `SELECT id / (id - 90000) FROM big`); pgCode(err) != "22012" {
		t.Fatalf("division by zero half-way: %v, want 22012", err)
	}

	// Cursors: one closed after a part was fetched, one left open at COMMIT.
	exec1(`BEGIN`)
	exec1(`DECLARE c1 CURSOR FOR SELECT id FROM big`)
	inOrder("FETCH from cursor", readIDs(`FETCH 10000 FROM c1`), 10000)
	exec1(`CLOSE c1`)
	exec1(`DECLARE c2 CURSOR WITH HOLD FOR SELECT id FROM big WHERE id <= 30000`)
	exec1(`DECLARE c3 CURSOR FOR SELECT id FROM big`)
	inOrder("FETCH from c3", readIDs(`FETCH 8000 FROM c3`), 8000)
	exec1(`COMMIT`)
	inOrder("held cursor", readIDs(`FETCH ALL FROM c2`), 30000)
	exec1(`CLOSE c2`)

	// A portal suspended mid-scan whose implicit transaction a Sync ends:
	// the transaction's end stops the reader before its iterator goes,
	// and the portal is closed after.
	beforePortals := exec.ReadaheadScans()
	for range 3 {
		fe := c.PgConn().Frontend()
		fe.Send(&pgproto3.Parse{Query: `SELECT id FROM big`})
		fe.Send(&pgproto3.Bind{})
		fe.Send(&pgproto3.Execute{MaxRows: 6000})
		fe.Send(&pgproto3.Sync{})
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
		rows, suspended := 0, false
		for done := false; !done; {
			msg, err := fe.Receive()
			if err != nil {
				t.Fatal(err)
			}
			switch m := msg.(type) {
			case *pgproto3.DataRow:
				rows++
			case *pgproto3.PortalSuspended:
				suspended = true
			case *pgproto3.ErrorResponse:
				t.Fatalf("suspended portal: %s", m.Message)
			case *pgproto3.ReadyForQuery:
				done = true
			}
		}
		if rows != 6000 || !suspended {
			t.Fatalf("suspended portal: %d rows, suspended %v", rows, suspended)
		}
	}

	// Each portal's scan reads ahead (its batches reused by the wire
	// output: a reusing scan grows its batches as a plain one does, so it
	// reaches readaheadAfter full batches too).
	if got := exec.ReadaheadScans() - beforePortals; got != 3 {
		t.Fatalf("%d of 3 suspended portals' scans read ahead", got)
	}

	// The table written while it is read: the scan sees the snapshot.
	exec1(`INSERT INTO big SELECT id + 100000, g, v FROM big`)
	if err := c.QueryRow(ctx, `SELECT count(*), sum(v) FROM big`).Scan(&count, &sumV); err != nil {
		t.Fatal(err)
	}
	if count != 2*n || sumV != 3*n*(n+1) {
		t.Fatalf("after INSERT … SELECT from itself: count %d sum %d, want %d %d", count, sumV, 2*n, 3*n*(n+1))
	}
	// An UPDATE keeps the rows its scan of the written table reads (no
	// readahead there); one reading another big table reads that ahead.
	exec1(`UPDATE big SET v = v + 1`)
	exec1(`CREATE TABLE small (id INT PRIMARY KEY, v BIGINT)`)
	exec1(`INSERT INTO small VALUES (1, 0), (2, 0)`)
	exec1(`UPDATE small SET v = (SELECT sum(v) FROM big WHERE g = small.id)`)
	if err := c.QueryRow(ctx, `SELECT count(*), sum(v) FROM big`).Scan(&count, &sumV); err != nil {
		t.Fatal(err)
	}
	if count != 2*n || sumV != 3*n*(n+1)+2*n {
		t.Fatalf("after UPDATE: count %d sum %d, want %d %d", count, sumV, 2*n, 3*n*(n+1)+2*n)
	}
	var small int64
	if err := c.QueryRow(ctx, `SELECT sum(v) FROM small`).Scan(&small); err != nil {
		t.Fatal(err)
	}
	var want12 int64
	if err := c.QueryRow(ctx, `SELECT sum(v) FROM big WHERE g IN (1, 2)`).Scan(&want12); err != nil || small != want12 {
		t.Fatalf("UPDATE from a subquery: %d, want %d (%v)", small, want12, err)
	}

	// In a transaction that wrote the table, scans merge its own writes
	// (no readahead) and see them.
	exec1(`BEGIN`)
	exec1(`DELETE FROM big WHERE id > 150000`)
	if err := c.QueryRow(ctx, `SELECT count(*) FROM big`).Scan(&count); err != nil || count != 150000 {
		t.Fatalf("count after own DELETE: %d, %v", count, err)
	}
	exec1(`ROLLBACK`)

	// The unfiltered row-path scans above read ahead: the full scan,
	// LIMIT, the error, the two cursors, the three portals and the
	// INSERT … SELECT's read of big (the count(*)s run vectorized, over a
	// scan of their own).
	if got := exec.ReadaheadScans() - before; got < 9 {
		t.Fatalf("%d scans read ahead, want at least 9", got)
	}
}
