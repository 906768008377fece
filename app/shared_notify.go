package app

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"log/slog"
	"sync"
	"time"

	"github.com/mvserver/mvserver/notify"
	"github.com/mvserver/mvserver/storage"
)

// NOTIFY across the servers of a shared store. A server writes each
// notification it publishes (a session's NOTIFY at its commit, a refresh
// event) to the metadata key notify/<node>/<seq> in a transaction of its
// own, after the hub delivered it locally; every server scans the prefix
// every noticePoll and delivers the entries of other nodes it has not yet
// delivered. Keys are per node and sequence, so writers never conflict.
// A server deletes its own entries after noticeKeep; one that scans less
// often than that (stalled) may miss notifications, as PostgreSQL's
// listeners lose nothing but a stalled server here can.

const (
	noticePoll = 100 * time.Millisecond
	noticeKeep = 30 * time.Second
)

var noticePrefix = []byte("notify/")

type sharedNotices struct {
	db   *storage.DB
	hub  *notify.Hub
	log  *slog.Logger
	node uint64

	mu      sync.Mutex
	seq     uint64
	written []writtenNotice
	last    map[uint64]uint64 // node → last sequence delivered
	stopc   chan struct{}
	done    chan struct{}
}

type writtenNotice struct {
	key []byte
	at  time.Time
}

func noticeKey(node, seq uint64) []byte {
	k := bytes.Clone(noticePrefix)
	k = binary.BigEndian.AppendUint64(k, node)
	return binary.BigEndian.AppendUint64(k, seq)
}

// startSharedNotices relays hub's notifications through db (a shared
// store) until the returned stop.
func startSharedNotices(db *storage.DB, hub *notify.Hub, log *slog.Logger) (stop func()) {
	sn := &sharedNotices{db: db, hub: hub, log: log, node: uint64(db.Node()), last: map[uint64]uint64{},
		stopc: make(chan struct{}), done: make(chan struct{})}
	sn.scan(false) // what was published before this server started is not delivered
	hub.SetRelay(sn.write)
	go func() {
		defer close(sn.done)
		t := time.NewTicker(noticePoll)
		defer t.Stop()
		for {
			select {
			case <-sn.stopc:
				return
			case <-t.C:
				sn.scan(true)
			}
		}
	}()
	return func() {
		hub.SetRelay(nil)
		close(sn.stopc)
		<-sn.done
	}
}

// write stores n for the other servers, and drops this server's entries
// older than noticeKeep.
func (sn *sharedNotices) write(n notify.Notification) {
	v, err := json.Marshal(n)
	if err != nil {
		return
	}
	sn.mu.Lock()
	defer sn.mu.Unlock()
	sn.seq++
	key := noticeKey(sn.node, sn.seq)
	now := time.Now()
	txn := sn.db.Begin()
	defer txn.Rollback()
	err = txn.PutMeta(key, v)
	drop := 0
	for drop < len(sn.written) && now.Sub(sn.written[drop].at) > noticeKeep && err == nil {
		err = txn.DeleteMeta(sn.written[drop].key)
		drop++
	}
	if err == nil {
		err = txn.Commit()
	}
	if err != nil {
		sn.log.Warn("shared store: NOTIFY does not reach the other servers", "channel", n.Channel, "err", err)
		return
	}
	sn.written = append(sn.written[drop:], writtenNotice{key: key, at: now})
}

// scan delivers (deliver) or only notes the entries of other nodes after
// the last one delivered from each.
func (sn *sharedNotices) scan(deliver bool) {
	txn := sn.db.Begin()
	defer txn.Rollback()
	it := txn.ScanMeta(noticePrefix)
	defer it.Close()
	var out []notify.Notification
	sn.mu.Lock()
	for it.Next() {
		r := it.Row()
		k := r.Key[len(r.Key)-16:]
		node, seq := binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])
		if node == sn.node || seq <= sn.last[node] {
			continue
		}
		sn.last[node] = seq
		var n notify.Notification
		if deliver && json.Unmarshal(r.Value, &n) == nil {
			out = append(out, n)
		}
	}
	sn.mu.Unlock()
	if err := it.Err(); err != nil {
		sn.log.Warn("shared store: cannot read other servers' notifications", "err", err)
	}
	for _, n := range out {
		sn.hub.Deliver(n)
	}
}
