//go:build tikv

package storage

import (
	"context"
	"sync"
	"time"

	"github.com/pingcap/kvproto/pkg/kvrpcpb"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/tikvrpc"
	"github.com/tikv/client-go/v2/txnkv/transaction"
)

// Waiting for a commit's secondaries. client-go's two-phase commit returns
// once the primary key is committed and commits the other keys (the
// secondaries) in the background. Until they are, each of their locks
// makes the next reader look up the primary and resolve the lock — and
// the DB's next statement reads what it just wrote (a refresh reads the
// rows its source's commit wrote; a commit's range deletion reads the
// range). On a real cluster that is a status check and a resolve per
// region; on the mock cluster each resolve scans every version of every
// key in the region under the store's lock, which made a 20k-row view's
// REFRESH FULL take 16–37 s. So the engine's commit waits for its
// secondaries too, as Pebble's commit is whole when it returns: the
// store's RPC client is wrapped by commitTracker, which counts the keys
// each commit request of a transaction committed, and apply waits until
// all of its transaction's keys are.
//
// The wait is a speed-up only (a reader that meets a lock still resolves
// it correctly), so it is bounded by secondaryWait: a secondary that
// fails for good (the store closing) leaves its lock to the readers. The
// bound is client-go's own for committing secondaries: a shorter one (it
// was 2 s) gave up on a big commit's secondaries on a loaded machine, and
// the next statement's 20k reads each resolved a lock, which on the mock
// is a scan of the whole region (an UPDATE after a REFRESH took 110–320 s).

// secondaryWait bounds how long a commit waits for its secondaries: as
// long as client-go goes on committing them.
const secondaryWait = (transaction.CommitSecondaryMaxBackoff + 1000) * time.Millisecond

// commitTracker is a tikv.Client that counts committed keys per
// transaction (by start timestamp) for the transactions apply expects.
type commitTracker struct {
	tikv.Client
	mu      sync.Mutex
	pending map[uint64]*pendingCommit
}

// pendingCommit is one transaction's count of committed keys.
type pendingCommit struct {
	want, done int
	all        chan struct{} // closed when done reaches want
}

func newCommitTracker(c tikv.Client) *commitTracker {
	return &commitTracker{Client: c, pending: map[uint64]*pendingCommit{}}
}

func (c *commitTracker) SendRequest(ctx context.Context, addr string, req *tikvrpc.Request, timeout time.Duration) (*tikvrpc.Response, error) {
	resp, err := c.Client.SendRequest(ctx, addr, req, timeout)
	if err != nil || req.Type != tikvrpc.CmdCommit {
		return resp, err
	}
	r, ok := resp.Resp.(*kvrpcpb.CommitResponse)
	if !ok || r.GetRegionError() != nil || r.GetError() != nil {
		return resp, err
	}
	cr := req.Commit()
	c.mu.Lock()
	if p := c.pending[cr.StartVersion]; p != nil && p.done < p.want {
		if p.done += len(cr.Keys); p.done >= p.want {
			close(p.all)
		}
	}
	c.mu.Unlock()
	return resp, err
}

// expect registers a transaction of n keys before its commit.
func (c *commitTracker) expect(startTS uint64, n int) {
	c.mu.Lock()
	c.pending[startTS] = &pendingCommit{want: n, all: make(chan struct{})}
	c.mu.Unlock()
}

// wait waits (at most secondaryWait) until every key of the transaction
// is committed, or only forgets it (its commit failed: committed false).
func (c *commitTracker) wait(startTS uint64, committed bool) {
	c.mu.Lock()
	p := c.pending[startTS]
	c.mu.Unlock()
	if p != nil && committed {
		t := time.NewTimer(secondaryWait)
		select {
		case <-p.all:
		case <-t.C:
		}
		t.Stop()
	}
	c.mu.Lock()
	delete(c.pending, startTS)
	c.mu.Unlock()
}
