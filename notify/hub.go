package notify

import (
	"sync"

	"github.com/mvserver/mvserver/pgerror"
)

// MaxPayload is the longest payload NOTIFY accepts, in bytes (PostgreSQL's limit).
const MaxPayload = 7999

// MaxChannel is the longest channel name (NAMEDATALEN-1).
const MaxChannel = 63

// MaxQueue is how many undelivered notifications one subscriber keeps.
const MaxQueue = 10000

// Notification is one delivered NOTIFY.
type Notification struct {
	PID     uint32 // the sender's backend process id (0 for the server itself)
	Channel string
	Payload string
	// View, when not 0, is the dataset whose details Payload tells (a
	// refresh error's message): a listener that may not see them is
	// given Redacted instead. The hub knows no roles; the session
	// delivering the notification decides (PublishRestricted).
	View     uint32
	Redacted string
}

// Hub routes notifications to subscribers. The zero value is not usable; use New.
type Hub struct {
	mu   sync.Mutex
	subs map[uint64]*Subscriber
	// channels maps a channel to the subscribers listening on it.
	channels map[string]map[uint64]*Subscriber
	next     uint64
	// relay, when set, also hands every notification published here to
	// the other servers of a shared store (app/shared_notify.go), which
	// Deliver it to their own listeners.
	relay func(Notification)
}

// SetRelay sets the hook that hands this hub's published notifications to
// other servers (nil: none). Call it before the hub is in use.
func (h *Hub) SetRelay(relay func(Notification)) { h.relay = relay }

// Deliver queues a notification another server published for the
// listeners of this hub (it is not relayed again).
func (h *Hub) Deliver(n Notification) { h.publish(n) }

// New returns an empty hub.
func New() *Hub {
	return &Hub{subs: map[uint64]*Subscriber{}, channels: map[string]map[uint64]*Subscriber{}}
}

// Subscriber is one session's view of the hub.
type Subscriber struct {
	hub  *Hub
	id   uint64
	wake chan struct{}

	// under hub.mu
	listening map[string]bool
	queue     []Notification
	dropped   int
}

// Subscribe registers a session. It listens to nothing until Listen.
func (h *Hub) Subscribe() *Subscriber {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	s := &Subscriber{hub: h, id: h.next, wake: make(chan struct{}, 1), listening: map[string]bool{}}
	h.subs[s.id] = s
	return s
}

// Wake receives a value (coalesced) whenever notifications are queued.
func (s *Subscriber) Wake() <-chan struct{} { return s.wake }

// Listen starts listening on channel (idempotent).
func (s *Subscriber) Listen(channel string) {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.listening[channel] {
		return
	}
	s.listening[channel] = true
	m := h.channels[channel]
	if m == nil {
		m = map[uint64]*Subscriber{}
		h.channels[channel] = m
	}
	m[s.id] = s
}

// Unlisten stops listening on channel; "*" stops listening on every channel.
func (s *Subscriber) Unlisten(channel string) {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if channel == "*" {
		for ch := range s.listening {
			h.drop(s, ch)
		}
		return
	}
	h.drop(s, channel)
}

func (h *Hub) drop(s *Subscriber, channel string) {
	if !s.listening[channel] {
		return
	}
	delete(s.listening, channel)
	if m := h.channels[channel]; m != nil {
		delete(m, s.id)
		if len(m) == 0 {
			delete(h.channels, channel)
		}
	}
}

// Listening reports the channels s listens on (pg_listening_channels).
func (s *Subscriber) Listening() []string {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	out := make([]string, 0, len(s.listening))
	for ch := range s.listening {
		out = append(out, ch)
	}
	return out
}

// Take returns and clears the queued notifications.
func (s *Subscriber) Take() []Notification {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	q := s.queue
	s.queue = nil
	return q
}

// Close unlistens everything and unregisters s; queued notifications are lost.
func (s *Subscriber) Close() {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range s.listening {
		h.drop(s, ch)
	}
	s.queue = nil
	delete(h.subs, s.id)
}

// Check validates a channel and payload as NOTIFY does.
func Check(channel, payload string) error {
	if channel == "" {
		return pgerror.New(pgerror.InvalidParameterValue, "channel name cannot be empty")
	}
	if len(channel) > MaxChannel {
		return pgerror.New(pgerror.InvalidParameterValue, "channel name too long")
	}
	if len(payload) > MaxPayload {
		return pgerror.New(pgerror.InvalidParameterValue, "payload string too long")
	}
	return nil
}

// Publish delivers a notification to every subscriber listening on channel,
// the sender included (PostgreSQL delivers a session's own NOTIFYs to it).
func (h *Hub) Publish(channel, payload string, senderPID uint32) {
	h.publishRelayed(Notification{PID: senderPID, Channel: channel, Payload: payload})
}

// PublishRestricted delivers a server notification whose payload tells
// details of dataset view: each subscriber's session gives its client
// payload or, if its role may not see them, redacted.
func (h *Hub) PublishRestricted(channel, payload, redacted string, view uint32) {
	h.publishRelayed(Notification{Channel: channel, Payload: payload, View: view, Redacted: redacted})
}

func (h *Hub) publishRelayed(n Notification) {
	if h != nil && h.relay != nil {
		h.relay(n)
	}
	h.publish(n)
}

func (h *Hub) publish(n Notification) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.channels[n.Channel] {
		if len(s.queue) >= MaxQueue {
			copy(s.queue, s.queue[1:])
			s.queue = s.queue[:len(s.queue)-1]
			s.dropped++
		}
		s.queue = append(s.queue, n)
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}
