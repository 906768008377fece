package catalog

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// Planner statistics (PostgreSQL's pg_statistic and pg_class.reltuples):
// what ANALYZE learned of a table's contents. They are kept beside the
// descriptors in the metadata key space, one record per table, not in the
// descriptor itself: writing them is not DDL (no generation bump, no
// conflict with concurrent DDL or DML), and a stale record is harmless —
// statistics only steer estimates. A record is dropped with its table.
//
// A table has up to two records, one ANALYZE writes and one auto-analyze
// writes, so that the background worker never makes a user's ANALYZE
// fail with a write conflict; readers take the newer. Each record has two
// keys: a small stamp (a random nonce and the collection time) and the
// body. Readers read the stamps and decode a body once per stamp
// (statsCache), so planning a statement costs point reads per table, not
// a decode.

var (
	prefixStats     = []byte("c/s/")
	prefixStatsStmp = []byte("c/sv/")
)

// statsSource tells which writer a record belongs to.
type statsSource byte

const (
	sourceAnalyze statsSource = 'm'
	sourceAuto    statsSource = 'a'
)

func statsKey(id uint32, src statsSource) []byte {
	return append(binary.BigEndian.AppendUint32(append([]byte(nil), prefixStats...), id), byte(src))
}

func statsStampKey(id uint32, src statsSource) []byte {
	return append(binary.BigEndian.AppendUint32(append([]byte(nil), prefixStatsStmp...), id), byte(src))
}

// TableStats is what ANALYZE collected of one table.
type TableStats struct {
	// Rows is the estimated row count when analyzed (reltuples).
	Rows float64 `json:"rows"`
	// Pages is the table's size in 8 kB pages (relpages).
	Pages int32 `json:"pages"`
	// Version is the table's version the sample was read at; the changes
	// since (storage's history) decide auto-analyze.
	Version int64 `json:"version"`
	// At is when the statistics were collected; Auto tells whether
	// auto-analyze collected them.
	At   time.Time `json:"at"`
	Auto bool      `json:"auto,omitempty"`
	// Columns are the per-column statistics, in the table's column order
	// at analysis time (matched by column id).
	Columns []ColumnStats `json:"columns"`
}

// ColumnStats are one column's statistics, PostgreSQL's pg_stats fields.
type ColumnStats struct {
	// ColID is the column's id (Column.ID); TypeOID its type when
	// analyzed: statistics of a column whose type changed are ignored.
	ColID   uint32 `json:"col"`
	TypeOID uint32 `json:"type"`
	// NullFrac is the share of NULLs.
	NullFrac float64 `json:"null_frac"`
	// AvgWidth is the average width in bytes of the non-NULL values.
	AvgWidth int32 `json:"avg_width"`
	// NDistinct is the distinct non-NULL values: > 0 a count, < 0 minus
	// the fraction of the rows (it grows with the table), 0 unknown.
	NDistinct float64 `json:"n_distinct"`
	// MCV are the most common values, most common first, with MCF their
	// frequencies (shares of all rows).
	MCV []types.Datum `json:"-"`
	MCF []float64     `json:"mcf,omitempty"`
	// Histogram are bounds splitting the values not in MCV into
	// equally-populated buckets, ascending.
	Histogram []types.Datum `json:"-"`
	// Correlation is between the physical (key) order and the values'
	// order, from -1 to 1; HasCorrelation tells whether it was computed.
	Correlation    float64 `json:"correlation"`
	HasCorrelation bool    `json:"has_correlation,omitempty"`
	// The values' encodings (the row codec's, one array value each).
	EncMCV  []byte `json:"mcv,omitempty"`
	EncHist []byte `json:"hist,omitempty"`
}

// Distinct returns the distinct non-NULL values of the column in a table
// of rows rows (n_distinct resolved), 0 when unknown.
func (c *ColumnStats) Distinct(rows float64) float64 {
	if c.NDistinct < 0 {
		return -c.NDistinct * rows
	}
	return c.NDistinct
}

// Column returns the statistics of column col of t (nil: none, or the
// column's type changed since).
func (s *TableStats) Column(col Column) *ColumnStats {
	if s == nil {
		return nil
	}
	for i := range s.Columns {
		c := &s.Columns[i]
		if c.ColID == col.ID {
			if c.TypeOID != col.Type.OID() {
				return nil
			}
			return c
		}
	}
	return nil
}

