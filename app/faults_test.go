package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mvserver/mvserver/catalog"
)

// faultFS is the operating system's filesystem under Pebble's
// error-injecting one: logErr, when set, fails every write and sync of
// the write-ahead log (*.log files) with that error; avail, when non-zero,
// is the free space the disk reports.
type faultFS struct {
	*errorfs.FS
	logErr atomic.Pointer[error]
	avail  atomic.Uint64
}

func newFaultFS() *faultFS {
	f := &faultFS{}
	f.FS = errorfs.Wrap(vfs.Default, errorfs.InjectorFunc(func(op errorfs.Op) error {
		e := f.logErr.Load()
		if e == nil || !strings.HasSuffix(op.Path, ".log") {
			return nil
		}
		switch op.Kind {
		case errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync, errorfs.OpFileSyncData, errorfs.OpFileSyncTo, errorfs.OpFileFlush:
			return *e
		}
		return nil
	}))
	return f
}

func (f *faultFS) GetDiskUsage(path string) (vfs.DiskUsage, error) {
	u, err := f.FS.GetDiskUsage(path)
	if a := f.avail.Load(); a != 0 && err == nil {
		u.AvailBytes = a
	}
	return u, err
}

func (f *faultFS) failLog(err error) {
	if err == nil {
		f.logErr.Store(nil)
		return
	}
	f.logErr.Store(&err)
}

func startFaultServer(t *testing.T, dir string, fs vfs.FS) (*Server, *pgx.Conn) {
	t.Helper()
	return startAndConnect(t, Config{Logger: slog.New(slog.DiscardHandler), DataDir: dir, FS: fs, Listen: "127.0.0.1:0", Database: "mvserver",
		MaxConnections: 10, TableDefaults: catalog.AllOn})
}

func wantCode(t *testing.T, c *pgx.Conn, q, code string) *pgconn.PgError {
	t.Helper()
	_, err := c.Exec(context.Background(), q)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code {
		t.Fatalf("%s: got %v, want SQLSTATE %s", q, err, code)
	}
	return pe
}

