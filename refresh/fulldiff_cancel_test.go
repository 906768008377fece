package refresh

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestFullWriteLoopsSeeCancel: the loops that write a full recompute's
// held rows (a fresh chunk, a difference) stop at a cancelled context
// before they write, instead of writing every held row first (a
// cancelled REFRESH … FULL of 5M rows took 1.3–3 s to stop). The writer
// is nil: a loop that wrote anything would panic.
func TestFullWriteLoopsSeeCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rows := func() *newRowSet {
		s := &newRowSet{}
		for i := 0; i < 3*cancelEvery; i++ {
			s.add([]byte(fmt.Sprint(i)))
		}
		return s
	}
	var st Stats
	if err := rows().insertFresh(ctx, nil, &st); !errors.Is(err, context.Canceled) {
		t.Fatalf("insertFresh: %v, want context.Canceled", err)
	}
	if err := rows().mergeInto(ctx, nil, &st); !errors.Is(err, context.Canceled) {
		t.Fatalf("mergeInto: %v, want context.Canceled", err)
	}
	if st.RowsWritten != 0 {
		t.Fatalf("%d rows written after the cancel", st.RowsWritten)
	}
}
