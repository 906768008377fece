package server

import (
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// received is one Receive result handed from the reader goroutine.
type received struct {
	msg pgproto3.FrontendMessage
	err error
}

// notifyLoop is loop for sessions that take notifications: PostgreSQL sends
// a NotificationResponse to an idle client as soon as it arrives, so the
// connection must not sit in Receive only. A reader goroutine does the
// reading, one message per request, and only that: the connection's
// goroutine still alone writes the socket and owns the protocol state
// (invariant 1). Receive's message is valid until the next Receive, which the
// reader does not start until asked, after the message was dispatched.
func (c *conn) notifyLoop(n Notifier, wake <-chan struct{}) error {
	want := make(chan struct{})
	recv := make(chan received, 1)
	defer close(want)
	c.atReady = true // startup ended with ReadyForQuery
	go func() {
		for range want {
			msg, err := c.be.Receive()
			recv <- received{msg, err}
			if err != nil {
				return
			}
		}
	}()
	// A statement that reads from the client itself (COPY FROM STDIN)
	// receives through the reader too, one message per request.
	c.recvFn = func() (pgproto3.FrontendMessage, error) {
		want <- struct{}{}
		r := <-recv
		return r.msg, r.err
	}
	for {
		if c.isKilled() {
			return errAdminShutdown
		}
		want <- struct{}{}
		var r received
		var idle <-chan time.Time
		var idleTimer *time.Timer
		if d := c.idleTimeout(); d > 0 {
			idleTimer = time.NewTimer(d)
			idle = idleTimer.C
		}
	wait:
		for {
			select {
			case <-idle:
				return errIdleInTransaction
			case r = <-recv:
				break wait
			case <-wake:
				if c.atReady && c.sess.TxStatus() == 'I' {
					if err := c.sendNotifications(); err != nil {
						return err
					}
					if err := c.ioErr(c.out.flush()); err != nil {
						return err
					}
				}
			}
		}
		if idleTimer != nil {
			idleTimer.Stop()
		}
		if r.err != nil {
			return c.readError(r.err)
		}
		if err := c.dispatch(r.msg); err != nil {
			return err
		}
	}
}

// sendNotifications buffers the session's waiting notifications.
func (c *conn) sendNotifications() error {
	n, ok := c.sess.(Notifier)
	if !ok {
		return nil
	}
	for _, x := range n.TakeNotifications() {
		if err := c.out.send(&pgproto3.NotificationResponse{PID: x.PID, Channel: x.Channel, Payload: x.Payload}); err != nil {
			return c.ioErr(err)
		}
	}
	return nil
}
