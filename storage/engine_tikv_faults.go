//go:build tikv

package storage

import (
	"bytes"
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/pingcap/kvproto/pkg/errorpb"
	"github.com/tikv/client-go/v2/testutils"
	"github.com/tikv/client-go/v2/tikv"
	"github.com/tikv/client-go/v2/tikvrpc"
)

// Region trouble on the mock cluster. A real TiKV cluster splits regions
// as they grow, moves their leaders and answers a request sent on a stale
// region map with a region error; client-go then reloads the region and
// sends the request again. The mock cluster has one region and never
// errs, so the tests that must show a statement or a refresh loses
// nothing under such trouble make it with RegionFaults: splits of the
// whole key space at any moment, and region errors injected before a
// request reaches the store (as TiKV refuses a request it cannot serve:
// nothing of it is applied).

// RegionFaults makes region trouble on one named mock cluster
// (tikvmock://NAME), for every open of it.
type RegionFaults struct {
	cluster  *testutils.MockCluster
	every    atomic.Int64 // 0 = no injected errors
	n        atomic.Int64 // requests seen
	injected atomic.Int64
}

// MockRegionFaults is the region-trouble control of the named mock
// cluster, which must be open.
func MockRegionFaults(name string) (*RegionFaults, error) {
	mockClustersMu.Lock()
	defer mockClustersMu.Unlock()
	m := mockClusters[name]
	if name == "" || m == nil {
		return nil, errors.New("no open mock cluster named " + name)
	}
	return m.faults, nil
}

// ErrorEvery makes every nth request to the store fail with a region
// error (NotLeader, RegionNotFound, EpochNotMatch or StaleCommand in
// turn) before the store sees it; 0 stops it.
func (f *RegionFaults) ErrorEvery(n int) { f.every.Store(int64(n)) }

// Injected is how many region errors were injected.
func (f *RegionFaults) Injected() int64 { return f.injected.Load() }

// Split cuts the whole key space into count regions of about equal
// numbers of keys (fresh region ids: every region a client has cached is
// stale afterwards).
func (f *RegionFaults) Split(count int) {
	f.cluster.SplitKeys([]byte{}, bytes.Repeat([]byte{0xff}, 16), count)
}

// Regions is the cluster's number of regions.
func (f *RegionFaults) Regions() int {
	return len(f.cluster.ScanRegions([]byte{}, nil, 0))
}

// wrap puts the injection in front of a store's client.
func (f *RegionFaults) wrap(c tikv.Client) tikv.Client { return faultClient{c, f} }

// faultClient is a store's RPC client with RegionFaults in front.
type faultClient struct {
	tikv.Client
	f *RegionFaults
}

func (c faultClient) SendRequest(ctx context.Context, addr string, req *tikvrpc.Request, timeout time.Duration) (*tikvrpc.Response, error) {
	every := c.f.every.Load()
	if every > 0 && regionScoped(req.Type) {
		if n := c.f.n.Add(1); n%every == 0 {
			if resp, err := tikvrpc.GenRegionErrorResp(req, regionError(n/every, req.Context.GetRegionId())); err == nil {
				c.f.injected.Add(1)
				return resp, nil
			}
		}
	}
	return c.Client.SendRequest(ctx, addr, req, timeout)
}

// regionScoped: the transactional requests a region serves (the ones
// client-go retries after a region error).
func regionScoped(t tikvrpc.CmdType) bool {
	switch t {
	case tikvrpc.CmdGet, tikvrpc.CmdScan, tikvrpc.CmdBatchGet, tikvrpc.CmdPrewrite,
		tikvrpc.CmdCommit, tikvrpc.CmdCleanup, tikvrpc.CmdBatchRollback,
		tikvrpc.CmdCheckTxnStatus, tikvrpc.CmdResolveLock, tikvrpc.CmdScanLock:
		return true
	}
	return false
}

// regionError is the kth injected error: the four kinds TiKV sends when a
// request came on a stale map or to a region in transition.
func regionError(k int64, region uint64) *errorpb.Error {
	switch k % 4 {
	case 0:
		return &errorpb.Error{Message: "injected", NotLeader: &errorpb.NotLeader{RegionId: region}}
	case 1:
		return &errorpb.Error{Message: "injected", RegionNotFound: &errorpb.RegionNotFound{RegionId: region}}
	case 2:
		return &errorpb.Error{Message: "injected", EpochNotMatch: &errorpb.EpochNotMatch{}}
	default:
		return &errorpb.Error{Message: "injected", StaleCommand: &errorpb.StaleCommand{}}
	}
}
