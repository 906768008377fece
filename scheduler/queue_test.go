package scheduler

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mvserver/mvserver/pgerror"
)

// TestMaxConcurrentOnePerView: never more than MaxConcurrent refreshes at
// once, never two of one view, whatever mix of triggers, schedules and
// manual requests arrives.
func TestMaxConcurrentOnePerView(t *testing.T) {
	h := newHarness(t, t0, nil) // MaxConcurrent defaults to 2
	var mu sync.Mutex
	active, peak := map[uint32]int{}, 0
	total := 0
	g := newGate()
	h.setHook(func(ctx context.Context, view uint32, cause Cause) error {
		mu.Lock()
		active[view]++
		n := 0
		for _, c := range active {
			n += c
		}
		if n > peak {
			peak = n
		}
		if active[view] > 1 {
			t.Errorf("view %d runs twice at once", view)
		}
		mu.Unlock()
		err := g.hook(ctx, view, cause)
		mu.Lock()
		active[view]--
		total++
		mu.Unlock()
		return err
	})
	for id := uint32(1); id <= 4; id++ {
		h.upsert(triggerSpec(id, 0, []uint32{100}, nil))
	}
	h.upsert(cronSpec(5, "0 * * * * ?", ""))
	h.s.Start()
	h.s.Committed(map[uint32]int64{100: 1})
	first, second := g.next(t), g.next(t)
	if first.view+second.view != 3 || first.view == second.view {
		t.Fatalf("started %d, %d; want 1 and 2", first.view, second.view)
	}
	h.waitFor("2 running", func() bool { return h.s.running == 2 })
	// More work arrives: commits, a schedule tick, manual refreshes of a
	// running view and of a queued one.
	h.s.Committed(map[uint32]int64{100: 2})
	h.clock.Advance(time.Minute)
	errs := make(chan error, 2)
	go func() { errs <- h.s.RunNow(context.Background(), 1, CauseManual) }()
	go func() { errs <- h.s.RunNow(context.Background(), 3, CauseManual) }()
	h.waitFor("both manual requests queued", func() bool {
		return len(h.s.views[1].manual) == 1 && len(h.s.views[3].manual) == 1
	})
	if h.s.running != 2 {
		t.Fatalf("%d running", h.s.running)
	}
	for id := uint32(1); id <= 5; id++ {
		g.open(id)
	}
	for i := 0; i < 2; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	h.settle()
	mu.Lock()
	defer mu.Unlock()
	if peak != 2 {
		t.Fatalf("peak concurrency %d, want 2", peak)
	}
	// 1: trigger, manual (covers the rerun owed to the second commit);
	// 2: trigger, rerun; 3: manual (covers its queued trigger); 4: trigger;
	// 5: schedule.
	count := map[uint32]int{}
	for _, r := range h.recorded() {
		count[r.view]++
	}
	want := map[uint32]int{1: 2, 2: 2, 3: 1, 4: 1, 5: 1}
	for id, n := range want {
		if count[id] != n {
			t.Errorf("view %d ran %d times, want %d (%v)", id, count[id], n, h.recorded())
		}
	}
}

// TestPerformanceModePriority (R-S9): optimized views and manual refreshes
// go before waiting standard views; otherwise first come, first served.
func TestPerformanceModePriority(t *testing.T) {
	h := newHarness(t, t0, func(c *Config) { c.MaxConcurrent = 1 })
	g := newGate()
	h.setHook(g.hook)
	for id := uint32(1); id <= 5; id++ {
		spec := triggerSpec(id, 0, []uint32{100 + id}, nil)
		spec.Optimized = id == 4
		h.upsert(spec)
	}
	h.s.Start()
	h.s.Committed(map[uint32]int64{101: 1}) // 1 takes the slot
	g.next(t)
	h.s.Committed(map[uint32]int64{102: 1}) // standard
	h.s.Committed(map[uint32]int64{103: 1}) // standard
	h.s.Committed(map[uint32]int64{104: 1}) // optimized, came later
	done := make(chan error, 1)
	go func() { done <- h.s.RunNow(context.Background(), 5, CauseManual) }() // manual, standard view
	h.waitFor("the manual request", func() bool { return h.s.views[5].waitSeq != 0 })
	for id := uint32(1); id <= 5; id++ {
		g.open(id)
	}
	var order []uint32
	for i := 0; i < 4; i++ {
		order = append(order, g.next(t).view)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	want := []uint32{4, 5, 2, 3} // optimized and manual (by arrival), then standard by arrival
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("order %v, want %v", order, want)
		}
	}
}

