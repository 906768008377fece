package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCommit measures durable commits (fsync'd WAL on a real temp dir)
// of one 100-byte row each, with 1 and 16 concurrent writers: with group
// commit, concurrent writers share fsyncs.
func BenchmarkCommit(b *testing.B) {
	for _, c := range []struct{ writers, rows int }{{1, 1}, {16, 1}, {1, 100}, {16, 100}} {
		b.Run(fmt.Sprintf("writers=%d/rows=%d", c.writers, c.rows), func(b *testing.B) {
			db, err := Open(Options{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			tbl := TableInfo{ID: 1, ChangeDataFeed: true}
			createTable(b, db, tbl)
			val := make([]byte, 100)
			var next, done atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for w := 0; w < c.writers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var key []byte
					for {
						n := next.Add(1)
						if n > int64(b.N) {
							return
						}
						tx := db.Begin()
						for r := 0; r < c.rows; r++ {
							key = AppendInt64(key[:0], n*1000+int64(r))
							if _, err := tx.Insert(tbl, key, val); err != nil {
								b.Error(err)
								return
							}
						}
						if err := tx.Commit(); err != nil {
							b.Error(err)
							return
						}
						done.Add(1)
					}
				}()
			}
			wg.Wait()
			el := time.Since(start)
			b.ReportMetric(float64(done.Load())/el.Seconds(), "commits/s")
			b.ReportMetric(float64(done.Load()*int64(c.rows))/el.Seconds(), "rows/s")
		})
	}
}

// loadRows fills a table with n rows (8-byte int keys, 50-byte values) and
// flushes the memtable so scans read sstables.
func loadRows(b *testing.B, db *DB, tbl TableInfo, n int) {
	b.Helper()
	createTable(b, db, tbl)
	val := make([]byte, 50)
	var key []byte
	const perTxn = 20000
	for i := 0; i < n; i += perTxn {
		tx := db.Begin()
		for j := i; j < min(n, i+perTxn); j++ {
			key = AppendInt64(key[:0], int64(j))
			if _, err := tx.Insert(tbl, key, val); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.pdb.Flush(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkScan1M scans a 1M-row table: plainly (straight from Pebble), and
// in a txn that has written a few rows of the table (the merge path).
func BenchmarkScan1M(b *testing.B) {
	const n = 1_000_000
	db, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tbl := TableInfo{ID: 1}
	loadRows(b, db, tbl, n)
	scan := func(b *testing.B, tx *Txn) {
		rows := 0
		var sum int64
		it := tx.Scan(tbl.ID, nil, nil)
		for it.Next() {
			r := it.Row()
			sum += r.RowID + int64(len(r.Value))
			rows++
		}
		if err := it.Close(); err != nil {
			b.Fatal(err)
		}
		if rows < n {
			b.Fatalf("%d rows", rows)
		}
	}
	warm := db.Begin() // load the block cache so both runs read it warm
	scan(b, warm)
	warm.Rollback()
	b.Run("plain", func(b *testing.B) {
		tx := db.Begin()
		defer tx.Rollback()
		b.ReportAllocs()
		start := time.Now()
		iters := 0
		for b.Loop() {
			scan(b, tx)
			iters++
		}
		b.ReportMetric(float64(iters*n)/time.Since(start).Seconds(), "rows/s")
	})
	b.Run("own-writes", func(b *testing.B) {
		tx := db.Begin()
		defer tx.Rollback()
		for i := 0; i < 100; i++ {
			if err := tx.Update(tbl, AppendInt64(nil, int64(i*10000)), AppendInt64(nil, int64(i*10000)), []byte("x")); err != nil {
				b.Fatal(err)
			}
			if _, err := tx.Insert(tbl, AppendInt64(nil, int64(n+i)), []byte("y")); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		start := time.Now()
		iters := 0
		for b.Loop() {
			scan(b, tx)
			iters++
		}
		b.ReportMetric(float64(iters*n)/time.Since(start).Seconds(), "rows/s")
	})
}

func BenchmarkGet(b *testing.B) {
	const n = 100_000
	db, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tbl := TableInfo{ID: 1}
	loadRows(b, db, tbl, n)
	tx := db.Begin()
	defer tx.Rollback()
	var key []byte
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		key = AppendInt64(key[:0], int64(i%n))
		if _, ok, err := tx.Get(tbl.ID, key); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkBulkInsert is COPY's storage side: one transaction inserts n
// rows (8-byte keys in ascending order, 30-byte values, change feed on)
// into an empty table and commits durably.
func BenchmarkBulkInsert(b *testing.B) {
	const n = 200_000
	val := make([]byte, 30)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		db, err := Open(Options{Dir: b.TempDir()})
		if err != nil {
			b.Fatal(err)
		}
		tbl := TableInfo{ID: 1, ChangeDataFeed: true}
		createTable(b, db, tbl)
		b.StartTimer()
		tx := db.Begin()
		var key []byte
		for j := 0; j < n; j++ {
			key = AppendInt64(key[:0], int64(j))
			if _, err := tx.Insert(tbl, key, val); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = db.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkScanRanges reads 1000 one-row key ranges of a 100k-row table
// (an IN list, a refresh's lookups by key): with a new iterator per range,
// and with one iterator retargeted from range to range.
func BenchmarkScanRanges(b *testing.B) {
	const n = 100_000
	db, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tbl := TableInfo{ID: 1}
	loadRows(b, db, tbl, n)
	ranges := make([][2][]byte, 1000)
	for i := range ranges {
		id := int64(i * (n / len(ranges)))
		ranges[i] = [2][]byte{AppendInt64(nil, id), AppendInt64(nil, id+1)}
	}
	for _, mode := range []string{"new", "retarget"} {
		b.Run(mode, func(b *testing.B) {
			tx := db.Begin()
			defer tx.Rollback()
			for b.Loop() {
				var it *Iterator
				rows := 0
				for _, r := range ranges {
					if it == nil || mode == "new" || !it.Retarget(tbl.ID, r[0], r[1]) {
						if it != nil {
							it.Close()
						}
						it = tx.Scan(tbl.ID, r[0], r[1])
					}
					for it.Next() {
						rows++
					}
				}
				it.Close()
				if rows != len(ranges) {
					b.Fatalf("%d rows", rows)
				}
			}
		})
	}
}

// BenchmarkGetUnique is a point read of a materialized view through its
// unique index, storage's side: n rows keyed like view rows (a content
// hash, so in no order the index shares), 80-byte values whose first 8
// bytes are the indexed key, flushed to tables; each read is its own
// transaction (as each statement of a read-only client is) looking up a
// random key: index entry, then row.
func BenchmarkGetUnique(b *testing.B) {
	const n = 500_000
	db, err := Open(Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	idKey := func(dst, value []byte) ([]byte, bool, error) { return append(dst, value[:8]...), true, nil }
	tbl := TableInfo{ID: 1}
	createTable(b, db, tbl)
	ix := IndexInfo{ID: 2, Unique: true, Key: idKey}
	update(b, db, func(tx *Txn) error { return tx.BuildIndex(tbl, ix) })
	tbl.Indexes = []IndexInfo{ix}
	val := make([]byte, 80)
	var key []byte
	const perTxn = 50_000
	for i := 0; i < n; i += perTxn {
		tx := db.Begin()
		for j := i; j < i+perTxn; j++ {
			id := binary.BigEndian.AppendUint64(nil, uint64(j))
			copy(val, id)
			key = binary.BigEndian.AppendUint64(key[:0], mix64(uint64(j)))
			if _, err := tx.Insert(tbl, key, val); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.pdb.Flush(); err != nil {
		b.Fatal(err)
	}
	rng := uint64(1)
	b.ReportAllocs()
	for b.Loop() {
		rng = rng*6364136223846793005 + 1442695040888963407
		want := binary.BigEndian.AppendUint64(nil, (rng>>33)%n)
		tx := db.Begin()
		r, ok, err := tx.GetUnique(tbl.ID, ix.ID, want)
		if !ok || err != nil || !bytes.Equal(r.Value[:8], want) {
			b.Fatal(ok, err)
		}
		tx.Rollback()
	}
}

// mix64 stands in for the content hash a view row is keyed by: any
// well-mixed 64-bit bijection will do (splitmix64's finalizer).
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// BenchmarkReadDuringSync measures point-read transactions (Begin, one
// Get, Rollback) while concurrent writers commit one row each durably, with
// a Begin waiting for the commits whose log sync is in flight (durable.go)
// and without (wait=off, what a Begin did before: it could read a commit
// that was not yet durable). writers=0 is the read cost with no sync to
// wait for. Run under flock /tmp/bench.lock (it fsyncs a real directory):
//
//	go test ./storage -run '^$' -bench ReadDuringSync -count 5
func BenchmarkReadDuringSync(b *testing.B) {
	const n = 100_000
	for _, writers := range []int{0, 1, 4} {
		for _, wait := range []bool{true, false} {
			b.Run(fmt.Sprintf("writers=%d/wait=%v", writers, wait), func(b *testing.B) {
				db, err := Open(Options{Dir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				tbl := TableInfo{ID: 1}
				loadRows(b, db, tbl, n)
				db.noDurableWait = !wait
				stop := make(chan struct{})
				var commits atomic.Int64
				var wg sync.WaitGroup
				for w := 0; w < writers; w++ {
					wg.Add(1)
					go func(w int) {
						defer wg.Done()
						val := make([]byte, 100)
						var key []byte
						for i := 0; ; i++ {
							select {
							case <-stop:
								return
							default:
							}
							tx := db.Begin()
							key = AppendInt64(key[:0], int64(n+w*100_000_000+i))
							if _, err := tx.Insert(tbl, key, val); err != nil {
								b.Error(err)
								tx.Rollback()
								return
							}
							if err := tx.Commit(); err != nil {
								b.Error(err)
								return
							}
							commits.Add(1)
						}
					}(w)
				}
				var key []byte
				start := time.Now()
				for i := 0; b.Loop(); i++ {
					tx := db.Begin()
					key = AppendInt64(key[:0], int64((i*7919)%n))
					if _, ok, err := tx.Get(tbl.ID, key); !ok || err != nil {
						b.Fatal(ok, err)
					}
					tx.Rollback()
				}
				el := time.Since(start)
				close(stop)
				wg.Wait()
				b.ReportMetric(float64(commits.Load())/el.Seconds(), "commits/s")
			})
		}
	}
}

// BenchmarkBuildIndex is CREATE INDEX's storage side: BuildIndex over a
// table of n rows (600k: lineitem at SF 0.1) on an 8-byte column of 1000
// distinct values, the commit, and the flush that puts the entries in
// SSTables (a batch's entries reach them later, through the memtable).
// path=batch commits the entries through the batch (a stage threshold
// above n), path=ingest as an SSTable of their own.
func BenchmarkBuildIndex(b *testing.B) {
	for _, n := range []int{600_000, 150_000, 20_000} {
		for _, path := range []string{"batch", "ingest"} {
			b.Run(fmt.Sprintf("rows=%d/path=%s", n, path), func(b *testing.B) {
				stage := 1
				if path == "batch" {
					stage = 2 * n
				}
				benchBuildIndex(b, n, stage)
			})
		}
	}
}

func benchBuildIndex(b *testing.B, n, stageRows int) {
	db, err := Open(Options{Dir: b.TempDir(), StageRows: stageRows})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	tbl := TableInfo{ID: 1, ChangeDataFeed: true}
	createTable(b, db, tbl)
	val := make([]byte, 50)
	var key []byte
	const perTxn = 20000
	for i := 0; i < n; i += perTxn {
		tx := db.Begin()
		for j := i; j < min(n, i+perTxn); j++ {
			key = AppendInt64(key[:0], int64(j))
			binary.BigEndian.PutUint64(val, uint64(mix64(uint64(j))%1000))
			if _, err := tx.Insert(tbl, key, val); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.pdb.Flush(); err != nil {
		b.Fatal(err)
	}
	supp := func(dst, value []byte) ([]byte, bool, error) {
		return AppendInt64(AppendNotNullMarker(dst), int64(binary.BigEndian.Uint64(value))), true, nil
	}
	for i := 0; b.Loop(); i++ {
		ix := IndexInfo{ID: IndexID(10 + i), Key: supp}
		tx := db.Begin()
		if err := tx.BuildIndex(tbl, ix); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		if err := db.pdb.Flush(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}
