// Package scheduler makes materialized views refresh on their own (SPEC §5):
// SCHEDULE EVERY n HOURS|DAYS|WEEKS and Quartz CRON '…' [AT TIME ZONE 'tz']
// (R-S2), TRIGGER ON UPDATE [AT MOST EVERY …] with its limits (R-S3),
// per-run timeouts (R-S4), CANCEL REFRESH (R-S5), start-up catch-up (R-S8)
// and performance-mode priority (R-S9). It owns the run queue that manual
// refreshes share with scheduled and triggered ones. It does not refresh,
// record history or notify: it calls the RunFunc it is handed, which does.
//
// How the server drives it:
//
//  1. At start: New, then Upsert every view with a schedule or trigger with
//     CatchUp set and LastRun = the start of its last refresh, then Start.
//  2. CREATE / ALTER … SCHEDULE | TRIGGER / CREATE OR REPLACE: Upsert (it
//     validates and takes effect at once). DROP: Remove.
//  3. Storage's commit hook: Committed. A refresh that committed rows:
//     Refreshed (chains; the view's own commit through Committed works too).
//  4. REFRESH: RunNow. CANCEL REFRESH: Cancel. DESCRIBE EXTENDED: NextRun.
//  5. Shutdown: Stop.
//
// Quartz is translated for robfig/cron field by field: `?` → `*`; month and
// day names → numbers; day-of-week 1–7 (1 = Sunday) → robfig's 0–6; ranges
// and steps keep their form (Quartz `2/3` on day-of-week, Mon and Thu, is
// robfig's `1/3`); the optional year field is a filter applied around
// robfig's search; L, W and # are refused (0A000). robfig searches in wall
// time (pinned to UTC); Cron.Next maps wall time to instants zone period by
// zone period, so schedules follow the view's zone across DST changes.
//
// Invariants:
//
//  1. Time comes only from Config.Clock: the package never calls time.Now
//     or arms a time.Timer itself (STYLE.md), and run timeouts run on the
//     same clock.
//  2. At most one refresh of a view runs at a time, and at most
//     MaxConcurrent run at once, manual ones included.
//  3. A view has at most one queued automatic run. A request that finds a
//     run of the view queued is covered by it (the run starts later, so it
//     sees the change). A scheduled occurrence that finds the view running
//     is coalesced into that run (Config.Skipped hears of it); a change
//     that finds it running owes exactly one more run after it. So every
//     change is followed by a run that starts after it, unless Cancel,
//     Remove or Stop drop it.
//  4. Queue order: views that are optimized or have a manual request
//     waiting go first (R-S9); otherwise first come, first served.
//  5. A view has at most one armed timer (its next occurrence or the end of
//     its AT MOST EVERY window); a callback of a disarmed timer finds its
//     generation stale and does nothing.
//  6. The lock is never held while RunFunc or Config.Skipped runs, so both
//     may call back into the Scheduler.
//  7. Each running refresh is one goroutine, counted in a WaitGroup; Stop
//     cancels them all and waits, and nothing starts after Stop.
//  8. Cron occurrences are wall-clock times in the view's zone: a matching
//     time the clocks skip runs when they jump, one they repeat runs twice
//     (see Cron).
//
// Imports only catalog (types), pgerror and github.com/robfig/cron/v3 — it
// runs refreshes through a function it is handed.
package scheduler
