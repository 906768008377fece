package server

import (
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
)

// fakeNotes makes every fake session a Notifier, so every server test runs
// the notification loop.
type fakeNotes struct {
	once  sync.Once
	wake  chan struct{}
	mu    sync.Mutex
	queue []Notification
}

func (f *fakeNotes) init() { f.once.Do(func() { f.wake = make(chan struct{}, 1) }) }

func (s *fakeSession) Notifications() <-chan struct{} {
	s.notes.init()
	return s.notes.wake
}

func (s *fakeSession) TakeNotifications() []Notification {
	s.notes.mu.Lock()
	defer s.notes.mu.Unlock()
	q := s.notes.queue
	s.notes.queue = nil
	return q
}

// post queues a notification for the session from another goroutine.
func (s *fakeSession) post(n Notification) {
	s.notes.init()
	s.notes.mu.Lock()
	s.notes.queue = append(s.notes.queue, n)
	s.notes.mu.Unlock()
	select {
	case s.notes.wake <- struct{}{}:
	default:
	}
}

func TestNotificationWhileIdle(t *testing.T) {
	ts := startServer(t, Config{})
	ctx := testCtx(t)
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	pid := conn.PgConn().PID()
	var sess *fakeSession
	waitFor(t, "session", func() bool { sess = ts.eng.session(pid); return sess != nil })
	// The client is idle: nothing it sends makes the server write.
	sess.post(Notification{PID: 42, Channel: "ch", Payload: "hello"})
	n, err := conn.WaitForNotification(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.PID != 42 || n.Channel != "ch" || n.Payload != "hello" {
		t.Fatalf("got %+v", n)
	}
	// Inside a transaction block it waits for the end of the block and goes
	// out right before ReadyForQuery.
	if _, err := conn.Exec(ctx, "begin"); err != nil {
		t.Fatal(err)
	}
	sess.post(Notification{PID: 43, Channel: "ch", Payload: "later"})
	if _, err := conn.Exec(ctx, "commit"); err != nil {
		t.Fatal(err)
	}
	n, err = conn.WaitForNotification(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n.PID != 43 || n.Payload != "later" {
		t.Fatalf("got %+v", n)
	}
}
