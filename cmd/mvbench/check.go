package main

import (
	"context"
	"fmt"
	"time"
)

// compareView counts, in one statement (one snapshot, one
// current_timestamp), the rows the view has that its query does not
// (extra) and those it lacks (missing), as bags.
func compareView(ctx context.Context, s *system, w *workload) (extra, missing int64, err error) {
	q := w.queryFor(s.pg)
	sql := fmt.Sprintf(`SELECT (SELECT count(*) FROM (TABLE %[1]s EXCEPT ALL (%[2]s)) x),
       (SELECT count(*) FROM ((%[2]s) EXCEPT ALL TABLE %[1]s) y)`, w.view, q)
	if err := s.conn.QueryRow(ctx, sql).Scan(&extra, &missing); err != nil {
		return 0, 0, fmt.Errorf("%s: compare %s with its query: %w", s.name, w.view, err)
	}
	return extra, missing, nil
}

// checkView verifies the view equals its query. since is when the refresh
// being checked started. A view whose query depends on the clock
// (w.stable) is compared only if the comparison ends before the answer of
// its query can change; otherwise it is refreshed again (after the change
// instant) and compared, a few times at most.
func checkView(ctx context.Context, s *system, w *workload, since time.Time) error {
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if attempt == 4 {
				return fmt.Errorf("%s: %s: could not compare within one interval of its time filter", s.name, w.view)
			}
			// Leave a margin before the next change instant.
			if next := w.stable(time.Now()); time.Until(next) < 3*time.Second {
				if err := sleepCtx(ctx, time.Until(next)+100*time.Millisecond); err != nil {
					return err
				}
			}
			since = time.Now()
			if _, err := s.exec(ctx, "REFRESH MATERIALIZED VIEW "+w.view); err != nil {
				return err
			}
		}
		extra, missing, err := compareView(ctx, s, w)
		if err != nil {
			return err
		}
		if w.stable != nil && !time.Now().Before(w.stable(since)) {
			continue // the query's answer may have moved meanwhile
		}
		if extra != 0 || missing != 0 {
			return fmt.Errorf("%s: view %s differs from its query: %d rows too many, %d missing", s.name, w.view, extra, missing)
		}
		return nil
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
