package session_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
)

// A sequence never hands out a value twice: not across a restart (the
// reserved block not handed out is a gap), not to concurrent sessions.
func TestSequenceValuesAreUnique(t *testing.T) {
	dir := t.TempDir()
	start := func() *app.Server {
		srv, err := app.Start(app.Config{Logger: slog.New(slog.DiscardHandler), DataDir: dir, Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 20, TableDefaults: catalog.AllOn})
		if err != nil {
			t.Fatal(err)
		}
		return srv
	}
	ctx := context.Background()
	seen := map[int64]bool{}
	var mu sync.Mutex
	take := func(c *pgx.Conn) int64 {
		var v int64
		if err := c.QueryRow(ctx, "SELECT nextval('ids')").Scan(&v); err != nil {
			t.Error(err)
			return 0
		}
		mu.Lock()
		defer mu.Unlock()
		if seen[v] {
			t.Errorf("nextval gave %d twice", v)
		}
		seen[v] = true
		return v
	}

	srv := start()
	url := "postgres://tester@" + srv.Addr().String() + "/mvserver?sslmode=disable"
	c := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	if _, err := c.Exec(ctx, "CREATE SEQUENCE ids"); err != nil {
		t.Fatal(err)
	}
	var last int64
	for range 3 {
		last = take(c)
	}
	if last != 3 {
		t.Fatalf("third nextval = %d, want 3", last)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc := connect(t, url, pgx.QueryExecModeCacheStatement)
			for range 50 {
				take(cc)
			}
		}()
	}
	wg.Wait()
	c.Close(ctx)
	srv.Shutdown(2 * time.Second)

	srv = start()
	defer srv.Shutdown(2 * time.Second)
	c = connect(t, "postgres://tester@"+srv.Addr().String()+"/mvserver?sslmode=disable", pgx.QueryExecModeSimpleProtocol)
	v := take(c)
	mu.Lock()
	for old := range seen {
		if old > v {
			t.Errorf("after the restart nextval = %d, below %d handed out before", v, old)
		}
	}
	mu.Unlock()
}
