//go:build tikv

package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/pingcap/goleveldb/leveldb"
	pclog "github.com/pingcap/log"
	"github.com/tikv/client-go/v2/config"
	tikverr "github.com/tikv/client-go/v2/error"
	"github.com/tikv/client-go/v2/testutils"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/txnkv/transaction"
	"github.com/tikv/client-go/v2/txnkv/txnsnapshot"
	pd "github.com/tikv/pd/client"
	"go.uber.org/zap/zapcore"
)

// The TiKV engine (engine.go), on client-go's transactional API: a
// snapshot is a TiKV snapshot at a timestamp from PD's oracle, a batch one
// Percolator transaction committed at commit (two-phase, synchronous:
// durable in a Raft majority when it returns, so wait has nothing left to
// do; and apply waits for the secondaries, engine_tikv_commits.go). A
// process's DB keeps its in-memory state (versions, row ids, conflict
// bookkeeping) as on Pebble; on a shared store (a real cluster, or
// tikvmock://NAME) shared.go makes that state safe beside other
// processes' (doc.go, Several processes on TiKV).
//
// Layout: the DB's keys as they are on Pebble. Values carry one leading
// byte (0), as TiKV cannot hold an empty value and the DB's meta values
// may be empty.

func init() {
	engineOpeners["tikv"] = openTiKV
	engineOpeners["tikvmock"] = openTiKVMock
	// client-go logs through its own global logger, at info level to
	// stdout by default: every big transaction and region split would
	// land among a tool's output (mvbench's tables, psql's results). Its
	// warnings and errors go to stderr; the rest is dropped.
	if lg, props, err := pclog.InitLoggerWithWriteSyncer(&pclog.Config{Level: "warn"}, zapcore.AddSync(os.Stderr), zapcore.AddSync(os.Stderr)); err == nil {
		pclog.ReplaceGlobals(lg, props)
	}
}

func openTiKV(endpoints []string, opts *Options) (engine, error) {
	if len(endpoints) == 0 {
		return nil, errors.New("no PD endpoint: use tikv://pd-host:2379[,pd2:2379…]")
	}
	// txnkv.NewClient's steps, with the RPC client wrapped.
	cfg := config.GetGlobalConfig()
	pdClient, err := tikv.NewPDClient(endpoints)
	if err != nil {
		return nil, err
	}
	tlsConfig, err := cfg.Security.ToTLSConfig()
	if err != nil {
		pdClient.Close()
		return nil, err
	}
	spkv, err := tikv.NewEtcdSafePointKV(endpoints, tlsConfig)
	if err != nil {
		pdClient.Close()
		return nil, err
	}
	commits := newCommitTracker(tikv.NewRPCClient(tikv.WithSecurity(cfg.Security)))
	uuid := fmt.Sprintf("tikv-%v", pdClient.GetClusterID(context.Background()))
	store, err := tikv.NewKVStore(uuid, pdClient, spkv, commits)
	if err != nil {
		return nil, err
	}
	return startTiKVEngine(&tikvEngine{store: store, commits: commits, isShared: true}, opts)
}

// openTiKVMock opens client-go's in-process mock cluster (mock PD, one
// region, MVCC in goleveldb): in memory with Options.InMemory or no Dir,
// else under Dir/tikvmock, which a later Open of the same Dir reads again.
// tikvmock://NAME names a cluster this process shares: every open of one
// name until the last close is another process's view of the same cluster
// (its own store, oracle and caches on the same mock PD and MVCC store),
// which is how tests run several servers on one cluster.
func openTiKVMock(endpoints []string, opts *Options) (engine, error) {
	if len(endpoints) > 1 {
		return nil, errors.New("tikvmock:// takes at most one cluster name")
	}
	name := ""
	if len(endpoints) == 1 {
		name = endpoints[0]
	}
	m, err := sharedMock(name, opts)
	if err != nil {
		return nil, err
	}
	var commits *commitTracker
	hijack := func(c tikv.Client) tikv.Client {
		commits = newCommitTracker(m.faults.wrap(mockHandle{c}))
		return commits
	}
	store, err := tikv.NewTestTiKVStore(m.client, m.pd, hijack, nil, 0)
	if err != nil {
		m.release()
		return nil, err
	}
	if name == "" && !opts.InMemory && opts.Dir != "" { // unshared and kept: a crash may have left locks (engine_tikv_locks.go)
		if err := resolveOrphanLocks(store, opts); err != nil {
			_ = store.Close()
			m.release()
			return nil, err
		}
	}
	return startTiKVEngine(&tikvEngine{store: store, cluster: m.cluster, mock: m, commits: commits, isShared: name != ""}, opts)
}

// mockCluster is one in-process mock cluster and its opens.
type mockCluster struct {
	name    string
	client  *testutils.MockClient
	cluster *testutils.MockCluster
	pd      pd.Client
	faults  *RegionFaults // off until a test turns it on
	refs    int           // guarded by mockClustersMu
}

