package exec

import (
	"slices"
	"testing"

	"github.com/mvserver/mvserver/sql/plan"
)

// TestLiveColumns: a scan's live columns are those it decodes; a filter
// keeps them; a join puts the right side's after the left's whole width;
// a semi join has its left side's; anything else is not known (nil).
func TestLiveColumns(t *testing.T) {
	a, b := plan.NewScan(vdTable), plan.NewScan(vdTable)
	a.Needed[0], a.Needed[3] = true, true
	b.Needed[1] = true
	if got := liveColumns(a); !slices.Equal(got, []int{0, 3}) {
		t.Errorf("scan: %v", got)
	}
	width := len(a.Columns())
	j := &plan.Join{Kind: plan.JoinInner, Left: &plan.Filter{Input: a, Cond: &plan.Const{}}, Right: b}
	if got := liveColumns(j); !slices.Equal(got, []int{0, 3, width + 1}) {
		t.Errorf("join: %v", got)
	}
	if got := liveColumns(&plan.Join{Kind: plan.JoinSemi, Left: b, Right: a}); !slices.Equal(got, []int{1}) {
		t.Errorf("semi join: %v", got)
	}
	if got := liveColumns(&plan.Join{Kind: plan.JoinLeft, Left: a, Right: &plan.Limit{Input: b}}); got != nil {
		t.Errorf("join over a limit: %v, want nil (not known)", got)
	}
	none := plan.NewScan(vdTable)
	if got := liveColumns(none); got == nil || len(got) != 0 {
		t.Errorf("scan reading no column: %v, want empty", got)
	}

	row := make(Row, width)
	src := make(Row, width)
	for i := range src {
		src[i] = numeric(int64(i+1), 0)
	}
	copyLive(row, src, []int{0, 3})
	for i, d := range row {
		if live := i == 0 || i == 3; live == d.IsNull() {
			t.Errorf("copyLive: column %d is %v", i, d)
		}
	}
}
