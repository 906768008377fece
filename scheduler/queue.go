package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/mvserver/mvserver/pgerror"
)

// request is one queued or running refresh.
type request struct {
	cause Cause
	ctx   context.Context // RunNow: the caller's; nil for automatic runs
	done  chan error      // RunNow: receives the run's error (buffered)

	started bool
	cancel  context.CancelCauseFunc
	timeout Timer
}

// urgent reports whether the view goes before standard views: it is
// optimized or a manual refresh waits for it (R-S9).
func (v *view) urgent() bool { return len(v.manual) > 0 || v.spec.Optimized }

func (v *view) timeout() time.Duration {
	if v.spec.Timeout > 0 {
		return v.spec.Timeout
	}
	return DefaultTimeout
}

// requestAuto asks for a scheduled, triggered or catch-up run. A run that
// is queued already starts after now and so covers this request; while the
// view runs, a trigger or catch-up request runs once more after it and a
// scheduled one is coalesced into the running one (skipped is true).
func (s *Scheduler) requestAuto(v *view, cause Cause) (skipped bool) {
	if v.auto != nil || len(v.manual) > 0 {
		return false
	}
	if v.running != nil {
		if cause == CauseSchedule {
			return true
		}
		v.rerun = true
		return false
	}
	v.auto = &request{cause: cause}
	s.wait(v)
	return false
}

// wait puts the view in the queue, keeping its place if it is there.
func (s *Scheduler) wait(v *view) {
	if v.waitSeq != 0 {
		return
	}
	s.seq++
	v.waitSeq = s.seq
	s.waiting = append(s.waiting, v)
}

// unwait takes the view out of the queue when nothing of it waits.
func (s *Scheduler) unwait(v *view) {
	if v.waitSeq == 0 || v.auto != nil || len(v.manual) > 0 {
		return
	}
	v.waitSeq = 0
	for i, w := range s.waiting {
		if w == v {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			break
		}
	}
}

// pick returns the view whose request runs next: not running, urgent before
// standard, then first come. Before Start only manual requests run.
func (s *Scheduler) pick() *view {
	var best *view
	for _, v := range s.waiting {
		if v.running != nil || (!s.started && len(v.manual) == 0) {
			continue
		}
		if best == nil || v.urgent() && !best.urgent() || v.urgent() == best.urgent() && v.waitSeq < best.waitSeq {
			best = v
		}
	}
	return best
}

// dispatch starts queued requests while slots are free.
func (s *Scheduler) dispatch() {
	for !s.stopped && s.running < s.cfg.MaxConcurrent {
		v := s.pick()
		if v == nil {
			break
		}
		var req *request
		if len(v.manual) > 0 {
			// A manual run starting now also covers a queued automatic one.
			req, v.manual, v.auto = v.manual[0], v.manual[1:], nil
		} else {
			req, v.auto = v.auto, nil
		}
		s.unwait(v)
		s.start(v, req)
	}
	s.broadcast()
}

// start runs req for v in a new goroutine.
func (s *Scheduler) start(v *view, req *request) {
	now := s.clock.Now()
	req.started = true
	v.running = req
	s.running++
	v.lastStart = now
	if v.timing.every > 0 {
		// R-S2: EVERY n counts from the last run, whatever its cause.
		s.arm(v, s.nextOccurrence(v, now), now)
	}
	parent := context.Background()
	if req.ctx != nil {
		parent = req.ctx
	}
	inner, cancel := context.WithCancelCause(parent)
	ctx := &runContext{Context: inner}
	req.cancel = cancel
	if req.cause != CauseManual {
		d := v.timeout()
		ctx.deadline, ctx.hasDeadline = now.Add(d), true
		req.timeout = s.clock.AfterFunc(d, func() { cancel(context.DeadlineExceeded) })
	}
	s.wg.Add(1)
	go s.execute(v, req, ctx)
}

// execute runs one refresh and settles the view afterwards.
func (s *Scheduler) execute(v *view, req *request, ctx *runContext) {
	defer s.wg.Done()
	err := s.call(ctx, v.id, req.cause)
	if req.timeout != nil {
		req.timeout.Stop()
	}
	req.cancel(context.Canceled) // releases the context; a cause set before stays

	s.mu.Lock()
	v.running = nil
	s.running--
	s.retryFailed(v, req, ctx, err)
	if v.rerun {
		v.rerun = false
		if !s.stopped && v.registered {
			s.changed(v)
		}
	}
	name := v.spec.Name
	s.forget(v)
	s.dispatch()
	s.mu.Unlock()

	if req.done != nil {
		req.done <- err
		return
	}
	switch {
	case err == nil:
	case errors.Is(context.Cause(ctx), ErrCanceled), errors.Is(context.Cause(ctx), ErrStopped), errors.Is(context.Cause(ctx), ErrRemoved):
		s.log.Info("refresh canceled", "view", name, "id", v.id, "cause", string(req.cause), "reason", context.Cause(ctx))
	default:
		s.log.Warn("refresh failed", "view", name, "id", v.id, "cause", string(req.cause), "error", err)
	}
}

