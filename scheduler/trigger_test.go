package scheduler

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mvserver/mvserver/pgerror"
)

// TestTriggerBurstThrottled: 50 commits inside an AT MOST EVERY window make
// one refresh at the window's end.
func TestTriggerBurstThrottled(t *testing.T) {
	h := newHarness(t, t0, nil)
	spec := triggerSpec(1, 120, []uint32{100, 101}, nil)
	spec.LastRun = t0 // just refreshed (CREATE)
	h.upsert(spec)
	h.s.Start()
	for i := 0; i < 50; i++ {
		h.clock.Advance(time.Second)
		h.s.Committed(map[uint32]int64{uint32(100 + i%2): int64(i)})
	}
	h.settle()
	if n := len(h.recorded(1)); n != 0 {
		t.Fatalf("%d runs inside the window", n)
	}
	if next, ok := h.s.NextRun(1); !ok || !next.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("NextRun %s %v, want the window's end", next, ok)
	}
	h.advance(10 * time.Minute)
	checkRuns(t, h.recorded(1), CauseTrigger, []time.Time{t0.Add(2 * time.Minute)})
}

// TestTriggerWindows: the first change at t0 runs at max(t0, last start +
// w); changes until then join it; a change long after the last run runs at
// once.
func TestTriggerWindows(t *testing.T) {
	h := newHarness(t, t0, nil)
	spec := triggerSpec(1, 120, []uint32{100}, nil) // never ran
	h.upsert(spec)
	h.s.Start()
	commit := func() { h.s.Committed(map[uint32]int64{100: 1}); h.settle() }

	commit() // t0: never ran → at once
	h.clock.Advance(30 * time.Second)
	commit() // t0+30s: window until t0+2m
	h.clock.Advance(60 * time.Second)
	commit() // joins
	h.advance(10 * time.Second)
	commit()                    // t0+100s: joins
	h.advance(20 * time.Second) // t0+2m: the run
	h.advance(10 * time.Second)
	commit() // t0+2m10s: next window ends t0+4m
	h.advance(5 * time.Minute)
	commit() // t0+7m10s: more than w after t0+4m → at once
	checkRuns(t, h.recorded(1), CauseTrigger, []time.Time{
		t0, t0.Add(2 * time.Minute), t0.Add(4 * time.Minute), t0.Add(7*time.Minute + 10*time.Second),
	})
	if _, ok := h.s.NextRun(1); ok {
		t.Fatal("a pending window with no change")
	}
}

// TestTriggerAlterWindow: ALTER … AT MOST EVERY while changes wait moves
// their run to max(first change, last start + new window) at once.
func TestTriggerAlterWindow(t *testing.T) {
	h := newHarness(t, t0, nil)
	spec := triggerSpec(1, 600, []uint32{100}, nil)
	spec.LastRun = t0
	h.upsert(spec)
	h.s.Start()
	h.clock.Advance(time.Minute)
	h.s.Committed(map[uint32]int64{100: 1}) // waits until t0+10m
	spec.Trigger.AtMostEverySeconds = 300
	h.upsert(spec)
	if next, _ := h.s.NextRun(1); !next.Equal(t0.Add(5 * time.Minute)) {
		t.Fatalf("NextRun %s, want t0+5m", next)
	}
	spec.Trigger.AtMostEverySeconds = 60 // already past: runs now
	h.upsert(spec)
	h.settle()
	checkRuns(t, h.recorded(1), CauseTrigger, []time.Time{t0.Add(time.Minute)})
	if _, ok := h.s.NextRun(1); ok {
		t.Fatal("window still pending")
	}
}

// TestTriggerMinInterval: an AT MOST EVERY below the minimum is raised to
// it; the server flag lowers the minimum.
func TestTriggerMinInterval(t *testing.T) {
	for _, tc := range []struct {
		min  time.Duration
		secs int64
		want time.Duration
	}{
		{0, 10, time.Minute}, // default minimum 1 minute
		{0, 90, 90 * time.Second},
		{time.Second, 10, 10 * time.Second},
		{time.Second, 2, 2 * time.Second},
		{-1, 1, time.Second},
	} {
		h := newHarness(t, t0, func(c *Config) { c.TriggerMinInterval = tc.min })
		spec := triggerSpec(1, tc.secs, []uint32{100}, nil)
		spec.LastRun = t0
		h.upsert(spec)
		h.s.Start()
		h.s.Committed(map[uint32]int64{100: 1})
		if next, _ := h.s.NextRun(1); !next.Equal(t0.Add(tc.want)) {
			t.Errorf("min %s, AT MOST EVERY %ds: runs at +%s, want +%s", tc.min, tc.secs, next.Sub(t0), tc.want)
		}
	}
}

