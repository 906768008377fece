package scheduler

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// Cause says why a refresh ran (R-S6 "trigger cause").
type Cause string

// The causes of a refresh.
const (
	CauseSchedule       Cause = "SCHEDULE"
	CauseTrigger        Cause = "TRIGGER"
	CauseStartupCatchUp Cause = "STARTUP_CATCHUP"
	CauseManual         Cause = "MANUAL"
)

// RunFunc runs one refresh of a view. The scheduler calls it in a goroutine
// of its own, never for one view twice at once; it only logs the error of a
// scheduled or triggered run (RunNow hands it to its caller). ctx.Err() is
// context.DeadlineExceeded when the view's timeout fired (R-S4) and
// context.Canceled otherwise; context.Cause(ctx) tells ErrCanceled (CANCEL
// REFRESH), ErrStopped (shutdown) and ErrRemoved (DROP) apart.
type RunFunc func(ctx context.Context, view uint32, cause Cause) error

// Defaults and limits (R-S3, R-S4).
const (
	DefaultMaxConcurrent      = 2
	DefaultTriggerMinInterval = time.Minute
	DefaultTimeout            = 48 * time.Hour
	MaxTriggerTables          = 10
	MaxTriggerViews           = 30
	MaxTriggeredDatasets      = 1000
)

// The causes of a canceled run's context (context.Cause) and RunNow's
// errors.
var (
	ErrCanceled = pgerror.New(pgerror.QueryCanceled, "canceling refresh due to CANCEL REFRESH")
	ErrStopped  = pgerror.New(pgerror.AdminShutdown, "canceling refresh because the server is shutting down")
	ErrRemoved  = pgerror.New(pgerror.QueryCanceled, "canceling refresh because the materialized view was dropped")
)

// ViewSpec is what the scheduler knows of a view: its schedule or trigger
// and what its runs need. Tables and Views are its upstream sources (R-S3):
// Tables the base tables it reads (those behind plain views included),
// Views the materialized views and streaming tables it reads; a commit of
// either, or a refresh of one of the Views, triggers it.
type ViewSpec struct {
	ID       uint32
	Name     string // for errors and logs
	Schedule *catalog.Schedule
	Trigger  *catalog.Trigger
	Tables   []uint32
	Views    []uint32
	// Timeout bounds each scheduled and triggered run (R-S4); 0 means
	// DefaultTimeout. Manual runs are bounded by their caller's context.
	Timeout time.Duration
	// Optimized is pipelines.performanceMode = 'optimized' (R-S9).
	Optimized bool
	// LastRun is when the view's last refresh started (zero: unknown). EVERY
	// counts from it, AT MOST EVERY measures from it, and CatchUp compares
	// the schedule with it.
	LastRun time.Time
	// CatchUp marks the Upsert at server start (R-S8): a scheduled view
	// whose schedule had an occurrence in (LastRun, now] runs once with
	// cause STARTUP_CATCHUP; a triggered view runs once (a NO_OP when none
	// of its sources moved), so changes committed before a crash are not
	// lost.
	CatchUp bool
}

// Config configures a Scheduler. Run is required.
type Config struct {
	Clock Clock   // nil: RealClock
	Run   RunFunc // runs one refresh
	// MaxConcurrent bounds the refreshes running at once (≤ 0: 2).
	MaxConcurrent int
	// TriggerMinInterval is the least AT MOST EVERY window (R-S3): a shorter
	// one is raised to it. 0 means 1 minute; negative means no minimum.
	TriggerMinInterval time.Duration
	// Skipped, if set, is told of a scheduled occurrence that fell due
	// while the view was still refreshing and was coalesced into that run
	// (R-S6 status SKIPPED). It is called without the scheduler's lock.
	Skipped func(view uint32, cause Cause, due time.Time)
	Logger  *slog.Logger // nil: slog.Default()
}

// Scheduler fires scheduled and triggered refreshes and runs every refresh,
// manual ones too, through one queue. See the package documentation.
type Scheduler struct {
	cfg   Config
	clock Clock
	log   *slog.Logger

	mu        sync.Mutex
	views     map[uint32]*view
	bySource  map[uint32]map[uint32]struct{} // source id → triggered views
	triggered int                            // views with a trigger
	waiting   []*view                        // views with a queued request
	running   int
	seq       uint64
	started   bool
	stopped   bool
	bcast     chan struct{} // closed on every state change (tests wait on it)
	wg        sync.WaitGroup
}

