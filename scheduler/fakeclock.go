package scheduler

import (
	"sort"
	"sync"
	"time"
)

// FakeClock is a Clock that moves only when told to. Advance, AdvanceTo and
// Step fire the due timers synchronously, in order of due time (then of
// creation), with Now reading each timer's due time while it runs; timers
// that callbacks create and that fall due within the advance fire too. A
// timer for d ≤ 0 fires at the next advance (even Advance(0)), never inside
// AfterFunc, so a caller may hold its locks while arming timers.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    uint64
	timers []*fakeTimer // sorted by (when, seq)
}

type fakeTimer struct {
	c    *FakeClock
	when time.Time
	seq  uint64
	f    func()
}

// NewFakeClock returns a fake clock reading start.
func NewFakeClock(start time.Time) *FakeClock { return &FakeClock{now: start} }

// Now returns the clock's time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc arms a timer that fires when the clock reaches Now()+d.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d < 0 {
		d = 0
	}
	c.seq++
	t := &fakeTimer{c: c, when: c.now.Add(d), seq: c.seq, f: f}
	i := sort.Search(len(c.timers), func(i int) bool { return t.before(c.timers[i]) })
	c.timers = append(c.timers, nil)
	copy(c.timers[i+1:], c.timers[i:])
	c.timers[i] = t
	return t
}

func (t *fakeTimer) before(u *fakeTimer) bool {
	if !t.when.Equal(u.when) {
		return t.when.Before(u.when)
	}
	return t.seq < u.seq
}

// Stop removes the timer; it reports whether the timer was still pending.
func (t *fakeTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, u := range c.timers {
		if u == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// Advance moves the clock forward by d, firing the timers due on the way.
func (c *FakeClock) Advance(d time.Duration) {
	c.AdvanceTo(c.Now().Add(d))
}

// AdvanceTo moves the clock to target (never backwards), firing the timers
// due on the way.
func (c *FakeClock) AdvanceTo(target time.Time) {
	for {
		c.mu.Lock()
		if len(c.timers) == 0 || c.timers[0].when.After(target) {
			if target.After(c.now) {
				c.now = target
			}
			c.mu.Unlock()
			return
		}
		t := c.timers[0]
		c.timers = c.timers[1:]
		if t.when.After(c.now) {
			c.now = t.when
		}
		c.mu.Unlock()
		t.f()
	}
}

// Step advances to the earliest pending timer and fires every timer due
// then. It reports false, leaving the clock alone, when none is pending.
func (c *FakeClock) Step() bool {
	at, ok := c.NextTimer()
	if !ok {
		return false
	}
	c.AdvanceTo(at)
	return true
}

// NextTimer returns when the earliest pending timer is due.
func (c *FakeClock) NextTimer() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.timers) == 0 {
		return time.Time{}, false
	}
	if c.timers[0].when.Before(c.now) {
		return c.now, true
	}
	return c.timers[0].when, true
}

// Pending returns the number of pending timers.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
