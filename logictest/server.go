package logictest

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
)

// startServer starts a fresh in-memory mvserver on a loopback port and
// shuts it down when the test ends.
func startServer(t testing.TB, database string) Config {
	t.Helper()
	// MVSERVER_STAGE_THRESHOLD=n runs the files with inserts staged on
	// disk past n rows (storage/stage.go), as mvserver reads it.
	stage, _ := strconv.Atoi(os.Getenv("MVSERVER_STAGE_THRESHOLD"))
	srv, err := app.Start(app.Config{
		InMemory: true,
		// MVSERVER_TEST_STORE=tikvmock:// (with -tags tikv) runs the files
		// on the TiKV engine's in-process mock cluster (storage.Options.Store).
		Store:          os.Getenv("MVSERVER_TEST_STORE"),
		Listen:         "127.0.0.1:0",
		Database:       database,
		TableDefaults:  catalog.AllOn,
		Logger:         slog.New(slog.NewTextHandler(io.Discard, nil)),
		StageThreshold: stage,
	})
	if err != nil {
		t.Fatalf("start mvserver: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Shutdown(5 * time.Second); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	dsnAs := func(user string) string {
		u := &url.URL{Scheme: "postgres", User: url.User(user), Host: srv.Addr().String(), Path: "/" + database, RawQuery: "sslmode=disable"}
		return u.String()
	}
	// logictest is no role: a superuser, as the server trusts loopback
	// clients without authentication; a user directive's name is a role
	// the file created, with that role's privileges.
	return Config{
		Connect: func(ctx context.Context) (*pgconn.PgConn, error) { return pgconn.Connect(ctx, dsnAs("logictest")) },
		ConnectAs: func(ctx context.Context, user string) (*pgconn.PgConn, error) {
			return pgconn.Connect(ctx, dsnAs(user))
		},
	}
}

// database is the server's database name for a file: a leading comment
// line "# database: NAME" sets it (the seeds' three-part names need their
// catalog to be the server's database); mvserver otherwise.
func (f *File) database() string {
	for _, l := range f.lines {
		if !strings.HasPrefix(l, "#") {
			break
		}
		if name, ok := strings.CutPrefix(l, "# database: "); ok {
			return strings.TrimSpace(name)
		}
	}
	return "mvserver"
}

// parseForRun parses the file at path; messages name it relative to the
// repository root (testdata/x.slt:12), where the tests are usually run.
func parseForRun(t *testing.T, path string) *File {
	t.Helper()
	f, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Path = strings.TrimPrefix(filepath.ToSlash(path), "../")
	return f
}

// RunFile runs the logic-test file at path in the given protocol on a
// fresh server.
func RunFile(t *testing.T, path string, proto Protocol) {
	t.Helper()
	f := parseForRun(t, path)
	cfg := startServer(t, f.database())
	cfg.Protocol = proto
	f.Run(t, cfg)
}

// RewriteFile runs the file through the simple protocol on a fresh server
// and writes the results it got into the file as the expected ones.
func RewriteFile(t *testing.T, path string) {
	t.Helper()
	f := parseForRun(t, path)
	cfg := startServer(t, f.database())
	cfg.Protocol, cfg.Rewrite = Simple, true
	// Mismatches other than query results (a statement that failed or
	// an expected error that did not come) are reported; the results
	// are written all the same.
	text := f.Run(t, cfg)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
