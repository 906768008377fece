package session_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestSerializableThroughPgx: pgx's BeginTx with IsoLevel Serializable
// (BEGIN ISOLATION LEVEL SERIALIZABLE) gets a serializable transaction:
// write skew fails the second committer with 40001 and PostgreSQL's
// message and hint, and the retried transaction commits. At REPEATABLE
// READ the same interleaving commits both.
func TestSerializableThroughPgx(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	a := connect(t, url, pgx.QueryExecModeCacheStatement)
	b := connect(t, url, pgx.QueryExecModeCacheStatement)
	if _, err := a.Exec(ctx, `CREATE TABLE doctors (name TEXT PRIMARY KEY, on_call BOOLEAN)`); err != nil {
		t.Fatal(err)
	}
	reset := func() {
		if _, err := a.Exec(ctx, `DELETE FROM doctors`); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Exec(ctx, `INSERT INTO doctors VALUES ('alice', true), ('bob', true)`); err != nil {
			t.Fatal(err)
		}
	}
	// goOffCall takes name off call if someone else stays on call.
	goOffCall := func(tx pgx.Tx, name string) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM doctors WHERE on_call`).Scan(&n); err != nil {
			return err
		}
		if n < 2 {
			return errors.New("would leave nobody on call")
		}
		_, err := tx.Exec(ctx, `UPDATE doctors SET on_call = false WHERE name = $1`, name)
		return err
	}
	onCall := func() int {
		var n int
		if err := a.QueryRow(ctx, `SELECT count(*) FROM doctors WHERE on_call`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, iso := range []pgx.TxIsoLevel{pgx.RepeatableRead, pgx.Serializable} {
		reset()
		ta, err := a.BeginTx(ctx, pgx.TxOptions{IsoLevel: iso})
		if err != nil {
			t.Fatal(err)
		}
		tb, err := b.BeginTx(ctx, pgx.TxOptions{IsoLevel: iso})
		if err != nil {
			t.Fatal(err)
		}
		var shown string
		if err := tb.QueryRow(ctx, `SHOW transaction_isolation`).Scan(&shown); err != nil || shown != string(iso) {
			t.Fatalf("%s: SHOW transaction_isolation = %q, %v", iso, shown, err)
		}
		if err := goOffCall(ta, "alice"); err != nil {
			t.Fatal(err)
		}
		if err := goOffCall(tb, "bob"); err != nil {
			t.Fatal(err)
		}
		if err := ta.Commit(ctx); err != nil {
			t.Fatalf("%s: first commit: %v", iso, err)
		}
		err = tb.Commit(ctx)
		if iso == pgx.RepeatableRead {
			if err != nil || onCall() != 0 {
				t.Fatalf("repeatable read: write skew should commit (snapshot isolation): %v, %d on call", err, onCall())
			}
			continue
		}
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "40001" ||
			pe.Message != "could not serialize access due to read/write dependencies among transactions" ||
			pe.Hint != "The transaction might succeed if retried." {
			t.Fatalf("serializable: second commit: %v", err)
		}
		if onCall() != 1 {
			t.Fatalf("serializable: %d on call after the failed commit", onCall())
		}
		// The retry sees alice off call and refuses.
		tb, err = b.BeginTx(ctx, pgx.TxOptions{IsoLevel: iso})
		if err != nil {
			t.Fatal(err)
		}
		if err := goOffCall(tb, "bob"); err == nil || pgCode(err) != "" {
			t.Fatalf("retry: %v", err)
		}
		if err := tb.Rollback(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