// TestTriggerCoalescing: without AT MOST EVERY, a burst that arrives while
// the view's refresh is queued makes one run; a burst while it runs makes
// exactly one more after it.
func TestTriggerCoalescing(t *testing.T) {
	h := newHarness(t, t0, func(c *Config) { c.MaxConcurrent = 1 })
	g := newGate()
	h.setHook(g.hook)
	h.upsert(triggerSpec(1, 0, []uint32{100}, nil))
	h.upsert(triggerSpec(2, 0, []uint32{200}, nil))
	h.s.Start()

	// View 2 holds the only slot; view 1 queues and collects 50 commits.
	h.s.Committed(map[uint32]int64{200: 1})
	if r := g.next(t); r.view != 2 {
		t.Fatalf("started %d", r.view)
	}
	for i := 0; i < 50; i++ {
		h.s.Committed(map[uint32]int64{100: int64(i)})
	}
	g.open(2)
	if r := g.next(t); r.view != 1 || r.cause != CauseTrigger {
		t.Fatalf("started %v", r)
	}
	// Now 50 commits while view 1 runs: one more run after it.
	for i := 0; i < 50; i++ {
		h.s.Committed(map[uint32]int64{100: int64(50 + i)})
	}
	g.open(1)
	h.settle()
	if n := len(h.recorded(1)); n != 2 {
		t.Fatalf("view 1 ran %d times, want 2", n)
	}
	if n := len(h.recorded(2)); n != 1 {
		t.Fatalf("view 2 ran %d times, want 1", n)
	}
	// A commit to a table nobody reads: nothing.
	h.s.Committed(map[uint32]int64{999: 1})
	h.settle()
	if n := len(h.recorded()); n != 3 {
		t.Fatalf("%d runs", n)
	}
}

// TestTriggerThrottledDuringRun: changes while a throttled view refreshes
// run once more, no sooner than the window after that run's start.
func TestTriggerThrottledDuringRun(t *testing.T) {
	h := newHarness(t, t0, nil)
	g := newGate()
	h.setHook(g.hook)
	h.upsert(triggerSpec(1, 60, []uint32{100}, nil))
	h.s.Start()
	h.s.Committed(map[uint32]int64{100: 1})
	g.next(t) // started at t0
	h.clock.Advance(10 * time.Second)
	for i := 0; i < 5; i++ {
		h.s.Committed(map[uint32]int64{100: int64(2 + i)})
	}
	if next, _ := h.s.NextRun(1); !next.Equal(t0.Add(time.Minute)) {
		t.Fatalf("NextRun %s", next)
	}
	g.open(1)
	h.settle()
	if n := len(h.recorded(1)); n != 1 {
		t.Fatalf("%d runs before the window's end", n)
	}
	h.advance(time.Minute)
	checkRuns(t, h.recorded(1), CauseTrigger, []time.Time{t0, t0.Add(time.Minute)})
}

// TestTriggerChain: B reads view A; A's refresh committing triggers B, which
// runs after A's refresh ended. Both Refreshed(A) and Committed({A}) work.
func TestTriggerChain(t *testing.T) {
	h := newHarness(t, t0, func(c *Config) { c.MaxConcurrent = 1 }) // serial: a deterministic order
	const a, b, c = 1, 2, 3
	h.upsert(triggerSpec(a, 0, []uint32{100}, nil))
	h.upsert(triggerSpec(b, 0, nil, []uint32{a}))
	h.upsert(triggerSpec(c, 0, []uint32{100}, []uint32{a})) // reads both: runs for each, coalesced
	h.s.Start()
	var order []string
	h.setHook(func(ctx context.Context, view uint32, cause Cause) error {
		order = append(order, fmt.Sprintf("start %d", view))
		if view == a {
			h.s.Refreshed(a) // what the refresh runner does after its commit
			h.s.Committed(map[uint32]int64{a: 5})
		}
		order = append(order, fmt.Sprintf("end %d", view))
		return nil
	})
	h.s.Committed(map[uint32]int64{100: 1})
	h.settle()
	got := strings.Join(order, ", ")
	// A and C were queued by the commit of 100 (A first); A's refresh
	// triggered B (queued) and C (already queued: covered).
	want := "start 1, end 1, start 3, end 3, start 2, end 2"
	if got != want {
		t.Fatalf("order %s, want %s", got, want)
	}
}

