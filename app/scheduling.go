package app

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/scheduler"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// scheduling connects the scheduler to storage commits, the catalog and the
// refresh runner (R-S2, R-S3, R-S8).
type scheduling struct {
	db     *storage.DB
	cat    *catalog.Manager
	runner *refresh.Runner
	sched  *scheduler.Scheduler
	log    *slog.Logger
	unsub  func()
	// optimalRefreshOff: every scheduled refresh is full (R-I7).
	optimalRefreshOff bool
	// onResult hears of every completed refresh, manual or scheduled
	// (the console's metrics of rows read and written).
	onResult func(*refresh.Result)
	// leaseTTL is the refresh-runner lease time on a shared store;
	// shared follows the other servers there (shared.go; nil on Pebble).
	leaseTTL time.Duration
	shared   *sharedRunners
}

func newScheduling(db *storage.DB, cat *catalog.Manager, runner *refresh.Runner, triggerMin time.Duration, log *slog.Logger) *scheduling {
	sc := &scheduling{db: db, cat: cat, runner: runner, log: log}
	sc.sched = scheduler.New(scheduler.Config{
		Clock:              scheduler.RealClock(),
		Run:                sc.run,
		TriggerMinInterval: triggerMin,
		Logger:             log,
		Skipped:            sc.skipped,
	})
	return sc
}

// skipped records a scheduled run coalesced into a running refresh (R-S6
// status SKIPPED).
func (sc *scheduling) skipped(view uint32, cause scheduler.Cause, due time.Time) {
	if err := sc.runner.RecordSkipped(view, string(cause), due); err != nil {
		sc.log.Warn("recording a skipped refresh failed", "view", view, "err", err)
	}
}

// run is the scheduler's RunFunc: one refresh through the runner.
// On a shared store only the holder of the view's refresh-runner lease
// runs it, fenced by the lease's token.
func (sc *scheduling) run(ctx context.Context, view uint32, cause scheduler.Cause) error {
	opt := refresh.Options{Cause: string(cause), Env: &types.Env{Loc: time.UTC}, OptimalRefreshOff: sc.optimalRefreshOff}
	if sc.shared != nil {
		l, ok := sc.shared.lease(view)
		if !ok {
			return nil // another server runs it
		}
		opt.Lease = &l
	}
	res, err := sc.runner.Refresh(ctx, view, opt)
	if err != nil {
		sc.log.Warn("scheduled refresh failed", "view", view, "cause", cause, "err", err)
		return err
	}
	sc.refreshed(view, res)
	return nil
}

// refreshed tells the scheduler a view's content changed (chains).
func (sc *scheduling) refreshed(view uint32, res *refresh.Result) {
	if sc.onResult != nil && res != nil {
		sc.onResult(res)
	}
	if res != nil && res.Technique != refresh.NoOp {
		sc.sched.Refreshed(view)
	}
}

// start registers every scheduled or triggered view (with catch-up for
// times missed while the server was down), subscribes to commits and
// starts firing.
func (sc *scheduling) start() error {
	txn := sc.db.Begin()
	defer txn.Rollback()
	c, err := sc.cat.Snapshot(txn)
	if err != nil {
		return err
	}
	views := map[uint32]scheduler.ViewSpec{}
	for _, t := range c.Tables() {
		spec, ok := scheduledSpec(txn, c, t)
		if !ok {
			continue
		}
		spec.CatchUp = true
		if err := sc.sched.Upsert(spec); err != nil {
			sc.log.Warn("cannot schedule view", "view", t.Name, "err", err)
		}
		spec.CatchUp = false
		views[t.ID] = spec
	}
	if sc.db.Shared() {
		sc.shared = newSharedRunners(sc, sc.leaseTTL)
	}
	sc.unsub = sc.db.Subscribe(func(events []storage.CommitEvent) {
		m := make(map[uint32]int64, len(events))
		for _, e := range events {
			if e.Version >= 0 {
				m[uint32(e.Table)] = e.Version
			}
		}
		if len(m) > 0 {
			if sc.shared != nil {
				sc.shared.committed(m)
			}
			sc.sched.Committed(m)
		}
	})
	sc.sched.Start()
	if sc.shared != nil {
		sc.shared.start(c.Gen, views)
	}
	return nil
}

