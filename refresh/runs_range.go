package refresh

import (
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/mvserver/mvserver/storage"
)

// History keys are prefix | view | start time (timeKey), so one view's runs
// or events of a time window are one key span: the console reads the last
// days of a long history without decoding all of it.

// logSpan is the key span of view's entries under prefix whose time lies in
// [from, to); a zero to is unbounded.
func logSpan(prefix string, view uint32, from, to time.Time) (start, end []byte) {
	base := binary.BigEndian.AppendUint32([]byte(prefix), view)
	start = binary.BigEndian.AppendUint64(append([]byte(nil), base...), unixNanos(from))
	if to.IsZero() {
		return start, storage.PrefixEnd(base)
	}
	return start, binary.BigEndian.AppendUint64(append([]byte(nil), base...), unixNanos(to))
}

// unixNanos is t as timeKey orders it; times before 1970 sort first.
func unixNanos(t time.Time) uint64 {
	if t.IsZero() || t.Before(time.Unix(0, 0)) {
		return 0
	}
	return uint64(t.UnixNano())
}

// RunsBetween returns view's refresh runs (R-S6) that started in [from,
// to), newest first; a zero to is unbounded.
func RunsBetween(txn *storage.Txn, view uint32, from, to time.Time) ([]Run, error) {
	start, end := logSpan(runPrefix, view, from, to)
	it := txn.ScanMetaRange(start, end)
	defer it.Close()
	var out []Run
	for it.Next() {
		var r Run
		if err := json.Unmarshal(it.Row().Value, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// EventsBetween returns view's event log entries (R-O1) timestamped in
// [from, to), oldest first; a zero to is unbounded.
func EventsBetween(txn *storage.Txn, view uint32, from, to time.Time) ([]Event, error) {
	start, end := logSpan(eventPrefix, view, from, to)
	it := txn.ScanMetaRange(start, end)
	defer it.Close()
	var out []Event
	for it.Next() {
		var e Event
		if err := json.Unmarshal(it.Row().Value, &e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, it.Err()
}

// LatestRun returns view's newest refresh run (nil when it never ran,
// also when the run failed: ReadLastRun keeps only completed ones). It
// reads back from now in widening windows, so a view that runs often
// costs one short read.
func LatestRun(txn *storage.Txn, view uint32, now time.Time) (*Run, error) {
	to := time.Time{} // the first window reaches into the future too
	for w := time.Minute; ; w *= 8 {
		from := now.Add(-w)
		oldest := from.Before(time.Unix(0, 0))
		if oldest {
			from = time.Time{}
		}
		runs, err := RunsBetween(txn, view, from, to)
		if err != nil || len(runs) > 0 {
			if len(runs) == 0 {
				return nil, err
			}
			return &runs[0], err
		}
		if oldest {
			return nil, nil
		}
		to = from
	}
}
