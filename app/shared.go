package app

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/scheduler"
	"github.com/mvserver/mvserver/storage"
)

// Several servers on one shared store (storage.DB.Shared: TiKV, a named
// mock cluster). Each server's scheduler knows every scheduled and
// triggered view, and follows the others by reading the store every
// lease/4 (commit notifications reach only the process that committed):
//
//  1. The catalog generation: when another server created, altered or
//     dropped views, the schedules are read again (datasetsChanged does
//     it for this server's own DDL at once).
//  2. The versions of the triggered views' sources: a version another
//     server committed fires the triggers here as a local commit does.
//  3. The refresh-runner lease of every such view ("refresh/<id>"): a
//     server that has it renews it; one that has not tries to take it.
//     Only the holder runs the view's scheduled and triggered refreshes
//     (the others skip them), and its refresh commits only while it still
//     has the lease with its token (refresh.Options.Lease). A server that
//     dies stops renewing; within the lease time another takes the lease,
//     and it then fires the view's triggers once, for the commits it may
//     have missed.
//
// Manual REFRESH runs where it is typed, holding no lease: two
// concurrent refreshes of one view conflict at commit as in one process.
// On Pebble none of this runs.

// DefaultRefreshLease is the refresh-runner lease time on a shared store.
const DefaultRefreshLease = 10 * time.Second

type sharedRunners struct {
	db     *storage.DB
	cat    *catalog.Manager
	sched  *scheduler.Scheduler
	sc     *scheduling
	holder string
	ttl    time.Duration

	mu      sync.Mutex
	held    map[uint32]storage.Lease
	views   map[uint32]scheduler.ViewSpec // scheduled or triggered
	seen    map[uint32]int64              // source table → last version seen
	gen     uint64
	stopped bool
	stopc   chan struct{}
	done    chan struct{}
}

func newSharedRunners(sc *scheduling, ttl time.Duration) *sharedRunners {
	if ttl <= 0 {
		ttl = DefaultRefreshLease
	}
	return &sharedRunners{db: sc.db, cat: sc.cat, sched: sc.sched, sc: sc, ttl: ttl,
		holder: "node " + strconv.FormatInt(sc.db.Node(), 10),
		held:   map[uint32]storage.Lease{}, views: map[uint32]scheduler.ViewSpec{}, seen: map[uint32]int64{},
		stopc: make(chan struct{}), done: make(chan struct{})}
}

func leaseName(view uint32) string { return fmt.Sprintf("refresh/%d", view) }

// start follows the store until stop, from catalog generation gen whose
// scheduled and triggered views the scheduler has (views).
func (sr *sharedRunners) start(gen uint64, views map[uint32]scheduler.ViewSpec) {
	sr.gen, sr.views = gen, views
	sr.follow()
	go func() {
		defer close(sr.done)
		t := time.NewTicker(sr.ttl / 4)
		defer t.Stop()
		for {
			select {
			case <-sr.stopc:
				return
			case <-t.C:
				sr.follow()
			}
		}
	}()
}

// stop ends following; release gives the held leases up at once (a clean
// shutdown), otherwise they expire (as when the process dies).
func (sr *sharedRunners) stop(release bool) {
	sr.mu.Lock()
	if sr.stopped {
		sr.mu.Unlock()
		return
	}
	sr.stopped = true
	sr.mu.Unlock()
	close(sr.stopc)
	<-sr.done
	if !release {
		return
	}
	sr.mu.Lock()
	held := sr.held
	sr.held = map[uint32]storage.Lease{}
	sr.mu.Unlock()
	for _, l := range held {
		_ = sr.db.ReleaseLease(l)
	}
}

// lease is the view's refresh-runner lease, when this server holds it.
func (sr *sharedRunners) lease(view uint32) (storage.Lease, bool) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	l, ok := sr.held[view]
	return l, ok
}

// committed notes versions this server committed (its commit hook fired
// the triggers already).
func (sr *sharedRunners) committed(versions map[uint32]int64) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	for id, v := range versions {
		if _, ok := sr.seen[id]; ok && v > sr.seen[id] {
			sr.seen[id] = v
		}
	}
}

// follow is one round of reading the store (the numbered steps above).
func (sr *sharedRunners) follow() {
	txn := sr.db.Begin()
	defer txn.Rollback()
	c, err := sr.cat.Snapshot(txn)
	if err != nil {
		sr.sc.log.Warn("shared store: cannot read the catalog", "err", err)
		return
	}
	sr.mu.Lock()
	resync := c.Gen != sr.gen
	sr.gen = c.Gen
	sr.mu.Unlock()
	if resync {
		sr.resync(txn, c)
	}
	fire := map[uint32]int64{}
	sr.mu.Lock()
	views := make(map[uint32]scheduler.ViewSpec, len(sr.views))
	for id, spec := range sr.views {
		views[id] = spec
		if spec.Trigger == nil {
			continue
		}
		for _, src := range specSources(spec) {
			v, err := txn.TableVersion(storage.TableID(src))
			if err != nil {
				continue
			}
			last, known := sr.seen[src]
			if known && v > last {
				fire[src] = v
			}
			if !known || v > last {
				sr.seen[src] = v
			}
		}
	}
	sr.mu.Unlock()
	for id, spec := range views {
		l, err := sr.db.AcquireLease(leaseName(id), sr.holder, sr.ttl)
		sr.mu.Lock()
		prev, had := sr.held[id]
		if err != nil {
			delete(sr.held, id)
		} else {
			sr.held[id] = l
		}
		sr.mu.Unlock()
		if err != nil && !errors.Is(err, storage.ErrLeaseHeld) {
			sr.sc.log.Warn("shared store: refresh lease", "view", spec.Name, "err", err)
		}
		if err == nil && (!had || prev.Token != l.Token) && spec.Trigger != nil {
			// Taken over: the commits the last holder may not have
			// refreshed for fire this view's trigger.
			for _, src := range specSources(spec) {
				if v, err := txn.TableVersion(storage.TableID(src)); err == nil && v >= 0 {
					fire[src] = max(fire[src], v)
				}
			}
		}
	}
	if len(fire) > 0 {
		sr.sched.Committed(fire)
	}
}

// resync reads every scheduled or triggered view of c into the scheduler
// and drops the ones that are gone.
func (sr *sharedRunners) resync(txn *storage.Txn, c *catalog.Catalog) {
	next := map[uint32]scheduler.ViewSpec{}
	for _, t := range c.Tables() {
		if spec, ok := scheduledSpec(txn, c, t); ok {
			next[t.ID] = spec
		}
	}
	sr.mu.Lock()
	prev := sr.views
	sr.views = next
	sr.mu.Unlock()
	for id, spec := range next {
		if old, ok := prev[id]; ok && sameSpec(old, spec) {
			continue
		}
		if err := sr.sched.Upsert(spec); err != nil {
			sr.sc.log.Warn("cannot schedule view", "view", spec.Name, "err", err)
		}
	}
	for id := range prev {
		if _, ok := next[id]; !ok {
			sr.sched.Remove(id)
			sr.mu.Lock()
			l, had := sr.held[id]
			delete(sr.held, id)
			sr.mu.Unlock()
			if had {
				_ = sr.db.ReleaseLease(l)
			}
		}
	}
}

// specSources lists the tables and views whose commits trigger spec.
func specSources(spec scheduler.ViewSpec) []uint32 {
	return append(append([]uint32(nil), spec.Tables...), spec.Views...)
}

// sameSpec: the scheduler already has spec (its last run aside).
func sameSpec(a, b scheduler.ViewSpec) bool {
	a.LastRun, b.LastRun = time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}
