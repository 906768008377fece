// Regression tests for what a review of the incremental engine found, each
// once a silent difference between an incremental refresh and a full
// recompute.
package refresh_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func fill(n, from int, f func(i int) string) string {
	var vals []string
	for i := from; i < from+n; i++ {
		vals = append(vals, f(i))
	}
	return strings.Join(vals, ", ")
}

// checkRefresh refreshes view and compares it with q; returns technique.
func checkRefresh(t *testing.T, c *pgx.Conn, view, q string) bool {
	t.Helper()
	exec(t, c, `REFRESH MATERIALIZED VIEW `+view)
	got, want := rows(t, c, `SELECT * FROM `+view), rows(t, c, q)
	tech := lastTechnique(t, c, view)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s (%s) differs\nview:\n%s\nquery:\n%s", view, tech, strings.Join(got, "\n"), strings.Join(want, "\n"))
		return false
	}
	t.Logf("%s ok (%s)", view, tech)
	return true
}

// P1: PARTITION_OVERWRITE over a self-join: a change in one partition
// changes rows of another partition.
func TestReviewedPartitionSelfJoin(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE m (id INT PRIMARY KEY, day INT, k INT, reading DOUBLE)`)
	exec(t, c, `INSERT INTO m VALUES `+fill(600, 0, func(i int) string { return fmt.Sprintf("(%d, %d, %d, %d.5)", i, i%30, i%40, i%7) }))
	q := `SELECT a.day, sum(b.reading) AS total FROM m a JOIN m b ON a.k = b.k GROUP BY a.day`
	exec(t, c, `CREATE MATERIALIZED VIEW sj PARTITIONED BY (day) AS `+q)
	// row 1: day 1, k 1. Rows with k = 1: ids 1, 41, 81, ... in many days.
	exec(t, c, `UPDATE m SET reading = 1000 WHERE id = 1`)
	checkRefresh(t, c, "sj", q)
}

// P2: PARTITION_OVERWRITE with a time filter: rows aging out in partitions
// no change touched.
func TestReviewedPartitionTime(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE e (id INT PRIMARY KEY, day INT, ts TIMESTAMPTZ, reading DOUBLE)`)
	exec(t, c, `INSERT INTO e VALUES `+fill(600, 0, func(i int) string {
		return fmt.Sprintf("(%d, %d, now() - INTERVAL %d SECONDS, %d.5)", i, i%30, 1000+i, i%7)
	}))
	exec(t, c, `INSERT INTO e VALUES (1000, 3, now() - INTERVAL 2 SECONDS, 1.5)`)
	q := `SELECT day, sum(reading) AS total, count(*) AS n FROM e WHERE ts > now() - INTERVAL 4 SECONDS GROUP BY day`
	exec(t, c, `CREATE MATERIALIZED VIEW pt PARTITIONED BY (day) AS `+q)
	if got := rows(t, c, `SELECT * FROM pt`); len(got) != 1 {
		t.Fatalf("at create %v", got)
	}
	time.Sleep(3 * time.Second)
	checkRefresh(t, c, "pt", q)
}

