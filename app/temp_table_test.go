package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/mvserver/mvserver/catalog"
)

// The temporary tables of a session a crash ended are dropped when the
// server starts again: their schema, descriptors and rows.
func TestTempTablesDroppedAtStartup(t *testing.T) {
	ctx := context.Background()
	fs := vfs.NewCrashableMem()
	if err := fs.MkdirAll("/data", 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Logger: slog.New(slog.DiscardHandler), DataDir: "/data", FS: fs, Listen: "127.0.0.1:0", Database: "mvserver",
		MaxConnections: 10, TableDefaults: catalog.AllOn}
	srv, c := startAndConnect(t, cfg)
	for _, q := range []string{"CREATE TABLE keep (a INT)", "INSERT INTO keep VALUES (1)",
		"CREATE TEMP TABLE gone (a INT PRIMARY KEY)", "INSERT INTO gone VALUES (1), (2)", "CREATE TEMP VIEW gv AS SELECT a FROM gone"} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// The crash: what was synced while the session was still open.
	crashed := fs.CrashClone(vfs.CrashCloneCfg{})
	c.Close(ctx)
	srv.Shutdown(5 * time.Second)

	cfg.FS = crashed
	srv, c = startAndConnect(t, cfg)
	defer srv.Shutdown(5 * time.Second)
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'pg_temp%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d temporary schemas after restart (%v), want 0", n, err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pg_class WHERE relname IN ('gone', 'gone_pkey', 'gv')").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d temporary relations after restart (%v), want 0", n, err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM keep").Scan(&n); err != nil || n != 1 {
		t.Fatalf("keep has %d rows (%v), want 1", n, err)
	}
	// A new temporary table of the same name starts empty.
	if _, err := c.Exec(ctx, "CREATE TEMP TABLE gone (a INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM gone").Scan(&n); err != nil || n != 0 {
		t.Fatalf("new gone has %d rows (%v), want 0", n, err)
	}
}
