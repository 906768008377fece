package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/catalog"
)

// BenchmarkIVMRefresh measures refreshes of the seeds' two views — the
// transaction_summary aggregate and the orders ⋈ products join — after
// 1, 1k, 10k and 100k changed source rows (inserts, then a mix of updates
// and deletes): the refresh the cost model picks against a full recompute
// of the same content (issue 5's benchmark; ratios, not absolute times).
// MVSERVER_BENCH_ROWS sets the source size, MVSERVER_BENCH_CHANGES the
// change sizes (comma list), MVSERVER_BENCH_VIEWS the views (comma list).
//
//	go test -run X -bench IVMRefresh -benchtime 1x -v ./app
//	MVSERVER_BENCH_ROWS=10000000 go test -run X -bench IVMRefresh -benchtime 1x -timeout 2h -v ./app
func BenchmarkIVMRefresh(b *testing.B) {
	rows := 1_000_000
	if s := os.Getenv("MVSERVER_BENCH_ROWS"); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	srv, err := Start(Config{Logger: slog.New(slog.DiscardHandler), DataDir: b.TempDir(), Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 10, TableDefaults: catalog.AllOn})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Shutdown(5 * time.Second)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "postgres://bench@"+srv.Addr().String()+"/mvserver?sslmode=disable")
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	run := func(q string) time.Duration {
		start := time.Now()
		if _, err := conn.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
			b.Fatalf("%.200s: %v", q, err)
		}
		return time.Since(start)
	}
	run(`CREATE TABLE transactions_table (txn_id BIGINT PRIMARY KEY, account_id INT, txn_amount DECIMAL(12,2))`)
	run(`CREATE TABLE orders (order_id BIGINT PRIMARY KEY, order_date DATE, product_id INT, quantity INT)`)
	run(`CREATE TABLE products (product_id INT PRIMARY KEY, product_name STRING, price DECIMAL(10,2))`)
	const products, accounts = 1000, 10000
	insert := func(table string, from, to int, row func(i int) string) time.Duration {
		return insertRows(run, table, from, to, row)
	}
	txnRow := func(i int) string { return fmt.Sprintf("(%d,%d,%d.%02d)", i, i*7919%accounts, i%1000, i%100) }
	orderRow := func(i int) string {
		return fmt.Sprintf("(%d,DATE '2025-01-01' + %d,%d,%d)", i, i%365, i*31%products, 1+i%5)
	}
	insert("products", 0, products, func(i int) string { return fmt.Sprintf("(%d,'product %d',%d.%02d)", i, i, 1+i%50, i%100) })
	views := []string{"transaction_summary", "cleaned_order_data"}
	if s := os.Getenv("MVSERVER_BENCH_VIEWS"); s != "" {
		views = strings.Split(s, ",")
	}
	want := func(v string) bool {
		for _, x := range views {
			if x == v {
				return true
			}
		}
		return false
	}
	var load time.Duration
	loaded := 0
	if want("transaction_summary") {
		load += insert("transactions_table", 0, rows, txnRow)
		loaded += rows
	}
	if want("cleaned_order_data") {
		load += insert("orders", 0, rows, orderRow)
		loaded += rows
	}
	b.Logf("loaded %d rows in %v (%.0f rows/s)", loaded, load.Round(time.Millisecond), float64(loaded)/load.Seconds())
	run(`CREATE MATERIALIZED VIEW transaction_summary AS
SELECT account_id, COUNT(txn_id) txn_count, SUM(txn_amount) account_revenue
FROM transactions_table GROUP BY account_id`)
	run(`CREATE MATERIALIZED VIEW cleaned_order_data AS
SELECT o.order_id, o.order_date, o.product_id, p.product_name, o.quantity, p.price, o.quantity * p.price AS revenue
FROM orders o INNER JOIN products p ON o.product_id = p.product_id`)
	technique := func(view string) string {
		var t string
		if err := conn.QueryRow(ctx, `SELECT technique FROM refresh_history WHERE view_name = '`+view+`' ORDER BY start_time DESC LIMIT 1`, pgx.QueryExecModeSimpleProtocol).Scan(&t); err != nil {
			b.Fatal(err)
		}
		return t
	}
	sizes := []int{1, 1000, 10000, 100000}
	if s := os.Getenv("MVSERVER_BENCH_CHANGES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, _ := strconv.Atoi(f)
			sizes = append(sizes, n)
		}
	}
	next := rows
	// A full recompute costs about the same whatever changed: measured
	// once per view and kind of change.
	fulls := map[string]time.Duration{}
	b.ResetTimer()
	for b.Loop() {
		for _, kind := range []string{"inserts", "updates+deletes"} {
			mixAt := next // each mixed batch takes its own range of ids, downwards
			for _, n := range sizes {
				if n > rows/2 {
					continue
				}
				if kind == "inserts" {
					if want("transaction_summary") {
						insert("transactions_table", next, next+n, txnRow)
					}
					if want("cleaned_order_data") {
						insert("orders", next, next+n, orderRow)
					}
					next += n
				} else {
					// half updates (amounts, quantities, group and join keys), half deletes
					lo := mixAt - n
					mixAt = lo
					run(fmt.Sprintf(`UPDATE transactions_table SET txn_amount = txn_amount + 1, account_id = account_id + 1 WHERE txn_id >= %d AND txn_id < %d`, lo, lo+n/2+n%2))
					run(fmt.Sprintf(`DELETE FROM transactions_table WHERE txn_id >= %d AND txn_id < %d`, lo+n/2+n%2, lo+n))
					run(fmt.Sprintf(`UPDATE orders SET quantity = quantity + 1, product_id = (product_id + 1) %% %d WHERE order_id >= %d AND order_id < %d`, products, lo, lo+n/2+n%2))
					run(fmt.Sprintf(`DELETE FROM orders WHERE order_id >= %d AND order_id < %d`, lo+n/2+n%2, lo+n))
				}
				for _, v := range views {
					inc := run(`REFRESH MATERIALIZED VIEW ` + v)
					tech := technique(v)
					full, ok := fulls[v+kind]
					if !ok {
						full = run(`REFRESH MATERIALIZED VIEW ` + v + ` FULL`)
						fulls[v+kind] = full
					}
					b.Logf("%-20s %-16s %7d rows changed: %-17s %9v   full %9v   ratio 1/%.0f",
						v, kind, n, tech, inc.Round(time.Microsecond*100), full.Round(time.Millisecond), full.Seconds()/inc.Seconds())
				}
			}
		}
	}
}