// TestTriggerLimits (R-S3): at most 10 upstream tables and 30 upstream
// views per triggered dataset, 1000 triggered datasets; each error names
// the numbers.
func TestTriggerLimits(t *testing.T) {
	h := newHarness(t, t0, nil)
	ids := func(from, n int) []uint32 {
		var out []uint32
		for i := 0; i < n; i++ {
			out = append(out, uint32(from+i))
		}
		return out
	}
	expectLimit := func(err error, numbers ...string) {
		t.Helper()
		if pgerror.Code(err) != pgerror.ProgramLimitExceeded {
			t.Fatalf("%v, want 54000", err)
		}
		for _, n := range numbers {
			if !strings.Contains(err.Error(), n) {
				t.Fatalf("%q does not name %s", err, n)
			}
		}
	}
	if err := h.s.Upsert(triggerSpec(1, 0, ids(100, 10), ids(500, 30))); err != nil {
		t.Fatalf("10 tables and 30 views: %v", err)
	}
	expectLimit(h.s.Upsert(triggerSpec(2, 0, ids(100, 11), nil)), "11", "10")
	expectLimit(h.s.Upsert(triggerSpec(2, 0, nil, ids(500, 31))), "31", "30")
	// Duplicates and self count once / not at all.
	if err := h.s.Upsert(triggerSpec(2, 0, append(ids(100, 10), ids(100, 10)...), []uint32{2})); err != nil {
		t.Fatalf("duplicates: %v", err)
	}
	// A scheduled view may read any number of sources.
	s := cronSpec(3, "0 0 * * * ?", "")
	s.Tables = ids(100, 50)
	if err := h.s.Upsert(s); err != nil {
		t.Fatalf("scheduled with 50 tables: %v", err)
	}
	// 1000 triggered datasets: 1 and 2 exist; add 998 more.
	for id := 10000; id < 10000+998; id++ {
		if err := h.s.Upsert(triggerSpec(uint32(id), 0, []uint32{100}, nil)); err != nil {
			t.Fatalf("dataset %d: %v", id, err)
		}
	}
	expectLimit(h.s.Upsert(triggerSpec(5000, 0, []uint32{100}, nil)), "1000")
	// Switching a scheduled view to a trigger counts too.
	expectLimit(h.s.Upsert(triggerSpec(3, 0, []uint32{100}, nil)), "1000")
	// Changing one of the thousand is fine; removing one frees a place.
	if err := h.s.Upsert(triggerSpec(10000, 60, []uint32{101}, nil)); err != nil {
		t.Fatalf("ALTER at the limit: %v", err)
	}
	h.s.Remove(10001)
	if err := h.s.Upsert(triggerSpec(5000, 0, []uint32{100}, nil)); err != nil {
		t.Fatalf("after a DROP: %v", err)
	}
	// Switching one away from its trigger frees a place as well.
	h.upsert(everySpec(10002, 1, "HOUR"))
	if err := h.s.Upsert(triggerSpec(5001, 0, []uint32{100}, nil)); err != nil {
		t.Fatalf("after a switch to a schedule: %v", err)
	}
	// The index follows the changes: 10000 now reads 101 only, 10001 is
	// gone, 10002 is scheduled; 1 and 2 read 100-109.
	h.s.mu.Lock()
	n100, n101 := len(h.s.bySource[100]), len(h.s.bySource[101])
	h.s.mu.Unlock()
	if n100 != 2+995+2 || n101 != 3 {
		t.Fatalf("readers of 100: %d, of 101: %d; want 999 and 3", n100, n101)
	}
}

// TestTriggerRetriesFailure: a triggered run that fails is retried after
// 10 s, 40 s and 160 s, then waits for the next commit; a success resets
// the count.
func TestTriggerRetriesFailure(t *testing.T) {
	h := newHarness(t, t0, nil)
	h.upsert(triggerSpec(1, 0, []uint32{100}, nil))
	h.s.Start()
	h.setHook(func(ctx context.Context, view uint32, cause Cause) error {
		return pgerror.New(pgerror.SerializationFailure, "could not serialize access")
	})
	h.s.Committed(map[uint32]int64{100: 1})
	h.settle()
	h.advance(10 * time.Minute)
	got := h.recorded(1)
	if len(got) != 4 {
		t.Fatalf("%d runs, want the failed one and 3 retries: %v", len(got), got)
	}
	for i, want := range []time.Duration{0, 10 * time.Second, 50 * time.Second, 210 * time.Second} {
		if !got[i].at.Equal(t0.Add(want)) || got[i].cause != CauseTrigger {
			t.Fatalf("run %d at %s (%s), want %s", i, got[i].at, got[i].cause, t0.Add(want))
		}
	}
	// The next commit runs again; once it succeeds, a later failure gets
	// its retries back.
	h.setHook(nil)
	h.s.Committed(map[uint32]int64{100: 2})
	h.settle()
	if n := len(h.recorded(1)); n != 5 {
		t.Fatalf("%d runs after the next commit, want 5", n)
	}
	h.setHook(func(ctx context.Context, view uint32, cause Cause) error {
		return fmt.Errorf("disk full")
	})
	h.s.Committed(map[uint32]int64{100: 3})
	h.settle()
	h.advance(11 * time.Second)
	if n := len(h.recorded(1)); n != 7 {
		t.Fatalf("%d runs, want a retry 10 s after a new failure (7)", n)
	}
}
