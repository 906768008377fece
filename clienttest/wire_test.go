//go:build clients

package clienttest

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/mvserver/mvserver/internal/wiretest"
)

// TestWireDifferential runs the wire files of testdata/wire/pg — message
// flows of both protocols, errors, portals, COPY — against PostgreSQL 15 and
// mvserver: each must answer exactly as the file says, and the file says
// what PostgreSQL answers (-update rewrites it from PostgreSQL). Relation
// OIDs, which are each server's own, are the one difference allowed.
func TestWireDifferential(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "wire", "pg", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no wire files in testdata/wire/pg: %v", err)
	}
	targets := startTargets(t, sessionOpts{})
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
			blocks := wiretest.ParseFile(t, lines)
			for _, tg := range targets {
				t.Run(tg.name, func(t *testing.T) {
					r := &wiretest.Runner{T: t, Real: true, Addr: net.JoinHostPort(tg.conn.Host, strconv.Itoa(tg.conn.Port))}
					r.Dial = func() (net.Conn, *pgproto3.Frontend, uint32, []byte, error) { return hijack(tg.conn) }
					// No hook tells when a real server runs the statement to
					// cancel: give it a moment.
					r.WaitRunning = func(uint32, string) { time.Sleep(500 * time.Millisecond) }
					defer r.CloseAll()
					rewrite := *update && tg.name == "postgres"
					got := r.RunAll(f, blocks, !rewrite)
					if rewrite {
						out := lines
						for i := len(blocks) - 1; i >= 0; i-- {
							out = blocks[i].Splice(out, got[i])
						}
						if err := os.WriteFile(f, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
							t.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// hijack connects with pgconn (TLS and authentication as the suite sets
// them) and takes over the socket for raw protocol messages.
func hijack(c connSettings) (net.Conn, *pgproto3.Frontend, uint32, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	pc, err := pgconn.Connect(ctx, c.url())
	if err != nil {
		return nil, nil, 0, nil, err
	}
	h, err := pc.Hijack()
	if err != nil {
		return nil, nil, 0, nil, err
	}
	return h.Conn, h.Frontend, h.PID, h.SecretKey, nil
}
