package main

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Sizes the issue fixes for the workloads.
const (
	accounts = 100_000 // W1, W3: accounts uniform over 100k
	products = 10_000  // W2: products 10k
)

// epoch is the first transaction's and order's instant (W1–W3).
var epoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// table is a generated source table. gen returns row i's values; base is
// "now" rounded down to the minute, for the workloads whose rows are
// relative to the time they are written (W4).
type table struct {
	name string
	pk   string
	cols []column
	// count is how many rows the load writes for --rows n.
	count func(n int64) int64
	gen   func(seed uint64, i int64, base time.Time) []any
}

func (t *table) createSQL() string {
	var sb strings.Builder
	sb.WriteString("CREATE TABLE " + t.name + " (")
	for i, c := range t.cols {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(c.name + " " + c.sql)
		if c.name == t.pk {
			sb.WriteString(" PRIMARY KEY")
		}
	}
	sb.WriteString(")")
	return sb.String()
}

func (t *table) columnNames() []string {
	names := make([]string, len(t.cols))
	for i, c := range t.cols {
		names[i] = c.name
	}
	return names
}

// insertSQL returns INSERT … VALUES statements for rows [from, to), at
// most per rows each.
func (t *table) insertSQL(seed uint64, from, to int64, base time.Time, per int64) []string {
	var out []string
	var sb strings.Builder
	for lo := from; lo < to; lo += per {
		hi := min(lo+per, to)
		sb.Reset()
		sb.WriteString("INSERT INTO " + t.name + " VALUES ")
		for i := lo; i < hi; i++ {
			if i > lo {
				sb.WriteByte(',')
			}
			sb.WriteByte('(')
			for c, v := range t.gen(seed, i, base) {
				if c > 0 {
					sb.WriteByte(',')
				}
				appendLiteral(&sb, t.cols[c].typ, v)
			}
			sb.WriteByte(')')
		}
		out = append(out, sb.String())
	}
	return out
}

// workload is one view over generated tables. Changes (inserts, updates,
// deletes) go to main, by its primary key: inserts take ids from --rows
// upwards, the mixed batches ranges below --rows, and the DML measurement
// negative ids it inserts and removes again.
type workload struct {
	id, title string
	tables    []*table
	main      *table
	view      string
	// query is the view's query on mvserver; pgQuery the same on
	// PostgreSQL where the spelling differs (QUALIFY).
	query, pgQuery string
	// sourceIndexes are indexes both systems get on the sources after the
	// load (untimed): those a user makes for the view's sake.
	sourceIndexes []string
	// key is the view's unique key: the unique index both systems get
	// (PostgreSQL's REFRESH … CONCURRENTLY needs it), and the column point
	// reads look up.
	key string
	// update returns the UPDATE of rows [lo, hi) of main the mixed batches
	// and the DML measurement run.
	update func(lo, hi int64) string
	// stable, when set, says until when the view's query answers the same
	// on unchanged data at and after t (time filters, R-I5): the check
	// compares only within one such interval.
	stable func(t time.Time) time.Time
	// queries, when set, make this a query workload (Q, queries.go): its
	// tables are loaded and the queries measured; there is no view.
	queries []benchQuery
	// run, when set, runs the whole workload on all systems at once and
	// prints its own tables (T, tpch.go), instead of the phases above.
	run func(ctx context.Context, b *bench, systems []*system) error
}

func (w *workload) queryFor(pg bool) string {
	if pg && w.pgQuery != "" {
		return w.pgQuery
	}
	return w.query
}