func encodeValues(vals []types.Datum) []byte {
	if len(vals) == 0 {
		return nil
	}
	return types.AppendRowValue(nil, []uint32{1}, []types.Datum{types.NewArrayOf(vals...)})
}

func decodeValues(b []byte) ([]types.Datum, error) {
	if len(b) == 0 {
		return nil, nil
	}
	out := make([]types.Datum, 1)
	if err := types.NewRowDecoder([]uint32{1}).Decode(b, out); err != nil {
		return nil, err
	}
	return out[0].Elems(), nil
}

// WriteStats stores s as table id's statistics in txn (in the
// auto-analyze record when s.Auto).
func WriteStats(txn *storage.Txn, id uint32, s *TableStats) error {
	src := sourceAnalyze
	if s.Auto {
		src = sourceAuto
	}
	cols := make([]ColumnStats, len(s.Columns))
	for i, c := range s.Columns {
		c.EncMCV, c.EncHist = encodeValues(c.MCV), encodeValues(c.Histogram)
		cols[i] = c
	}
	w := *s
	w.Columns = cols
	b, err := json.Marshal(&w)
	if err != nil {
		return err
	}
	var stamp [16]byte
	if _, err := rand.Read(stamp[:8]); err != nil {
		return err
	}
	binary.BigEndian.PutUint64(stamp[8:], uint64(s.At.UnixNano()))
	if err := txn.PutMeta(statsKey(id, src), b); err != nil {
		return err
	}
	return txn.PutMeta(statsStampKey(id, src), stamp[:])
}

// deleteStats drops table id's statistics (the table is dropped).
func deleteStats(txn *storage.Txn, id uint32) error {
	for _, src := range []statsSource{sourceAnalyze, sourceAuto} {
		if err := txn.DeleteMeta(statsKey(id, src)); err != nil {
			return err
		}
		if err := txn.DeleteMeta(statsStampKey(id, src)); err != nil {
			return err
		}
	}
	return nil
}

// statsCache holds decoded records by table, writer and stamp. Records
// are immutable once decoded.
var statsCache = struct {
	sync.Mutex
	m map[statsCacheKey]*TableStats
}{m: map[statsCacheKey]*TableStats{}}

type statsCacheKey struct {
	id    uint32
	src   statsSource
	nonce uint64
}

// maxCachedStats bounds the cache; past it the cache starts over.
const maxCachedStats = 4096

// ReadStats returns table id's statistics as txn's snapshot holds them,
// the newer of ANALYZE's and auto-analyze's (nil, nil: never analyzed).
// The result is shared: do not modify it.
func ReadStats(txn *storage.Txn, id uint32) (*TableStats, error) {
	var best statsCacheKey
	var bestAt uint64
	found := false
	for _, src := range []statsSource{sourceAnalyze, sourceAuto} {
		v, ok, err := txn.GetMeta(statsStampKey(id, src))
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if len(v) != 16 {
			return nil, fmt.Errorf("catalog: corrupt statistics stamp of relation %d", id)
		}
		if at := binary.BigEndian.Uint64(v[8:]); !found || at > bestAt {
			best, bestAt, found = statsCacheKey{id, src, binary.BigEndian.Uint64(v[:8])}, at, true
		}
	}
	if !found {
		return nil, nil
	}
	statsCache.Lock()
	s := statsCache.m[best]
	statsCache.Unlock()
	if s != nil {
		return s, nil
	}
	b, ok, err := txn.GetMeta(statsKey(id, best.src))
	if err != nil || !ok {
		return nil, err
	}
	s = &TableStats{}
	if err := json.Unmarshal(b, s); err != nil {
		return nil, fmt.Errorf("catalog: corrupt statistics of relation %d: %w", id, err)
	}
	for i := range s.Columns {
		c := &s.Columns[i]
		if c.MCV, err = decodeValues(c.EncMCV); err != nil {
			return nil, err
		}
		if c.Histogram, err = decodeValues(c.EncHist); err != nil {
			return nil, err
		}
		c.EncMCV, c.EncHist = nil, nil
	}
	statsCache.Lock()
	if len(statsCache.m) >= maxCachedStats {
		statsCache.m = map[statsCacheKey]*TableStats{}
	}
	statsCache.m[best] = s
	statsCache.Unlock()
	return s, nil
}