// P3: a time filter on the primary key becomes a range scan whose bound is
// now(): the old side of the differentiation misses rows that aged out.
func TestReviewedTimeFilterPK(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE ev (ts TIMESTAMPTZ PRIMARY KEY, v INT)`)
	exec(t, c, `INSERT INTO ev VALUES `+fill(300, 100, func(i int) string { return fmt.Sprintf("(now() - INTERVAL %d SECONDS, %d)", 1000+i, i) }))
	exec(t, c, `INSERT INTO ev VALUES (now() - INTERVAL 2 SECONDS, 1), (now() + INTERVAL 2 SECONDS, 2)`)
	q := `SELECT v FROM ev WHERE ts > now() - INTERVAL 4 SECONDS AND ts <= now()`
	exec(t, c, `CREATE MATERIALIZED VIEW tp AS `+q)
	if got := strings.Join(rows(t, c, `SELECT * FROM tp`), ","); got != "1" {
		t.Fatalf("at create %s", got)
	}
	time.Sleep(3 * time.Second) // 1 ages out, 2 ages in
	checkRefresh(t, c, "tp", q)
	t.Log(planning(t, c, "tp"))
}

// P4: GROUP_AGGREGATE keeps the group key it first saw; a full recompute
// keeps the one with more fractional digits.
func TestReviewedGroupKeyScale(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE t (id INT PRIMARY KEY, k NUMERIC)`)
	exec(t, c, `INSERT INTO t VALUES `+fill(1000, 10, func(i int) string { return fmt.Sprintf("(%d, %d)", i, i%50+10) }))
	exec(t, c, `INSERT INTO t VALUES (1, 1.5)`)
	q0 := `SELECT k, count(*) AS n FROM t WHERE k < 2 GROUP BY k`
	defer func() { t.Log(rows(t, c, `SELECT * FROM gk WHERE k < 2`), rows(t, c, q0)) }()
	q := `SELECT k, count(*) AS n FROM t GROUP BY k`
	exec(t, c, `CREATE MATERIALIZED VIEW gk AS `+q)
	exec(t, c, `INSERT INTO t VALUES (2, 1.50)`)
	checkRefresh(t, c, "gk", q)
	exec(t, c, `DELETE FROM t WHERE id = 2`)
	checkRefresh(t, c, "gk", q)
}

// P5: float -0 and 0 are one group; the key printed depends on which row
// was seen first.
func TestReviewedGroupKeyNegZero(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE t (id INT PRIMARY KEY, x DOUBLE)`)
	exec(t, c, `INSERT INTO t VALUES `+fill(1000, 10, func(i int) string { return fmt.Sprintf("(%d, %d)", i, i%50+10) }))
	exec(t, c, `INSERT INTO t VALUES (5, 0.0)`)
	q := `SELECT x, count(*) AS n FROM t GROUP BY x`
	exec(t, c, `CREATE MATERIALIZED VIEW nz AS `+q)
	exec(t, c, `INSERT INTO t VALUES (1, CAST('-0' AS DOUBLE))`)
	checkRefresh(t, c, "nz", q)
	t.Log(rows(t, c, `SELECT x, id FROM t WHERE id < 10`))
}

func planning(t *testing.T, c *pgx.Conn, view string) string {
	var reason string
	_ = c.QueryRow(context.Background(), `SELECT details FROM event_log('`+view+`') WHERE event_type = 'planning_information' ORDER BY timestamp DESC LIMIT 1`, pgx.QueryExecModeSimpleProtocol).Scan(&reason)
	return reason
}

// P6: CREATE OR REPLACE with the same query text but new expectations or
// column types.
func TestReviewedReplaceSameQuery(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE s (id INT PRIMARY KEY, v INT)`)
	exec(t, c, `INSERT INTO s VALUES `+fill(1000, 0, func(i int) string { return fmt.Sprintf("(%d, %d)", i, i%10) }))
	q := `SELECT id, v FROM s WHERE v < 3`
	exec(t, c, `CREATE MATERIALIZED VIEW rv AS `+q)
	exec(t, c, `CREATE OR REPLACE MATERIALIZED VIEW rv (id, v, CONSTRAINT pos EXPECT (v > 0) ON VIOLATION DROP ROW) AS `+q)
	t.Log(lastTechnique(t, c, "rv"), len(rows(t, c, `SELECT * FROM rv`)), len(rows(t, c, q+` AND v > 0`)))
	exec(t, c, `UPDATE s SET v = 1 WHERE id = 0`)
	checkRefresh(t, c, "rv", q+` AND v > 0`)
	exec(t, c, `UPDATE s SET v = 2 WHERE id = 10`)
	checkRefresh(t, c, "rv", q+` AND v > 0`)
}