// TestScheduledWhileRunning: occurrences due while the view refreshes are
// coalesced into that run (Config.Skipped hears of each), not stacked;
// occurrences due while it waits in the queue make one run.
func TestScheduledWhileRunning(t *testing.T) {
	var mu sync.Mutex
	var skipped []time.Time
	h := newHarness(t, t0, func(c *Config) {
		c.MaxConcurrent = 1
		c.Skipped = func(view uint32, cause Cause, due time.Time) {
			mu.Lock()
			skipped = append(skipped, due)
			mu.Unlock()
		}
	})
	g := newGate()
	h.setHook(g.hook)
	h.upsert(cronSpec(1, "0 * * * * ?", "")) // every minute
	h.s.Start()
	h.clock.Advance(time.Minute) // t0+1m: runs, blocks
	g.next(t)
	h.clock.Advance(2*time.Minute + 30*time.Second) // +2m, +3m due while running
	g.open(1)
	h.settle()
	h.advance(30 * time.Second) // +4m: runs
	checkRuns(t, h.recorded(1), CauseSchedule, []time.Time{t0.Add(time.Minute), t0.Add(4 * time.Minute)})
	mu.Lock()
	if len(skipped) != 2 || !skipped[0].Equal(t0.Add(2*time.Minute)) || !skipped[1].Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("skipped %v", skipped)
	}
	mu.Unlock()

	// Queued behind another view: three occurrences make one run.
	h.upsert(triggerSpec(2, 0, []uint32{100}, nil))
	h.s.Committed(map[uint32]int64{100: 1})
	g.next(t) // view 2 holds the slot (its gate is closed)
	h.clock.Advance(3 * time.Minute)
	h.waitFor("view 1 queued", func() bool { return h.s.views[1].auto != nil })
	g.open(2)
	h.settle()
	runs := h.recorded(1)
	if len(runs) != 3 {
		t.Fatalf("%d runs of view 1, want 3", len(runs))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(skipped) != 2 {
		t.Fatalf("coalescing in the queue is not a skip: %v", skipped)
	}
}

// TestTimeout (R-S4): a scheduled run's context ends with
// DeadlineExceeded after the view's timeout on the scheduler's clock; the
// default is 48 hours; manual runs have no view timeout.
func TestTimeout(t *testing.T) {
	h := newHarness(t, t0, nil)
	type result struct {
		err, ctxErr, cause error
		deadline           time.Time
		hasDeadline        bool
	}
	results := make(chan result, 10)
	h.setHook(func(ctx context.Context, view uint32, cause Cause) error {
		dl, ok := ctx.Deadline()
		if view == 3 { // manual: returns at once
			results <- result{deadline: dl, hasDeadline: ok}
			return nil
		}
		<-ctx.Done()
		results <- result{err: ctx.Err(), ctxErr: ctx.Err(), cause: context.Cause(ctx), deadline: dl, hasDeadline: ok}
		return ctx.Err()
	})
	spec := cronSpec(1, "0 0 * * * ?", "")
	spec.Timeout = 6*time.Hour + 30*time.Minute // ends between two occurrences
	h.upsert(spec)
	h.s.Start()
	h.clock.Advance(time.Hour) // view 1 starts at 01:00
	h.waitFor("view 1 running", func() bool { return h.s.running == 1 })
	h.clock.Advance(6*time.Hour + 30*time.Minute - time.Second)
	select {
	case r := <-results:
		t.Fatalf("ended early: %+v", r)
	default:
	}
	h.clock.Advance(time.Second)
	r := <-results
	if !errors.Is(r.ctxErr, context.DeadlineExceeded) || r.ctxErr != context.DeadlineExceeded || r.cause != context.DeadlineExceeded {
		t.Fatalf("timed out with %v (cause %v)", r.ctxErr, r.cause)
	}
	if !r.hasDeadline || !r.deadline.Equal(t0.Add(7*time.Hour+30*time.Minute)) {
		t.Fatalf("deadline %s %v", r.deadline, r.hasDeadline)
	}
	h.settle()
	// The default: 48 hours.
	h.s.Remove(1)
	h.upsert(cronSpec(2, "0 30 0 3 MAR ?", "")) // 3 March 00:30, default timeout
	h.clock.AdvanceTo(t0.Add(24*time.Hour + 30*time.Minute))
	h.waitFor("view 2 running", func() bool { return h.s.running == 1 })
	h.clock.Advance(48 * time.Hour)
	r = <-results
	if r.ctxErr != context.DeadlineExceeded || !r.deadline.Equal(t0.Add(24*time.Hour+30*time.Minute+48*time.Hour)) {
		t.Fatalf("default timeout: %v at %s", r.ctxErr, r.deadline)
	}
	h.settle()
	h.s.Remove(2)
	// Manual: no deadline but the caller's.
	if err := h.s.RunNow(context.Background(), 3, CauseManual); err != nil {
		t.Fatal(err)
	}
	if r := <-results; r.hasDeadline {
		t.Fatalf("manual run has a deadline %s", r.deadline)
	}
	if h.clock.Pending() != 0 {
		t.Fatalf("%d timers left", h.clock.Pending())
	}
}

