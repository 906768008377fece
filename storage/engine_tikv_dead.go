//go:build tikv

package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Dead key spaces on TiKV (engineBatch.delDead). TiKV has no
// transactional range deletion: deleting a key space key by key inside
// the commit's transaction makes that transaction as big as the key space
// (the switch of a REFRESH FULL over a 10M-row view would delete 10M old
// keys in it, past what a TiKV transaction should hold). A dead key space
// needs no such atomicity: no snapshot after the commit reads it. So the
// commit only writes a marker, 0x01 "dead" | len(start) (2B) | start |
// end, in its transaction; once it has committed, the engine deletes the
// range's keys in transactions of at most deadChunkKeys keys each, then
// the marker. Snapshots older than the commit still read the range (TiKV
// keeps the versions they read until its GC); newer ones read nothing
// there, before the deletion or after. A marker that a crash or a Close
// left is taken up again at the next open, by whichever process opens the
// store; two processes deleting one range conflict harmlessly (a conflict
// is retried from a new snapshot, where the other's deletions are gone).

var deadPrefix = []byte{prefixGlobal, 'd', 'e', 'a', 'd'}

// deadChunkKeys bounds the keys one deleting transaction deletes.
var deadChunkKeys = 4096

func deadMarker(start, end []byte) []byte {
	k := binary.BigEndian.AppendUint16(bytes.Clone(deadPrefix), uint16(len(start)))
	return append(append(k, start...), end...)
}

func decodeDeadMarker(k []byte) (start, end []byte, ok bool) {
	rest := k[len(deadPrefix):]
	if len(rest) < 2 {
		return nil, nil, false
	}
	n := int(binary.BigEndian.Uint16(rest))
	if len(rest) < 2+n {
		return nil, nil, false
	}
	return bytes.Clone(rest[2 : 2+n]), bytes.Clone(rest[2+n:]), true
}

// deadReclaimer deletes marked ranges in the background, one at a time.
type deadReclaimer struct {
	e       *tikvEngine
	log     *slog.Logger
	mu      sync.Mutex
	queue   [][2][]byte
	running bool
	closed  bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

// startTiKVEngine starts e's reclaimer on the markers the store holds.
func startTiKVEngine(e *tikvEngine, opts *Options) (engine, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	e.dead = &deadReclaimer{e: e, log: log, stop: make(chan struct{})}
	it, err := e.newIter(deadPrefix, PrefixEnd(deadPrefix))
	if err != nil {
		_ = e.store.Close()
		return nil, err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if s, end, ok := decodeDeadMarker(it.Key()); ok {
			e.dead.add(s, end)
		}
	}
	if err := it.Close(); err != nil {
		e.dead.close()
		_ = e.store.Close()
		return nil, err
	}
	return e, nil
}

// add queues [start, end) for deletion (its marker is committed).
func (r *deadReclaimer) add(start, end []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return // the marker stays for the next open
	}
	r.queue = append(r.queue, [2][]byte{start, end})
	if !r.running {
		r.running = true
		r.wg.Add(1)
		go r.run()
	}
}

func (r *deadReclaimer) run() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		if len(r.queue) == 0 || r.closed {
			r.running = false
			r.mu.Unlock()
			return
		}
		rg := r.queue[0]
		r.queue = r.queue[1:]
		r.mu.Unlock()
		if err := r.reclaim(rg[0], rg[1], r.stop); err != nil && !errors.Is(err, errReclaimStopped) {
			r.log.Warn("could not delete a dropped key space yet; the next open of the store will", "start", rg[0], "err", err)
		}
	}
}

var errReclaimStopped = errors.New("storage: the store is closing")

// reclaim deletes the keys of [start, end) in bounded transactions, then
// its marker; it gives up when stop is closed (nil: never).
func (r *deadReclaimer) reclaim(start, end []byte, stop <-chan struct{}) error {
	cursor := bytes.Clone(start)
	conflicts := 0
	for {
		select {
		case <-stop:
			return errReclaimStopped
		default:
		}
		txn, err := r.e.store.Begin()
		if err != nil {
			return err
		}
		limitTxn(txn)
		it, err := txn.Iter(cursor, end)
		if err != nil {
			_ = txn.Rollback()
			return err
		}
		var last []byte
		n := 0
		for it.Valid() && n < deadChunkKeys {
			last = bytes.Clone(it.Key())
			if err = txn.Delete(last); err != nil {
				break
			}
			n++
			if err = it.Next(); err != nil {
				break
			}
		}
		it.Close()
		if err != nil {
			_ = txn.Rollback()
			return err
		}
		if n == 0 {
			_ = txn.Rollback()
			break
		}
		if err := r.e.commitTxn(txn); err != nil {
			if errors.Is(err, errEngineConflict) && conflicts < sharedRetries {
				// Another process deletes this range too: again from a
				// new snapshot.
				conflicts++
				time.Sleep(time.Duration(conflicts) * 10 * time.Millisecond)
				continue
			}
			return err
		}
		cursor = append(last, 0)
	}
	txn, err := r.e.store.Begin()
	if err != nil {
		return err
	}
	if err := txn.Delete(deadMarker(start, end)); err != nil {
		_ = txn.Rollback()
		return err
	}
	if err := r.e.commitTxn(txn); err != nil && !errors.Is(err, errEngineConflict) {
		return err
	}
	return nil
}

// close stops the reclaimer: a deletion under way ends after its current
// transaction, and what is left stays marked for the next open.
func (r *deadReclaimer) close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		close(r.stop)
	}
	r.mu.Unlock()
	r.wg.Wait()
}

// finishDead deletes [start, end) now if a committed marker says it is
// dead (a CreateTable of a dropped table's id, before it writes there
// again); the reclaimer, here or in another process, may be at it too,
// harmlessly.
func (e *tikvEngine) finishDead(start, end []byte) error {
	_, found, err := e.get(deadMarker(start, end), nil)
	if err != nil || !found {
		return err
	}
	return e.dead.reclaim(start, end, nil)
}
