package main

import (
	"fmt"
	"reflect"
	"regexp"
	"testing"
	"time"
)

func mustGen(t *testing.T, sf float64, seed uint64) *tpchGen {
	t.Helper()
	g, err := newTPCHGen(sf, seed)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// allRows generates every row of every table.
func allRows(g *tpchGen) map[string][][]any {
	out := map[string][][]any{}
	for _, t := range tpchTables() {
		next := t.rows(g)
		for row := next(); row != nil; row = next() {
			out[t.name] = append(out[t.name], row)
		}
	}
	return out
}

// TestTPCHGenCounts: the tables' sizes at SF 0.01 are clause 4.2.5's
// (lineitem: 1 to 7 per order), and count agrees with the rows made.
func TestTPCHGenCounts(t *testing.T) {
	g := mustGen(t, 0.01, 1)
	rows := allRows(g)
	want := map[string]int64{"region": 5, "nation": 25, "part": 2000, "supplier": 100, "partsupp": 8000, "customer": 1500, "orders": 15000}
	for _, tb := range tpchTables() {
		n := int64(len(rows[tb.name]))
		if n != tb.count(g) {
			t.Errorf("%s: %d rows generated, count says %d", tb.name, n, tb.count(g))
		}
		if w, ok := want[tb.name]; ok && n != w {
			t.Errorf("%s: %d rows, want %d", tb.name, n, w)
		}
		for _, r := range rows[tb.name] {
			if len(r) != len(tb.cols) {
				t.Fatalf("%s: a row of %d values for %d columns", tb.name, len(r), len(tb.cols))
			}
		}
	}
	if n := int64(len(rows["lineitem"])); n < 15000 || n > 7*15000 || n < 3*15000 {
		t.Errorf("lineitem: %d rows for 15000 orders (1 to 7 each, 4 on average)", n)
	}
	if g.refreshOrders() != 15 {
		t.Errorf("RF1/RF2 orders at SF 0.01: %d, want 15", g.refreshOrders())
	}
	if _, err := newTPCHGen(0.001, 1); err == nil {
		t.Error("SF 0.001 accepted")
	}
}

// TestTPCHGenDeterministic: the same seed gives the same rows (a sample
// of every table), another seed other rows.
func TestTPCHGenDeterministic(t *testing.T) {
	some := func(g *tpchGen) [][]any {
		var out [][]any
		for i := range int64(300) {
			o := g.order(0, i)
			out = append(out, g.part(i), g.partsupp(i), g.supplier(i%g.suppliers), g.customer(i), o.row, g.order(1, i).row)
			out = append(out, o.lines...)
		}
		return out
	}
	a, b, c := some(mustGen(t, 0.01, 7)), some(mustGen(t, 0.01, 7)), some(mustGen(t, 0.01, 8))
	if !reflect.DeepEqual(a, b) {
		t.Error("two generators with seed 7 differ")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("seeds 7 and 8 give the same rows")
	}
}

// TestTPCHGenKeys: primary keys are unique, foreign keys resolve
// (lineitem's (part, supplier) is a partsupp row), customers whose key
// is a multiple of 3 have no orders, and RF1's keys are new.
func TestTPCHGenKeys(t *testing.T) {
	for _, sf := range []float64{0.01, 0.1} {
		t.Run(fmt.Sprint(sf), func(t *testing.T) {
			g := mustGen(t, sf, 1)
			ps := map[[2]int32]bool{}
			next := tpchTables()[4].rows(g) // partsupp
			for r := next(); r != nil; r = next() {
				k := [2]int32{r[0].(int32), r[1].(int32)}
				if ps[k] {
					t.Fatalf("partsupp key %v twice", k)
				}
				if k[1] < 1 || int64(k[1]) > g.suppliers {
					t.Fatalf("partsupp supplier %d out of range", k[1])
				}
				ps[k] = true
			}
			orderKeys := map[int64]bool{}
			for i := range g.orders {
				o := g.order(0, i)
				key := o.row[0].(int64)
				if orderKeys[key] {
					t.Fatalf("order key %d twice", key)
				}
				orderKeys[key] = true
				if c := int64(o.row[1].(int32)); c%3 == 0 || c < 1 || c > g.customers {
					t.Fatalf("order %d: customer %d", key, c)
				}
				for _, l := range o.lines {
					if !ps[[2]int32{l[1].(int32), l[2].(int32)}] {
						t.Fatalf("lineitem (%d, %d): part %d and supplier %d are no partsupp row", key, l[3], l[1], l[2])
					}
				}
			}
			for i := range g.refreshOrders() {
				if o := g.order(1, i); orderKeys[o.row[0].(int64)] {
					t.Fatalf("RF1 order key %d is an initial order's", o.row[0])
				}
			}
		})
	}
}

// TestTPCHGenDerived: the columns the specification derives from others
// (clause 4.2.3) follow their rules.
func TestTPCHGenDerived(t *testing.T) {
	g := mustGen(t, 0.01, 3)
	lastOrder := tpchEndDate.AddDate(0, 0, -151)
	for _, batch := range []int{0, 1} {
		for i := range int64(2000) {
			o := g.order(batch, i)
			odate := o.row[4].(time.Time)
			if odate.Before(tpchStartDate) || odate.After(lastOrder) {
				t.Fatalf("O_ORDERDATE %v", odate)
			}
			var total int64
			allF, allO := true, true
			for j, l := range o.lines {
				qty, ext, disc, tax := int64(l[4].(cents)), int64(l[5].(cents)), int64(l[6].(cents)), int64(l[7].(cents))
				if l[3].(int32) != int32(j+1) || qty < 100 || qty > 5000 || disc > 10 || tax > 8 {
					t.Fatalf("lineitem %v", l)
				}
				if ext != qty/100*tpchRetailCents(int64(l[1].(int32))) {
					t.Fatalf("L_EXTENDEDPRICE %d for quantity %d of part %d", ext, qty, l[1])
				}
				ship, commit, receipt := l[10].(time.Time), l[11].(time.Time), l[12].(time.Time)
				days := func(a, b time.Time) int { return int(a.Sub(b).Hours() / 24) }
				if d := days(ship, odate); d < 1 || d > 121 {
					t.Fatalf("shipped %d days after the order", d)
				}
				if d := days(commit, odate); d < 30 || d > 90 {
					t.Fatalf("committed %d days after the order", d)
				}
				if d := days(receipt, ship); d < 1 || d > 30 {
					t.Fatalf("received %d days after shipping", d)
				}
				flag, status := l[8].(string), l[9].(string)
				if receipt.After(tpchCurrentDate) != (flag == "N") || (flag != "N" && flag != "R" && flag != "A") {
					t.Fatalf("L_RETURNFLAG %s for receipt %v", flag, receipt)
				}
				if ship.After(tpchCurrentDate) != (status == "O") {
					t.Fatalf("L_LINESTATUS %s for ship date %v", status, ship)
				}
				allF, allO = allF && status == "F", allO && status == "O"
				total += ext * (100 - disc) / 100 * (100 + tax) / 100
			}
			if got := int64(o.row[3].(cents)); got != total {
				t.Fatalf("O_TOTALPRICE %d, lineitems sum to %d", got, total)
			}
			want := "P"
			if allF {
				want = "F"
			} else if allO {
				want = "O"
			}
			if o.row[2] != want {
				t.Fatalf("O_ORDERSTATUS %s, want %s", o.row[2], want)
			}
		}
	}
}

// TestTPCHGenComplaints: exactly SF × 5 suppliers (at least one) match
// Q16's '%Customer%Complaints%' and as many "Customer…Recommends"; every
// part name is five distinct colours; phones start with the nation's
// country code.
func TestTPCHGenComplaints(t *testing.T) {
	complaints := regexp.MustCompile(`Customer.*Complaints`)
	recommends := regexp.MustCompile(`Customer.*Recommends`)
	for _, c := range []struct {
		sf   float64
		want int
	}{{0.01, 1}, {0.1, 1}, {1, 5}, {2, 10}} {
		g := mustGen(t, c.sf, 1)
		var nc, nr int
		for i := range g.suppliers {
			s := g.supplier(i)
			comment := s[6].(string)
			if len(comment) > 101 {
				t.Fatalf("S_COMMENT of %d characters", len(comment))
			}
			if complaints.MatchString(comment) {
				nc++
			}
			if recommends.MatchString(comment) {
				nr++
			}
			if want := fmt.Sprintf("%02d-", s[3].(int32)+10); s[4].(string)[:3] != want {
				t.Fatalf("phone %s in nation %d", s[4], s[3])
			}
		}
		if nc != c.want || nr != c.want {
			t.Errorf("SF %g: %d complaints and %d recommendations, want %d each", c.sf, nc, nr, c.want)
		}
	}
	g := mustGen(t, 0.01, 1)
	for i := range g.parts {
		p := g.part(i)
		words := regexp.MustCompile(` `).Split(p[1].(string), -1)
		seen := map[string]bool{}
		for _, w := range words {
			seen[w] = true
		}
		if len(words) != 5 || len(seen) != 5 {
			t.Fatalf("P_NAME %q", p[1])
		}
		if len(p[8].(string)) < 5 || len(p[8].(string)) > 22 {
			t.Fatalf("P_COMMENT %q", p[8])
		}
	}
}

// TestTPCHTextPool: the pool is made of the grammar's words, so the
// queries' LIKE patterns find rows.
func TestTPCHTextPool(t *testing.T) {
	pool := tpchTextPool(1, 1<<20)
	if len(pool) != 1<<20 {
		t.Fatalf("pool of %d bytes", len(pool))
	}
	if !regexp.MustCompile(`special.*requests`).MatchString(pool) || !regexp.MustCompile(`^[a-zA-Z ,.;:?!-]+$`).MatchString(pool) {
		t.Errorf("pool lacks Q13's words or has other characters: %.200q", pool)
	}
	if pool == tpchTextPool(2, 1<<20) {
		t.Error("the pool does not depend on the seed")
	}
}

func TestNumericKey(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"1995", "1995.0"}, {"1995", "1995.000"}, {"76.3636363636363636", "76.36363636363636363636"},
		{"-0.00", "0"}, {"0.0500", "0.05"}, {"123456789012.34", "123456789012.3400"},
	} {
		if numericKey(c.a) != numericKey(c.b) {
			t.Errorf("%s → %s, %s → %s", c.a, numericKey(c.a), c.b, numericKey(c.b))
		}
	}
	for _, c := range []struct{ a, b string }{{"1.5", "1.6"}, {"100", "10"}, {"-1", "1"}} {
		if numericKey(c.a) == numericKey(c.b) {
			t.Errorf("%s and %s both → %s", c.a, c.b, numericKey(c.a))
		}
	}
	if numericKey("NaN") != "NaN" {
		t.Errorf("NaN → %s", numericKey("NaN"))
	}
}
