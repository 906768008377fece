package stats

import (
	"context"
	"math"
	"math/rand"
	"sort"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// DefaultTarget is PostgreSQL's default_statistics_target: the most
// common values and histogram buckets kept per column; the sample is
// 300 rows per unit.
const DefaultTarget = 100

// rowsPerTarget is PostgreSQL's sample size per unit of the target
// (std_typanalyze: 300 × attstattarget rows).
const rowsPerTarget = 300

// pageBytes is PostgreSQL's page size, the unit of relpages; rowOverhead
// approximates a heap tuple's header and line pointer.
const (
	pageBytes   = 8192
	rowOverhead = 28
)

// Options tune a collection.
type Options struct {
	// Target is the statistics target (0: DefaultTarget).
	Target int
	// Columns are the positions (in t.Columns) to analyze; nil: all.
	Columns []int
	// Seed seeds the sampler (0: from the clock).
	Seed int64
	// Auto marks statistics collected by auto-analyze.
	Auto bool
}

// Collect samples t's rows at txn's snapshot and computes its statistics.
// Columns not analyzed keep what prev (t's earlier statistics, may be
// nil) says of them, as PostgreSQL's ANALYZE t (col) does.
func Collect(ctx context.Context, txn *storage.Txn, t *catalog.Table, prev *catalog.TableStats, opt Options) (*catalog.TableStats, error) {
	target := opt.Target
	if target <= 0 {
		target = DefaultTarget
	}
	cols := opt.Columns
	if cols == nil {
		for i := range t.Columns {
			cols = append(cols, i)
		}
	}
	seed := opt.Seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	version, err := txn.TableVersion(storage.TableID(t.ID))
	if err != nil {
		return nil, err
	}
	ids := make([]uint32, len(cols))
	for i, c := range cols {
		ids[i] = t.Columns[c].ID
	}
	dec := types.NewRowDecoder(ids)
	size := rowsPerTarget * target
	res := newReservoir(size, rand.New(rand.NewSource(seed)))
	// sample[i] holds the decoded row and its position in key order.
	type sampled struct {
		pos  int64
		vals []types.Datum
	}
	var sample []sampled
	var rows, bytes int64
	it := txn.Scan(storage.TableID(t.ID), nil, nil)
	defer it.Close()
	for it.Next() {
		if rows&4095 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		r := it.Row()
		pos := rows
		rows++
		bytes += int64(len(r.Key)+len(r.Value)) + rowOverhead
		slot, take := res.offer()
		if !take {
			continue
		}
		vals := make([]types.Datum, len(ids))
		if err := dec.Decode(r.Value, vals); err != nil {
			return nil, err
		}
		if slot == len(sample) {
			sample = append(sample, sampled{pos, vals})
		} else {
			sample[slot] = sampled{pos, vals}
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	// Back to key order, for the correlation.
	sort.Slice(sample, func(i, j int) bool { return sample[i].pos < sample[j].pos })
	ts := &catalog.TableStats{Rows: float64(rows), Pages: int32(math.Min(math.MaxInt32, math.Ceil(float64(bytes)/pageBytes))),
		Version: version, At: time.Now().UTC(), Auto: opt.Auto}
	done := map[uint32]bool{}
	vals := make([]types.Datum, len(sample))
	if len(sample) == 0 {
		cols = nil // nothing sampled: the columns keep what they had
	}
	for i, c := range cols {
		col := t.Columns[c]
		if done[col.ID] {
			continue
		}
		done[col.ID] = true
		for j := range sample {
			vals[j] = sample[j].vals[i]
		}
		ts.Columns = append(ts.Columns, computeColumn(col, vals, float64(rows), target))
	}
	// The columns not analyzed this time keep their statistics.
	if prev != nil {
		for _, col := range t.Columns {
			if done[col.ID] {
				continue
			}
			if cs := prev.Column(col); cs != nil {
				ts.Columns = append(ts.Columns, *cs)
			}
		}
	}
	// In table order.
	order := map[uint32]int{}
	for i, col := range t.Columns {
		order[col.ID] = i
	}
	sort.SliceStable(ts.Columns, func(i, j int) bool { return order[ts.Columns[i].ColID] < order[ts.Columns[j].ColID] })
	return ts, nil
}

// Analyze collects t's statistics in txn and stores them there.
func Analyze(ctx context.Context, txn *storage.Txn, t *catalog.Table, opt Options) (*catalog.TableStats, error) {
	prev, err := catalog.ReadStats(txn, t.ID)
	if err != nil {
		return nil, err
	}
	ts, err := Collect(ctx, txn, t, prev, opt)
	if err != nil {
		return nil, err
	}
	return ts, catalog.WriteStats(txn, t.ID, ts)
}
