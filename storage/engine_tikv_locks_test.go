//go:build tikv

package storage

import (
	"context"
	"math"
	"testing"

	"github.com/pingcap/kvproto/pkg/kvrpcpb"
	"github.com/tikv/client-go/v2/oracle"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/tikvrpc"
)

// TestTiKVOpenResolvesOrphanLocks: the locks a killed process left in an
// unshared mock store are gone when the store opens again, before any
// read: the prewrite of a transaction that never committed is rolled
// back, and the secondary of one whose primary committed is committed.
// Before, the first read of such a key waited out the lock's time to live.
func TestTiKVOpenResolvesOrphanLocks(t *testing.T) {
	dir := t.TempDir()
	open := func() *DB {
		db, err := Open(Options{Dir: dir, Store: "tikvmock://", DiskReserve: -1})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	key := func(s string) []byte { return append([]byte{0xf0, 'o'}, s...) }
	db := open()
	store := db.eng.(*tikvEngine).store
	bo := tikv.NewGcResolveLockMaxBackoffer(context.Background())
	// A transaction that never committed, and one killed between its
	// primary's commit and its secondary's.
	prewrite(t, bo, store, key("lost-p"), key("lost-p"), key("lost-s"))
	ts := prewrite(t, bo, store, key("kept-p"), key("kept-p"), key("kept-s"))
	commitPrimary(t, bo, store, key("kept-p"), ts)
	if locks := allLocks(t, bo, store); locks != 3 {
		t.Fatalf("%d locks before the restart, want 3", locks)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open()
	defer db.Close()
	store = db.eng.(*tikvEngine).store
	if locks := allLocks(t, bo, store); locks != 0 {
		t.Fatalf("%d locks left after the open", locks)
	}
	for k, want := range map[string]bool{"lost-p": false, "lost-s": false, "kept-p": true, "kept-s": true} {
		v, ok, err := db.eng.get(key(k), nil)
		if err != nil {
			t.Fatal(err)
		}
		if ok != want || ok && string(v) != "v" {
			t.Errorf("%s: %q, %v after the restart, want present %v", k, v, ok, want)
		}
	}
}

// prewrite locks keys (value "v", in the engine's format) in a new
// transaction whose primary is primary, and returns its start timestamp.
func prewrite(t *testing.T, bo *tikv.Backoffer, store *tikv.KVStore, primary []byte, keys ...[]byte) uint64 {
	t.Helper()
	ts, err := store.CurrentTimestamp(oracle.GlobalTxnScope)
	if err != nil {
		t.Fatal(err)
	}
	var muts []*kvrpcpb.Mutation
	for _, k := range keys {
		muts = append(muts, &kvrpcpb.Mutation{Op: kvrpcpb.Op_Put, Key: k, Value: []byte{0, 'v'}})
	}
	_, err = regionRequest(bo, store, primary, func(*tikv.KeyLocation) *tikvrpc.Request {
		return tikvrpc.NewRequest(tikvrpc.CmdPrewrite, &kvrpcpb.PrewriteRequest{
			Mutations: muts, PrimaryLock: primary, StartVersion: ts, LockTtl: math.MaxUint32, TxnSize: uint64(len(keys))})
	}, func(resp *tikvrpc.Response) error {
		if errs := resp.Resp.(*kvrpcpb.PrewriteResponse).GetErrors(); len(errs) > 0 {
			t.Fatalf("prewrite: %v", errs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func commitPrimary(t *testing.T, bo *tikv.Backoffer, store *tikv.KVStore, primary []byte, startTS uint64) {
	t.Helper()
	ts, err := store.CurrentTimestamp(oracle.GlobalTxnScope)
	if err != nil {
		t.Fatal(err)
	}
	_, err = regionRequest(bo, store, primary, func(*tikv.KeyLocation) *tikvrpc.Request {
		return tikvrpc.NewRequest(tikvrpc.CmdCommit, &kvrpcpb.CommitRequest{StartVersion: startTS, Keys: [][]byte{primary}, CommitVersion: ts})
	}, func(resp *tikvrpc.Response) error {
		if e := resp.Resp.(*kvrpcpb.CommitResponse).GetError(); e != nil {
			t.Fatalf("commit: %v", e)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func allLocks(t *testing.T, bo *tikv.Backoffer, store *tikv.KVStore) int {
	t.Helper()
	locks, _, err := scanLocks(bo, store, nil, math.MaxUint64)
	if err != nil {
		t.Fatal(err)
	}
	return len(locks)
}
