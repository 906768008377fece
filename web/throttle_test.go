package web

import (
	"fmt"
	"testing"
	"time"
)

// Failures lock the name they tried for userWindow and nothing else; a
// success clears them.
func TestThrottleLocksUserName(t *testing.T) {
	th := newLoginThrottle()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < userFailures; i++ {
		if no := th.allow("admin", "10.0.0.1", t0); no != nil {
			t.Fatalf("attempt %d refused: %v", i+1, no)
		}
		th.failed("admin", "10.0.0.1", t0)
	}
	if th.allow("admin", "10.0.0.2", t0) == nil {
		t.Fatal("admin not locked after 10 failures (from another address too)")
	}
	if no := th.allow("alice", "10.0.0.1", t0); no != nil {
		t.Fatalf("alice from the guessing address: %v", no)
	}
	if th.allow("admin", "10.0.0.1", t0.Add(userWindow-time.Second)) == nil {
		t.Fatal("admin unlocked before the window ended")
	}
	if no := th.allow("admin", "10.0.0.1", t0.Add(userWindow)); no != nil {
		t.Fatalf("admin still locked once the failures aged out: %v", no)
	}
	th.failed("alice", "10.0.0.3", t0)
	th.succeeded("alice")
	if n := len(th.byUser["alice"]); n != 0 {
		t.Fatalf("alice has %d failures after a success", n)
	}
}

// An address guessing across names is slowed after addrBurst failures,
// one attempt per addrRefill, and never locked out for longer.
func TestThrottleSlowsAddress(t *testing.T) {
	th := newLoginThrottle()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < addrBurst; i++ {
		name := fmt.Sprintf("user%d", i)
		if no := th.allow(name, "10.0.0.1", t0); no != nil {
			t.Fatalf("failure %d refused: %v", i+1, no)
		}
		th.failed(name, "10.0.0.1", t0)
	}
	if th.allow("other", "10.0.0.1", t0) == nil {
		t.Fatal("the address is not slowed after the burst")
	}
	if no := th.allow("other", "10.0.0.2", t0); no != nil {
		t.Fatalf("another address is slowed: %v", no)
	}
	t1 := t0.Add(addrRefill)
	if no := th.allow("other", "10.0.0.1", t1); no != nil {
		t.Fatalf("one attempt per %s is not allowed: %v", addrRefill, no)
	}
	th.failed("other", "10.0.0.1", t1)
	if th.allow("other2", "10.0.0.1", t1) == nil {
		t.Fatal("a second attempt within the refill is allowed")
	}
}

// The tables stay bounded under endless names and addresses.
func TestThrottleBounded(t *testing.T) {
	th := newLoginThrottle()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < maxTracked+500; i++ {
		th.failed(fmt.Sprintf("u%d", i), fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), t0.Add(time.Duration(i)*time.Millisecond))
	}
	if len(th.byUser) > maxTracked || len(th.byAddr) > maxTracked {
		t.Fatalf("tables grew to %d names, %d addresses (bound %d)", len(th.byUser), len(th.byAddr), maxTracked)
	}
}
