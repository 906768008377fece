package server

import "testing"

// writeRecorder records the size of every Write.
type writeRecorder struct {
	writes []int
	total  int
}

func (w *writeRecorder) Write(p []byte) (int, error) {
	w.writes = append(w.writes, len(p))
	w.total += len(p)
	return len(p), nil
}

// Rows stream: the buffer goes out each time it passes flushThreshold, so it
// never holds much more than that, whatever the result size.
func TestOutputStreamsRows(t *testing.T) {
	rec := &writeRecorder{}
	o := &output{w: rec}
	row := [][]byte{[]byte("some value"), nil, []byte("12345")}
	for range 100_000 {
		if err := o.dataRowMsg(row); err != nil {
			t.Fatal(err)
		}
		if cap(o.buf) > 2*flushThreshold {
			t.Fatalf("buffer grew to %d bytes", cap(o.buf))
		}
	}
	if err := o.flush(); err != nil {
		t.Fatal(err)
	}
	if len(rec.writes) < rec.total/(flushThreshold+64) {
		t.Fatalf("only %d writes for %d bytes", len(rec.writes), rec.total)
	}
	for _, n := range rec.writes[:len(rec.writes)-1] {
		if n < flushThreshold || n > flushThreshold+64 {
			t.Fatalf("write of %d bytes, want just over %d", n, flushThreshold)
		}
	}
}

// The hot path: once the buffer has grown, a DataRow allocates nothing, and
// neither do CommandComplete and RowDescription.
func TestOutputAllocations(t *testing.T) {
	o := &output{w: &writeRecorder{}}
	row := [][]byte{[]byte("some value"), nil, []byte("12345")}
	cols := []Column{{Name: "a", TypeOID: 25}, {Name: "b", TypeOID: 20}}
	o.rowDescription(cols, false) // warm up the reused slices
	o.commandComplete("SELECT 1")
	if n := testing.AllocsPerRun(10_000, func() { o.dataRowMsg(row) }); n != 0 {
		t.Errorf("DataRow: %v allocations", n)
	}
	if n := testing.AllocsPerRun(1000, func() {
		o.rowDescription(cols, false)
		o.commandComplete("SELECT 1")
		o.readyForQuery('I')
	}); n != 0 {
		t.Errorf("RowDescription+CommandComplete+ReadyForQuery: %v allocations", n)
	}
}

// An encoding error fails the statement and leaves what was buffered intact.
func TestOutputEncodeError(t *testing.T) {
	rec := &writeRecorder{}
	o := &output{w: rec}
	o.commandComplete("SELECT 1")
	before := len(o.buf)
	if err := o.dataRowMsg(make([][]byte, 70_000)); err == nil {
		t.Fatal("a row of 70000 values was encoded")
	}
	if len(o.buf) != before || o.err != nil {
		t.Fatalf("buffer %d bytes (was %d), sticky error %v", len(o.buf), before, o.err)
	}
	o.flush()
	if rec.total != before {
		t.Fatalf("wrote %d bytes, want %d", rec.total, before)
	}
}

func BenchmarkDataRow(b *testing.B) {
	o := &output{w: &writeRecorder{}}
	row := [][]byte{[]byte("some value"), nil, []byte("12345"), []byte("2024-01-01 00:00:00")}
	b.ReportAllocs()
	for b.Loop() {
		o.dataRowMsg(row)
	}
}
