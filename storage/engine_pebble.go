package storage

import (
	"errors"

	"github.com/cockroachdb/pebble/v2"
)

// pebbleEngine is the default engine: the embedded Pebble instance of one
// data directory (engine.go). Its commits share fsyncs: commit applies
// with ApplyNoSyncWait and the batch's wait is Pebble's SyncWait.
type pebbleEngine struct {
	db *DB // for applyBatch's fatal-error handling (faults.go)
	p  *pebble.DB
}

func (e *pebbleEngine) get(key, buf []byte) ([]byte, bool, error) {
	return pebbleGet(e.p, key, buf)
}

func (e *pebbleEngine) has(key []byte) (bool, error) { return pebbleHas(e.p, key) }

func (e *pebbleEngine) newIter(lower, upper []byte) (engineIter, error) {
	it, err := e.p.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return it, nil
}

func (e *pebbleEngine) snapshot() engineSnapshot { return pebbleSnap{e.p.NewSnapshot()} }

func (e *pebbleEngine) newBatch(sizeHint int) engineBatch {
	if sizeHint > 0 {
		return &pebbleBatch{b: e.p.NewBatchWithSize(sizeHint)}
	}
	return &pebbleBatch{b: e.p.NewBatch()}
}

func (e *pebbleEngine) commit(b engineBatch) error {
	return e.db.applyBatch(b.(*pebbleBatch).b)
}

func (e *pebbleEngine) write(b engineBatch, sync bool) error {
	opts := pebble.NoSync
	if sync {
		opts = pebble.Sync
	}
	return e.db.applyDirect(b.(*pebbleBatch).b, opts)
}

func (e *pebbleEngine) shared() bool { return false }

func (e *pebbleEngine) close() error { return e.p.Close() }

// pebbleGet is a Pebble reader's get into buf.
func pebbleGet(r pebble.Reader, key, buf []byte) ([]byte, bool, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	buf = append(buf[:0], v...)
	_ = closer.Close()
	return buf, true, nil
}

// pebbleHas is a Pebble reader's has.
func pebbleHas(r pebble.Reader, key []byte) (bool, error) {
	_, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_ = closer.Close()
	return true, nil
}

// pebbleSnap is a Pebble snapshot.
type pebbleSnap struct{ s *pebble.Snapshot }

func (s pebbleSnap) get(key, buf []byte) ([]byte, bool, error) { return pebbleGet(s.s, key, buf) }

func (s pebbleSnap) has(key []byte) (bool, error) { return pebbleHas(s.s, key) }

func (s pebbleSnap) newIter(lower, upper []byte) (engineIter, error) {
	it, err := s.s.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return it, nil
}

func (s pebbleSnap) close() error { return s.s.Close() }

// pebbleBatch is a Pebble batch.
type pebbleBatch struct {
	b  *pebble.Batch
	op *pebble.DeferredBatchOp
}

func (b *pebbleBatch) set(key, value []byte) error      { return b.b.Set(key, value, nil) }
func (b *pebbleBatch) del(key []byte) error             { return b.b.Delete(key, nil) }
func (b *pebbleBatch) delRange(start, end []byte) error { return b.b.DeleteRange(start, end, nil) }

// delDead is a range deletion: one tombstone, however big the range.
func (b *pebbleBatch) delDead(start, end []byte) error { return b.delRange(start, end) }

func (b *pebbleBatch) setDeferred(keyLen, valueLen int) ([]byte, []byte) {
	b.op = b.b.SetDeferred(keyLen, valueLen)
	return b.op.Key, b.op.Value
}

func (b *pebbleBatch) finishDeferred() error {
	op := b.op
	b.op = nil
	return op.Finish()
}

func (b *pebbleBatch) conflictSince(engineSnapshot) {}
func (b *pebbleBatch) size() int                    { return b.b.Len() }
func (b *pebbleBatch) empty() bool                  { return b.b.Empty() }
func (b *pebbleBatch) reset()                       { b.b.Reset() }
func (b *pebbleBatch) wait() error                  { return b.b.SyncWait() }
func (b *pebbleBatch) close()                       { _ = b.b.Close() }