func TestReviewedReplacePlain(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE s (id INT PRIMARY KEY, v INT)`)
	exec(t, c, `INSERT INTO s VALUES (1, 1), (2, 2)`)
	q := `SELECT id, v FROM s`
	exec(t, c, `CREATE MATERIALIZED VIEW rv AS `+q)
	exec(t, c, `CREATE OR REPLACE MATERIALIZED VIEW rv AS `+q)
	if got := strings.Join(rows(t, c, `SELECT * FROM rv`), ","); got != "1|1,2|2" {
		t.Fatalf("after CREATE OR REPLACE with the same query: %s", got)
	}
}

// P7: a plain view the MV reads is replaced: the MV's own query text is the
// same, so its checkpoint still matches.
func TestReviewedReplacePlainView(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE s (id INT PRIMARY KEY, v INT)`)
	exec(t, c, `INSERT INTO s VALUES `+fill(1000, 0, func(i int) string { return fmt.Sprintf("(%d, %d)", i, i%10) }))
	exec(t, c, `CREATE VIEW pv AS SELECT id, v FROM s WHERE v > 5`)
	q := `SELECT id, v FROM pv`
	exec(t, c, `CREATE MATERIALIZED VIEW m AS `+q)
	exec(t, c, `CREATE OR REPLACE VIEW pv AS SELECT id, v FROM s WHERE v > 8`)
	checkRefresh(t, c, "m", q)
	exec(t, c, `UPDATE s SET v = 7 WHERE id = 0`)
	checkRefresh(t, c, "m", q)
}

// P8: PARTITION_OVERWRITE when the view's partition column has another
// type than the source column it traces to.
func TestReviewedPartitionCast(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE m (id INT PRIMARY KEY, day INT, reading DOUBLE)`)
	exec(t, c, `INSERT INTO m VALUES `+fill(600, 0, func(i int) string { return fmt.Sprintf("(%d, %d, %d.5)", i, i%30, i%7) }))
	q := `SELECT day, sum(reading) AS total FROM m GROUP BY day`
	exec(t, c, `CREATE MATERIALIZED VIEW pc (day DECIMAL(10,0), total) PARTITIONED BY (day) AS `+q)
	exec(t, c, `UPDATE m SET reading = 1000 WHERE id = 1`)
	checkRefresh(t, c, "pc", q)
	t.Log(rows(t, c, `SELECT * FROM pc WHERE day = 1`))
}

// P9: TRUNCATE of a source.
func TestReviewedTruncate(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE s (id INT PRIMARY KEY, k INT, v DECIMAL(10,2))`)
	exec(t, c, `CREATE TABLE d (k INT PRIMARY KEY, name STRING)`)
	exec(t, c, `INSERT INTO d VALUES (1, 'a'), (2, 'b')`)
	exec(t, c, `INSERT INTO s VALUES `+fill(30, 0, func(i int) string { return fmt.Sprintf("(%d, %d, %d.25)", i, i%3, i) }))
	qs := []string{`SELECT k, count(*) AS n, sum(v) AS t, max(v) AS mx FROM s GROUP BY k`, `SELECT s.id, d.name FROM d LEFT JOIN s ON s.k = d.k`, `SELECT count(*) AS n, min(v) AS mn FROM s`}
	for i, q := range qs {
		exec(t, c, fmt.Sprintf(`CREATE MATERIALIZED VIEW tv%d AS %s`, i, q))
	}
	exec(t, c, `TRUNCATE TABLE s`)
	for i, q := range qs {
		checkRefresh(t, c, fmt.Sprintf("tv%d", i), q)
	}
	exec(t, c, `INSERT INTO s VALUES (100, 1, 3.00)`)
	for i, q := range qs {
		checkRefresh(t, c, fmt.Sprintf("tv%d", i), q)
	}
}

