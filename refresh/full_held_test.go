package refresh

import (
	"math"
	"testing"

	"github.com/mvserver/mvserver/sql/exec"
)

// The new rows a full recompute of an emptied view holds before writing
// them count against the refresh's budget while held (before, a chunk of
// up to freshChunk rows was held uncharged), and the charge is given back
// once they are written.
func TestHeldNewRowsCharged(t *testing.T) {
	mem := &exec.Memory{Limit: 1 << 20, Setting: "--refresh-memory-limit"}
	h := heldCharge{mem: mem}
	row := make([]byte, 100)
	var err error
	n := 0
	for ; err == nil && n < 100000; n++ {
		err = h.charge(int64(len(row)) + heldBytes)
	}
	if err == nil {
		t.Fatalf("held 100000 rows of 148 bytes under a 1MB budget")
	}
	if used := mem.Used(); used < 900<<10 {
		t.Fatalf("charged %d bytes for %d held rows", used, n)
	}
	h.release()
	if used := mem.Used(); used != 0 {
		t.Fatalf("%d bytes still charged after the rows were written", used)
	}
}

// TestEmptiedViewOneSortedRun: where a full recompute of an empty view is
// not written as a new generation (a REFRESH in a transaction block,
// --rewrite-threshold negative), all its new rows are held (charged, as
// TestHeldNewRowsCharged checks) and inserted as one sorted run, not in
// chunks of freshChunk rows whose keys interleave; where it is, the first
// chunk of rewriteAt rows (at most freshChunk) starts the rewrite.
func TestEmptiedViewOneSortedRun(t *testing.T) {
	for _, c := range []struct {
		rewriteAt int64
		want      int
	}{
		{0, math.MaxInt},
		{-1, math.MaxInt},
		{1000, 1000},
		{int64(freshChunk) * 4, freshChunk},
	} {
		in := &Input{rewriteAt: c.rewriteAt}
		if got := in.freshChunkRows(); got != c.want {
			t.Errorf("rewriteAt %d: chunks of %d rows, want %d", c.rewriteAt, got, c.want)
		}
	}
}
