package scheduler

import "time"

// Clock is the scheduler's only source of time (STYLE.md "Time and the
// outside world are injected"): the server hands it RealClock, tests a
// FakeClock that runs weeks of schedules in milliseconds.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// AfterFunc calls f in its own goroutine (RealClock) or from Advance
	// (FakeClock) once d has passed. f must not be called with a lock of
	// the caller of AfterFunc held: the scheduler takes its own lock in f.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop prevents the call if it has not started; it reports whether it
	// did.
	Stop() bool
}

// RealClock returns the clock of the machine (time.Now, time.AfterFunc).
func RealClock() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
