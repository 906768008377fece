package scheduler

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/mvserver/mvserver/catalog"
)

// TestMain fails the package if any test leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitLimit bounds every wait of these tests; nothing here takes more than
// a few milliseconds unless a test is broken.
const waitLimit = 10 * time.Second

var discard = slog.New(slog.NewTextHandler(io.Discard, nil))

// start of the fake clock: Monday 2 March 2026, 00:00 UTC.
var t0 = utc("2026-03-02T00:00:00Z")

type runRec struct {
	view  uint32
	cause Cause
	at    time.Time
}

// harness is a scheduler on a fake clock whose RunFunc records each run and
// then calls hook (if set).
type harness struct {
	t     *testing.T
	clock *FakeClock
	s     *Scheduler

	mu   sync.Mutex
	runs []runRec
	hook func(ctx context.Context, view uint32, cause Cause) error
}

func newHarness(t *testing.T, start time.Time, configure func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, clock: NewFakeClock(start)}
	cfg := Config{Clock: h.clock, Run: h.run, Logger: discard}
	if configure != nil {
		configure(&cfg)
	}
	h.s = New(cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := h.s.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return h
}

func (h *harness) run(ctx context.Context, view uint32, cause Cause) error {
	h.mu.Lock()
	h.runs = append(h.runs, runRec{view, cause, h.clock.Now()})
	hook := h.hook
	h.mu.Unlock()
	if hook != nil {
		return hook(ctx, view, cause)
	}
	return nil
}

func (h *harness) setHook(f func(ctx context.Context, view uint32, cause Cause) error) {
	h.mu.Lock()
	h.hook = f
	h.mu.Unlock()
}

// recorded returns the runs so far (of the given views; all if none).
func (h *harness) recorded(views ...uint32) []runRec {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []runRec
	for _, r := range h.runs {
		if len(views) == 0 || containsID(views, r.view) {
			out = append(out, r)
		}
	}
	return out
}

func containsID(ids []uint32, id uint32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// waitFor waits until cond, evaluated under the scheduler's lock, holds.
func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.NewTimer(waitLimit)
	defer deadline.Stop()
	for {
		h.s.mu.Lock()
		ok := cond()
		ch := h.s.stateChanged()
		h.s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			h.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// settle waits until no refresh runs and none can start.
func (h *harness) settle() {
	h.t.Helper()
	h.waitFor("the scheduler to settle", func() bool { return h.s.running == 0 && h.s.pick() == nil })
}

// advance moves the clock by d one timer at a time, letting the refreshes
// each timer starts finish before the next.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.advanceTo(h.clock.Now().Add(d))
}

func (h *harness) advanceTo(target time.Time) {
	h.t.Helper()
	h.settle()
	for {
		at, ok := h.clock.NextTimer()
		if !ok || at.After(target) {
			break
		}
		h.clock.AdvanceTo(at)
		h.settle()
	}
	h.clock.AdvanceTo(target)
	h.settle()
}

func (h *harness) upsert(spec ViewSpec) {
	h.t.Helper()
	if spec.Name == "" {
		spec.Name = "v"
	}
	if err := h.s.Upsert(spec); err != nil {
		h.t.Fatalf("Upsert %d: %v", spec.ID, err)
	}
}

func cronSpec(id uint32, expr, zone string) ViewSpec {
	return ViewSpec{ID: id, Name: "cron view", Schedule: &catalog.Schedule{Cron: expr, TimeZone: zone}}
}

func everySpec(id uint32, n int, unit string) ViewSpec {
	return ViewSpec{ID: id, Name: "every view", Schedule: &catalog.Schedule{Every: n, Unit: unit}}
}

func triggerSpec(id uint32, atMostEverySeconds int64, tables []uint32, views []uint32) ViewSpec {
	return ViewSpec{ID: id, Name: "triggered view", Trigger: &catalog.Trigger{AtMostEverySeconds: atMostEverySeconds}, Tables: tables, Views: views}
}

// gate makes runs block until released, and tells when each starts.
type gate struct {
	started chan runRec
	mu      sync.Mutex
	release map[uint32]chan struct{}
}

func newGate() *gate {
	return &gate{started: make(chan runRec, 1000), release: map[uint32]chan struct{}{}}
}

func (g *gate) ch(view uint32) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c := g.release[view]
	if c == nil {
		c = make(chan struct{})
		g.release[view] = c
	}
	return c
}

// hook blocks a run of view until open(view) or its context ends.
func (g *gate) hook(ctx context.Context, view uint32, cause Cause) error {
	g.started <- runRec{view: view, cause: cause}
	select {
	case <-g.ch(view):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// open lets the current and every later run of view through.
func (g *gate) open(view uint32) { close(g.ch(view)) }

// next returns the next run to start.
func (g *gate) next(t *testing.T) runRec {
	t.Helper()
	select {
	case r := <-g.started:
		return r
	case <-time.After(waitLimit):
		t.Fatal("timed out waiting for a run to start")
		return runRec{}
	}
}

// none checks that no run has started (call after settling the scheduler).
func (g *gate) none(t *testing.T) {
	t.Helper()
	select {
	case r := <-g.started:
		t.Fatalf("unexpected run of %d (%s)", r.view, r.cause)
	default:
	}
}