// P10: EXCEPT keeps the first left row of equal numerics written apart; the
// old side of the change plans reads rows in another order.
func TestReviewedExceptScale(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE a (id INT PRIMARY KEY, k NUMERIC, x INT)`)
	exec(t, c, `CREATE TABLE b (id INT PRIMARY KEY, k NUMERIC)`)
	exec(t, c, `INSERT INTO a VALUES `+fill(1000, 10, func(i int) string { return fmt.Sprintf("(%d, %d, 0)", i, i) }))
	exec(t, c, `INSERT INTO a VALUES (1, 1.5, 0), (2, 1.50, 0)`)
	exec(t, c, `INSERT INTO b VALUES (1, 7)`)
	q := `SELECT k FROM a EXCEPT SELECT k FROM b`
	exec(t, c, `CREATE MATERIALIZED VIEW ex AS `+q)
	t.Log(rows(t, c, `SELECT * FROM ex WHERE k < 2`))
	exec(t, c, `UPDATE a SET x = 1 WHERE id = 1`)
	checkRefresh(t, c, "ex", q)
	t.Log(lastTechnique(t, c, "ex"), planning(t, c, "ex"))
}

func TestReviewedReplaceLower(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE s (id INT PRIMARY KEY, k INT, v INT)`)
	exec(t, c, `INSERT INTO s VALUES `+fill(1000, 0, func(i int) string { return fmt.Sprintf("(%d, %d, %d)", i, i%50, i%7) }))
	exec(t, c, `CREATE MATERIALIZED VIEW lower_mv AS SELECT k, sum(v) AS total FROM s GROUP BY k`)
	q := `SELECT k, total FROM lower_mv WHERE total > 20`
	exec(t, c, `CREATE MATERIALIZED VIEW upper_mv AS `+q)
	exec(t, c, `CREATE OR REPLACE MATERIALIZED VIEW lower_mv AS SELECT k, sum(v) + 1 AS total FROM s GROUP BY k`)
	checkRefresh(t, c, "upper_mv", q)
	t.Log(len(rows(t, c, `SELECT * FROM upper_mv`)), len(rows(t, c, q)))
}