// TestCancel (R-S5): CANCEL REFRESH cancels the running refresh (cause
// ErrCanceled) and drops the run owed to changes during it; RunNow's
// context cancels a manual refresh, running or queued.
func TestCancel(t *testing.T) {
	h := newHarness(t, t0, nil)
	causes := make(chan error, 10)
	g := newGate()
	h.setHook(func(ctx context.Context, view uint32, cause Cause) error {
		err := g.hook(ctx, view, cause)
		causes <- context.Cause(ctx)
		return err
	})
	h.upsert(triggerSpec(1, 0, []uint32{100}, nil))
	h.s.Start()
	if h.s.Cancel(1) || h.s.Cancel(99) {
		t.Fatal("Cancel with nothing running")
	}
	h.s.Committed(map[uint32]int64{100: 1})
	g.next(t)
	h.s.Committed(map[uint32]int64{100: 2}) // owes a rerun
	if !h.s.Cancel(1) {
		t.Fatal("Cancel found nothing")
	}
	if c := <-causes; c != ErrCanceled {
		t.Fatalf("cause %v", c)
	}
	h.settle()
	if n := len(h.recorded(1)); n != 1 {
		t.Fatalf("%d runs: the rerun was not dropped", n)
	}
	// Later commits trigger as usual.
	h.s.Committed(map[uint32]int64{100: 3})
	g.next(t)
	g.open(1)
	<-causes
	h.settle()

	// A manual refresh canceled by CANCEL REFRESH returns the run's error.
	errs := make(chan error, 1)
	go func() { errs <- h.s.RunNow(context.Background(), 7, CauseManual) }()
	g.next(t)
	h.s.Cancel(7)
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("RunNow: %v", err)
	}
	<-causes

	// A cancel request on RunNow's context: running…
	ctx, cancel := context.WithCancel(context.Background())
	go func() { errs <- h.s.RunNow(ctx, 7, CauseManual) }()
	g.next(t)
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("RunNow: %v", err)
	}
	<-causes
	// …and queued (behind a running refresh of the same view): it never runs.
	go func() { errs <- h.s.RunNow(context.Background(), 7, CauseManual) }()
	g.next(t)
	ctx, cancel = context.WithCancel(context.Background())
	go func() { errs <- h.s.RunNow(ctx, 7, CauseManual) }()
	h.waitFor("the second request queued", func() bool { return len(h.s.views[7].manual) == 1 })
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("queued RunNow: %v", err)
	}
	g.open(7)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	<-causes
	h.settle()
	g.none(t)
	h.s.mu.Lock()
	_, known := h.s.views[7]
	h.s.mu.Unlock()
	if known {
		t.Fatal("a view known only through RunNow was not forgotten")
	}
}

// TestCancelThrottledWindow: CANCEL REFRESH also drops changes waiting for
// the end of an AT MOST EVERY window, and a queued automatic run.
func TestCancelThrottledWindow(t *testing.T) {
	h := newHarness(t, t0, func(c *Config) { c.MaxConcurrent = 1 })
	spec := triggerSpec(1, 300, []uint32{100}, nil)
	spec.LastRun = t0
	h.upsert(spec)
	h.s.Start()
	h.s.Committed(map[uint32]int64{100: 1})
	if _, ok := h.s.NextRun(1); !ok {
		t.Fatal("no pending window")
	}
	if !h.s.Cancel(1) {
		t.Fatal("nothing canceled")
	}
	if _, ok := h.s.NextRun(1); ok || h.clock.Pending() != 0 {
		t.Fatal("the window survived")
	}
	h.advance(time.Hour)
	if n := len(h.recorded()); n != 0 {
		t.Fatalf("%d runs", n)
	}
}

