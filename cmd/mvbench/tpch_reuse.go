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
// A system's load is skipped when its row says this run's scale factor
// and seed, unchanged, and every table's row count is the generator's;
// otherwise that system alone is reset and loaded again (so a new
// mvserver data directory beside a kept PostgreSQL database loads only
// mvserver).

const tpchLoadedTable = "tpch_loaded"

// tpchLoadedDDL creates the marker on a system.
const tpchLoadedDDL = "CREATE TABLE " + tpchLoadedTable + " (id INT PRIMARY KEY, sf TEXT NOT NULL, seed TEXT NOT NULL, changed BOOLEAN NOT NULL)"

// loadKey is the marker's identity of the generated data.
func (r *tpchRun) loadKey() (sf, seed string) {
	return strconv.FormatFloat(r.b.cfg.sf, 'g', -1, 64), strconv.FormatUint(r.b.cfg.seed, 10)
}

// reusable reports whether s already holds this run's load, and if not,
// why (for the output).
func (r *tpchRun) reusable(ctx context.Context, s *system) (bool, string, error) {
	wantSF, wantSeed := r.loadKey()
	var sf, seed string
	var changed bool
	err := s.conn.QueryRow(ctx, "SELECT sf, seed, changed FROM "+tpchLoadedTable+" WHERE id = 1",
		pgx.QueryExecModeSimpleProtocol).Scan(&sf, &seed, &changed)
	switch {
	case err != nil:
		if s.conn.IsClosed() {
			return false, "", fmt.Errorf("%s: reading %s: %w", s.name, tpchLoadedTable, err)
		}
		return false, fmt.Sprintf("it holds no complete load (%s: %v)", tpchLoadedTable, err), nil
	case sf != wantSF || seed != wantSeed:
		return false, fmt.Sprintf("it holds SF %s seed %s, not SF %s seed %s", sf, seed, wantSF, wantSeed), nil
	case changed:
		return false, "its tables were changed by an earlier run's change batches", nil
	}
	for _, t := range tpchTables() {
		var n int64
		if err := s.conn.QueryRow(ctx, "SELECT count(*) FROM "+t.name, pgx.QueryExecModeSimpleProtocol).Scan(&n); err != nil {
			return false, fmt.Sprintf("count %s: %v", t.name, err), nil
		}
		if want := t.count(r.gen); n != want {
			return false, fmt.Sprintf("%s holds %d rows, not %d", t.name, n, want), nil
		}
	}
	return true, "", nil
}

// markLoaded records a complete load on systems.
func (r *tpchRun) markLoaded(ctx context.Context, systems []*system) error {
	sf, seed := r.loadKey()
	for _, s := range systems {
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

// dropViews drops the views a kept run left on s, every query's, so that
// this run's CREATE MATERIALIZED VIEW starts from nothing and no stale
// view is maintained through the change batches.
func (r *tpchRun) dropViews(ctx context.Context, s *system) error {
	var views []string
	for _, q := range tpchQueries(r.b.cfg.sf) {
		views = append(views, q.view())
	}
	_, err := s.exec(ctx, "DROP MATERIALIZED VIEW IF EXISTS "+strings.Join(views, ", "))
	return err
}

// prepare loads the tables on every system, or with --reuse on those
// that do not hold this run's load already. It returns the systems it
// reused.
func (r *tpchRun) prepare(ctx context.Context) ([]*system, error) {
	toLoad, reused := r.systems, []*system(nil)
	if r.b.cfg.reuse {
		toLoad = nil
		for _, s := range r.systems {
			ok, why, err := r.reusable(ctx, s)
			if err != nil {
				return nil, err
			}
			if ok {
				fmt.Fprintf(r.b.out, "\nload: %s: reused the tables an earlier run kept (SF %g, seed %d, unchanged, row counts match)", s.name, r.b.cfg.sf, r.b.cfg.seed)
				if err := r.dropViews(ctx, s); err != nil {
					return nil, err
				}
				reused = append(reused, s)
				continue
			}
			fmt.Fprintf(r.b.out, "\nload: %s: cannot reuse the kept tables (%s): loading again", s.name, why)
			if err := s.resetSchema(ctx); err != nil {
				return nil, err
			}
			toLoad = append(toLoad, s)
		}
		fmt.Fprintln(r.b.out)
	}
	for _, s := range reused {
		r.b.report.Config.LoadReused = append(r.b.report.Config.LoadReused, s.name)
	}
	if err := r.load(ctx, toLoad); err != nil {
		return nil, err
	}
	return reused, r.markLoaded(ctx, toLoad)
}
