package app

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mvserver/mvserver/catalog"
)

func startTest(t *testing.T, cfg Config) *pgx.Conn {
	t.Helper()
	cfg.Logger, cfg.InMemory, cfg.Listen, cfg.Database, cfg.MaxConnections, cfg.TableDefaults = slog.New(slog.DiscardHandler), true, "127.0.0.1:0", "mvserver", 10, catalog.AllOn
	srv, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	c, err := pgx.Connect(context.Background(), "postgres://t@"+srv.Addr().String()+"/mvserver?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func mustExec(t *testing.T, c *pgx.Conn, q string) {
	t.Helper()
	if _, err := c.Exec(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// waitCount polls a count until it equals want, within a deadline.
func waitCount(t *testing.T, c *pgx.Conn, q string, want int64) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var got int64
	for time.Now().Before(deadline) {
		if err := c.QueryRow(context.Background(), q).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s: %d, want %d (deadline passed)", q, got, want)
}

// TestTriggerOnUpdate: a TRIGGER ON UPDATE view refreshes by itself after a
// source commit, through the storage commit hook (R-S3), and chains to a
// view above it.
func TestTriggerOnUpdate(t *testing.T) {
	c := startTest(t, Config{TriggerMinInterval: 10 * time.Millisecond})
	mustExec(t, c, `CREATE TABLE src (id INT PRIMARY KEY)`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW a TRIGGER ON UPDATE AS SELECT id FROM src`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW b TRIGGER ON UPDATE AS SELECT count(*) AS n FROM a`)
	mustExec(t, c, `INSERT INTO src VALUES (1), (2), (3)`)
	waitCount(t, c, `SELECT count(*) FROM a`, 3)
	waitCount(t, c, `SELECT n FROM b`, 3)
	mustExec(t, c, `DELETE FROM src WHERE id = 1`)
	waitCount(t, c, `SELECT n FROM b`, 2)
	// Without its trigger, a follows its source only when refreshed by
	// hand; b still follows a.
	mustExec(t, c, `ALTER MATERIALIZED VIEW a DROP TRIGGER ON UPDATE`)
	mustExec(t, c, `INSERT INTO src VALUES (9)`)
	mustExec(t, c, `REFRESH MATERIALIZED VIEW a`)
	waitCount(t, c, `SELECT n FROM b`, 3)
}

// TestCronSchedule: a one-second Quartz schedule refreshes the view (R-S2).
func TestCronSchedule(t *testing.T) {
	c := startTest(t, Config{})
	mustExec(t, c, `CREATE TABLE src (id INT PRIMARY KEY)`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW m SCHEDULE CRON '* * * * * ?' AS SELECT id FROM src`)
	mustExec(t, c, `INSERT INTO src VALUES (1), (2)`)
	waitCount(t, c, `SELECT count(*) FROM m`, 2)
}

// TestAtMostEveryMinimum: AT MOST EVERY below the server's minimum is an error.
func TestAtMostEveryMinimum(t *testing.T) {
	c := startTest(t, Config{})
	mustExec(t, c, `CREATE TABLE src (id INT PRIMARY KEY)`)
	_, err := c.Exec(context.Background(), `CREATE MATERIALIZED VIEW m TRIGGER ON UPDATE AT MOST EVERY INTERVAL 10 SECONDS AS SELECT id FROM src`)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "22023" {
		t.Fatalf("want 22023, got %v", err)
	}
	mustExec(t, c, `CREATE MATERIALIZED VIEW m TRIGGER ON UPDATE AT MOST EVERY INTERVAL 2 MINUTES AS SELECT id FROM src`)
}
