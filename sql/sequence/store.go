// Package sequence keeps sequence counters (CREATE SEQUENCE, serial and
// identity columns). A sequence's value lives outside transactions, as in
// PostgreSQL: nextval commits its own small storage transaction that
// reserves a block of values, hands them out from memory, and a rollback
// of the caller gives none back. A crash loses at most the rest of a block
// (a gap, never a repeat).
package sequence

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/storage"
)

// seqBlock is how many values one reservation takes at least.
const seqBlock = 32

// State is a sequence's persisted counter: the last value handed out
// (or reserved) and whether it was (setval's is_called).
type State struct {
	Last   int64
	Called bool
}

func (s State) encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(s.Last))
	if s.Called {
		return append(b, 1)
	}
	return append(b, 0)
}

func decodeState(b []byte) (State, error) {
	if len(b) != 9 {
		return State{}, fmt.Errorf("sequence state: %d bytes", len(b))
	}
	return State{Last: int64(binary.BigEndian.Uint64(b)), Called: b[8] == 1}, nil
}

// key is the meta key of a sequence's counter: its id and epoch.
func key(t *catalog.Table) []byte {
	k := append([]byte("seq/"), binary.BigEndian.AppendUint32(nil, t.ID)...)
	return binary.BigEndian.AppendUint64(k, uint64(t.Sequence.Epoch))
}

// Prefix is the prefix of every counter key of sequence id.
func Prefix(id uint32) []byte {
	return append([]byte("seq/"), binary.BigEndian.AppendUint32(nil, id)...)
}

// sequences hands out sequence values for an engine.
type Store struct {
	mu     sync.Mutex
	blocks map[string]*block // by key: values reserved, not yet handed out
}

type block struct{ next, limit int64 } // next … limit (inclusive), by the increment

// next returns the next value of t.
func (m *Store) Next(db *storage.DB, t *catalog.Table) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := string(key(t))
	sq := t.Sequence
	if m.blocks == nil {
		m.blocks = map[string]*block{}
	}
	if r := m.blocks[key]; r != nil {
		v := r.next
		if v == r.limit {
			delete(m.blocks, key)
		} else {
			r.next += sq.Increment
		}
		return v, nil
	}
	var first, limit int64
	err := m.update(db, t, func(st State) (State, error) {
		var err error
		first, err = NextValue(t, st)
		if err != nil {
			return st, err
		}
		n := max(sq.Cache, seqBlock)
		limit = first
		for i := int64(1); i < n; i++ {
			v, ok := step(limit, sq.Increment)
			if !ok || v > sq.Max || v < sq.Min {
				break
			}
			limit = v
		}
		return State{Last: limit, Called: true}, nil
	})
	if err != nil {
		return 0, err
	}
	if first != limit {
		m.blocks[key] = &block{next: first + sq.Increment, limit: limit}
	}
	return first, nil
}

// step adds inc to v, reporting overflow.
func step(v, inc int64) (int64, bool) {
	r := v + inc
	if (inc > 0 && r < v) || (inc < 0 && r > v) {
		return 0, false
	}
	return r, true
}

// nextValue is the value after st: past the bound, the other bound when
// the sequence cycles, else 2200H.
func NextValue(t *catalog.Table, st State) (int64, error) {
	sq := t.Sequence
	if !st.Called {
		return st.Last, nil
	}
	v, ok := step(st.Last, sq.Increment)
	if ok && v <= sq.Max && v >= sq.Min {
		return v, nil
	}
	if sq.Cycle {
		if sq.Increment > 0 {
			return sq.Min, nil
		}
		return sq.Max, nil
	}
	if sq.Increment > 0 {
		return 0, pgerror.New(pgerror.SequenceGeneratorLimitExceeded, "nextval: reached maximum value of sequence \"%s\" (%d)", t.Name, sq.Max)
	}
	return 0, pgerror.New(pgerror.SequenceGeneratorLimitExceeded, "nextval: reached minimum value of sequence \"%s\" (%d)", t.Name, sq.Min)
}

// set stores a new state (setval, ALTER SEQUENCE RESTART) and forgets the
// values reserved in memory.
func (m *Store) Set(db *storage.DB, t *catalog.Table, st State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.blocks, string(key(t)))
	return m.update(db, t, func(State) (State, error) { return st, nil })
}

// forget drops the values of t reserved in memory (ALTER SEQUENCE changed
// its step or bounds); they are a gap.
func (m *Store) Forget(t *catalog.Table) {
	m.mu.Lock()
	delete(m.blocks, string(key(t)))
	m.mu.Unlock()
}

// peek reads the persisted state (pg_sequences.Last_value).
func (m *Store) Peek(txn *storage.Txn, t *catalog.Table) (State, bool, error) {
	b, ok, err := txn.GetMeta(key(t))
	if err != nil || !ok {
		return State{}, ok, err
	}
	st, err := decodeState(b)
	return st, err == nil, err
}

// current is the state a sequence read as a table shows (SELECT * FROM
// seq): the last value handed out by any session, how many values are
// reserved beyond it (PostgreSQL's log_cnt: values logged ahead, which
// varies with its checkpoints too), and whether nextval has handed it out.
func (m *Store) Current(db *storage.DB, t *catalog.Table) (last, ahead int64, called bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.blocks[string(key(t))]; r != nil {
		return r.next - t.Sequence.Increment, (r.limit-r.next)/t.Sequence.Increment + 1, true, nil
	}
	txn := db.Begin()
	defer txn.Rollback()
	st, ok, err := m.Peek(txn, t)
	if err != nil {
		return 0, 0, false, err
	}
	if !ok {
		return t.Sequence.Start, 0, false, nil
	}
	return st.Last, 0, st.Called, nil
}

// update runs fn on the persisted state in its own transaction, retrying
// when another commit races it.
func (m *Store) update(db *storage.DB, t *catalog.Table, fn func(State) (State, error)) error {
	key := key(t)
	for attempt := 0; ; attempt++ {
		txn := db.Begin()
		st := State{Last: t.Sequence.Start}
		b, ok, err := txn.GetMeta(key)
		if err == nil && ok {
			st, err = decodeState(b)
		}
		if err != nil {
			txn.Rollback()
			return err
		}
		nst, err := fn(st)
		if err != nil {
			txn.Rollback()
			return err
		}
		if err := txn.PutMeta(key, nst.encode()); err != nil {
			txn.Rollback()
			return err
		}
		err = txn.Commit()
		if err == nil {
			return nil
		}
		if !errors.Is(err, storage.ErrSerialization) || attempt >= 20 {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * time.Millisecond)
	}
}
