package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// Reusing a kept load (--reuse). A load of workload T at SF 1 takes
// minutes on each system; --reuse with --data-dir skips it when the
// tables a kept run left behind hold exactly what this run would load.
// Each system keeps a one-row table, tpch_loaded, written once the load,
// its indexes and its statistics are complete: the scale factor and seed
// of the generated data, and whether a change batch has run since (the
// batches rewrite rows, so that data is not the generator's any more).
// The load is skipped only when every system's row says this run's scale
// factor and seed, unchanged, and every table's row count is the
// generator's. Otherwise both systems are reloaded from scratch.

const tpchLoadedTable = "tpch_loaded"

// tpchLoadedDDL creates the marker on a system.
const tpchLoadedDDL = "CREATE TABLE " + tpchLoadedTable + " (id INT PRIMARY KEY, sf TEXT NOT NULL, seed TEXT NOT NULL, changed BOOLEAN NOT NULL)"

// loadKey is the marker's identity of the generated data.
func (r *tpchRun) loadKey() (sf, seed string) {
	return strconv.FormatFloat(r.b.cfg.sf, 'g', -1, 64), strconv.FormatUint(r.b.cfg.seed, 10)
}

// reusable reports whether every system already holds this run's load,
// and if not, why (for the output).
func (r *tpchRun) reusable(ctx context.Context) (bool, string, error) {
	wantSF, wantSeed := r.loadKey()
	for _, s := range r.systems {
		var sf, seed string
		var changed bool
		err := s.conn.QueryRow(ctx, "SELECT sf, seed, changed FROM "+tpchLoadedTable+" WHERE id = 1",
			pgx.QueryExecModeSimpleProtocol).Scan(&sf, &seed, &changed)
		switch {
		case err != nil:
			if s.conn.IsClosed() {
				return false, "", fmt.Errorf("%s: reading %s: %w", s.name, tpchLoadedTable, err)
			}
			return false, fmt.Sprintf("%s holds no complete load (%s: %v)", s.name, tpchLoadedTable, err), nil
		case sf != wantSF || seed != wantSeed:
			return false, fmt.Sprintf("%s holds SF %s seed %s, not SF %s seed %s", s.name, sf, seed, wantSF, wantSeed), nil
		case changed:
			return false, fmt.Sprintf("%s's tables were changed by an earlier run's change batches", s.name), nil
		}
		for _, t := range tpchTables() {
			var n int64
			if err := s.conn.QueryRow(ctx, "SELECT count(*) FROM "+t.name, pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
				return false, fmt.Sprintf("%s: count %s: %v", s.name, t.name, err), nil
			}
			if want := t.count(r.gen); n != want {
				return false, fmt.Sprintf("%s: %s holds %d rows, not %d", s.name, t.name, n, want), nil
			}
		}
	}
	return true, "", nil
}

// markLoaded records a complete load on every system.
func (r *tpchRun) markLoaded(ctx context.Context) error {
	sf, seed := r.loadKey()
	for _, s := range r.systems {
		if _, err := s.execAll(ctx, []string{"DROP TABLE IF EXISTS " + tpchLoadedTable, tpchLoadedDDL,
			fmt.Sprintf("INSERT INTO %s VALUES (1, '%s', '%s', false)", tpchLoadedTable, sf, seed)}); err != nil {
			return err
		}
	}
	return nil
}

// markChanged records, before the first change batch, that the tables
// will no longer be the generator's.
func (r *tpchRun) markChanged(ctx context.Context) error {
	for _, s := range r.systems {
		if _, err := s.exec(ctx, "UPDATE "+tpchLoadedTable+" SET changed = true"); err != nil {
			return err
		}
	}
	return nil
}

// dropViews drops the views a kept run left, every query's, so that this
// run's CREATE MATERIALIZED VIEW starts from nothing and no stale view is
// maintained through the change batches.
func (r *tpchRun) dropViews(ctx context.Context) error {
	var views []string
	for _, q := range tpchQueries(r.b.cfg.sf) {
		views = append(views, q.view())
	}
	for _, s := range r.systems {
		if _, err := s.exec(ctx, "DROP MATERIALIZED VIEW IF EXISTS "+strings.Join(views, ", ")); err != nil {
			return err
		}
	}
	return nil
}

// prepare loads the tables, or with --reuse keeps the ones already there
// when they are this run's load. It reports whether it reused them.
func (r *tpchRun) prepare(ctx context.Context) (bool, error) {
	if r.b.cfg.reuse {
		ok, why, err := r.reusable(ctx)
		if err != nil {
			return false, err
		}
		if ok {
			r.b.report.Config.LoadReused = true
			fmt.Fprintf(r.b.out, "\nload: reused the tables kept by an earlier run (SF %g, seed %d, unchanged, row counts match on every system)\n", r.b.cfg.sf, r.b.cfg.seed)
			return true, r.dropViews(ctx)
		}
		fmt.Fprintf(r.b.out, "\nload: cannot reuse the kept tables (%s): loading again\n", why)
		for _, s := range r.systems {
			if err := s.resetSchema(ctx); err != nil {
				return false, err
			}
		}
	}
	if err := r.load(ctx); err != nil {
		return false, err
	}
	return false, r.markLoaded(ctx)
}