// BenchmarkIVMRefreshDelta repeats one incremental refresh of a seed view
// after MVSERVER_BENCH_CHANGES (default 1000) changed source rows — half
// updates (moving rows between groups or join partners), half deletes, or
// inserts with MVSERVER_BENCH_KIND=inserts — over MVSERVER_BENCH_ROWS
// (default 200k) rows. Only the REFRESH is timed, so a CPU profile
// focused on refresh shows its fixed costs:
//
//	MVSERVER_BENCH_VIEWS=transaction_summary go test -run X -bench IVMRefreshDelta -cpuprofile /tmp/inc.prof ./app
func BenchmarkIVMRefreshDelta(b *testing.B) {
	d := 1000
	if s := os.Getenv("MVSERVER_BENCH_CHANGES"); s != "" {
		d, _ = strconv.Atoi(s)
	}
	inserts := os.Getenv("MVSERVER_BENCH_KIND") == "inserts"
	sv := loadSeedView(b)
	next, lo := sv.rows, sv.rows
	for b.Loop() {
		b.StopTimer()
		if inserts {
			sv.insert(sv.table, next, next+d, sv.row)
			next += d
		} else {
			lo -= d
			if lo < 0 {
				b.Fatal("ran out of rows to change")
			}
			sv.run(sv.update(lo, lo+d/2))
			sv.run(fmt.Sprintf(`DELETE FROM %s WHERE %s >= %d AND %s < %d`, sv.table, sv.key, lo+d/2, sv.key, lo+d))
		}
		b.StartTimer()
		sv.run(`REFRESH MATERIALIZED VIEW ` + sv.view)
	}
}

// BenchmarkIVMRefreshFull repeats REFRESH … FULL of a seed view over
// MVSERVER_BENCH_ROWS (default 200k) rows (MVSERVER_BENCH_VIEWS picks
// the view, as for BenchmarkIVMRefreshDelta); nothing changes between
// refreshes, so each recomputes everything and writes nothing.
func BenchmarkIVMRefreshFull(b *testing.B) {
	sv := loadSeedView(b)
	for b.Loop() {
		sv.run(`REFRESH MATERIALIZED VIEW ` + sv.view + ` FULL`)
	}
}

