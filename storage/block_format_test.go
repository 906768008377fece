package storage

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/pebble/v2"
)

func TestParseCompression(t *testing.T) {
	for in, want := range map[string]Compression{"": DefaultCompression, "none": CompressionNone, " Snappy": CompressionSnappy,
		"MINLZ": CompressionMinLZ, "zstd": CompressionZstd} {
		got, err := ParseCompression(in)
		if err != nil || got != want {
			t.Errorf("ParseCompression(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"lz4", "gzip", "snappy2"} {
		if _, err := ParseCompression(in); err == nil || !strings.Contains(err.Error(), "none, snappy, minlz, zstd") {
			t.Errorf("ParseCompression(%q): %v, want an error naming the choices", in, err)
		}
	}
	if _, err := Open(Options{InMemory: true, Compression: "lz4"}); err == nil {
		t.Error("Open with compression lz4: no error")
	}
}

// TestCompressionSetting: each setting takes effect on the files Pebble
// writes (the same rows flushed uncompressed take several times the disk
// of any compressed setting), and a data directory written under each
// setting reads back under every other one, including the files written
// before and after the change.
func TestCompressionSetting(t *testing.T) {
	settings := []Compression{CompressionNone, CompressionSnappy, CompressionMinLZ, CompressionZstd}
	const rows = 4000
	row := func(gen, i int) (string, string) {
		return fmt.Sprintf("g%d-%05d", gen, i), fmt.Sprintf("row %05d of generation %d: %s", i, gen, strings.Repeat("compressible ", 20))
	}
	sizes := map[Compression]int64{}
	for wi, written := range settings {
		dir := t.TempDir()
		open := func(c Compression) *DB {
			t.Helper()
			db, err := Open(Options{Dir: dir, Compression: c, CacheSize: 8 << 20})
			if err != nil {
				t.Fatal(err)
			}
			return db
		}
		db := open(written)
		createTable(t, db, tA)
		flushGeneration(t, db, rows, func(i int) (string, string) { return row(0, i) })
		sizes[written] = sstBytes(t, dir)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		// Reopen under the next setting, write a second generation of
		// rows under it, and read both.
		reader := settings[(wi+1)%len(settings)]
		db = open(reader)
		flushGeneration(t, db, rows, func(i int) (string, string) { return row(1, i) })
		tx := db.Begin()
		got := scanAll(t, tx, tA.ID, nil, nil)
		tx.Rollback()
		if len(got) != 2*rows {
			t.Fatalf("written under %s, read under %s: %d rows, want %d", written, reader, len(got), 2*rows)
		}
		for gen := range 2 {
			for _, i := range []int{0, rows / 2, rows - 1} {
				key, val := row(gen, i)
				if want := key + "=" + val; got[gen*rows+i] != want {
					t.Fatalf("written under %s, read under %s: row %d of generation %d is %q, want %q", written, reader, i, gen, got[gen*rows+i], want)
				}
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range settings[1:] {
		if sizes[CompressionNone] < 3*sizes[c] {
			t.Errorf("flushed files: %d bytes uncompressed, %d under %s; the setting seems not to apply", sizes[CompressionNone], sizes[c], c)
		}
	}
	t.Logf("flushed files, bytes: %v", sizes)
}

// flushGeneration inserts rows rows of tA, row(i) each, in one commit and
// flushes them into a table file.
func flushGeneration(t *testing.T, db *DB, rows int, row func(i int) (key, val string)) {
	t.Helper()
	update(t, db, func(tx *Txn) error {
		for i := range rows {
			key, val := row(i)
			mustInsert(t, tx, tA, key, val)
		}
		return nil
	})
	if err := db.pdb.Flush(); err != nil {
		t.Fatal(err)
	}
}

// sstBytes is the size of the table files in dir.
func sstBytes(t *testing.T, dir string) int64 {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		n += st.Size()
	}
	return n
}

// TestBlockSizeSetting: Options.BlockSize sets the data blocks of the
// files Pebble writes (the same rows in 64 KiB blocks take a fraction of
// the blocks they take in 4 KiB ones, and the default is
// DefaultBlockSize), out-of-range sizes are refused, and files of all
// sizes read back together.
func TestBlockSizeSetting(t *testing.T) {
	for _, bad := range []int{512, 2 << 20} {
		if _, err := Open(Options{InMemory: true, BlockSize: bad}); err == nil || !strings.Contains(err.Error(), "block size") {
			t.Errorf("Open with block size %d: %v, want a block-size error", bad, err)
		}
	}
	dir := t.TempDir()
	const rows = 4000
	blocks := map[int]uint64{}
	for gen, size := range []int{4 << 10, 64 << 10, 0} {
		db, err := Open(Options{Dir: dir, BlockSize: size, CacheSize: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		if gen == 0 {
			createTable(t, db, tA)
		}
		before := dataBlocks(t, db)
		flushGeneration(t, db, rows, func(i int) (string, string) {
			return fmt.Sprintf("g%d-%05d", gen, i), fmt.Sprintf("row %05d %s", i, strings.Repeat("v", 100))
		})
		blocks[size] = dataBlocks(t, db) - before
		tx := db.Begin()
		n := len(scanAll(t, tx, tA.ID, nil, nil))
		tx.Rollback()
		if n != (gen+1)*rows {
			t.Fatalf("after generation %d (block size %d): %d rows, want %d", gen, size, n, (gen+1)*rows)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if blocks[64<<10] == 0 || blocks[4<<10] < 8*blocks[64<<10] {
		t.Errorf("data blocks flushed: %d at 4 KiB, %d at 64 KiB; the setting seems not to apply", blocks[4<<10], blocks[64<<10])
	}
	// The default, 4 KiB.
	if d := blocks[0]; d < 8*blocks[64<<10] {
		t.Errorf("data blocks flushed at the default size: %d (4 KiB: %d, 64 KiB: %d)", d, blocks[4<<10], blocks[64<<10])
	}
}

// dataBlocks is the number of data blocks in db's files.
func dataBlocks(t *testing.T, db *DB) uint64 {
	t.Helper()
	levels, err := db.pdb.SSTables(pebble.WithProperties())
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, l := range levels {
		for _, f := range l {
			n += f.Properties.NumDataBlocks
		}
	}
	return n
}