// view is the scheduler's state of one view.
type view struct {
	id   uint32
	spec ViewSpec
	// retries counts failed automatic runs of a triggered view in a row
	// (queue.go retryFailed).
	retries    int
	registered bool // Upserted (not only known through RunNow)
	timing     timing
	window     time.Duration // trigger throttle; 0 = none
	since      time.Time     // last Upsert: EVERY counts from it until a run
	lastStart  time.Time     // start of the last run (any cause)

	// The one timer of a view: the next scheduled occurrence, or the end
	// of the AT MOST EVERY window holding coalesced changes.
	next  time.Time
	timer Timer
	gen   uint64 // invalidates a timer callback already under way

	pendingSince time.Time // trigger: first change waiting for the window's end

	auto    *request   // queued SCHEDULE/TRIGGER/STARTUP_CATCHUP run
	manual  []*request // queued RunNow requests, in order
	running *request
	rerun   bool   // a change arrived while running: run once more after
	waitSeq uint64 // position in the queue (0 = not waiting)
}

// New returns a scheduler; it fires nothing until Start.
func New(cfg Config) *Scheduler {
	if cfg.Run == nil {
		panic("scheduler: Config.Run is nil")
	}
	if cfg.Clock == nil {
		cfg.Clock = RealClock()
	}
	if cfg.MaxConcurrent <= 0 {
		cfg.MaxConcurrent = DefaultMaxConcurrent
	}
	if cfg.TriggerMinInterval == 0 {
		cfg.TriggerMinInterval = DefaultTriggerMinInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Scheduler{
		cfg:      cfg,
		clock:    cfg.Clock,
		log:      cfg.Logger,
		views:    map[uint32]*view{},
		bySource: map[uint32]map[uint32]struct{}{},
	}
}

// Start begins running scheduled, triggered and catch-up refreshes (manual
// ones run before Start too). Upsert every view, with CatchUp, first.
func (s *Scheduler) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.started = true
	s.dispatch()
}

