package scheduler

import (
	"testing"
	"time"
)

func TestFakeClock(t *testing.T) {
	c := NewFakeClock(t0)
	var got []string
	at := func(name string) func() {
		return func() { got = append(got, name+"@"+c.Now().Sub(t0).String()) }
	}
	c.AfterFunc(2*time.Second, at("b"))
	c.AfterFunc(time.Second, at("a"))
	c.AfterFunc(2*time.Second, at("c")) // same instant as b: after it
	stopped := c.AfterFunc(time.Second, at("never"))
	if !stopped.Stop() || stopped.Stop() {
		t.Fatal("Stop: want true then false")
	}
	// A timer armed by a callback fires within the same advance if due.
	c.AfterFunc(3*time.Second, func() {
		got = append(got, "d@3s")
		c.AfterFunc(time.Second, at("e"))
		c.AfterFunc(time.Hour, at("late"))
	})
	c.Advance(5 * time.Second)
	want := []string{"a@1s", "b@2s", "c@2s", "d@3s", "e@4s"}
	if len(got) != len(want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("fired %v, want %v", got, want)
		}
	}
	if !c.Now().Equal(t0.Add(5 * time.Second)) {
		t.Fatalf("now %s", c.Now())
	}
	if c.Pending() != 1 {
		t.Fatalf("pending %d, want 1", c.Pending())
	}
	if at, ok := c.NextTimer(); !ok || !at.Equal(t0.Add(3*time.Second+time.Hour)) {
		t.Fatalf("next timer %s %v", at, ok)
	}
	// A timer for 0 fires at the next advance, not inside AfterFunc.
	fired := false
	c.AfterFunc(0, func() { fired = true })
	if fired {
		t.Fatal("fired inside AfterFunc")
	}
	c.Advance(0)
	if !fired {
		t.Fatal("Advance(0) did not fire a due timer")
	}
	if !c.Step() || len(got) != 6 || c.Step() {
		t.Fatalf("Step: %v", got)
	}
	// AdvanceTo never goes back.
	now := c.Now()
	c.AdvanceTo(t0)
	if !c.Now().Equal(now) {
		t.Fatal("went back")
	}
}
