package storage

import (
	"time"

	dto "github.com/prometheus/client_model/go"
)

// LatencyHistogram is a cumulative latency histogram: Buckets[i].Count
// observations took at most Buckets[i].UpperBound.
type LatencyHistogram struct {
	Count   uint64
	Sum     time.Duration
	Buckets []LatencyBucket // ascending upper bounds
}

// LatencyBucket is one bucket of a LatencyHistogram.
type LatencyBucket struct {
	UpperBound time.Duration
	Count      uint64
}

// WALSyncLatency returns the latencies of the write-ahead log's fsyncs
// since Open: the part of a commit spent making it durable, which a
// COMMIT waits for before it returns (R-X2). The console's /metrics
// serves it (R-O4); nothing of Pebble's types leaves this package.
func (db *DB) WALSyncLatency() LatencyHistogram {
	var out LatencyHistogram
	if db.pdb == nil {
		return out // another engine's log is not ours to measure
	}
	h := db.pdb.Metrics().LogWriter.FsyncLatency
	if h == nil {
		return out
	}
	var m dto.Metric
	if err := h.Write(&m); err != nil || m.Histogram == nil {
		return out
	}
	// Pebble observes nanoseconds.
	out.Count = m.Histogram.GetSampleCount()
	out.Sum = time.Duration(m.Histogram.GetSampleSum())
	for _, b := range m.Histogram.GetBucket() {
		out.Buckets = append(out.Buckets, LatencyBucket{UpperBound: time.Duration(b.GetUpperBound()), Count: b.GetCumulativeCount()})
	}
	return out
}
