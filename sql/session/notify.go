package session

import (
	"github.com/mvserver/mvserver/catalog"
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
	var cat *catalog.Catalog
	out := make([]server.Notification, len(ns))
	for i, n := range ns {
		payload := n.Payload
		if n.View != 0 {
			if cat == nil {
				cat = s.currentCatalog()
			}
			if !s.notificationVisible(cat, n.View) {
				payload = n.Redacted
			}
		}
		out[i] = server.Notification{PID: n.PID, Channel: n.Channel, Payload: payload}
	}
	return out
}

// currentCatalog is the latest committed catalog (nil if it cannot be
// read): notifications are delivered between statements, and a grant or
// revoke since the session's last statement counts.
func (s *Session) currentCatalog() *catalog.Catalog {
	txn := s.eng.DB.Begin()
	defer txn.Rollback()
	c, err := s.eng.Catalog.Snapshot(txn)
	if err != nil {
		return nil
	}
	return c
}

// notificationVisible reports whether the session's role may see the
// details of dataset view (catalog.MaySeeDetails); a dropped view's only
// superusers.
func (s *Session) notificationVisible(cat *catalog.Catalog, view uint32) bool {
	if cat == nil {
		return false
	}
	if v, ok := cat.Table(view); ok {
		return cat.MaySeeDetails(s.currentUser(), s.eng.RequireRoles, v)
	}
	_, super := cat.UserRole(s.currentUser(), s.eng.RequireRoles)
	return super
}
