package notify

import "testing"

func TestHub(t *testing.T) {
	h := New()
	a, b := h.Subscribe(), h.Subscribe()
	a.Listen("x")
	a.Listen("y")
	b.Listen("x")
	h.Publish("x", "1", 7)
	h.Publish("y", "2", 7)
	h.Publish("z", "3", 7)
	select {
	case <-a.Wake():
	default:
		t.Fatal("no wake-up")
	}
	if got := a.Take(); len(got) != 2 || got[0] != (Notification{PID: 7, Channel: "x", Payload: "1"}) || got[1].Payload != "2" {
		t.Fatalf("a got %+v", got)
	}
	if got := b.Take(); len(got) != 1 {
		t.Fatalf("b got %+v", got)
	}
	a.Unlisten("*")
	h.Publish("x", "4", 0)
	if got := a.Take(); len(got) != 0 {
		t.Fatalf("after UNLISTEN * a got %+v", got)
	}
	// The queue is bounded: the oldest go.
	for i := 0; i < MaxQueue+5; i++ {
		h.Publish("x", "p", uint32(i))
	}
	got := b.Take()
	if len(got) != MaxQueue || got[len(got)-1].PID != MaxQueue+4 {
		t.Fatalf("b kept %d, last %+v", len(got), got[len(got)-1])
	}
	b.Close()
	h.Publish("x", "5", 0)
	if len(h.channels) != 0 || len(h.subs) != 1 {
		t.Fatalf("leftovers: %v %v", h.channels, h.subs)
	}
	if err := Check("c", string(make([]byte, MaxPayload+1))); err == nil {
		t.Fatal("long payload accepted")
	}
}

// A restricted notification reaches every listener with both payloads;
// the hub never chooses between them.
func TestPublishRestricted(t *testing.T) {
	h := New()
	a := h.Subscribe()
	a.Listen("mv_refresh")
	h.PublishRestricted("mv_refresh", "full", "redacted", 42)
	got := a.Take()
	if len(got) != 1 || got[0] != (Notification{Channel: "mv_refresh", Payload: "full", View: 42, Redacted: "redacted"}) {
		t.Fatalf("got %+v", got)
	}
}
