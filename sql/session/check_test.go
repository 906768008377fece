package session_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/sql/session"
	"github.com/mvserver/mvserver/storage"
)

// stack is a server whose storage the test can reach behind the
// sessions' back (to damage a view), on an injected clock.
type stack struct {
	url string
	db  *storage.DB
	cat *catalog.Manager
	now atomic.Int64 // Unix nanoseconds
}

func (s *stack) clock() time.Time { return time.Unix(0, s.now.Load()).UTC() }

// advance moves the clock forward.
func (s *stack) advance(d time.Duration) { s.now.Add(int64(d)) }

func startStack(t *testing.T) *stack {
	t.Helper()
	st := &stack{}
	st.now.Store(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	db, err := storage.Open(storage.Options{InMemory: true, Clock: st.clock})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := catalog.Open(db, "mvserver")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	eng := &session.Engine{DB: db, Catalog: cm, Database: "mvserver", Defaults: catalog.AllOn, Logger: log, Clock: st.clock,
		Refresher: &refresh.Runner{DB: db, Catalog: cm, Clock: st.clock}}
	srv := server.New(server.Config{Listen: "127.0.0.1:0", Logger: log}, eng)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
		db.Close()
	})
	st.url, st.db, st.cat = "postgres://tester@"+ln.Addr().String()+"/mvserver?sslmode=disable", db, cm
	return st
}

// damage changes a view's stored rows behind the refreshes' back, as a bug
// in a refresh technique would: it deletes the first row when drop is
// set, and stores extra (an encoded row) when it is not nil.
func (s *stack) damage(t *testing.T, view string, drop bool, extra []byte) {
	t.Helper()
	txn := s.db.Begin()
	defer txn.Rollback()
	cat, err := s.cat.Snapshot(txn)
	if err != nil {
		t.Fatal(err)
	}
	v, err := cat.Resolve([]string{view}, []string{"public"})
	if err != nil {
		t.Fatal(err)
	}
	if drop {
		it := txn.Scan(storage.TableID(v.ID), nil, nil)
		if !it.Next() {
			t.Fatalf("view %s is empty: %v", view, it.Err())
		}
		row := it.Row()
		it.Close()
		if err := txn.DeleteRow(v.StorageInfo(), row); err != nil {
			t.Fatal(err)
		}
	}
	if extra != nil {
		if _, err := txn.Insert(v.StorageInfo(), []byte("damaged"), extra); err != nil {
			t.Fatal(err)
		}
	}
	if err := txn.Commit(); err != nil {
		t.Fatal(err)
	}
}

// TestCheckFindsDrift: CHECK MATERIALIZED VIEW reports the rows a damaged
// view lacks, logs one drift event per CHECK that finds a difference (once
// in the extended protocol too, where the statement is bound twice), and
// says OK again once a full refresh repaired the view.
func TestCheckFindsDrift(t *testing.T) {
	st := startStack(t)
	ctx := context.Background()
	for i, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		c := connect(t, st.url, mode)
		name := fmt.Sprintf("v%d", i)
		for _, q := range []string{
			`CREATE TABLE IF NOT EXISTS src (id INT PRIMARY KEY, g STRING, n INT)`,
			`DELETE FROM src`,
			`INSERT INTO src VALUES (1, 'a', 1), (2, 'b', 2), (3, 'a', 3)`,
			`CREATE MATERIALIZED VIEW ` + name + ` AS SELECT g, sum(n) AS total FROM src GROUP BY g`,
		} {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		check := func() [][2]string {
			t.Helper()
			rows, err := c.Query(ctx, `CHECK MATERIALIZED VIEW `+name)
			if err != nil {
				t.Fatal(err)
			}
			var out [][2]string
			for rows.Next() {
				var res string
				var row *string
				if err := rows.Scan(&res, &row); err != nil {
					t.Fatal(err)
				}
				r := "NULL"
				if row != nil {
					r = *row
				}
				out = append(out, [2]string{res, r})
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			return out
		}
		if got := check(); len(got) != 1 || got[0] != [2]string{"OK", "NULL"} {
			t.Fatalf("%s: %v", mode, got)
		}
		st.damage(t, name, true, nil)
		got := check()
		if len(got) != 1 || got[0][0] != "MISSING" || (got[0][1] != "(a, 4)" && got[0][1] != "(b, 2)") {
			t.Fatalf("%s: %v", mode, got)
		}
		var drifts int
		var msg string
		err := c.QueryRow(ctx, `SELECT count(*), max(message) FROM event_log('`+name+`') WHERE event_type = 'drift'`).Scan(&drifts, &msg)
		if err != nil {
			t.Fatal(err)
		}
		if drifts != 1 || msg != "Materialized view '"+name+"' differs from its query: 1 rows missing, 0 rows extra." {
			t.Fatalf("%s: %d drift events, %q", mode, drifts, msg)
		}
		// CHECK reads in a transaction of its own: not in a block.
		tx, err := c.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, `CHECK MATERIALIZED VIEW `+name); err == nil || pgCode(err) != "25001" {
			t.Fatalf("CHECK in a transaction block: %v", err)
		}
		_ = tx.Rollback(ctx)
		// A full refresh repairs the view.
		if _, err := c.Exec(ctx, `REFRESH MATERIALIZED VIEW `+name+` FULL`); err != nil {
			t.Fatal(err)
		}
		if got := check(); len(got) != 1 || got[0][0] != "OK" {
			t.Fatalf("%s after FULL: %v", mode, got)
		}
	}
}

// TestCheckExtraRows: rows a view holds that its query does not return are
// EXTRA.
func TestCheckExtraRows(t *testing.T) {
	st := startStack(t)
	ctx := context.Background()
	c := connect(t, st.url, pgx.QueryExecModeSimpleProtocol)
	for _, q := range []string{
		`CREATE TABLE src (id INT PRIMARY KEY, v INT)`,
		`INSERT INTO src VALUES (1, 10), (2, 20)`,
		`CREATE MATERIALIZED VIEW copy AS SELECT id, v FROM src`,
		`CREATE MATERIALIZED VIEW copy2 AS SELECT id, v FROM src`,
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// copy2's rows are encoded as copy's: store one of copy's rows in
	// copy2 a second time.
	txn := st.db.Begin()
	cat, err := st.cat.Snapshot(txn)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := cat.Resolve([]string{"copy"}, []string{"public"})
	it := txn.Scan(storage.TableID(v.ID), nil, nil)
	if !it.Next() {
		t.Fatal("copy is empty")
	}
	value := append([]byte(nil), it.Row().Value...)
	it.Close()
	txn.Rollback()
	st.damage(t, "copy2", false, value)
	rows, err := c.Query(ctx, `CHECK MATERIALIZED VIEW copy2`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var res, row string
		if err := rows.Scan(&res, &row); err != nil {
			t.Fatal(err)
		}
		got = append(got, res+" "+row)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if len(got) != 1 || (got[0] != "EXTRA (1, 10)" && got[0] != "EXTRA (2, 20)") {
		t.Fatalf("got %v", got)
	}
}
