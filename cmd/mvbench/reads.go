package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// readResult is a point-read measurement.
type readResult struct {
	queries  int64
	elapsed  time.Duration
	p50, p99 time.Duration
}

// viewKeys reads every key of the view, the keys point reads look up.
func viewKeys(ctx context.Context, s *system, w *workload) ([]any, error) {
	rows, err := s.conn.Query(ctx, "SELECT "+w.key+" FROM "+w.view)
	if err != nil {
		return nil, fmt.Errorf("%s: keys of %s: %w", s.name, w.view, err)
	}
	var keys []any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			rows.Close()
			return nil, err
		}
		keys = append(keys, v[0])
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: keys of %s: %w", s.name, w.view, err)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: view %s is empty: nothing to read", s.name, w.view)
	}
	return keys, nil
}

// pointReads runs clients connections for dur, each looking up random
// keys of the view with one prepared statement, and returns the queries
// done, TPS and latency percentiles.
func pointReads(ctx context.Context, s *system, w *workload, keys []any, clients int, dur time.Duration, seed uint64) (readResult, error) {
	query := "SELECT * FROM " + w.view + " WHERE " + w.key + " = $1"
	conns := make([]*pgx.Conn, clients)
	defer func() {
		for _, c := range conns {
			if c != nil {
				_ = c.Close(context.Background())
			}
		}
	}()
	for i := range conns {
		c, err := s.dial(ctx)
		if err != nil {
			return readResult{}, fmt.Errorf("%s: read client %d: %w", s.name, i, err)
		}
		conns[i] = c
		if _, err := c.Prepare(ctx, "point_read", query); err != nil {
			return readResult{}, fmt.Errorf("%s: prepare %q: %w", s.name, query, err)
		}
	}
	lat := make([][]time.Duration, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(dur)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			for time.Now().Before(deadline) {
				t0 := time.Now()
				rows, err := c.Query(ctx, "point_read", keys[rng.IntN(len(keys))])
				if err != nil {
					errs[i] = err
					return
				}
				for rows.Next() {
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					errs[i] = err
					return
				}
				lat[i] = append(lat[i], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return readResult{}, fmt.Errorf("%s: point reads of %s: %w", s.name, w.view, err)
	}
	all := slices.Concat(lat...)
	if len(all) == 0 {
		return readResult{}, fmt.Errorf("%s: no point read of %s finished in %v", s.name, w.view, dur)
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration { return all[min(len(all)-1, int(p*float64(len(all))))] }
	return readResult{queries: int64(len(all)), elapsed: elapsed, p50: pct(0.50), p99: pct(0.99)}, nil
}
