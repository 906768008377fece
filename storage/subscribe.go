package storage

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// CommitEvent tells that a commit gave Table a new Version (-1: the commit
// dropped the table).
type CommitEvent struct {
	Table   TableID
	Version int64
}

type subscriber struct {
	id uint64
	fn func([]CommitEvent)
}

type subscribers struct {
	mu     sync.Mutex
	nextID uint64
	list   atomic.Pointer[[]subscriber] // copy-on-write
}

// Subscribe registers fn to be told, after each durable commit that made
// versions and outside every storage lock, which tables got which version.
// Calls are sequential and in commit order (so in version order per table);
// fn must not retain or modify the slice. A slow fn delays later
// notifications, not commits. The returned function unsubscribes.
func (db *DB) Subscribe(fn func([]CommitEvent)) (unsubscribe func()) {
	s := &db.subs
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	var cur []subscriber
	if p := s.list.Load(); p != nil {
		cur = *p
	}
	next := append(append([]subscriber(nil), cur...), subscriber{id: id, fn: fn})
	s.list.Store(&next)
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		var cur []subscriber
		if p := s.list.Load(); p != nil {
			cur = *p
		}
		next := make([]subscriber, 0, len(cur))
		for _, sub := range cur {
			if sub.id != id {
				next = append(next, sub)
			}
		}
		s.list.Store(&next)
	}
}

// notifier delivers commit events in commit-sequence order. A commit hands
// its events over after its SyncWait; whichever committer finds no delivery
// running delivers every consecutive pending commit, outside the lock.
type notifier struct {
	mu         sync.Mutex
	next       uint64 // next commit seq to deliver
	pending    map[uint64][]CommitEvent
	delivering bool
}

func (n *notifier) init() {
	n.next = 1
	n.pending = make(map[uint64][]CommitEvent)
}

// publish hands over the events of commit seq (every applied commit must
// call it exactly once, also with no events, so later ones are not held).
func (db *DB) publish(seq uint64, events []CommitEvent) {
	n := &db.notify
	n.mu.Lock()
	n.pending[seq] = events
	if n.delivering {
		n.mu.Unlock()
		return
	}
	n.delivering = true
	for {
		ev, ok := n.pending[n.next]
		if !ok {
			break
		}
		delete(n.pending, n.next)
		n.next++
		n.mu.Unlock()
		if len(ev) > 0 {
			db.deliver(ev)
		}
		n.mu.Lock()
	}
	n.delivering = false
	n.mu.Unlock()
}

func (db *DB) deliver(ev []CommitEvent) {
	p := db.subs.list.Load()
	if p == nil {
		return
	}
	for _, sub := range *p {
		func() {
			defer func() {
				if r := recover(); r != nil {
					db.log.Error("storage: commit subscriber panicked", "panic", fmt.Sprint(r))
				}
			}()
			sub.fn(ev)
		}()
	}
}
