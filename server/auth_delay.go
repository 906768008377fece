package server

import (
	"context"
	"sync"
	"time"
)

// failureDelay holds back the answer to a failed password authentication,
// as PostgreSQL's auth_delay module does, so that guessing a password over
// the SQL port is slow: without it one client tried about 700 passwords a
// second. The delay runs before the FATAL 28P01 is sent, so a client learns
// the failure only after it.
//
// Per user name the delays queue: the answer to a failure comes no sooner
// than delay after the previous failure's answer for that name, however
// many connections guess at once. Guessing one role's password thus runs
// at one attempt per delay in all; other names are not slowed, and a right
// password is never delayed (no lockout: the role's owner logs in at once).
type failureDelay struct {
	delay time.Duration
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration)

	mu   sync.Mutex
	next map[string]time.Time // by user name: when the next answer may go
}

// maxDelayedNames bounds the names whose queue is remembered; past it
// (that many names failing at the same moment) a new name's failure
// waits delay without queueing.
const maxDelayedNames = 10000

func newFailureDelay(delay time.Duration, now func() time.Time, sleep func(context.Context, time.Duration)) *failureDelay {
	if sleep == nil {
		sleep = sleepCtx
	}
	return &failureDelay{delay: delay, now: now, sleep: sleep, next: map[string]time.Time{}}
}

// wait blocks until the answer to user's failed authentication may go (or
// ctx ends: the startup deadline bounds it).
func (f *failureDelay) wait(ctx context.Context, user string) {
	if f == nil || f.delay <= 0 {
		return
	}
	now := f.now()
	f.mu.Lock()
	at := now
	if n, ok := f.next[user]; ok && n.After(now) {
		at = n
	}
	at = at.Add(f.delay)
	if _, ok := f.next[user]; !ok && len(f.next) >= maxDelayedNames {
		for u, n := range f.next {
			if !n.After(now) {
				delete(f.next, u)
			}
		}
	}
	if _, ok := f.next[user]; ok || len(f.next) < maxDelayedNames {
		f.next[user] = at
	}
	f.mu.Unlock()
	f.sleep(ctx, at.Sub(now))
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