// TestStop: Stop cancels running refreshes (cause ErrStopped), fails queued
// manual ones, waits, and leaves nothing armed; afterwards nothing runs.
func TestStop(t *testing.T) {
	h := newHarness(t, t0, nil)
	causes := make(chan error, 10)
	g := newGate()
	h.setHook(func(ctx context.Context, view uint32, cause Cause) error {
		err := g.hook(ctx, view, cause)
		causes <- context.Cause(ctx)
		return err
	})
	h.upsert(triggerSpec(1, 0, []uint32{100}, nil))
	h.upsert(triggerSpec(2, 0, []uint32{100}, nil))
	h.upsert(triggerSpec(3, 0, []uint32{100}, nil))
	h.upsert(cronSpec(4, "0 * * * * ?", ""))
	h.s.Start()
	h.s.Committed(map[uint32]int64{100: 1})
	g.next(t)
	g.next(t)
	errs := make(chan error, 2)
	go func() { errs <- h.s.RunNow(context.Background(), 1, CauseManual) }()
	h.waitFor("the manual request queued", func() bool { return len(h.s.views[1].manual) == 1 })
	if err := h.s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if c := <-causes; c != ErrStopped {
			t.Fatalf("cause %v", c)
		}
	}
	if err := <-errs; err != ErrStopped {
		t.Fatalf("queued RunNow: %v", err)
	}
	if h.clock.Pending() != 0 {
		t.Fatalf("%d timers after Stop", h.clock.Pending())
	}
	if err := h.s.RunNow(context.Background(), 1, CauseManual); pgerror.Code(err) != pgerror.AdminShutdown {
		t.Fatalf("RunNow after Stop: %v", err)
	}
	h.s.Committed(map[uint32]int64{100: 2})
	h.s.Start()
	h.clock.Advance(time.Hour)
	if err := h.s.Upsert(cronSpec(5, "0 * * * * ?", "")); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(time.Hour)
	g.none(t)
	if err := h.s.Stop(context.Background()); err != nil { // again: fine
		t.Fatal(err)
	}
}

// TestStopDeadline: Stop gives up when its context ends before a refresh
// that ignores cancellation returns.
func TestStopDeadline(t *testing.T) {
	h := newHarness(t, t0, nil)
	release := make(chan struct{})
	started := make(chan struct{})
	h.setHook(func(ctx context.Context, view uint32, cause Cause) error {
		close(started)
		<-release // ignores ctx
		return nil
	})
	go h.s.RunNow(context.Background(), 1, CauseManual) //nolint:errcheck
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.s.Stop(ctx); err != context.Canceled {
		t.Fatalf("Stop: %v", err)
	}
	close(release)
	if err := h.s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestPanicIsAnError: a panicking refresh is an internal error; the
// scheduler goes on.
func TestPanicIsAnError(t *testing.T) {
	h := newHarness(t, t0, nil)
	h.setHook(func(ctx context.Context, view uint32, cause Cause) error {
		if view == 1 {
			panic("boom")
		}
		return nil
	})
	if err := h.s.RunNow(context.Background(), 1, CauseManual); pgerror.Code(err) != pgerror.InternalError {
		t.Fatalf("RunNow: %v", err)
	}
	if err := h.s.RunNow(context.Background(), 2, CauseManual); err != nil {
		t.Fatal(err)
	}
}

// TestManualBeforeStart: manual refreshes run before Start; automatic ones
// wait for it.
func TestManualBeforeStart(t *testing.T) {
	h := newHarness(t, t0, nil)
	h.upsert(triggerSpec(1, 0, []uint32{100}, nil))
	h.s.Committed(map[uint32]int64{100: 1})
	if err := h.s.RunNow(context.Background(), 2, CauseManual); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if runs := h.recorded(); len(runs) != 1 || runs[0].view != 2 {
		t.Fatalf("runs %v", runs)
	}
	h.s.Start()
	h.settle()
	if runs := h.recorded(1); len(runs) != 1 || runs[0].cause != CauseTrigger {
		t.Fatalf("runs %v", runs)
	}
}

// TestRealClock: the same scheduler on the machine's clock: a trigger runs,
// a short timeout times out, Stop leaves no goroutine (goleak in TestMain).
func TestRealClock(t *testing.T) {
	ran := make(chan Cause, 10)
	timedOut := make(chan error, 1)
	s := New(Config{Logger: discard, Run: func(ctx context.Context, view uint32, cause Cause) error {
		if view == 2 {
			<-ctx.Done()
			timedOut <- ctx.Err()
			return ctx.Err()
		}
		ran <- cause
		return nil
	}})
	spec := triggerSpec(1, 0, []uint32{100}, nil)
	if err := s.Upsert(spec); err != nil {
		t.Fatal(err)
	}
	spec2 := triggerSpec(2, 0, []uint32{200}, nil)
	spec2.Timeout = 10 * time.Millisecond
	if err := s.Upsert(spec2); err != nil {
		t.Fatal(err)
	}
	s.Start()
	s.Committed(map[uint32]int64{100: 1, 200: 1})
	select {
	case c := <-ran:
		if c != CauseTrigger {
			t.Fatalf("cause %s", c)
		}
	case <-time.After(waitLimit):
		t.Fatal("no run")
	}
	select {
	case err := <-timedOut:
		if err != context.DeadlineExceeded {
			t.Fatalf("timeout: %v", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("no timeout")
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}
