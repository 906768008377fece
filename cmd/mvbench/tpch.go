package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Workload T, derived from TPC-H: the specification's eight tables
// generated at --sf (tpch_gen.go) and loaded with COPY into every system,
// its 22 queries with their validation parameters (tpch_queries.go) run
// as a SELECT and as CREATE MATERIALIZED VIEW, each answer compared with
// PostgreSQL's, and with --refresh three change batches — RF1, RF2 and an
// UPDATE of prices, discounts and balances — each followed by a REFRESH
// of every view (on mvserver incremental where it can, then REFRESH …
// FULL; on PostgreSQL a full recompute). It is derived from TPC-H, not
// a TPC-H run: no power or throughput test, no audit, no check against
// the specification's answer set; its numbers compare the two systems on
// the same data and nothing more.

// Phases of workload T beyond report.go's.
const (
	phIndexes = "create_indexes" // the secondary indexes, after the load
	phSelect  = "select"         // a query as a plain SELECT
)

// Statement outcomes (Measurement.Status).
const (
	stOK      = "ok"
	stTimeout = "timeout"
	stError   = "error"
	stSkipped = "skipped"
)

// tpchIndexes are the secondary indexes both systems get after the load
// (primary keys come with the tables): the foreign keys the queries join
// and their correlated subqueries look up (Q2, Q17, Q20 and Q21 by part
// and supplier, Q13 and Q22 by customer), which a refresh also reads to
// join a change with the other tables.
var tpchIndexes = []string{
	"CREATE INDEX lineitem_part_supp ON lineitem (l_partkey, l_suppkey)",
	"CREATE INDEX lineitem_supp ON lineitem (l_suppkey)",
	"CREATE INDEX orders_cust ON orders (o_custkey)",
	"CREATE INDEX partsupp_supp ON partsupp (ps_suppkey)",
	"CREATE INDEX customer_nation ON customer (c_nationkey)",
	"CREATE INDEX supplier_nation ON supplier (s_nationkey)",
}

func tpchWorkload() *workload {
	return &workload{id: "T", title: "workload T, derived from TPC-H", run: runTPCH}
}

// tpchOutcome is one statement of workload T on one system.
type tpchOutcome struct {
	status string
	secs   float64
	print  resultPrint
	// printed: print holds the statement's rows (a SELECT) or the
	// view's after it.
	printed bool
	err     string // SQLSTATE and message, or why it was skipped
	// technique and why are an mvserver refresh's: refresh_history's
	// technique and the notice that explains it.
	technique, why string
}

func (o tpchOutcome) ok() bool { return o.status == stOK }

// tpchRun is one run of workload T.
type tpchRun struct {
	b       *bench
	w       *workload
	gen     *tpchGen
	systems []*system
	mv, pg  *system // pg is nil without --pg
	queries []tpchQuery
	timeout time.Duration
	// sel, create: per query, per system.
	sel, create map[string]map[string]tpchOutcome
	batches     []*tpchBatchResult
	// gaveUp: views whose mvserver refresh timed out; later batches do
	// not refresh them.
	gaveUp map[string]bool
}

// tpchBatchResult is one change batch and the refreshes after it.
type tpchBatchResult struct {
	name, what string
	dml        map[string]tpchOutcome
	// refresh[view][system]: REFRESH; full[view]: mvserver's REFRESH … FULL.
	refresh map[string]map[string]tpchOutcome
	full    map[string]tpchOutcome
}

