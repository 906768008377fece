//go:build clients

package clienttest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

var (
	decimalSeed  = flag.Int64("decimal-seed", 18, "seed of TestDecimalDiff's generated expressions")
	decimalCount = flag.Int("decimal-count", 1000, "how many expressions TestDecimalDiff generates")
)

// TestDecimalDiff is the differential test of DECIMAL arithmetic (issue 18
// item 10): generated decimal expressions — casts to DECIMAL(p,s), + - * /,
// unary minus, abs and round over columns and constants of several scales —
// are evaluated by PostgreSQL 15 and mvserver on the same rows, alone,
// under sum/avg, as assignments into DECIMAL(p,s) columns (INSERT … SELECT,
// UPDATE) and as materialized views refreshed after changes. Every answer,
// in text, and every SQLSTATE must agree. A failure prints the expression
// and the seed (-decimal-seed) that reproduces it.
func TestDecimalDiff(t *testing.T) {
	targets := startTargets(t, sessionOpts{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	conns := make([]*pgconn.PgConn, len(targets))
	for i, tg := range targets {
		c, err := pgconn.Connect(ctx, tg.conn.url())
		if err != nil {
			t.Fatalf("%s: %v", tg.name, err)
		}
		defer c.Close(context.Background())
		conns[i] = c
	}
	// run sends one statement to both servers and requires the same rows
	// (as text) or the same SQLSTATE; it returns whether it succeeded.
	fails, answered, statements := 0, 0, 0
	run := func(what, sql string) bool {
		t.Helper()
		var out [2]string
		var ok [2]bool
		for i, c := range conns {
			out[i], ok[i] = answer(ctx, c, sql)
		}
		statements++
		if ok[0] {
			answered++
		}
		if out[0] != out[1] {
			fails++
			t.Errorf("%s (seed %d) answers differ:\n%s\npostgres:\n%s\nmvserver:\n%s", what, *decimalSeed, sql, out[0], out[1])
			if fails > 20 {
				t.FailNow()
			}
		}
		return ok[0]
	}
	setup := []string{
		"CREATE TABLE dd_src (id INT PRIMARY KEY, g INT, a DECIMAL(10,2), b DECIMAL(12,4), c INT, n NUMERIC, s DECIMAL(5,0))",
		`INSERT INTO dd_src VALUES
		 (1, 0, 1.00, 0.3333, 3, 2.5, 7),
		 (2, 0, -2.55, 1.0005, -7, -0.125, -1),
		 (3, 1, 0.00, -0.0001, 0, 100, 0),
		 (4, 1, 12345678.99, 9999.9999, 2147483647, 0.000001, 99999),
		 (5, 2, 0.05, 0.5, 1, -1, 5),
		 (6, 2, -0.01, -2.5, -2, 3.14159, -99999),
		 (7, 0, 99.99, 0.0049, 10, 1e-10, 12),
		 (8, 1, NULL, 1.5, NULL, NULL, 3)`,
	}
	for _, s := range setup {
		if !run("setup", s) {
			t.Fatalf("setup failed: %s", s)
		}
	}
	g := &decGen{r: rand.New(rand.NewSource(*decimalSeed))}
	for i := 0; i < *decimalCount; i++ {
		e := g.expr(3)
		run("expression", "SELECT id, "+e+" FROM dd_src ORDER BY id")
		if i%4 == 0 {
			run("aggregate", "SELECT g, sum("+e+"), avg("+e+"), count("+e+") FROM dd_src GROUP BY g ORDER BY g")
		}
		if i%5 == 0 {
			p, s := g.typmod()
			typ := fmt.Sprintf("DECIMAL(%d,%d)", p, s)
			tbl := fmt.Sprintf("dd_dst%d", i)
			run("assignment", fmt.Sprintf("CREATE TABLE %s (id INT PRIMARY KEY, v %s)", tbl, typ))
			run("assignment", fmt.Sprintf("INSERT INTO %s SELECT id, %s FROM dd_src", tbl, e))
			run("assignment", fmt.Sprintf("INSERT INTO %s VALUES (100, %s)", tbl, g.literal()))
			run("assignment", fmt.Sprintf("INSERT INTO %s SELECT id + 200, %s FROM dd_src WHERE id %% 2 = 0", tbl, g.expr(1)))
			run("assignment", fmt.Sprintf("UPDATE %s SET v = v %s %s WHERE id %% 3 = 1", tbl, g.op(), g.literal()))
			run("assignment", fmt.Sprintf("SELECT id, v FROM %s ORDER BY id", tbl))
		}
	}
	// Views: grouped sums of fixed-scale expressions (incremental refresh
	// on mvserver) and of any expression, refreshed after inserts, updates
	// and deletes of the source; PostgreSQL recomputes them.
	type view struct{ name, query string }
	var views []view
	for i := 0; i < 12; i++ {
		p, s := g.typmod()
		e := g.fixedExpr(2)
		q := fmt.Sprintf("SELECT g, sum(CAST(%s AS DECIMAL(%d,%d))) AS s1, sum(%s) AS s2, avg(%s) AS a, count(*) AS n FROM dd_src GROUP BY g", e, p+8, s, e, e)
		if i%3 == 2 {
			q = fmt.Sprintf("SELECT g, sum(%s) AS s1, CAST(avg(%s) AS DECIMAL(%d,%d)) AS a FROM dd_src GROUP BY g", g.expr(2), e, p+8, s)
		}
		v := view{fmt.Sprintf("dd_v%d", i), q}
		if run("view", "CREATE MATERIALIZED VIEW "+v.name+" AS "+v.query) {
			views = append(views, v)
		}
	}
	changes := []string{
		"INSERT INTO dd_src VALUES (20, 0, 0.10, 0.0001, 5, 0.5, 1), (21, 3, -7.77, 12.3456, -3, 7, 2)",
		"UPDATE dd_src SET a = a + 0.01, b = b * 2 WHERE id IN (1, 5, 21)",
		"DELETE FROM dd_src WHERE id IN (2, 20)",
		"UPDATE dd_src SET g = 3 WHERE id = 7",
		"DELETE FROM dd_src WHERE g = 3",
		"INSERT INTO dd_src VALUES (22, 3, 1.01, 1.0101, 1, 1, 1)",
	}
	for _, ch := range changes {
		run("change", ch)
		for _, v := range views {
			run("refresh", "REFRESH MATERIALIZED VIEW "+v.name)
			run("view "+v.name+" = "+v.query, "SELECT * FROM "+v.name+" ORDER BY g")
		}
	}
	t.Logf("%d generated expressions (seed %d), %d views: %d statements (%d without error) answered alike by PostgreSQL 15 and mvserver", *decimalCount, *decimalSeed, len(views), statements, answered)
}

// answer runs sql through the simple protocol and renders the rows as
// text, or the error as its SQLSTATE (messages may differ in wording, the
// code may not).
func answer(ctx context.Context, c *pgconn.PgConn, sql string) (string, bool) {
	res, err := c.Exec(ctx, sql).ReadAll()
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return "ERROR " + pe.Code, false
		}
		return "ERROR " + err.Error(), false
	}
	var b strings.Builder
	for _, r := range res {
		for _, row := range r.Rows {
			for i, v := range row {
				if i > 0 {
					b.WriteString(" | ")
				}
				if v == nil {
					b.WriteString("NULL")
				} else {
					b.Write(v)
				}
			}
			b.WriteByte('\n')
		}
	}
	return b.String(), true
}

