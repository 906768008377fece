package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Leases with fencing tokens: a named lease (a view's refresh runner, a
// schedule) is held by one holder (a process) until it expires. Its token
// grows by one every time the lease changes holder, and a transaction that
// must only commit while its holder still has the lease names it
// (Txn.CheckLease): the commit fails with ErrLeaseLost when the lease has
// another token, another holder or expired — so a holder that paused past
// its lease (and lost it to another) cannot commit work the new holder is
// also doing.
//
// A lease is the key 0x01 "lease" | name → token (8B) | expires (unix µs,
// 8B) | holder. Acquire and renew are a read and a write of it in a
// transaction of their own: on a shared store that write conflicts with a
// concurrent one of another process (conflictSince), in one process
// leaseMu orders them. A commit with CheckLease reads the key under
// leaseMu, and on a shared store writes it back unchanged, so that a
// takeover another process commits after the transaction's snapshot fails
// one of the two.
//
// Expiry is judged by the clock of the process that reads the lease, so
// the processes' clocks must agree to well within a lease's length (as
// for any lease without a shared clock).

// Lease is a holder's hold on a named lease.
type Lease struct {
	Name, Holder string
	Token        uint64    // +1 at every change of holder; never 0
	Expires      time.Time // the holder's lease ends then unless renewed
}

// ErrLeaseHeld: another holder has the lease (LeaseHeldError says who).
var ErrLeaseHeld = errors.New("storage: the lease is held by another holder")

// ErrLeaseLost: a transaction named a lease its holder no longer has.
var ErrLeaseLost = errors.New("storage: the lease was lost")

// LeaseHeldError is ErrLeaseHeld with the current holder's lease.
type LeaseHeldError struct{ Lease Lease }

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("storage: lease %q is held by %q until %s", e.Lease.Name, e.Lease.Holder, e.Lease.Expires.Format(time.RFC3339Nano))
}

func (e *LeaseHeldError) Is(target error) bool { return target == ErrLeaseHeld }

var leasePrefix = []byte{prefixGlobal, 'l', 'e', 'a', 's', 'e'}

func leaseKey(name string) []byte { return append(bytes.Clone(leasePrefix), name...) }

func encodeLease(l Lease) []byte {
	v := binary.BigEndian.AppendUint64(nil, l.Token)
	v = binary.BigEndian.AppendUint64(v, uint64(l.Expires.UnixMicro()))
	return append(v, l.Holder...)
}

func decodeLease(name string, v []byte) (Lease, error) {
	if len(v) < 16 {
		return Lease{}, fmt.Errorf("storage: corrupt lease %q", name)
	}
	return Lease{Name: name, Token: binary.BigEndian.Uint64(v), Expires: time.UnixMicro(int64(binary.BigEndian.Uint64(v[8:]))).UTC(), Holder: string(v[16:])}, nil
}

// leases is the DB's lease state in this process.
type leases struct {
	mu sync.Mutex // orders acquisitions and lease-checking commits
}

// AcquireLease gives holder the lease for ttl: when nobody has it, its
// holder's has expired (a new token), or holder has it already (a renewal,
// same token). Otherwise a *LeaseHeldError.
func (db *DB) AcquireLease(name, holder string, ttl time.Duration) (Lease, error) {
	if holder == "" || ttl <= 0 {
		return Lease{}, errors.New("storage: a lease needs a holder and a positive length")
	}
	return db.changeLease(name, func(cur Lease, found bool, now time.Time) (Lease, bool, error) {
		next := Lease{Name: name, Holder: holder, Token: 1, Expires: now.Add(ttl)}
		switch {
		case !found:
		case cur.Holder == holder:
			next.Token = cur.Token
		case now.Before(cur.Expires):
			return Lease{}, false, &LeaseHeldError{Lease: cur}
		default:
			next.Token = cur.Token + 1
		}
		return next, true, nil
	})
}

// ReleaseLease ends l at once (another holder may take it), if l is still
// its holder's; otherwise ErrLeaseLost.
func (db *DB) ReleaseLease(l Lease) error {
	_, err := db.changeLease(l.Name, func(cur Lease, found bool, now time.Time) (Lease, bool, error) {
		if !found || cur.Holder != l.Holder || cur.Token != l.Token {
			return Lease{}, false, ErrLeaseLost
		}
		cur.Expires = now
		return cur, true, nil
	})
	return err
}

// changeLease reads the lease, lets change decide, and writes what it
// returns, retried when another process's write came between.
func (db *DB) changeLease(name string, change func(cur Lease, found bool, now time.Time) (Lease, bool, error)) (Lease, error) {
	db.leases.mu.Lock()
	defer db.leases.mu.Unlock()
	key := leaseKey(name)
	var next Lease
	err := db.retryShared(func(snap engineSnapshot, b engineBatch) (bool, error) {
		v, found, err := snap.get(key, nil)
		var cur Lease
		if err == nil && found {
			cur, err = decodeLease(name, v)
		}
		if err != nil {
			return false, err
		}
		var write bool
		if next, write, err = change(cur, found, db.clock()); err != nil || !write {
			return false, err
		}
		return true, b.set(key, encodeLease(next))
	})
	if err != nil {
		return Lease{}, err
	}
	return next, nil
}

// CheckLease makes the transaction's commit fail with ErrLeaseLost unless
// l is still its holder's, with l's token, and unexpired at the commit.
// A transaction that writes nothing is not checked.
func (t *Txn) CheckLease(l Lease) error {
	if err := t.alive(); err != nil {
		return err
	}
	t.leases = append(t.leases, l)
	return nil
}

// checkLeases is the commit's check of CheckLease's leases (the caller
// holds commitMu and db.leases.mu until the batch is applied). On a shared
// store it writes each lease back unchanged into b.
func (t *Txn) checkLeases(b engineBatch) error {
	db := t.db
	now := db.clock()
	for _, l := range t.leases {
		key := leaseKey(l.Name)
		v, found, err := db.eng.get(key, nil)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("%w: %q has no holder", ErrLeaseLost, l.Name)
		}
		cur, err := decodeLease(l.Name, v)
		if err != nil {
			return err
		}
		if cur.Token != l.Token || cur.Holder != l.Holder || !now.Before(cur.Expires) {
			return fmt.Errorf("%w: %q is %q's with token %d until %s (this transaction's: %q, token %d)",
				ErrLeaseLost, l.Name, cur.Holder, cur.Token, cur.Expires.Format(time.RFC3339Nano), l.Holder, l.Token)
		}
		if db.sharedStore {
			if err := b.set(key, v); err != nil {
				return err
			}
		}
	}
	return nil
}
