package session_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestVacuumRetention: VACUUM drops the change-feed records of the versions
// committed before now − RETAIN n HOURS (default 168), on the server's
// clock, and says which versions the feed keeps (R-T9).
func TestVacuumRetention(t *testing.T) {
	st := startStack(t)
	nc := connectNotices(t, st.url, pgx.QueryExecModeSimpleProtocol)
	ctx := context.Background()
	run := func(q string, want ...string) {
		t.Helper()
		expectNotices(t, q, nc.exec(q), want...)
	}
	// changesFrom reports whether table_changes('t', v) is available.
	changesFrom := func(v int) string {
		t.Helper()
		var n int
		err := nc.c.QueryRow(ctx, `SELECT count(*) FROM table_changes('t', $1::bigint)`, v).Scan(&n)
		if err != nil {
			return pgCode(err)
		}
		return "ok"
	}
	run(`CREATE TABLE t (k INT PRIMARY KEY)`) // version 0 at 12:00
	run(`INSERT INTO t VALUES (1)`)           // version 1 at 12:00
	st.advance(2 * time.Hour)
	run(`INSERT INTO t VALUES (2)`) // version 2 at 14:00
	st.advance(3 * time.Hour)
	run(`INSERT INTO t VALUES (3)`) // version 3 at 17:00
	st.advance(time.Hour)           // 18:00
	run(`VACUUM t RETAIN 7 HOURS`,  // before 11:00: nothing
		"the change data feed of public.t keeps versions 0 to 3")
	if got := changesFrom(1); got != "ok" {
		t.Fatalf("after RETAIN 7 HOURS: %s", got)
	}
	run(`VACUUM t RETAIN 3 HOURS`, // before 15:00: versions 0 to 2
		"the change data feed of public.t keeps versions 3 to 3")
	if got := changesFrom(2); got != "55000" {
		t.Fatalf("version 2 after RETAIN 3 HOURS: %s", got)
	}
	if got := changesFrom(3); got != "ok" {
		t.Fatalf("version 3 after RETAIN 3 HOURS: %s", got)
	}
	// A longer retention later does not bring records back.
	run(`VACUUM t RETAIN 10 HOURS`,
		"the change data feed of public.t keeps versions 3 to 3")
	// The default retention is 168 hours.
	st.advance(170 * time.Hour)     // 8 days minus 2 hours after 17:00 = 188h after noon
	run(`INSERT INTO t VALUES (4)`) // version 4
	run(`VACUUM t`)                 // plain VACUUM is silent, as PostgreSQL's
	run(`VACUUM (VERBOSE) t`,
		"the change data feed of public.t keeps versions 4 to 4")
	if got := changesFrom(4); got != "ok" {
		t.Fatalf("version 4 after the default retention: %s", got)
	}
	// Fractions of an hour.
	st.advance(90 * time.Minute)
	run(`VACUUM t RETAIN 1.6 HOURS`,
		"the change data feed of public.t keeps versions 4 to 4")
	run(`VACUUM t RETAIN 1.4 HOURS`,
		"the change data feed of public.t keeps no version: every version is older than the retention")
	if _, err := nc.c.Exec(ctx, `VACUUM t RETAIN 1e300 HOURS`); pgCode(err) != "22023" {
		t.Fatalf("huge retention: %v", err)
	}
}