// decGen generates decimal expressions over dd_src's columns.
type decGen struct{ r *rand.Rand }

func (g *decGen) pick(s ...string) string { return s[g.r.Intn(len(s))] }

func (g *decGen) op() string { return g.pick("+", "-", "*", "/") }

func (g *decGen) typmod() (int, int) {
	p := 1 + g.r.Intn(18)
	return p, g.r.Intn(p + 1)
}

// literal is a decimal or integer constant of scale 0 to 5, sometimes at
// a rounding boundary (…5).
func (g *decGen) literal() string {
	switch g.r.Intn(6) {
	case 0:
		return fmt.Sprint(g.r.Intn(2000) - 1000)
	case 1:
		// a half at the last place: 0.005, -12.5, 1.0045
		scale := 1 + g.r.Intn(4)
		return fmt.Sprintf("%s%d.%0*d5", g.pick("", "-"), g.r.Intn(100), scale-1, g.r.Intn(pow10(scale-1)))
	}
	scale := g.r.Intn(6)
	if scale == 0 {
		return fmt.Sprintf("%d.0", g.r.Intn(100000)-50000)
	}
	return fmt.Sprintf("%s%d.%0*d", g.pick("", "-"), g.r.Intn(1000), scale, g.r.Intn(pow10(scale)))
}

func pow10(n int) int {
	r := 1
	for ; n > 0; n-- {
		r *= 10
	}
	return r
}

func (g *decGen) leaf() string {
	if g.r.Intn(3) == 0 {
		return g.literal()
	}
	return g.pick("a", "b", "c", "n", "s", "a", "b")
}

// expr is any decimal expression of at most depth levels.
func (g *decGen) expr(depth int) string {
	if depth == 0 {
		return g.leaf()
	}
	switch g.r.Intn(9) {
	case 0, 1, 2:
		return "(" + g.expr(depth-1) + " " + g.op() + " " + g.expr(depth-1) + ")"
	case 3:
		p, s := g.typmod()
		return fmt.Sprintf("CAST(%s AS DECIMAL(%d,%d))", g.expr(depth-1), p+6, s)
	case 4:
		return fmt.Sprintf("round(%s, %d)", g.expr(depth-1), g.r.Intn(6)-1)
	case 5:
		return "-(" + g.expr(depth-1) + ")"
	case 6:
		return "abs(" + g.expr(depth-1) + ")"
	case 7:
		return fmt.Sprintf("CAST(%s AS NUMERIC)", g.expr(depth-1))
	}
	return g.leaf()
}

// fixedExpr is a decimal expression of one scale: DECIMAL columns,
// integers, constants and casts under +, - and *.
func (g *decGen) fixedExpr(depth int) string {
	if depth == 0 || g.r.Intn(3) == 0 {
		if g.r.Intn(3) == 0 {
			return g.literal()
		}
		return g.pick("a", "b", "c", "s")
	}
	switch g.r.Intn(4) {
	case 0:
		p, s := g.typmod()
		return fmt.Sprintf("CAST(%s AS DECIMAL(%d,%d))", g.expr(depth-1), p+6, s)
	case 1:
		return "-(" + g.fixedExpr(depth-1) + ")"
	}
	return "(" + g.fixedExpr(depth-1) + " " + g.pick("+", "-", "*") + " " + g.fixedExpr(depth-1) + ")"
}