func count(t *testing.T, c *pgx.Conn, q string) int64 {
	t.Helper()
	var n int64
	if err := c.QueryRow(context.Background(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// A full disk (R-X2): with less free space than the reserve, INSERT,
// COPY, DDL and REFRESH fail with 53100 and a message that says what to
// do, nothing is written, reads go on, and once space is freed writes
// succeed again with everything acknowledged still there.
func TestDiskFull(t *testing.T) {
	dir, fs := t.TempDir(), newFaultFS()
	srv, c := startFaultServer(t, dir, fs)
	defer srv.Shutdown(2 * time.Second)
	defer c.Close(context.Background())
	ctx := context.Background()
	mustExec(t, c, `CREATE TABLE t (id INT PRIMARY KEY, v TEXT)`)
	mustExec(t, c, `INSERT INTO t SELECT i, 'row ' || i FROM generate_series(1, 100) AS i`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW tv AS SELECT count(*) AS n FROM t`)

	// The disk's free space is read at least every 50ms.
	settle := func() { time.Sleep(100 * time.Millisecond) }
	fs.avail.Store(100 << 20) // below the 256 MiB reserve
	settle()
	pe := wantCode(t, c, `INSERT INTO t VALUES (101, 'lost?')`, "53100")
	if !strings.Contains(pe.Message, "no space left on device") || !strings.Contains(pe.Detail, "100 MB free") || !strings.Contains(pe.Detail, "Nothing was written") || pe.Hint == "" {
		t.Errorf("disk full error: %q / %q / %q", pe.Message, pe.Detail, pe.Hint)
	}
	wantCode(t, c, `UPDATE t SET v = 'changed'`, "53100")
	wantCode(t, c, `CREATE TABLE u (x INT)`, "53100")
	// A REFRESH that has something to write fails the same way.
	fs.avail.Store(0)
	settle()
	mustExec(t, c, `INSERT INTO t VALUES (101, 'a')`)
	fs.avail.Store(100 << 20)
	settle()
	wantCode(t, c, `REFRESH MATERIALIZED VIEW tv`, "53100")
	if _, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "v"}, pgx.CopyFromRows([][]any{{int32(102), "copied"}})); err == nil {
		t.Error("COPY on a full disk succeeded")
	} else if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "53100" {
		t.Errorf("COPY on a full disk: %v", err)
	}
	// Reads go on, and see nothing of the failed writes.
	if n := count(t, c, `SELECT count(*) FROM t`); n != 101 {
		t.Errorf("%d rows while the disk is full, want 101", n)
	}
	if n := count(t, c, `SELECT n FROM tv`); n != 100 {
		t.Errorf("view holds %d while the disk is full, want 100 (its last refresh)", n)
	}
	if n := count(t, c, `SELECT count(*) FROM t WHERE v = 'changed'`); n != 0 {
		t.Errorf("a failed UPDATE left %d rows changed", n)
	}

	fs.avail.Store(0) // space freed
	settle()
	mustExec(t, c, `INSERT INTO t VALUES (102, 'after')`)
	mustExec(t, c, `REFRESH MATERIALIZED VIEW tv`)
	if n := count(t, c, `SELECT n FROM tv`); n != 102 {
		t.Errorf("view after the disk cleared: %d, want 102", n)
	}
}

// A failed write of the write-ahead log (R-X2): the commit that hits it
// fails with 58030 and says its outcome is unknown, later writes fail at
// once (also after the fault clears: the log is not trusted again without
// a restart), reads go on, /readyz reports it; after a restart every
// acknowledged commit is there and the failed one is wholly there or
// wholly absent.
func TestLogWriteFailure(t *testing.T) {
	for _, fault := range []error{syscall.EIO, syscall.ENOSPC} {
		t.Run(fault.Error(), func(t *testing.T) {
			dir, fs := t.TempDir(), newFaultFS()
			srv, c := startFaultServer(t, dir, fs)
			ctx := context.Background()
			mustExec(t, c, `CREATE TABLE t (id INT PRIMARY KEY, v TEXT)`)
			for i := 1; i <= 50; i++ {
				mustExec(t, c, fmt.Sprintf(`INSERT INTO t VALUES (%d, 'acknowledged')`, i))
			}
			mustExec(t, c, `CREATE MATERIALIZED VIEW tv AS SELECT count(*) AS n FROM t`)

			fs.failLog(fault)
			code := "58030"
			if fault == syscall.ENOSPC {
				code = "53100"
			}
			pe := wantCode(t, c, `INSERT INTO t SELECT i, 'unknown' FROM generate_series(51, 60) AS i`, code)
			if !strings.Contains(pe.Message, "write-ahead log") || !strings.Contains(pe.Detail, "unknown") || !strings.Contains(pe.Hint, "restart") {
				t.Errorf("first failure: %q / %q / %q", pe.Message, pe.Detail, pe.Hint)
			}
			fs.failLog(nil)
			pe = wantCode(t, c, `INSERT INTO t VALUES (61, 'refused')`, "58030")
			if !strings.Contains(pe.Detail, "Nothing was written") {
				t.Errorf("later failure: %q", pe.Detail)
			}
			wantCode(t, c, `REFRESH MATERIALIZED VIEW tv`, "58030")
			if n := count(t, c, `SELECT count(*) FROM t WHERE v = 'acknowledged'`); n != 50 {
				t.Errorf("reads after the failure: %d acknowledged rows, want 50", n)
			}
			if err := srv.ready(); err == nil || !strings.Contains(err.Error(), "restarted") {
				t.Errorf("/readyz after the failure: %v", err)
			}
			c.Close(ctx)
			// A clean stop after the failure (SIGTERM exits 0): the
			// log's error is not the stop's.
			if err := srv.Shutdown(2 * time.Second); err != nil {
				t.Errorf("shutdown after the log failed: %v", err)
			}

			srv, c = startFaultServer(t, dir, nil)
			defer srv.Shutdown(2 * time.Second)
			defer c.Close(ctx)
			if n := count(t, c, `SELECT count(*) FROM t WHERE v = 'acknowledged'`); n != 50 {
				t.Errorf("after restart: %d acknowledged rows, want 50", n)
			}
			if n := count(t, c, `SELECT count(*) FROM t WHERE v = 'unknown'`); n != 0 && n != 10 {
				t.Errorf("after restart: %d of the 10 rows of the failed commit, want all or none", n)
			}
			if n := count(t, c, `SELECT count(*) FROM t WHERE v = 'refused'`); n != 0 {
				t.Errorf("a refused commit is there after restart")
			}
			mustExec(t, c, `INSERT INTO t VALUES (1000, 'after restart')`)
			mustExec(t, c, `REFRESH MATERIALIZED VIEW tv`)
			if n, m := count(t, c, `SELECT n FROM tv`), count(t, c, `SELECT count(*) FROM t`); n != m {
				t.Errorf("view %d, table %d after restart", n, m)
			}
			if err := srv.ready(); err != nil {
				t.Errorf("/readyz after restart: %v", err)
			}
		})
	}
}

// A start on a disk without room to replay the write-ahead log serves
// reads (R-X2): it listens, every acknowledged row is there, writes fail
// with 53100 saying a restart with space is needed, /readyz says so, and
// the stop is clean. Before, the start hung, not listening, until space
// was freed. A start with room is writable again.
func TestStartOnFullDisk(t *testing.T) {
	dir := t.TempDir()
	srv, c := startFaultServer(t, dir, nil)
	ctx := context.Background()
	mustExec(t, c, `CREATE TABLE t (id INT PRIMARY KEY, v TEXT)`)
	mustExec(t, c, `INSERT INTO t SELECT i, 'acknowledged' FROM generate_series(1, 100) AS i`)
	c.Close(ctx)
	if err := srv.Shutdown(2 * time.Second); err != nil {
		t.Fatal(err)
	}

	fs := newFaultFS()
	fs.avail.Store(1 << 20)
	srv, c = startFaultServer(t, dir, fs)
	if n := count(t, c, `SELECT count(*) FROM t`); n != 100 {
		t.Errorf("reads on a full disk: %d rows, want 100", n)
	}
	pe := wantCode(t, c, `INSERT INTO t VALUES (101, 'refused')`, "53100")
	if !strings.Contains(pe.Detail, "started read-only") || !strings.Contains(pe.Hint, "restart") {
		t.Errorf("write on a read-only start: %q / %q", pe.Detail, pe.Hint)
	}
	wantCode(t, c, `CREATE TABLE u (x INT)`, "53100")
	if err := srv.ready(); err == nil || !strings.Contains(err.Error(), "space freed") {
		t.Errorf("/readyz on a read-only start: %v", err)
	}
	c.Close(ctx)
	if err := srv.Shutdown(2 * time.Second); err != nil {
		t.Errorf("shutdown of a read-only start: %v", err)
	}

	srv, c = startFaultServer(t, dir, nil)
	defer srv.Shutdown(2 * time.Second)
	defer c.Close(ctx)
	mustExec(t, c, `INSERT INTO t VALUES (101, 'after')`)
	if n := count(t, c, `SELECT count(*) FROM t`); n != 101 {
		t.Errorf("after a start with room: %d rows, want 101", n)
	}
}