// datasetsChanged re-reads the given views after a commit that created,
// altered or dropped them and updates their schedules at once (R-M6).
func (sc *scheduling) datasetsChanged(ids []uint32) {
	txn := sc.db.Begin()
	defer txn.Rollback()
	c, err := sc.cat.Snapshot(txn)
	if err != nil {
		return
	}
	for _, id := range ids {
		t, ok := c.Table(id)
		spec, scheduled := scheduledSpec(txn, c, t)
		if !ok || !scheduled {
			sc.sched.Remove(id)
			continue
		}
		if err := sc.sched.Upsert(spec); err != nil {
			sc.log.Warn("cannot schedule view", "view", t.Name, "err", err)
		}
	}
}

// scheduledSpec is what the scheduler needs of t, with its last run read
// at txn; false when t (nil: gone) has no schedule and no trigger.
func scheduledSpec(txn *storage.Txn, c *catalog.Catalog, t *catalog.Table) (scheduler.ViewSpec, bool) {
	if t == nil || t.Dataset == nil || (t.Dataset.Schedule == nil && t.Dataset.Trigger == nil) {
		return scheduler.ViewSpec{}, false
	}
	spec := specOf(c, t)
	if last, err := refresh.ReadLastRun(txn, t.ID); err == nil && last != nil {
		spec.LastRun = last.Start
	}
	return spec, true
}

func (sc *scheduling) stop(ctx context.Context) error {
	if sc.unsub != nil {
		sc.unsub()
	}
	err := sc.sched.Stop(ctx)
	if sc.shared != nil {
		sc.shared.stop(true)
	}
	return err
}

// validateDataset checks a view's schedule or trigger before its CREATE or
// ALTER commits: the scheduler's checks and the minimum AT MOST EVERY (R-S3).
func validateDataset(c *catalog.Catalog, t *catalog.Table, min time.Duration) error {
	if min == 0 {
		min = time.Minute
	}
	if tr := t.Dataset.Trigger; tr != nil && tr.AtMostEverySeconds > 0 && time.Duration(tr.AtMostEverySeconds)*time.Second < min {
		return pgerror.New(pgerror.InvalidParameterValue, "AT MOST EVERY %ds is below the minimum of %s", tr.AtMostEverySeconds, min).
			WithHint("The server's --trigger-min-interval sets the minimum (1 minute by default).")
	}
	return scheduler.Validate(specOf(c, t))
}

// specOf describes a view to the scheduler: its schedule or trigger, the
// base tables and upstream views whose commits trigger it (through plain
// views; a streaming table's streams only), its timeout and performance
// mode.
func specOf(c *catalog.Catalog, t *catalog.Table) scheduler.ViewSpec {
	ds := t.Dataset
	spec := scheduler.ViewSpec{ID: t.ID, Name: c.QualifiedName(t), Schedule: ds.Schedule, Trigger: ds.Trigger}
	if ds.StatementTimeoutMs > 0 {
		spec.Timeout = time.Duration(ds.StatementTimeoutMs) * time.Millisecond
	}
	if v, ok := t.Property("pipelines.performanceMode"); ok && strings.EqualFold(v, "optimized") {
		spec.Optimized = true
	}
	sources := t.DependsOn
	if t.Kind == catalog.KindStreamingTable {
		// Only a stream's commits can give a streaming table new rows;
		// the relations it reads whole do not trigger it (R-ST2).
		sources = ds.Streams
	}
	for _, src := range c.StoredSources(sources) {
		switch src.Kind {
		case catalog.KindMaterializedView, catalog.KindStreamingTable:
			spec.Views = append(spec.Views, src.ID)
		default:
			spec.Tables = append(spec.Tables, src.ID)
		}
	}
	return spec
}