// Stop disarms every timer, fails queued manual requests with ErrStopped,
// cancels the running refreshes (cause ErrStopped) and waits until they
// have returned, or until ctx is done (then it returns ctx.Err()). Every
// goroutine of the scheduler has ended when Stop returns nil. Later calls
// do nothing but wait.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		for _, v := range s.views {
			s.disarm(v)
			v.auto, v.rerun, v.pendingSince, v.waitSeq = nil, false, time.Time{}, 0
			for _, r := range v.manual {
				r.done <- ErrStopped
			}
			v.manual = nil
			if v.running != nil {
				v.running.cancel(ErrStopped)
			}
		}
		s.waiting = nil
		s.broadcast()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Upsert adds a view or changes its schedule, trigger and settings (CREATE,
// ALTER … SCHEDULE/TRIGGER, CREATE OR REPLACE, server start). A change takes
// effect at once: the old timer is disarmed and the new schedule armed; a
// refresh running now finishes. It checks the schedule (22023, 0A000 for
// Quartz's L, W, #) and the trigger limits (54000), changing nothing on
// error.
func (s *Scheduler) Upsert(spec ViewSpec) error {
	if spec.Schedule != nil && spec.Trigger != nil {
		return pgerror.New(pgerror.InvalidObjectDefinition, "materialized view \"%s\" cannot have both a schedule and a trigger", spec.Name)
	}
	var tm timing
	var window time.Duration
	if spec.Schedule != nil {
		var err error
		if tm, err = compileSchedule(spec.Schedule); err != nil {
			return err
		}
	}
	// Keep copies: the caller's catalog objects may change under it.
	if spec.Schedule != nil {
		sc := *spec.Schedule
		spec.Schedule = &sc
	}
	if spec.Trigger != nil {
		tr := *spec.Trigger
		spec.Trigger = &tr
	}
	spec.Tables = distinct(spec.Tables, spec.ID)
	spec.Views = distinct(spec.Views, spec.ID)
	if spec.Trigger != nil {
		if err := checkSources(spec); err != nil {
			return err
		}
		window = s.window(spec.Trigger)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	v := s.views[spec.ID]
	wasTriggered := v != nil && v.registered && v.spec.Trigger != nil
	if spec.Trigger != nil && !wasTriggered && s.triggered >= MaxTriggeredDatasets {
		return pgerror.New(pgerror.ProgramLimitExceeded, "cannot add TRIGGER ON UPDATE to \"%s\": the server already has %d triggered datasets, the limit", spec.Name, MaxTriggeredDatasets).
			WithHint("Use SCHEDULE for some of them.")
	}
	if v == nil {
		v = &view{id: spec.ID}
		s.views[spec.ID] = v
	}
	if wasTriggered {
		s.unindex(v)
		s.triggered--
	}
	now := s.clock.Now()
	v.spec, v.registered, v.timing, v.window, v.since = spec, true, tm, window, now
	if spec.LastRun.After(v.lastStart) {
		v.lastStart = spec.LastRun
	}
	if spec.Trigger != nil {
		s.index(v)
		s.triggered++
	} else {
		v.rerun, v.pendingSince = false, time.Time{}
	}
	s.reschedule(v, now)
	if spec.CatchUp && s.missed(v, now) {
		s.requestAuto(v, CauseStartupCatchUp)
	}
	s.dispatch()
	return nil
}

// Remove forgets a view (DROP): its timer is disarmed, its queued automatic
// run dropped and its running refresh canceled (cause ErrRemoved). Queued
// manual refreshes still run (and find the view gone).
func (s *Scheduler) Remove(id uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.views[id]
	if v == nil {
		return
	}
	s.disarm(v)
	if v.registered && v.spec.Trigger != nil {
		s.unindex(v)
		s.triggered--
	}
	v.registered, v.spec, v.timing, v.window = false, ViewSpec{ID: id}, timing{}, 0
	v.rerun, v.pendingSince, v.auto = false, time.Time{}, nil
	s.unwait(v)
	if v.running != nil {
		v.running.cancel(ErrRemoved)
	}
	s.forget(v)
	s.broadcast()
}

// NextRun returns when the view runs next on its own: its next scheduled
// occurrence, or the end of the AT MOST EVERY window holding changes
// (DESCRIBE EXTENDED, R-S6).
func (s *Scheduler) NextRun(id uint32) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.views[id]
	if v == nil || v.next.IsZero() {
		return time.Time{}, false
	}
	return v.next, true
}

// reschedule arms the view's timer for its schedule, or for the end of a
// pending trigger window, after an Upsert.
func (s *Scheduler) reschedule(v *view, now time.Time) {
	s.disarm(v)
	switch {
	case v.timing.scheduled():
		if n := s.nextOccurrence(v, now); !n.IsZero() {
			s.arm(v, n, now)
		}
	case v.spec.Trigger != nil && !v.pendingSince.IsZero():
		due := v.lastStart.Add(v.window)
		if due.Before(v.pendingSince) {
			due = v.pendingSince
		}
		if !due.After(now) {
			v.pendingSince = time.Time{}
			s.requestAuto(v, CauseTrigger)
			return
		}
		s.arm(v, due, now)
	}
}

// nextOccurrence returns the view's first scheduled occurrence after t.
func (s *Scheduler) nextOccurrence(v *view, t time.Time) time.Time {
	if v.timing.cron != nil {
		return v.timing.cron.Next(t)
	}
	anchor := v.lastStart
	if anchor.IsZero() {
		anchor = v.since
	}
	return v.timing.everyAfter(anchor, t)
}

// missed reports whether a CatchUp Upsert must run the view once (R-S8).
func (s *Scheduler) missed(v *view, now time.Time) bool {
	switch {
	case v.spec.Trigger != nil:
		return true
	case !v.timing.scheduled() || v.spec.LastRun.IsZero():
		return false
	case v.timing.cron != nil:
		n := v.timing.cron.Next(v.spec.LastRun)
		return !n.IsZero() && !n.After(now)
	default:
		return !v.spec.LastRun.Add(v.timing.every).After(now)
	}
}

// arm sets the view's one timer for due.
func (s *Scheduler) arm(v *view, due, now time.Time) {
	s.disarm(v)
	v.next = due
	gen := v.gen
	v.timer = s.clock.AfterFunc(due.Sub(now), func() { s.fire(v, gen) })
}

func (s *Scheduler) disarm(v *view) {
	if v.timer != nil {
		v.timer.Stop()
		v.timer = nil
	}
	v.next = time.Time{}
	v.gen++
}

// fire handles the view's timer: a scheduled occurrence or the end of a
// trigger window.
func (s *Scheduler) fire(v *view, gen uint64) {
	s.mu.Lock()
	if s.stopped || s.views[v.id] != v || v.gen != gen {
		s.mu.Unlock()
		return
	}
	now := s.clock.Now()
	due := v.next
	if now.Before(due) {
		// Early against the wall clock (it was set back): wait on.
		s.arm(v, due, now)
		s.mu.Unlock()
		return
	}
	v.timer, v.next = nil, time.Time{}
	name := v.spec.Name
	skipped := false
	switch {
	case v.timing.scheduled():
		skipped = s.requestAuto(v, CauseSchedule)
		after := now
		if due.After(after) {
			after = due
		}
		if n := s.nextOccurrence(v, after); !n.IsZero() {
			s.arm(v, n, now)
		}
	case v.spec.Trigger != nil:
		v.pendingSince = time.Time{}
		s.requestAuto(v, CauseTrigger)
	}
	s.dispatch()
	s.mu.Unlock()
	if skipped {
		s.log.Info("scheduled refresh skipped: the previous refresh is still running", "view", name, "id", v.id, "due", due)
		if s.cfg.Skipped != nil {
			s.cfg.Skipped(v.id, CauseSchedule, due)
		}
	}
}

// broadcast wakes whoever waits for a state change (tests).
func (s *Scheduler) broadcast() {
	if s.bcast != nil {
		close(s.bcast)
		s.bcast = nil
	}
}

// stateChanged returns a channel closed at the next state change; call it
// with s.mu held.
func (s *Scheduler) stateChanged() <-chan struct{} {
	if s.bcast == nil {
		s.bcast = make(chan struct{})
	}
	return s.bcast
}