func runTPCH(ctx context.Context, b *bench, systems []*system) error {
	gen, err := newTPCHGen(b.cfg.sf, b.cfg.seed)
	if err != nil {
		return err
	}
	r := &tpchRun{b: b, gen: gen, systems: systems, timeout: b.cfg.queryTimeout,
		sel: map[string]map[string]tpchOutcome{}, create: map[string]map[string]tpchOutcome{}, gaveUp: map[string]bool{}}
	r.w = &workload{id: "T", title: tpchWorkload().title}
	for _, s := range systems {
		if s.pg {
			r.pg = s
		} else {
			r.mv = s
		}
	}
	for _, q := range tpchQueries(b.cfg.sf) {
		if len(b.cfg.tpchQueries) == 0 || slices.Contains(b.cfg.tpchQueries, q.n) {
			r.queries = append(r.queries, q)
		}
	}
	out := b.out
	fmt.Fprintf(out, "\nT %s, at scale factor %g (its own generator and harness: no power or throughput test, no audit, no check against the specification's answer set)\n", r.w.title, b.cfg.sf)
	reused, err := r.prepare(ctx)
	if err != nil {
		return err
	}
	if len(reused) < len(systems) {
		r.printLoad(out)
	}
	for _, s := range systems {
		if _, err := s.exec(ctx, r.timeoutSQL()); err != nil {
			return err
		}
	}
	for _, q := range r.queries {
		if err := r.runQuery(ctx, q); err != nil {
			return err
		}
	}
	r.printQueries(out)
	if b.cfg.refresh {
		if err := r.markChanged(ctx); err != nil {
			return err
		}
		for _, batch := range r.changeBatches() {
			if err := r.runBatch(ctx, batch); err != nil {
				return err
			}
		}
		r.printRefreshes(out)
	}
	if b.inProc {
		if hwm := procStatusMiB("VmHWM:"); hwm > 0 {
			fmt.Fprintf(out, "\npeak resident memory (VmHWM) of mvbench with mvserver in process, after workload T: %.0f MiB\n", hwm)
		}
	}
	if !b.cfg.keep {
		for _, s := range systems {
			if err := s.resetSchema(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *tpchRun) timeoutSQL() string {
	return fmt.Sprintf("SET statement_timeout = %d", r.timeout.Milliseconds())
}

// load creates the tables on systems, loads them with COPY, checks their
// row counts, creates the secondary indexes and gathers statistics (the
// last two untimed in the ratios, as a user would do after a bulk load).
func (r *tpchRun) load(ctx context.Context, systems []*system) error {
	tables := tpchTables()
	for _, s := range systems {
		for _, t := range tables {
			if _, err := s.exec(ctx, t.createSQL()); err != nil {
				return err
			}
		}
		for _, t := range tables {
			want := t.count(r.gen)
			var el time.Duration
			err := r.b.phase(r.w, s, "COPY "+t.name, want, func(task *task) error {
				next := t.rows(r.gen)
				var n int64
				src := pgx.CopyFromFunc(func() ([]any, error) {
					row := next()
					if row != nil {
						if n++; n%4096 == 0 {
							task.add(4096)
						}
					}
					return row, nil
				})
				start := time.Now()
				got, err := s.conn.CopyFrom(ctx, pgx.Identifier{schema, t.name}, t.columnNames(), src)
				el = time.Since(start)
				if err != nil {
					return fmt.Errorf("%s: COPY %s: %w", s.name, t.name, err)
				}
				if got != want || n != want {
					return fmt.Errorf("%s: COPY %s wrote %d rows (%d generated), not %d", s.name, t.name, got, n, want)
				}
				return nil
			})
			if err != nil {
				return err
			}
			var count int64
			if err := s.conn.QueryRow(ctx, "SELECT count(*) FROM "+t.name, pgx.QueryExecModeSimpleProtocol).Scan(&count); err != nil {
				return fmt.Errorf("%s: count %s: %w", s.name, t.name, err)
			}
			if count != want {
				return fmt.Errorf("%s: %s holds %d rows after COPY, not %d", s.name, t.name, count, want)
			}
			r.b.record(Measurement{Workload: "T", System: s.name, Phase: phCopy, Variant: t.name, Rows: want, Seconds: el.Seconds(), Status: stOK})
		}
		var el time.Duration
		err := r.b.phase(r.w, s, "CREATE INDEX", 0, func(*task) error {
			var err error
			el, err = s.execAll(ctx, tpchIndexes)
			return err
		})
		if err != nil {
			return err
		}
		r.b.record(Measurement{Workload: "T", System: s.name, Phase: phIndexes, Seconds: el.Seconds(), Status: stOK, Note: strings.Join(tpchIndexes, "; ")})
		for _, t := range tables {
			stmt := "ANALYZE " + t.name
			if s.pg {
				stmt = "VACUUM ANALYZE " + t.name
			}
			if _, err := s.exec(ctx, stmt); err != nil {
				return err
			}
		}
	}
	return nil
}

// exec runs one statement of workload T under the per-statement timeout.
// With read it reads the rows and fingerprints them. A statement the
// server rejects, or stops at statement_timeout, is an outcome, not an
// error: the run goes on. The error is for what ends the run (a lost
// connection, the run's own context).
func (r *tpchRun) exec(ctx context.Context, s *system, sql string, read bool) (tpchOutcome, error) {
	// statement_timeout stops the statement on the server; the client's
	// own deadline, later, is for a server that does not.
	cctx, cancel := context.WithTimeout(ctx, r.timeout+30*time.Second)
	defer cancel()
	var o tpchOutcome
	start := time.Now()
	var err error
	if read {
		var rows pgx.Rows
		if rows, err = s.conn.Query(cctx, sql, pgx.QueryExecModeSimpleProtocol); err == nil {
			o.print, err = fingerprintRows(rows)
			o.printed = err == nil
		}
	} else {
		_, err = s.conn.Exec(cctx, sql, pgx.QueryExecModeSimpleProtocol)
	}
	o.secs = time.Since(start).Seconds()
	if err == nil {
		o.status = stOK
		return o, nil
	}
	o.printed = false
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "57014":
		o.status, o.err = stTimeout, fmt.Sprintf("57014: %s", pgErr.Message)
	case errors.As(err, &pgErr):
		o.status, o.err = stError, fmt.Sprintf("%s: %s", pgErr.Code, pgErr.Message)
	case ctx.Err() == nil && cctx.Err() != nil:
		o.status, o.err = stTimeout, fmt.Sprintf("no answer %v after the statement timeout; reconnected", 30*time.Second)
		if rerr := s.reconnect(ctx, r.timeoutSQL()); rerr != nil {
			return o, rerr
		}
	default:
		return o, fmt.Errorf("%s: %.120s: %w", s.name, sql, err)
	}
	if s.conn.IsClosed() {
		if rerr := s.reconnect(ctx, r.timeoutSQL()); rerr != nil {
			return o, rerr
		}
	}
	return o, nil
}

// viewPrint reads a view and fingerprints its rows into o.
func (r *tpchRun) viewPrint(ctx context.Context, s *system, view string, o *tpchOutcome) error {
	p, err := r.exec(ctx, s, "SELECT * FROM "+view, true)
	if err != nil {
		return err
	}
	if !p.ok() {
		o.status, o.err = p.status, "reading the view: "+p.err
		return nil
	}
	o.print, o.printed = p.print, true
	return nil
}

// measure records o as a measurement.
func (r *tpchRun) measure(s *system, phase, variant, batch string, o tpchOutcome) {
	m := Measurement{Workload: "T", System: s.name, Phase: phase, Variant: variant, Batch: batch, Seconds: o.secs,
		Status: o.status, Technique: o.technique, Note: o.err}
	if o.printed {
		m.Rows = o.print.rows
		m.Fingerprint, m.OrderedFingerprint = fmt.Sprintf("%016x", o.print.unordered), fmt.Sprintf("%016x", o.print.ordered)
		note := fmt.Sprintf("%d rows", o.print.rows)
		m.Note = strings.TrimPrefix(strings.Join([]string{o.err, note}, "; "), "; ")
	}
	if o.why != "" {
		m.Note = strings.TrimPrefix(m.Note+"; "+o.why, "; ")
	}
	r.b.record(m)
}

// runQuery runs q as a SELECT on every system, then as CREATE
// MATERIALIZED VIEW. A query whose SELECT timed out on a system is not
// made a view there: the view computes the same query.
func (r *tpchRun) runQuery(ctx context.Context, q tpchQuery) error {
	r.sel[q.name()], r.create[q.name()] = map[string]tpchOutcome{}, map[string]tpchOutcome{}
	for _, s := range r.systems {
		var o tpchOutcome
		err := r.b.phase(r.w, s, q.name()+" SELECT", 0, func(*task) error {
			var err error
			o, err = r.exec(ctx, s, q.sql, true)
			return err
		})
		if err != nil {
			return err
		}
		r.sel[q.name()][s.name] = o
		r.measure(s, phSelect, q.name(), "", o)
	}
	for _, s := range r.systems {
		var o tpchOutcome
		if r.sel[q.name()][s.name].status == stTimeout {
			o = tpchOutcome{status: stSkipped, err: "the SELECT timed out"}
		} else {
			err := r.b.phase(r.w, s, q.name()+" CREATE MATERIALIZED VIEW", 0, func(*task) error {
				var err error
				if o, err = r.exec(ctx, s, "CREATE MATERIALIZED VIEW "+q.view()+" AS "+q.sql, false); err != nil || !o.ok() {
					return err
				}
				return r.viewPrint(ctx, s, q.view(), &o)
			})
			if err != nil {
				return err
			}
		}
		s.takeNotices()
		r.create[q.name()][s.name] = o
		r.measure(s, phCreate, q.name(), "", o)
	}
	return nil
}

// tpchBatch is a change batch: its statements (one transaction) on every
// system.
type tpchBatch struct {
	name, what string
	stmts      []string
}

// changeBatches are the three batches of the refresh phase.
//   - RF1 (clause 2.5.2): SF × 1500 new orders, keys in the gaps of the
//     sparse key space, each with its 1–7 lineitems;
//   - RF2: deletes as many orders of the initial population, the lowest
//     keys, with their lineitems;
//   - UPDATE (not a TPC-H function): 0.1% of the parts' retail prices,
//     of partsupp's supply costs, of the orders' lineitems' discounts,
//     and of customers' and suppliers' account balances, each a key range
//     in the middle of its table. O_TOTALPRICE is not recomputed: no query
//     relies on it equalling its lineitems' sum.
func (r *tpchRun) changeBatches() []tpchBatch {
	g := r.gen
	n := g.refreshOrders()
	cfg := r.b.cfg
	var rf1 []string
	var orders, lines [][]any
	for i := range n {
		o := g.order(1, i)
		orders = append(orders, o.row)
		lines = append(lines, o.lines...)
	}
	rf1 = append(rf1, insertRows("orders", tpchOrderCols(), orders, cfg.insertBatch)...)
	rf1 = append(rf1, insertRows("lineitem", tpchLineitemCols(), lines, cfg.insertBatch)...)

	var rf2 []string
	for lo := int64(0); lo < n; lo += 1000 {
		var keys []string
		for i := lo; i < min(lo+1000, n); i++ {
			keys = append(keys, fmt.Sprint(sparseKey(i, 0)))
		}
		list := strings.Join(keys, ", ")
		rf2 = append(rf2, "DELETE FROM lineitem WHERE l_orderkey IN ("+list+")", "DELETE FROM orders WHERE o_orderkey IN ("+list+")")
	}

	mid := func(count int64) (int64, int64) {
		k := max(1, count/1000)
		lo := count/2 + 1
		return lo, lo + k - 1
	}
	pLo, pHi := mid(g.parts)
	cLo, cHi := mid(g.customers)
	sLo, sHi := mid(g.suppliers)
	oLo, oHi := mid(g.orders)
	upd := []string{
		fmt.Sprintf("UPDATE part SET p_retailprice = p_retailprice + 1.00 WHERE p_partkey BETWEEN %d AND %d", pLo, pHi),
		fmt.Sprintf("UPDATE partsupp SET ps_supplycost = ps_supplycost + 1.00 WHERE ps_partkey BETWEEN %d AND %d", pLo, pHi),
		fmt.Sprintf("UPDATE lineitem SET l_discount = CASE WHEN l_discount >= 0.05 THEN l_discount - 0.01 ELSE l_discount + 0.01 END WHERE l_orderkey BETWEEN %d AND %d",
			sparseKey(oLo-1, 0), sparseKey(oHi-1, 0)),
		fmt.Sprintf("UPDATE customer SET c_acctbal = c_acctbal + 100.00 WHERE c_custkey BETWEEN %d AND %d", cLo, cHi),
		fmt.Sprintf("UPDATE supplier SET s_acctbal = s_acctbal - 100.00 WHERE s_suppkey BETWEEN %d AND %d", sLo, sHi),
	}
	return []tpchBatch{
		{"RF1", fmt.Sprintf("%d new orders with their %d lineitems", n, len(lines)), rf1},
		{"RF2", fmt.Sprintf("%d orders deleted with their lineitems", n), rf2},
		{"UPDATE", fmt.Sprintf("0.1%% of prices (part %d, partsupp %d), discounts (the lineitems of %d orders) and balances (customer %d, supplier %d)",
			pHi-pLo+1, 4*(pHi-pLo+1), oHi-oLo+1, cHi-cLo+1, sHi-sLo+1), upd},
	}
}

// insertRows writes rows as INSERT … VALUES statements of at most per
// rows each.
func insertRows(table string, cols []column, rows [][]any, per int64) []string {
	var out []string
	for lo := 0; lo < len(rows); lo += int(per) {
		var sb strings.Builder
		sb.WriteString("INSERT INTO " + table + " VALUES ")
		for i, row := range rows[lo:min(lo+int(per), len(rows))] {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteByte('(')
			for c, v := range row {
				if c > 0 {
					sb.WriteByte(',')
				}
				appendLiteral(&sb, cols[c].typ, v)
			}
			sb.WriteByte(')')
		}
		out = append(out, sb.String())
	}
	return out
}

// runBatch applies a batch on every system (one transaction each), then
// refreshes every view that exists on mvserver: there REFRESH, then
// REFRESH … FULL; on PostgreSQL REFRESH. Each view is fingerprinted after
// each refresh.
func (r *tpchRun) runBatch(ctx context.Context, batch tpchBatch) error {
	res := &tpchBatchResult{name: batch.name, what: batch.what, dml: map[string]tpchOutcome{},
		refresh: map[string]map[string]tpchOutcome{}, full: map[string]tpchOutcome{}}
	r.batches = append(r.batches, res)
	for _, s := range r.systems {
		var el time.Duration
		err := r.b.phase(r.w, s, batch.name, 0, func(*task) error {
			var err error
			el, err = s.execAll(ctx, append(append([]string{"BEGIN"}, batch.stmts...), "COMMIT"))
			return err
		})
		if err != nil {
			return err
		}
		o := tpchOutcome{status: stOK, secs: el.Seconds()}
		res.dml[s.name] = o
		r.measure(s, phChange, batch.name, batch.name, o)
	}
	for _, q := range r.queries {
		v := q.view()
		if !r.create[q.name()][r.mv.name].ok() {
			continue
		}
		res.refresh[v] = map[string]tpchOutcome{}
		if r.gaveUp[v] {
			// A refresh of it timed out after an earlier batch: the view
			// is stale, and each further try would cost the timeout again.
			res.refresh[v][r.mv.name] = tpchOutcome{status: stSkipped, err: "an earlier refresh timed out"}
			continue
		}
		for _, s := range r.systems {
			if !r.create[q.name()][s.name].ok() {
				continue
			}
			o, err := r.refresh(ctx, s, v, "", batch.name)
			if err != nil {
				return err
			}
			res.refresh[v][s.name] = o
			r.measure(s, phRefresh, q.name(), batch.name, o)
			if s != r.mv {
				continue
			}
			if o.status == stTimeout {
				r.gaveUp[v] = true
				res.full[v] = tpchOutcome{status: stSkipped, err: "the REFRESH timed out"}
				continue
			}
			full, err := r.refresh(ctx, s, v, " FULL", batch.name)
			if err != nil {
				return err
			}
			if full.status == stTimeout {
				r.gaveUp[v] = true
			}
			res.full[v] = full
			r.measure(s, phRefreshFull, q.name(), batch.name, full)
		}
	}
	return nil
}

// refresh runs REFRESH MATERIALIZED VIEW view (with suffix " FULL":
// mvserver's full recompute) after batch, records mvserver's technique
// and reads the view. The phase's label names the batch, so
// --profile-phase 'REFRESH t_q21 after RF2' profiles that one refresh.
func (r *tpchRun) refresh(ctx context.Context, s *system, view, suffix, batch string) (tpchOutcome, error) {
	var o tpchOutcome
	err := r.b.phase(r.w, s, "REFRESH "+view+suffix+" after "+batch, 0, func(*task) error {
		s.takeNotices()
		var err error
		if o, err = r.exec(ctx, s, "REFRESH MATERIALIZED VIEW "+view+suffix, false); err != nil {
			return err
		}
		if !s.pg {
			for _, n := range s.takeNotices() {
				if why, ok := strings.CutPrefix(n, "refresh planned as "); ok {
					o.why = why
				}
			}
			run, err := s.lastRefresh(ctx, view)
			if err != nil {
				return err
			}
			o.technique = run.technique
			if o.ok() && run.status != "COMPLETED" {
				o.status, o.err = stError, fmt.Sprintf("refresh_history says %s: %s", run.status, run.errText)
			}
		}
		if !o.ok() {
			return nil
		}
		return r.viewPrint(ctx, s, view, &o)
	})
	return o, err
}

// match says whether two outcomes' rows agree: "same", "same rows, other
// order" (only when ordered), or how they differ; "" when either has no
// rows to compare.
func match(a, b tpchOutcome, ordered bool) string {
	if !a.printed || !b.printed {
		return ""
	}
	switch {
	case a.print.rows != b.print.rows:
		return fmt.Sprintf("DIFFERENT: %d rows vs %d", a.print.rows, b.print.rows)
	case a.print.unordered != b.print.unordered:
		return "DIFFERENT values"
	case ordered && a.print.ordered != b.print.ordered:
		return "same rows, other order"
	}
	return "same"
}

// cell is an outcome's table cell: its time, or what became of it.
func cell(o tpchOutcome, present bool) string {
	switch {
	case !present:
		return ""
	case o.status == stOK:
		return fmtDur(o.secs)
	case o.status == stError:
		return "error " + strings.SplitN(o.err, ":", 2)[0]
	}
	return o.status
}

// ratioCell is a/b's time ratio when both finished.
func ratioCell(a, b tpchOutcome, okA, okB bool) (string, float64) {
	if !okA || !okB || !a.ok() || !b.ok() || b.secs <= 0 {
		return "", 0
	}
	x := a.secs / b.secs
	return fmtRatio(x), x
}

func geomean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var s float64
	for _, x := range xs {
		s += math.Log(x)
	}
	return math.Exp(s / float64(len(xs)))
}

func (r *tpchRun) printLoad(out io.Writer) {
	var tables []string
	for _, t := range tpchTables() {
		tables = append(tables, t.name)
	}
	t := [][]string{{"load (COPY)", "rows", "mvserver", "postgres", "ratio"}}
	var totals [2]float64
	var rows int64
	for _, name := range tables {
		row := []string{name, "", "", "", ""}
		var secs [2]float64
		for i, sys := range []string{sysMV, sysPG} {
			if m := r.b.report.findT(sys, phCopy, name, ""); m != nil {
				row[1], row[2+i] = fmt.Sprint(m.Rows), fmtDur(m.Seconds)
				secs[i] = m.Seconds
				totals[i] += m.Seconds
				if i == 0 {
					rows += m.Rows
				}
			}
		}
		if secs[1] > 0 {
			row[4] = fmtRatio(secs[0] / secs[1])
		}
		t = append(t, row)
	}
	total := []string{"all eight", fmt.Sprint(rows), fmtDur(totals[0]), "", ""}
	if totals[1] > 0 {
		total[3], total[4] = fmtDur(totals[1]), fmtRatio(totals[0]/totals[1])
	}
	t = append(t, total)
	ix := []string{"secondary indexes", "", "", "", ""}
	for i, sys := range []string{sysMV, sysPG} {
		if m := r.b.report.findT(sys, phIndexes, "", ""); m != nil {
			ix[2+i] = fmtDur(m.Seconds)
		}
	}
	t = append(t, ix)
	fmt.Fprintln(out)
	printAligned(out, t, map[int]bool{0: true})
	fmt.Fprintf(out, "secondary indexes on both systems: %s\n", strings.Join(tpchIndexes, "; "))
}

func (r *tpchRun) printQueries(out io.Writer) {
	hasPG := r.pg != nil
	t := [][]string{{"query", "rows", "SELECT mv", "SELECT pg", "ratio", "match", "CREATE MV mv", "CREATE MV pg", "ratio", "match"}}
	var selRatios, mvRatios []float64
	var notes []string
	var timeouts, errs []string
	for _, q := range r.queries {
		sel, cr := r.sel[q.name()], r.create[q.name()]
		mvS, pgS := sel[sysMV], sel[sysPG]
		mvC, pgC := cr[sysMV], cr[sysPG]
		rows := ""
		if pgS.printed {
			rows = fmt.Sprint(pgS.print.rows)
		} else if mvS.printed {
			rows = fmt.Sprint(mvS.print.rows)
		}
		sr, sx := ratioCell(mvS, pgS, true, hasPG)
		cr2, cx := ratioCell(mvC, pgC, true, hasPG)
		if sx > 0 {
			selRatios = append(selRatios, sx)
		}
		if cx > 0 {
			mvRatios = append(mvRatios, cx)
		}
		t = append(t, []string{q.name(), rows, cell(mvS, true), cell(pgS, hasPG), sr, match(mvS, pgS, q.ordered),
			cell(mvC, true), cell(pgC, hasPG), cr2, match(mvC, pgC, false)})
		for _, x := range []struct {
			what string
			sys  string
			o    tpchOutcome
		}{{"SELECT", sysMV, mvS}, {"SELECT", sysPG, pgS}, {"CREATE MATERIALIZED VIEW", sysMV, mvC}, {"CREATE MATERIALIZED VIEW", sysPG, pgC}} {
			if x.o.status == stError || x.o.status == stTimeout {
				notes = append(notes, fmt.Sprintf("  %s %s %s: %.200s", q.name(), x.sys, x.what, x.o.err))
			}
		}
		if mvS.status == stTimeout {
			timeouts = append(timeouts, q.name())
		}
		if mvS.status == stError {
			errs = append(errs, q.name())
		}
	}
	fmt.Fprintln(out)
	printAligned(out, t, map[int]bool{0: true, 5: true, 9: true})
	fmt.Fprintf(out, "ratio = mvserver time / PostgreSQL time; match compares the rows' fingerprints (numbers to 12 significant digits; in order where the query has ORDER BY; a view's rows as a bag)\n")
	if hasPG {
		fmt.Fprintf(out, "geometric mean of the ratios: SELECT %s over %d of %d queries, CREATE MATERIALIZED VIEW %s over %d (queries both systems answered)\n",
			fmtRatio(geomean(selRatios)), len(selRatios), len(r.queries), fmtRatio(geomean(mvRatios)), len(mvRatios))
	}
	fmt.Fprintf(out, "mvserver SELECT timed out (%v) on %d: %s; failed on %d: %s\n", r.timeout, len(timeouts), strings.Join(timeouts, " "), len(errs), strings.Join(errs, " "))
	if len(notes) > 0 {
		fmt.Fprintln(out, "errors and timeouts:")
		for _, n := range notes {
			fmt.Fprintln(out, n)
		}
	}
}

func (r *tpchRun) printRefreshes(out io.Writer) {
	hasPG := r.pg != nil
	whys := map[string][]string{} // why mvserver recomputed a view in full
	for _, bt := range r.batches {
		fmt.Fprintf(out, "\n%s: %s\n", bt.name, bt.what)
		mvD, pgD := bt.dml[sysMV], bt.dml[sysPG]
		dr, _ := ratioCell(mvD, pgD, true, hasPG)
		fmt.Fprintf(out, "DML (one transaction): mvserver %s", cell(mvD, true))
		if hasPG {
			fmt.Fprintf(out, ", postgres %s, ratio %s", cell(pgD, true), dr)
		}
		fmt.Fprintln(out)
		t := [][]string{{"view", "REFRESH mv", "technique", "REFRESH pg", "ratio", "match", "FULL mv", "inc/full", "full/pg", "match"}}
		var incPG, incFull, fullPG []float64
		var notes []string
		for _, q := range r.queries {
			v := q.view()
			ref, ok := bt.refresh[v]
			if !ok {
				continue
			}
			mvR, pgR := ref[sysMV], ref[sysPG]
			_, pgHas := ref[sysPG]
			full := bt.full[v]
			a, ax := ratioCell(mvR, pgR, true, pgHas)
			f, fx := ratioCell(mvR, full, true, true)
			p, px := ratioCell(full, pgR, true, pgHas)
			for _, x := range []struct {
				xs *[]float64
				x  float64
			}{{&incPG, ax}, {&incFull, fx}, {&fullPG, px}} {
				if x.x > 0 {
					*x.xs = append(*x.xs, x.x)
				}
			}
			t = append(t, []string{v, cell(mvR, true), mvR.technique, cell(pgR, pgHas), a, match(mvR, pgR, false), cell(full, true), f, p, match(full, pgR, false)})
			for _, x := range []struct {
				what string
				o    tpchOutcome
			}{{"mvserver REFRESH", mvR}, {"mvserver REFRESH FULL", full}, {"postgres REFRESH", pgR}} {
				if x.o.status == stError || x.o.status == stTimeout || (x.o.status == stSkipped && x.what == "mvserver REFRESH") {
					notes = append(notes, fmt.Sprintf("  %s %s: %s %.200s", v, x.what, x.o.status, x.o.err))
				}
			}
			if mvR.ok() && mvR.technique == "FULL_RECOMPUTE" && mvR.why != "" && !slices.Contains(whys[v], mvR.why) {
				whys[v] = append(whys[v], mvR.why)
			}
		}
		printAligned(out, t, map[int]bool{0: true, 2: true, 5: true, 9: true})
		fmt.Fprintf(out, "geometric means: incremental / PostgreSQL %s (%d views), incremental / own FULL %s (%d), FULL / PostgreSQL %s (%d)\n",
			fmtRatio(geomean(incPG)), len(incPG), fmtRatio(geomean(incFull)), len(incFull), fmtRatio(geomean(fullPG)), len(fullPG))
		if len(notes) > 0 {
			fmt.Fprintln(out, "errors and timeouts:")
			for _, n := range notes {
				fmt.Fprintln(out, n)
			}
		}
	}
	if len(whys) > 0 {
		fmt.Fprintln(out, "\nwhy mvserver's REFRESH recomputed a view in full (its notice):")
		for _, q := range r.queries {
			for _, why := range whys[q.view()] {
				fmt.Fprintf(out, "  %s: %s\n", q.view(), why)
			}
		}
	}
}

// findT is workload T's measurement of sys, phase, variant after batch.
func (r *Report) findT(sys, phase, variant, batch string) *Measurement {
	for i := range r.Measurements {
		m := &r.Measurements[i]
		if m.Workload == "T" && m.System == sys && m.Phase == phase && m.Variant == variant && m.Batch == batch {
			return m
		}
	}
	return nil
}
