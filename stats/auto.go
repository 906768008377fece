package stats

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/storage"
)

// PostgreSQL's auto-analyze defaults: a table is analyzed again once
// more than AnalyzeThreshold + AnalyzeScaleFactor × reltuples of its rows
// changed (autovacuum_analyze_threshold, autovacuum_analyze_scale_factor).
const (
	AnalyzeThreshold   = 50
	AnalyzeScaleFactor = 0.1
)

// Auto is the auto-analyze worker of one database.
type Auto struct {
	db  *storage.DB
	cat *catalog.Manager
	log *slog.Logger

	mu    sync.Mutex
	dirty map[uint32]bool
	track map[uint32]*changeCount
	// analyzed counts the tables analyzed (tests wait on it).
	analyzed int64

	wake   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	unsub  func()
}

// changeCount is the rows of a table changed since its statistics'
// version (base), summed up to version upTo.
type changeCount struct {
	base, upTo int64
	changed    int64
}

// StartAuto starts auto-analyze over db: commits only mark the tables
// they changed; the work runs in a goroutine of its own, never on the
// commit path. Close stops it.
func StartAuto(db *storage.DB, cat *catalog.Manager, log *slog.Logger) *Auto {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &Auto{db: db, cat: cat, log: log, dirty: map[uint32]bool{}, track: map[uint32]*changeCount{},
		wake: make(chan struct{}, 1), ctx: ctx, cancel: cancel, done: make(chan struct{})}
	a.unsub = db.Subscribe(func(events []storage.CommitEvent) {
		a.mu.Lock()
		for _, e := range events {
			if e.Version < 0 {
				delete(a.dirty, uint32(e.Table))
				delete(a.track, uint32(e.Table))
				continue
			}
			a.dirty[uint32(e.Table)] = true
		}
		a.mu.Unlock()
		select {
		case a.wake <- struct{}{}:
		default:
		}
	})
	go a.run()
	return a
}

// Close stops the worker, abandoning an analysis under way.
func (a *Auto) Close() {
	a.unsub()
	a.cancel()
	<-a.done
}

// Analyzed returns how many analyses the worker has committed.
func (a *Auto) Analyzed() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.analyzed
}

func (a *Auto) run() {
	defer close(a.done)
	for {
		select {
		case <-a.ctx.Done():
			return
		case <-a.wake:
		}
		a.mu.Lock()
		ids := make([]uint32, 0, len(a.dirty))
		for id := range a.dirty {
			ids = append(ids, id)
		}
		a.dirty = map[uint32]bool{}
		a.mu.Unlock()
		for _, id := range ids {
			if a.ctx.Err() != nil {
				return
			}
			if err := a.check(id); err != nil && a.ctx.Err() == nil {
				a.log.Debug("auto-analyze skipped a table", "relation", id, "err", err)
			}
		}
	}
}

// check analyzes table id when enough of it changed since its last
// analysis.
func (a *Auto) check(id uint32) error {
	txn := a.db.Begin()
	defer txn.Rollback()
	c, err := a.cat.Snapshot(txn)
	if err != nil {
		return err
	}
	t, ok := c.Table(id)
	if !ok || !Analyzable(t) || c.IsTemp(t) {
		return nil
	}
	prev, err := catalog.ReadStats(txn, id)
	if err != nil {
		return err
	}
	ver, err := txn.TableVersion(storage.TableID(id))
	if err != nil {
		return err
	}
	base, reltuples := int64(-1), 0.0
	if prev != nil {
		base, reltuples = prev.Version, prev.Rows
	}
	a.mu.Lock()
	cc := a.track[id]
	if cc == nil || cc.base != base || cc.upTo > ver {
		cc = &changeCount{base: base, upTo: base}
		a.track[id] = cc
	}
	from := cc.upTo
	a.mu.Unlock()
	n, err := txn.ChangedRows(storage.TableID(id), from, ver)
	if err != nil {
		return err
	}
	a.mu.Lock()
	cc.changed += n
	cc.upTo = ver
	changed := cc.changed
	a.mu.Unlock()
	// A change feed vacuumed away undercounts: the row count's drift
	// counts too.
	if rows, err := txn.RowCount(storage.TableID(id)); err == nil {
		changed = max(changed, abs(rows-int64(reltuples)))
	}
	if float64(changed) <= AnalyzeThreshold+AnalyzeScaleFactor*reltuples {
		return nil
	}
	ts, err := Collect(a.ctx, txn, t, prev, Options{Auto: true})
	if err != nil {
		return err
	}
	if err := catalog.WriteStats(txn, id, ts); err != nil {
		return err
	}
	if err := txn.Commit(); err != nil {
		return err
	}
	a.mu.Lock()
	a.analyzed++
	a.mu.Unlock()
	return nil
}

// Analyzable reports whether ANALYZE collects statistics of t: tables,
// materialized views and streaming tables (not views or sequences).
func Analyzable(t *catalog.Table) bool {
	switch t.Kind {
	case catalog.KindTable, catalog.KindMaterializedView, catalog.KindStreamingTable:
		return true
	}
	return false
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
