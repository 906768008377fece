//go:build tikv

package storage

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pingcap/kvproto/pkg/kvrpcpb"
	"github.com/tikv/client-go/v2/oracle"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/tikvrpc"
	"github.com/tikv/client-go/v2/txnkv/txnlock"
)

// The locks of interrupted transactions on an unshared store. A process
// killed in the middle of a commit leaves its transaction's Percolator
// locks (a prewrite whose commit never came, or secondaries of a
// committed primary). A read that meets one waits for the lock's time to
// live before it may resolve it: client-go keeps a big transaction's
// locks alive 20 s past its last heartbeat, so the first statements after
// a restart waited that long, past a client's statement timeout.
//
// An unshared mock store (tikvmock:// in a data directory) has no other
// process, so every lock at open is such a leftover: resolveOrphanLocks
// settles them all before the DB loads (committed where the primary was,
// rolled back otherwise). A real cluster's locks may belong to live
// transactions of other processes; they resolve as TiKV's do, by their
// time to live.

// resolveOrphanLocks resolves every lock of store, region by region: scan
// the locks, settle each transaction's primary whatever its time to live
// (BatchResolveLocks rolls a primary still locked back), then resolve the
// locks, which find their transaction's outcome at once. (client-go's GC,
// which resolves all locks too, loops forever on the mock, whose batch
// resolve does nothing.)
func resolveOrphanLocks(store *tikv.KVStore, opts *Options) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ts, err := store.CurrentTimestamp(oracle.GlobalTxnScope)
	if err != nil {
		return err
	}
	lr := store.GetLockResolver()
	bo := tikv.NewGcResolveLockMaxBackoffer(ctx)
	resolved := 0
	key := []byte{}
	for rounds := 0; ; rounds++ {
		if rounds > 10000 {
			return errors.New("resolve the locks of interrupted transactions: they do not go away")
		}
		locks, loc, err := scanLocks(bo, store, key, ts)
		if err != nil {
			return fmt.Errorf("resolve the locks of interrupted transactions: %w", err)
		}
		if len(locks) > 0 {
			if _, err := lr.BatchResolveLocks(bo, locks, loc.Region); err != nil {
				return fmt.Errorf("resolve the locks of interrupted transactions: %w", err)
			}
			if _, err := lr.ResolveLocks(bo, 0, oneLockPerTxn(locks)); err != nil {
				return fmt.Errorf("resolve the locks of interrupted transactions: %w", err)
			}
			resolved += len(locks)
			continue // scan the region again: it may hold more
		}
		if len(loc.EndKey) == 0 {
			break
		}
		key = loc.EndKey
	}
	if resolved > 0 && opts.Logger != nil {
		opts.Logger.Info("resolved the locks of transactions a crash interrupted", "locks", resolved)
	}
	return nil
}

// scanLocks returns the locks below ts in the region of key, from key on
// (at most orphanLockBatch of them on a real TiKV; the mock returns all
// of the region's), and the region.
func scanLocks(bo *tikv.Backoffer, store *tikv.KVStore, key []byte, ts uint64) ([]*txnlock.Lock, *tikv.KeyLocation, error) {
	var sr *kvrpcpb.ScanLockResponse
	loc, err := regionRequest(bo, store, key, func(loc *tikv.KeyLocation) *tikvrpc.Request {
		return tikvrpc.NewRequest(tikvrpc.CmdScanLock, &kvrpcpb.ScanLockRequest{MaxVersion: ts, Limit: orphanLockBatch, StartKey: key, EndKey: loc.EndKey})
	}, func(resp *tikvrpc.Response) error {
		sr, _ = resp.Resp.(*kvrpcpb.ScanLockResponse)
		if sr == nil {
			return errors.New("empty scan-lock response")
		}
		if sr.GetError() != nil {
			return fmt.Errorf("scan locks: %s", sr.GetError())
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	locks := make([]*txnlock.Lock, len(sr.GetLocks()))
	for i, l := range sr.GetLocks() {
		locks[i] = txnlock.NewLock(l)
	}
	return locks, loc, nil
}

// regionRequest sends the request build makes for the region of key, again
// on a region error (after a backoff), and hands the response to check.
func regionRequest(bo *tikv.Backoffer, store *tikv.KVStore, key []byte, build func(*tikv.KeyLocation) *tikvrpc.Request, check func(*tikvrpc.Response) error) (*tikv.KeyLocation, error) {
	for {
		loc, err := store.GetRegionCache().LocateKey(bo, key)
		if err != nil {
			return nil, err
		}
		resp, err := store.SendReq(bo, build(loc), loc.Region, tikv.ReadTimeoutMedium)
		if err != nil {
			return nil, err
		}
		regionErr, err := resp.GetRegionError()
		if err != nil {
			return nil, err
		}
		if regionErr != nil {
			if err := bo.Backoff(tikv.BoRegionMiss(), errors.New(regionErr.String())); err != nil {
				return nil, err
			}
			continue
		}
		return loc, check(resp)
	}
}

// oneLockPerTxn keeps the first lock of each transaction, marked big so
// that its resolution takes the transaction's every lock in the region
// in one request. (The scan does not report a lock's transaction size,
// and a small transaction's locks are resolved key by key: 127k locks
// took over a minute.)
func oneLockPerTxn(locks []*txnlock.Lock) []*txnlock.Lock {
	seen := map[uint64]bool{}
	var out []*txnlock.Lock
	for _, l := range locks {
		if !seen[l.TxnID] {
			seen[l.TxnID] = true
			one := *l
			one.TxnSize = math.MaxUint32
			out = append(out, &one)
		}
	}
	return out
}

// orphanLockBatch bounds the locks one scan returns.
const orphanLockBatch = 1024