var (
	mockClustersMu sync.Mutex
	mockClusters   = map[string]*mockCluster{} // named clusters with opens
)

// sharedMock is the named cluster (a new one when it has no open), or a
// new unnamed one.
func sharedMock(name string, opts *Options) (*mockCluster, error) {
	mockClustersMu.Lock()
	defer mockClustersMu.Unlock()
	if m := mockClusters[name]; name != "" && m != nil {
		m.refs++
		return m, nil
	}
	path := ""
	if !opts.InMemory && opts.Dir != "" {
		path = filepath.Join(opts.Dir, "tikvmock")
	}
	client, cluster, pdc, err := testutils.NewMockTiKV(path, nil)
	if err != nil {
		return nil, err
	}
	testutils.BootstrapWithSingleStore(cluster)
	m := &mockCluster{name: name, client: client, cluster: cluster, pd: pdc, faults: &RegionFaults{cluster: cluster}, refs: 1}
	if name != "" {
		mockClusters[name] = m
	}
	return m, nil
}

// release ends one open; the last closes the mock's MVCC store.
func (m *mockCluster) release() error {
	mockClustersMu.Lock()
	m.refs--
	last := m.refs == 0
	if last && m.name != "" {
		delete(mockClusters, m.name)
	}
	mockClustersMu.Unlock()
	if !last {
		return nil
	}
	// The store's close does not reach the mock's MVCC store (its
	// goleveldb goroutines would outlive it).
	if err := m.client.Close(); err != nil && !errors.Is(err, leveldb.ErrClosed) {
		return err
	}
	return nil
}

// mockHandle is one store's hold on a shared mock client: closing the
// store does not close the client (release does).
type mockHandle struct{ tikv.Client }

func (mockHandle) Close() error { return nil }

type tikvEngine struct {
	store   *tikv.KVStore
	cluster *testutils.MockCluster // the mock's; nil on a real cluster
	mock    *mockCluster           // the mock's; nil on a real cluster
	commits *commitTracker         // the store's RPC client
	// isShared: a real cluster, or a named mock (tikvmock://NAME) other
	// DBs of this process may open too.
	isShared bool
	dead     *deadReclaimer // engine_tikv_dead.go
}

func (e *tikvEngine) shared() bool { return e.isShared }

func (e *tikvEngine) latest() *txnsnapshot.KVSnapshot { return e.store.GetSnapshot(math.MaxUint64) }

func (e *tikvEngine) get(key, buf []byte) ([]byte, bool, error) { return tikvGet(e.latest(), key, buf) }
func (e *tikvEngine) has(key []byte) (bool, error) {
	_, ok, err := tikvGet(e.latest(), key, nil)
	return ok, err
}
func (e *tikvEngine) newIter(lower, upper []byte) (engineIter, error) {
	return &tikvIter{snap: e.latest(), lower: lower, upper: upper}, nil
}

func (e *tikvEngine) snapshot() engineSnapshot {
	ts, err := e.store.CurrentTimestamp("global")
	if err != nil {
		return tikvSnap{err: err}
	}
	return tikvSnap{s: e.store.GetSnapshot(ts), ts: ts}
}

func (e *tikvEngine) newBatch(int) engineBatch { return &tikvBatch{} }

func (e *tikvEngine) commit(b engineBatch) error { return e.apply(b.(*tikvBatch)) }

func (e *tikvEngine) write(b engineBatch, _ bool) error { return e.apply(b.(*tikvBatch)) }

// apply runs the batch as one transaction. A range deletion deletes the
// keys the transaction sees in the range at that point (its snapshot and
// its own earlier writes): TiKV has no transactional range deletion.
func (e *tikvEngine) apply(b *tikvBatch) error {
	if len(b.ops) == 0 {
		return nil
	}
	var txn *transaction.KVTxn
	var err error
	if b.since != 0 {
		// Begun at the snapshot's timestamp: prewrite fails with a write
		// conflict when a key of the batch was committed after it.
		txn, err = e.store.Begin(tikv.WithStartTS(b.since))
	} else {
		txn, err = e.store.Begin()
	}
	if err != nil {
		return err
	}
	limitTxn(txn)
	var dead []tikvOp
	for _, op := range b.ops {
		switch {
		case op.dead:
			// Marked here, deleted after the commit (engine_tikv_dead.go).
			err = txn.Set(deadMarker(op.key, op.end), []byte{0})
			dead = append(dead, op)
		case op.end != nil:
			it, err := txn.Iter(op.key, op.end)
			if err != nil {
				_ = txn.Rollback()
				return err
			}
			var keys [][]byte
			for it.Valid() {
				keys = append(keys, cloneBytes(it.Key()))
				if err = it.Next(); err != nil {
					break
				}
			}
			it.Close()
			for _, k := range keys {
				if err == nil {
					err = txn.Delete(k)
				}
			}
		case op.del:
			err = txn.Delete(op.key)
		default:
			err = txn.Set(op.key, op.value)
		}
		if err != nil {
			_ = txn.Rollback()
			return err
		}
	}
	if err := e.commitTxn(txn); err != nil {
		return err
	}
	for _, op := range dead {
		e.dead.add(op.key, op.end)
	}
	return nil
}