// workloads are W1–W4 in order, then Q and T.
func workloads() []*workload {
	txns := &table{
		name: "transactions_table", pk: "txn_id",
		cols: []column{
			{"txn_id", tBigint, "BIGINT"},
			{"account_id", tInt, "INT"},
			{"txn_amount", tMoney, "DECIMAL(12,2)"},
		},
		count: func(n int64) int64 { return n },
		gen: func(seed uint64, i int64, _ time.Time) []any {
			return []any{i, int32(pick(seed, i, 1, accounts)), cents(pick(seed, i, 2, 100_000))}
		},
	}
	w1 := &workload{
		id: "W1", title: "transaction_summary: GROUP BY account_id over transactions_table (100k accounts)",
		tables: []*table{txns}, main: txns, view: "transaction_summary",
		query: `SELECT account_id, COUNT(txn_id) txn_count, SUM(txn_amount) account_revenue
FROM transactions_table GROUP BY account_id`,
		key: "account_id",
		update: func(lo, hi int64) string {
			return fmt.Sprintf(`UPDATE transactions_table SET txn_amount = txn_amount + 1, account_id = (account_id + 1) %% %d WHERE txn_id >= %d AND txn_id < %d`, accounts, lo, hi)
		},
	}

	prods := &table{
		name: "products", pk: "product_id",
		cols: []column{
			{"product_id", tInt, "INT"},
			{"product_name", tText, "TEXT"},
			{"price", tMoney, "DECIMAL(10,2)"},
		},
		count: func(int64) int64 { return products },
		gen: func(seed uint64, i int64, _ time.Time) []any {
			return []any{int32(i), fmt.Sprintf("product %d", i), cents(100 + pick(seed, i, 3, 10_000))}
		},
	}
	orders := &table{
		name: "orders", pk: "order_id",
		cols: []column{
			{"order_id", tBigint, "BIGINT"},
			{"order_date", tDate, "DATE"},
			{"product_id", tInt, "INT"},
			{"quantity", tInt, "INT"},
		},
		count: func(n int64) int64 { return n },
		gen: func(seed uint64, i int64, _ time.Time) []any {
			return []any{i, epoch.AddDate(0, 0, int(pick(seed, i, 4, 365))), int32(pick(seed, i, 5, products)), int32(1 + pick(seed, i, 6, 5))}
		},
	}
	w2 := &workload{
		id: "W2", title: "cleaned_order_data: orders ⋈ products (10k products)",
		tables: []*table{prods, orders}, main: orders, view: "cleaned_order_data",
		query: `SELECT o.order_id, o.order_date, o.product_id, p.product_name, o.quantity, p.price, o.quantity * p.price AS revenue
FROM orders o INNER JOIN products p ON o.product_id = p.product_id`,
		key: "order_id",
		update: func(lo, hi int64) string {
			return fmt.Sprintf(`UPDATE orders SET quantity = quantity + 1, product_id = (product_id + 1) %% %d WHERE order_id >= %d AND order_id < %d`, products, lo, hi)
		},
	}

	// Transaction times grow with txn_id (one second apart) and an update
	// moves a row half a second later, so no two rows of an account tie.
	acct := &table{
		name: "account_txns", pk: "txn_id",
		cols: []column{
			{"txn_id", tBigint, "BIGINT"},
			{"account_id", tInt, "INT"},
			{"txn_ts", tTimestamptz, "TIMESTAMPTZ"},
			{"txn_amount", tMoney, "DECIMAL(12,2)"},
		},
		count: func(n int64) int64 { return n },
		gen: func(seed uint64, i int64, _ time.Time) []any {
			return []any{i, int32(pick(seed, i, 7, accounts)), epoch.Add(time.Duration(i) * time.Second), cents(pick(seed, i, 8, 100_000))}
		},
	}
	w3 := &workload{
		id: "W3", title: "latest_txn: row_number() OVER (PARTITION BY account_id ORDER BY txn_ts DESC) = 1",
		tables: []*table{acct}, main: acct, view: "latest_txn",
		query: `SELECT txn_id, account_id, txn_ts, txn_amount FROM account_txns
QUALIFY row_number() OVER (PARTITION BY account_id ORDER BY txn_ts DESC) = 1`,
		pgQuery: `SELECT txn_id, account_id, txn_ts, txn_amount FROM (
  SELECT txn_id, account_id, txn_ts, txn_amount,
         row_number() OVER (PARTITION BY account_id ORDER BY txn_ts DESC) AS rn
  FROM account_txns) t
WHERE rn = 1`,
		// A refresh reads only the touched accounts' rows through it
		// (PostgreSQL's REFRESH recomputes everything either way).
		sourceIndexes: []string{"CREATE INDEX account_txns_account ON account_txns (account_id)"},
		key:           "account_id",
		update: func(lo, hi int64) string {
			return fmt.Sprintf(`UPDATE account_txns SET txn_amount = txn_amount + 1, txn_ts = txn_ts + INTERVAL '500 milliseconds', account_id = (account_id + 1) %% %d WHERE txn_id >= %d AND txn_id < %d`, accounts, lo, hi)
		},
	}

	// Events lie on second 30 of a minute, spread over the two hours before
	// the minute they are written in: half are inside the view's one-hour
	// window, and rows leave it only when the clock passes second 30.
	events := &table{
		name: "raw_events", pk: "event_id",
		cols: []column{
			{"event_id", tBigint, "BIGINT"},
			{"event_time", tTimestamptz, "TIMESTAMPTZ"},
			{"device_id", tInt, "INT"},
			{"value", tMoney, "DECIMAL(10,2)"},
		},
		count: func(n int64) int64 { return n },
		gen: func(seed uint64, i int64, base time.Time) []any {
			at := base.Add(30*time.Second - time.Duration(pick(seed, i, 9, 120))*time.Minute)
			return []any{i, at, int32(pick(seed, i, 10, 1000)), cents(pick(seed, i, 11, 10_000))}
		},
	}
	w4 := &workload{
		id: "W4", title: "hourly_metrics: events per minute of the last hour (current_timestamp - INTERVAL '1 hour')",
		tables: []*table{events}, main: events, view: "hourly_metrics",
		query: `SELECT date_trunc('minute', event_time) AS minute, count(*) AS events
FROM raw_events WHERE event_time > current_timestamp - INTERVAL '1 hour' GROUP BY 1`,
		key: "minute",
		update: func(lo, hi int64) string {
			return fmt.Sprintf(`UPDATE raw_events SET value = value + 1, event_time = event_time + INTERVAL '1 minute' WHERE event_id >= %d AND event_id < %d`, lo, hi)
		},
		stable: func(t time.Time) time.Time {
			next := t.Truncate(time.Minute).Add(30 * time.Second)
			if !next.After(t) {
				next = next.Add(time.Minute)
			}
			return next
		},
	}
	return []*workload{w1, w2, w3, w4, queryWorkload(), tpchWorkload()}
}
