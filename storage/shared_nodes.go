package storage

import (
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Node liveness on a shared store: each open holds the lease "node/<n>"
// of its node number (lease.go), taken at open and renewed every third of
// nodeLeaseTTL until Close releases it. Another process reads it to tell
// a live process's unfinished work from a dead one's: a rewrite's shadow
// key space (generation.go) is reclaimed at start-up only when the node
// that wrote it no longer holds its lease. A process paused past the
// lease can find its rewrite reclaimed; the reclaim writes the table's
// state key, so that rewrite's switch then fails with a serialization
// error instead of naming a deleted key space.

// nodeLeaseTTL is how long a node's lease lasts without a renewal.
var nodeLeaseTTL = 30 * time.Second

func nodeLeaseName(node int64) string { return "node/" + strconv.FormatInt(node, 10) }

// nodeLiveness renews this open's node lease.
type nodeLiveness struct {
	lease Lease
	stop  chan struct{}
	wg    sync.WaitGroup
}

// holdNodeLease takes this open's node lease and starts renewing it.
func (db *DB) holdNodeLease() error {
	name := nodeLeaseName(db.node)
	l, err := db.AcquireLease(name, name, nodeLeaseTTL)
	if err != nil {
		return fmt.Errorf("storage: take the lease of node %d: %w", db.node, err)
	}
	nl := &nodeLiveness{lease: l, stop: make(chan struct{})}
	nl.wg.Add(1)
	go func() {
		defer nl.wg.Done()
		tick := time.NewTicker(nodeLeaseTTL / 3)
		defer tick.Stop()
		for {
			select {
			case <-nl.stop:
				return
			case <-tick.C:
				if _, err := db.AcquireLease(name, name, nodeLeaseTTL); err != nil {
					db.log.Warn("could not renew this process's node lease; other processes may take its unfinished rewrites for a dead process's", "node", db.node, "err", err)
				}
			}
		}
	}()
	db.liveness = nl
	return nil
}

// dropNodeLease stops the renewal and releases the lease (Close).
func (db *DB) dropNodeLease() {
	nl := db.liveness
	if nl == nil {
		return
	}
	db.liveness = nil
	close(nl.stop)
	nl.wg.Wait()
	if err := db.ReleaseLease(nl.lease); err != nil {
		db.log.Warn("could not release this process's node lease; it expires by itself", "node", db.node, "err", err)
	}
}

// nodeAlive reports whether node holds its lease in snap, by this
// process's clock.
func (db *DB) nodeAlive(snap engineSnapshot, node int64) (bool, error) {
	name := nodeLeaseName(node)
	v, found, err := snap.get(leaseKey(name), nil)
	if err != nil || !found {
		return false, err
	}
	l, err := decodeLease(name, v)
	if err != nil {
		return false, err
	}
	return db.clock().Before(l.Expires), nil
}