// P13: a query whose value depends on the session's TimeZone, refreshed by
// sessions with different settings.
func TestReviewedTimeZone(t *testing.T) {
	url := start(t)
	c := connect(t, url)
	c2 := connect(t, url)
	exec(t, c, `CREATE TABLE e (id INT PRIMARY KEY, ts TIMESTAMPTZ)`)
	exec(t, c, `INSERT INTO e VALUES `+fill(1000, 0, func(i int) string {
		return fmt.Sprintf("(%d, TIMESTAMPTZ '2024-01-01 23:30:00+00' + INTERVAL %d MINUTES)", i, i)
	}))
	q := `SELECT id, CAST(ts AS DATE) AS d FROM e WHERE id < 5 OR id > 998`
	exec(t, c, `SET TIME ZONE 'UTC'`)
	exec(t, c2, `SET TIME ZONE 'Asia/Tokyo'`)
	exec(t, c, `CREATE MATERIALIZED VIEW tz AS `+q)
	exec(t, c2, `INSERT INTO e VALUES (5000, TIMESTAMPTZ '2024-01-01 23:30:00+00')`)
	// Refreshed from Tokyo, the view is still computed in the zone of its
	// CREATE (UTC): compare with the query in UTC.
	exec(t, c2, `REFRESH MATERIALIZED VIEW tz`)
	if got, want := rows(t, c, `SELECT * FROM tz`), rows(t, c, q); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("tz (%s) differs\nview:\n%s\nquery in UTC:\n%s", lastTechnique(t, c, "tz"), strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// P14: SUM over decimals whose scale varies from row to row.
func TestReviewedSumScale(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE a (id INT PRIMARY KEY, k INT, v DECIMAL(10,2), w DECIMAL(10,2))`)
	exec(t, c, `INSERT INTO a VALUES `+fill(1000, 10, func(i int) string { return fmt.Sprintf("(%d, %d, %d.00, 1.00)", i, i%50+10, i%9) }))
	exec(t, c, `INSERT INTO a VALUES (1, 1, 3.00, 1.00), (2, 1, 1.00, 3.00)`)
	qs := []string{`SELECT k, sum(v / w) AS s FROM a GROUP BY k`, `SELECT k, sum(v * w) AS s, avg(v / w) AS av FROM a GROUP BY k`, `SELECT k, sum(round(v / w, 3)) AS s FROM a GROUP BY k`}
	for i, q := range qs {
		exec(t, c, fmt.Sprintf(`CREATE MATERIALIZED VIEW ss%d AS %s`, i, q))
		t.Log(rows(t, c, fmt.Sprintf(`SELECT * FROM ss%d WHERE k = 1`, i)))
	}
	exec(t, c, `DELETE FROM a WHERE id = 2`)
	for i, q := range qs {
		checkRefresh(t, c, fmt.Sprintf("ss%d", i), q)
		t.Log(rows(t, c, fmt.Sprintf(`SELECT * FROM ss%d WHERE k = 1`, i)), rows(t, c, `SELECT * FROM (`+q+`) x WHERE k = 1`))
	}
}

func TestReviewedReplaceLowerGA(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE s (id INT PRIMARY KEY, k INT, v INT)`)
	exec(t, c, `INSERT INTO s VALUES `+fill(1000, 0, func(i int) string { return fmt.Sprintf("(%d, %d, %d)", i, i%50, i%7) }))
	exec(t, c, `CREATE MATERIALIZED VIEW lower_mv AS SELECT k, sum(v) AS total FROM s GROUP BY k`)
	q := `SELECT count(*) AS n, sum(total) AS t FROM lower_mv`
	exec(t, c, `CREATE MATERIALIZED VIEW upper_mv AS `+q)
	exec(t, c, `CREATE OR REPLACE MATERIALIZED VIEW lower_mv AS SELECT k, sum(v) + 1 AS total FROM s GROUP BY k`)
	checkRefresh(t, c, "upper_mv", q)
}

func TestReviewedTimePKPolicy(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE ev (ts TIMESTAMPTZ PRIMARY KEY, v INT)`)
	exec(t, c, `CREATE TABLE ev2 (id INT PRIMARY KEY, ts TIMESTAMPTZ, v INT)`)
	_, err := c.Exec(context.Background(), `CREATE MATERIALIZED VIEW tp2 REFRESH POLICY INCREMENTAL AS SELECT v FROM ev2 WHERE ts > now() - INTERVAL 1 HOUR`)
	if err != nil {
		t.Fatalf("time filter on a non-key column: %v", err)
	}
	_, err = c.Exec(context.Background(), `CREATE MATERIALIZED VIEW tp REFRESH POLICY INCREMENTAL AS SELECT v FROM ev WHERE ts > now() - INTERVAL 1 HOUR`)
	if err != nil {
		t.Fatalf("time filter on a key column: %v", err)
	}
}

func TestReviewedGADriftError(t *testing.T) {
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE s (id INT PRIMARY KEY, k INT, v INT)`)
	exec(t, c, `INSERT INTO s VALUES `+fill(1000, 0, func(i int) string { return fmt.Sprintf("(%d, %d, %d)", i, i%50, i%7) }))
	exec(t, c, `CREATE MATERIALIZED VIEW lower_mv AS SELECT k, sum(v) AS total FROM s GROUP BY k`)
	q := `SELECT total, count(*) AS n FROM lower_mv GROUP BY total`
	exec(t, c, `CREATE MATERIALIZED VIEW upper_mv AS `+q)
	exec(t, c, `CREATE OR REPLACE MATERIALIZED VIEW lower_mv AS SELECT k, sum(v) + 1 AS total FROM s GROUP BY k`)
	if _, err := c.Exec(context.Background(), `REFRESH MATERIALIZED VIEW upper_mv`); err != nil {
		t.Fatal(err)
	}
	if got, want := rows(t, c, `SELECT * FROM upper_mv`), rows(t, c, q); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("upper_mv differs after its source was replaced")
	}
}
