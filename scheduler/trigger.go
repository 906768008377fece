package scheduler

import "slices"

// Committed is storage's commit hook (R-S3): the tables (or views) with
// these ids got new versions, so the triggered views reading them directly
// refresh. It never blocks on a refresh.
func (s *Scheduler) Committed(tables map[uint32]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	ids := make([]uint32, 0, len(tables))
	for id := range tables {
		ids = append(ids, id)
	}
	s.sourcesChanged(ids)
}

// Refreshed tells that a refresh of view committed new rows: the triggered
// views above it refresh in turn (chains). Calling it as well as passing
// the view's commit to Committed is harmless: the requests coalesce.
func (s *Scheduler) Refreshed(view uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	s.sourcesChanged([]uint32{view})
}

// sourcesChanged asks the views reading any of ids to refresh, in view id
// order, so views triggered together queue in a reproducible order.
func (s *Scheduler) sourcesChanged(ids []uint32) {
	var readers []uint32
	for _, id := range ids {
		for vid := range s.bySource[id] {
			readers = append(readers, vid)
		}
	}
	if len(readers) == 0 {
		return
	}
	slices.Sort(readers)
	for i, vid := range readers {
		if i > 0 && readers[i-1] == vid {
			continue
		}
		if v := s.views[vid]; v != nil {
			s.changed(v)
		}
	}
	s.dispatch()
}

// changed asks a triggered view to refresh after a change of a source.
// Without AT MOST EVERY it runs as soon as a slot is free; with a window w,
// the first change at t0 runs at max(t0, last start + w), and changes
// until then join that run. A queued run covers the change (it starts
// later); a running one owes one more run after it.
func (s *Scheduler) changed(v *view) {
	if v.spec.Trigger == nil || v.auto != nil || len(v.manual) > 0 {
		return
	}
	if v.window == 0 {
		s.requestAuto(v, CauseTrigger)
		return
	}
	if !v.pendingSince.IsZero() {
		return // inside the window: coalesced into its run
	}
	now := s.clock.Now()
	due := v.lastStart.Add(v.window)
	if !due.After(now) {
		s.requestAuto(v, CauseTrigger)
		return
	}
	v.pendingSince = now
	s.arm(v, due, now)
}

func (s *Scheduler) index(v *view) {
	for _, ids := range [][]uint32{v.spec.Tables, v.spec.Views} {
		for _, id := range ids {
			m := s.bySource[id]
			if m == nil {
				m = map[uint32]struct{}{}
				s.bySource[id] = m
			}
			m[v.id] = struct{}{}
		}
	}
}

func (s *Scheduler) unindex(v *view) {
	for _, ids := range [][]uint32{v.spec.Tables, v.spec.Views} {
		for _, id := range ids {
			if m := s.bySource[id]; m != nil {
				delete(m, v.id)
				if len(m) == 0 {
					delete(s.bySource, id)
				}
			}
		}
	}
}
