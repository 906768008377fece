package session

import (
	"github.com/mvserver/mvserver/notify"
	"github.com/mvserver/mvserver/server"
)

// LISTEN, UNLISTEN and NOTIFY (R-S7). As in PostgreSQL all three are
// transactional: their effect happens at COMMIT and a rollback forgets them.

type listenOp struct {
	unlisten bool
	channel  string // "*" with unlisten: every channel
}

// queueNotify records a NOTIFY (or pg_notify) for the commit.
func (s *Session) queueNotify(channel, payload string) error {
	if err := notify.Check(channel, payload); err != nil {
		return err
	}
	if s.eng.Notify == nil {
		return nil
	}
	n := notify.Notification{PID: s.info.ProcessID, Channel: channel, Payload: payload}
	// PostgreSQL folds identical notifications of one transaction.
	for _, q := range s.notifies {
		if q == n {
			return nil
		}
	}
	s.notifies = append(s.notifies, n)
	return nil
}

func (s *Session) execListen(channel string, unlisten bool) (string, error) {
	if unlisten {
		if channel == "" {
			channel = "*"
		}
		s.listenOps = append(s.listenOps, listenOp{unlisten: true, channel: channel})
		return "UNLISTEN", nil
	}
	if err := notify.Check(channel, ""); err != nil {
		return "", err
	}
	s.listenOps = append(s.listenOps, listenOp{channel: channel})
	return "LISTEN", nil
}

// afterCommit applies LISTEN/UNLISTEN and sends the NOTIFYs of the
// transaction that just committed.
func (s *Session) afterCommit() {
	ops, ns := s.listenOps, s.notifies
	s.listenOps, s.notifies = nil, nil
	if s.sub != nil {
		for _, op := range ops {
			if op.unlisten {
				s.sub.Unlisten(op.channel)
			} else {
				s.sub.Listen(op.channel)
			}
		}
	}
	for _, n := range ns {
		s.eng.Notify.Publish(n.Channel, n.Payload, n.PID)
	}
}

// forgetNotify drops the LISTEN/UNLISTEN/NOTIFY of a rolled back transaction.
func (s *Session) forgetNotify() {
	s.listenOps, s.notifies = nil, nil
}

// Notifications implements server.Notifier.
func (s *Session) Notifications() <-chan struct{} {
	if s.sub == nil {
		return nil
	}
	return s.sub.Wake()
}

// TakeNotifications implements server.Notifier.
func (s *Session) TakeNotifications() []server.Notification {
	if s.sub == nil {
		return nil
	}
	ns := s.sub.Take()
	if len(ns) == 0 {
		return nil
	}
	out := make([]server.Notification, len(ns))
	for i, n := range ns {
		out[i] = server.Notification{PID: n.PID, Channel: n.Channel, Payload: n.Payload}
	}
	return out
}