// tikvTxnSizeLimit, when set, bounds the bytes one transaction of the
// engine writes, as a TiKV deployment's transaction size limit does
// (tests: a write that would make one transaction of a big key space
// fails with client-go's ErrTxnTooLarge). 0: client-go's default, none.
var tikvTxnSizeLimit uint64

func limitTxn(txn *transaction.KVTxn) {
	if tikvTxnSizeLimit > 0 {
		txn.GetUnionStore().SetEntrySizeLimit(tikvTxnSizeLimit, tikvTxnSizeLimit)
	}
}

// commitTxn commits txn and waits for its secondaries; a write conflict
// is errEngineConflict.
func (e *tikvEngine) commitTxn(txn *transaction.KVTxn) error {
	startTS := txn.StartTS()
	e.commits.expect(startTS, txn.Len())
	err := txn.Commit(context.Background())
	e.commits.wait(startTS, err == nil)
	if err != nil {
		if tikverr.IsErrWriteConflict(err) {
			return fmt.Errorf("%w (%v)", errEngineConflict, err)
		}
		return err
	}
	return nil
}

func (e *tikvEngine) close() error {
	e.dead.close()
	err := e.store.Close()
	if e.mock != nil {
		if cerr := e.mock.release(); err == nil {
			err = cerr
		}
	}
	return err
}

// tikvGet reads key from snapshot s into buf, without the value's leading
// byte.
func tikvGet(s *txnsnapshot.KVSnapshot, key, buf []byte) ([]byte, bool, error) {
	v, err := s.Get(context.Background(), key)
	if tikverr.IsErrNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(v) == 0 {
		return nil, false, fmt.Errorf("storage: TiKV value of key %x has no header", key)
	}
	return append(buf[:0], v[1:]...), true, nil
}

// tikvSnap is a snapshot at a timestamp (err: the oracle gave none, and
// every read fails with it).
type tikvSnap struct {
	s   *txnsnapshot.KVSnapshot
	ts  uint64
	err error
}

func (s tikvSnap) get(key, buf []byte) ([]byte, bool, error) {
	if s.err != nil {
		return nil, false, s.err
	}
	return tikvGet(s.s, key, buf)
}

func (s tikvSnap) has(key []byte) (bool, error) {
	_, ok, err := s.get(key, nil)
	return ok, err
}

func (s tikvSnap) newIter(lower, upper []byte) (engineIter, error) {
	if s.err != nil {
		return nil, s.err
	}
	return &tikvIter{snap: s.s, lower: lower, upper: upper}, nil
}

func (s tikvSnap) close() error { return nil }

// kvScanner is client-go's scanner (an internal type's method set).
type kvScanner interface {
	Valid() bool
	Key() []byte
	Value() []byte
	Next() error
	Close()
}

// tikvIter is an engineIter over a snapshot's scanners: a forward one
// from a seek key to the upper bound, or a reverse one from below a key
// down to the lower bound; changing direction opens the other kind.
type tikvIter struct {
	snap         *txnsnapshot.KVSnapshot
	lower, upper []byte
	sc           kvScanner
	reverse      bool
	valid        bool
	err          error
}

// maxKey bounds an unbounded reverse scan: every key of the layout starts
// with a prefix byte below it.
var maxKey = []byte{0xff}

func (it *tikvIter) closeScanner() {
	if it.sc != nil {
		it.sc.Close()
		it.sc = nil
	}
}

// forward positions at the first key >= k within the bounds.
func (it *tikvIter) forward(k []byte) bool {
	it.closeScanner()
	if it.lower != nil && bytes.Compare(k, it.lower) < 0 {
		k = it.lower
	}
	if k == nil {
		k = []byte{}
	}
	sc, err := it.snap.Iter(k, it.upper)
	if err != nil {
		it.err, it.valid = err, false
		return false
	}
	it.sc, it.reverse = sc, false
	return it.check()
}

// backward positions at the last key < k within the bounds.
func (it *tikvIter) backward(k []byte) bool {
	it.closeScanner()
	if it.upper != nil && (k == nil || bytes.Compare(k, it.upper) > 0) {
		k = it.upper
	}
	if k == nil {
		k = maxKey
	}
	sc, err := it.snap.IterReverse(k)
	if err != nil {
		it.err, it.valid = err, false
		return false
	}
	it.sc, it.reverse = sc, true
	return it.check()
}