// seedView is a loaded seed workload for the refresh benchmarks.
type seedView struct {
	view, table, key string
	rows             int
	run              func(string)
	insert           func(table string, from, to int, row func(int) string)
	row              func(int) string
	update           func(lo, hi int) string
}

func loadSeedView(b *testing.B) *seedView {
	rows := 200_000
	if s := os.Getenv("MVSERVER_BENCH_ROWS"); s != "" {
		rows, _ = strconv.Atoi(s)
	}
	view := "transaction_summary"
	if s := os.Getenv("MVSERVER_BENCH_VIEWS"); s != "" {
		view = s
	}
	srv, err := Start(Config{Logger: slog.New(slog.DiscardHandler), DataDir: b.TempDir(), Listen: "127.0.0.1:0", Database: "mvserver", MaxConnections: 10, TableDefaults: catalog.AllOn})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Shutdown(5 * time.Second) })
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, "postgres://bench@"+srv.Addr().String()+"/mvserver?sslmode=disable")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(ctx) })
	run := func(q string) {
		if _, err := conn.Exec(ctx, q, pgx.QueryExecModeSimpleProtocol); err != nil {
			b.Fatalf("%.200s: %v", q, err)
		}
	}
	const products, accounts = 10000, 100000
	table, query := "transactions_table", `SELECT account_id, COUNT(txn_id) txn_count, SUM(txn_amount) account_revenue
FROM transactions_table GROUP BY account_id`
	row := func(i int) string { return fmt.Sprintf("(%d,%d,%d.%02d)", i, i*7919%accounts, i%1000, i%100) }
	update := func(lo, hi int) string {
		return fmt.Sprintf(`UPDATE transactions_table SET txn_amount = txn_amount + 1, account_id = (account_id + 1) %% %d WHERE txn_id >= %d AND txn_id < %d`, accounts, lo, hi)
	}
	run(`CREATE TABLE transactions_table (txn_id BIGINT PRIMARY KEY, account_id INT, txn_amount DECIMAL(12,2))`)
	if view == "cleaned_order_data" {
		table, query = "orders", `SELECT o.order_id, o.order_date, o.product_id, p.product_name, o.quantity, p.price, o.quantity * p.price AS revenue
FROM orders o INNER JOIN products p ON o.product_id = p.product_id`
		row = func(i int) string {
			return fmt.Sprintf("(%d,DATE '2025-01-01' + %d,%d,%d)", i, i%365, i*31%products, 1+i%5)
		}
		update = func(lo, hi int) string {
			return fmt.Sprintf(`UPDATE orders SET quantity = quantity + 1, product_id = (product_id + 1) %% %d WHERE order_id >= %d AND order_id < %d`, products, lo, hi)
		}
		run(`CREATE TABLE orders (order_id BIGINT PRIMARY KEY, order_date DATE, product_id INT, quantity INT)`)
		run(`CREATE TABLE products (product_id INT PRIMARY KEY, product_name STRING, price DECIMAL(10,2))`)
	}
	insert := func(table string, from, to int, row func(i int) string) {
		insertRows(func(q string) time.Duration { run(q); return 0 }, table, from, to, row)
	}
	if view == "cleaned_order_data" {
		insert("products", 0, products, func(i int) string { return fmt.Sprintf("(%d,'product %d',%d.%02d)", i, i, 1+i%50, i%100) })
	}
	insert(table, 0, rows, row)
	run(`CREATE MATERIALIZED VIEW ` + view + ` AS ` + query)
	key := "txn_id"
	if table == "orders" {
		key = "order_id"
	}
	return &seedView{view: view, table: table, key: key, rows: rows, run: run, insert: insert, row: row, update: update}
}

// insertRows writes rows [from, to) of table through run, 5000 to an
// INSERT … VALUES statement, and returns the statements' total time.
func insertRows(run func(string) time.Duration, table string, from, to int, row func(i int) string) time.Duration {
	var total time.Duration
	const per = 5000
	var sb strings.Builder
	for base := from; base < to; base += per {
		sb.Reset()
		sb.WriteString("INSERT INTO " + table + " VALUES ")
		for i := base; i < min(base+per, to); i++ {
			if i > base {
				sb.WriteByte(',')
			}
			sb.WriteString(row(i))
		}
		total += run(sb.String())
	}
	return total
}
