package session_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// idle_in_transaction_session_timeout ends a connection that leaves a
// transaction open without a word (FATAL 25P03), which rolls it back; a
// connection idle outside a transaction stays.
func TestIdleInTransactionTimeout(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeCacheStatement} {
		c := connect(t, url, mode)
		if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS idle (k INT PRIMARY KEY)"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, "SET idle_in_transaction_session_timeout = '200ms'"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(400 * time.Millisecond) // idle outside a transaction: fine
		if _, err := c.Exec(ctx, "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(ctx, "INSERT INTO idle VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(600 * time.Millisecond)
		_, err := c.Exec(ctx, "COMMIT")
		var pe *pgconn.PgError
		if err == nil || errors.As(err, &pe) && pe.Code != "25P03" {
			t.Fatalf("COMMIT after the timeout: %v, want the connection ended with 25P03", err)
		}
		other := connect(t, url, pgx.QueryExecModeSimpleProtocol)
		var n int
		if err := other.QueryRow(ctx, "SELECT count(*) FROM idle").Scan(&n); err != nil || n != 0 {
			t.Fatalf("rows after the timed-out transaction: %d %v, want 0", n, err)
		}
	}
}
