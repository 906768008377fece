package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5"
)

// phQuery is one query of workload Q (variant: the query's name).
const phQuery = "query"

// benchQuery is one measured query of workload Q.
type benchQuery struct {
	name, sql string
}

// dimRows is the size of workload Q's dimension table (the join's build
// side).
const dimRows = 10_000

// queryWorkload is Q: the query engine against PostgreSQL on the same data
// (scan and filter, GROUP BY with 100k groups, a hash join of N × 10k
// rows, a window function over N rows). Each query runs --full-reps
// times on each system; its rows are read to the end, and their
// fingerprint must be the same on both.
func queryWorkload() *workload {
	facts := &table{
		name: "facts", pk: "id",
		cols: []column{
			{"id", tBigint, "BIGINT"},
			{"k", tInt, "INT"},
			{"d_id", tInt, "INT"},
			{"v", tMoney, "DECIMAL(12,2)"},
			{"ts", tTimestamptz, "TIMESTAMPTZ"},
		},
		count: func(n int64) int64 { return n },
		gen: func(seed uint64, i int64, _ time.Time) []any {
			return []any{i, int32(pick(seed, i, 20, accounts)), int32(pick(seed, i, 21, dimRows)), cents(pick(seed, i, 22, 100_000)),
				epoch.Add(time.Duration(pick(seed, i, 23, 365*86400)) * time.Second)}
		},
	}
	dim := &table{
		name: "dim", pk: "id",
		cols: []column{
			{"id", tInt, "INT"},
			{"w", tInt, "INT"},
			{"label", tText, "TEXT"},
		},
		count: func(int64) int64 { return dimRows },
		gen: func(seed uint64, i int64, _ time.Time) []any {
			return []any{int32(i), int32(1 + pick(seed, i, 24, 9)), fmt.Sprintf("label %d", i%97)}
		},
	}
	return &workload{
		id: "Q", title: "the query engine: scan + filter, GROUP BY 100k groups, hash join N × 10k, window over N",
		tables: []*table{dim, facts}, main: facts,
		queries: []benchQuery{
			{"scan + filter", `SELECT count(*), sum(v) FROM facts WHERE v > 500.00 AND k % 10 = 3`},
			{"GROUP BY 100k groups", `SELECT k, count(*), sum(v) FROM facts GROUP BY k`},
			{"hash join N × 10k", `SELECT d.label, count(*), sum(f.v * d.w) FROM facts f JOIN dim d ON d.id = f.d_id GROUP BY d.label`},
			{"window over N", `SELECT count(*), sum(rn) FROM (SELECT row_number() OVER (PARTITION BY k ORDER BY ts, id) AS rn FROM facts) s WHERE rn <= 2`},
			{"ORDER BY … LIMIT 10", `SELECT id, v FROM facts ORDER BY v DESC, id LIMIT 10`},
		},
	}
}

// runQueries measures workload Q's queries on s (its tables are loaded).
func (b *bench) runQueries(ctx context.Context, w *workload, s *system) error {
	for _, q := range w.queries {
		var samples []float64
		var rows int64
		var print uint64
		for i := range max(1, b.cfg.fullReps) {
			label := q.name
			if b.cfg.fullReps > 1 {
				label = fmt.Sprintf("%s (%d/%d)", q.name, i+1, b.cfg.fullReps)
			}
			err := b.phase(w, s, label, 0, func(*task) error {
				start := time.Now()
				n, fp, err := queryFingerprint(ctx, s, q.sql)
				if err != nil {
					return err
				}
				samples = append(samples, time.Since(start).Seconds())
				rows, print = n, fp
				return nil
			})
			if err != nil {
				return err
			}
		}
		m := Measurement{Workload: w.id, System: s.name, Phase: phQuery, Variant: q.name, Rows: b.cfg.rows, Note: fmt.Sprintf("%d rows, fingerprint %016x", rows, print)}
		m.setSamples(samples)
		b.record(m)
	}
	return nil
}

// queryFingerprint runs sql, reads every row, and returns the row count
// and an order-independent fingerprint of the rows' text.
func queryFingerprint(ctx context.Context, s *system, sql string) (int64, uint64, error) {
	rows, err := s.conn.Query(ctx, sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %.120s: %w", s.name, sql, err)
	}
	defer rows.Close()
	var n int64
	var sum uint64
	for rows.Next() {
		h := fnv.New64a()
		for _, v := range rows.RawValues() {
			h.Write(v)
			h.Write([]byte{0})
		}
		sum += h.Sum64()
		n++
	}
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("%s: %.120s: %w", s.name, sql, err)
	}
	return n, sum, nil
}