// call runs the RunFunc, turning a panic into an internal error: a bug in
// one refresh must not take the server down.
func (s *Scheduler) call(ctx context.Context, id uint32, cause Cause) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("refresh panicked", "id", id, "cause", string(cause), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = pgerror.New(pgerror.InternalError, "refresh panicked: %v", r)
		}
	}()
	return s.cfg.Run(ctx, id, cause)
}

// forget drops a view known only through RunNow once nothing of it is left.
func (s *Scheduler) forget(v *view) {
	if !v.registered && v.running == nil && v.auto == nil && len(v.manual) == 0 && s.views[v.id] == v {
		s.disarm(v)
		delete(s.views, v.id)
	}
}

// RunNow runs a refresh of view id through the queue and returns its error
// (R-S1): it waits behind a running refresh of the same view and for a free
// slot, going before automatic runs of standard views (R-S9: manual
// refreshes run as optimized). The run's context derives from ctx (a
// cancel request stops it) and has no other timeout. If ctx ends while the
// request waits, it leaves the queue and RunNow returns ctx.Err(); once
// started, RunNow waits for the run to return. A queued automatic run of
// the view is covered by the manual one and dropped. Any view id may be
// given, Upserted or not.
func (s *Scheduler) RunNow(ctx context.Context, id uint32, cause Cause) error {
	if cause == "" {
		cause = CauseManual
	}
	s.mu.Lock()
	if s.stopped {
		s.mu.Unlock()
		return ErrStopped
	}
	v := s.views[id]
	if v == nil {
		v = &view{id: id, spec: ViewSpec{ID: id}}
		s.views[id] = v
	}
	req := &request{cause: cause, ctx: ctx, done: make(chan error, 1)}
	v.manual = append(v.manual, req)
	s.wait(v)
	s.dispatch()
	s.mu.Unlock()

	select {
	case err := <-req.done:
		return err
	case <-ctx.Done():
	}
	s.mu.Lock()
	if !req.started {
		for i, r := range v.manual {
			if r == req {
				v.manual = append(v.manual[:i], v.manual[i+1:]...)
				s.unwait(v)
				s.forget(v)
				s.broadcast()
				s.mu.Unlock()
				return ctx.Err()
			}
		}
	}
	s.mu.Unlock()
	// It started (and its context is canceled with ctx), or Stop failed it.
	return <-req.done
}

// Cancel stops the automatic and running refreshes of a view (CANCEL
// REFRESH, R-S5): the running refresh's context is canceled (cause
// ErrCanceled), and a queued automatic run, a run owed to changes that
// came during the running one and a pending AT MOST EVERY window are
// dropped; later commits and schedule occurrences run as usual. Queued
// manual refreshes, which belong to their sessions, stay. It reports
// whether there was anything to cancel.
func (s *Scheduler) Cancel(id uint32) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.views[id]
	if v == nil {
		return false
	}
	did := false
	if v.running != nil {
		v.running.cancel(ErrCanceled)
		did = true
	}
	if v.auto != nil {
		v.auto = nil
		s.unwait(v)
		did = true
	}
	if v.rerun {
		v.rerun = false
		did = true
	}
	if !v.pendingSince.IsZero() {
		v.pendingSince = time.Time{}
		s.disarm(v)
		did = true
	}
	s.broadcast()
	return did
}

// runContext is a run's context: its cancellation is the inner context's,
// but its deadline is on the scheduler's Clock, so a fake clock times runs
// out too (R-S4). Err reports context.DeadlineExceeded once the timeout
// fired.
type runContext struct {
	context.Context
	deadline    time.Time
	hasDeadline bool
}

func (c *runContext) Deadline() (time.Time, bool) {
	if c.hasDeadline {
		return c.deadline, true
	}
	return c.Context.Deadline()
}

func (c *runContext) Err() error {
	err := c.Context.Err()
	if err != nil && c.hasDeadline && errors.Is(context.Cause(c.Context), context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}

// Retries of a triggered view's failed automatic run: the change it was
// to refresh is still pending (its checkpoint did not move), so it runs
// again after 10 s, 40 s, 160 s — as if a source changed, within AT MOST
// EVERY — then waits for the next commit (a failure that repeats is not
// transient). A success resets the count; a run stopped by CANCEL REFRESH,
// DROP or shutdown is not retried.
const (
	triggerRetries    = 3
	triggerRetryFirst = 10 * time.Second
)

func (s *Scheduler) retryFailed(v *view, req *request, ctx *runContext, err error) {
	if v.spec.Trigger == nil || req.cause == CauseManual {
		return
	}
	if err == nil {
		v.retries = 0
		return
	}
	cause := context.Cause(ctx)
	if errors.Is(cause, ErrCanceled) || errors.Is(cause, ErrStopped) || errors.Is(cause, ErrRemoved) || s.stopped || !v.registered || v.retries >= triggerRetries {
		return
	}
	delay := triggerRetryFirst << (2 * v.retries)
	v.retries++
	s.clock.AfterFunc(delay, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.stopped || s.views[v.id] != v || !v.registered {
			return
		}
		s.log.Info("retrying a failed triggered refresh", "view", v.spec.Name, "id", v.id, "attempt", v.retries)
		s.changed(v)
		s.dispatch()
	})
}