func (it *tikvIter) check() bool {
	it.valid = it.sc.Valid()
	if it.valid && it.reverse && it.lower != nil && bytes.Compare(it.sc.Key(), it.lower) < 0 {
		it.valid = false
	}
	if it.valid && !it.reverse && it.upper != nil && bytes.Compare(it.sc.Key(), it.upper) >= 0 {
		it.valid = false
	}
	return it.valid
}

func (it *tikvIter) step() bool {
	if err := it.sc.Next(); err != nil {
		it.err, it.valid = err, false
		return false
	}
	return it.check()
}

func (it *tikvIter) First() bool            { return it.forward(it.lower) }
func (it *tikvIter) Last() bool             { return it.backward(it.upper) }
func (it *tikvIter) SeekGE(key []byte) bool { return it.forward(key) }
func (it *tikvIter) SeekLT(key []byte) bool { return it.backward(key) }

func (it *tikvIter) SeekPrefixGE(key []byte) bool {
	return it.forward(key) && bytes.Equal(it.sc.Key(), key)
}

func (it *tikvIter) Next() bool {
	if !it.valid {
		return false
	}
	if it.reverse {
		return it.forward(append(cloneBytes(it.sc.Key()), 0))
	}
	return it.step()
}

func (it *tikvIter) NextPrefix() bool { return it.Next() }

func (it *tikvIter) Prev() bool {
	if !it.valid {
		return false
	}
	if !it.reverse {
		return it.backward(cloneBytes(it.sc.Key()))
	}
	return it.step()
}

func (it *tikvIter) SetBounds(lower, upper []byte) {
	it.closeScanner()
	it.lower, it.upper, it.valid = cloneBytes(lower), cloneBytes(upper), false
}

func (it *tikvIter) Valid() bool { return it.valid }
func (it *tikvIter) Key() []byte { return it.sc.Key() }

func (it *tikvIter) ValueAndErr() ([]byte, error) {
	v := it.sc.Value()
	if len(v) == 0 {
		return nil, fmt.Errorf("storage: TiKV value of key %x has no header", it.sc.Key())
	}
	return v[1:], nil
}

func (it *tikvIter) Error() error { return it.err }

func (it *tikvIter) Close() error {
	it.closeScanner()
	it.valid = false
	return it.err
}

// tikvBatch holds writes until commit; values are stored with their
// leading byte.
type tikvBatch struct {
	ops      []tikvOp
	bytes    int
	deferred bool
	since    uint64 // conflictSince's snapshot timestamp; 0: none
}

type tikvOp struct {
	key, value, end []byte // end: a range deletion [key, end)
	del             bool
	dead            bool // a range deletion of a dead key space (delDead)
}

func (b *tikvBatch) set(key, value []byte) error {
	v := make([]byte, 1+len(value))
	copy(v[1:], value)
	b.ops = append(b.ops, tikvOp{key: cloneBytes(key), value: v})
	b.bytes += len(key) + len(v)
	return nil
}

func (b *tikvBatch) del(key []byte) error {
	b.ops = append(b.ops, tikvOp{key: cloneBytes(key), del: true})
	b.bytes += len(key)
	return nil
}

func (b *tikvBatch) delRange(start, end []byte) error {
	b.ops = append(b.ops, tikvOp{key: cloneBytes(start), end: cloneBytes(end)})
	b.bytes += len(start) + len(end)
	return nil
}

func (b *tikvBatch) delDead(start, end []byte) error {
	b.ops = append(b.ops, tikvOp{key: cloneBytes(start), end: cloneBytes(end), dead: true})
	b.bytes += len(start) + len(end)
	return nil
}

func (b *tikvBatch) setDeferred(keyLen, valueLen int) ([]byte, []byte) {
	k := make([]byte, keyLen)
	v := make([]byte, 1+valueLen)
	b.ops = append(b.ops, tikvOp{key: k, value: v})
	b.bytes += keyLen + len(v)
	b.deferred = true
	return k, v[1:]
}

func (b *tikvBatch) finishDeferred() error {
	if !b.deferred {
		return errors.New("storage: finishDeferred without setDeferred")
	}
	b.deferred = false
	return nil
}

func (b *tikvBatch) conflictSince(s engineSnapshot) {
	if ts, ok := s.(tikvSnap); ok && ts.err == nil {
		b.since = ts.ts
	}
}

func (b *tikvBatch) size() int   { return b.bytes }
func (b *tikvBatch) empty() bool { return len(b.ops) == 0 }
func (b *tikvBatch) reset()      { b.ops, b.bytes, b.since = b.ops[:0], 0, 0 }
func (b *tikvBatch) wait() error { return nil }
func (b *tikvBatch) close()      { b.ops = nil }
