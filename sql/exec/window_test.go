package exec

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// The window operator's frames (computed incrementally, rows taken back
// out of aggregate states) must equal frames taken by their definition
// (R-Q2): for random partitions with NULLs and ties, random ROWS, RANGE
// and GROUPS frames with offsets and EXCLUDE, every aggregate equals the
// aggregate of the rows the definition puts in the frame.
func TestWindowFramesMatchDefinition(t *testing.T) {
	seed := rand.Int63()
	rng := rand.New(rand.NewSource(seed))
	c := &Ctx{Context: context.Background(), Env: types.DefaultEnv, Funcs: &funcs.Ctx{Env: types.DefaultEnv}}
	for iter := 0; iter < 300; iter++ {
		type row struct {
			id   int64
			p, v *int64
		}
		var rows []row
		maybe := func(n int) *int64 {
			if rng.Intn(5) == 0 {
				return nil
			}
			x := int64(rng.Intn(n)) - 2
			return &x
		}
		for i, n := 0, rng.Intn(30); i < n; i++ {
			rows = append(rows, row{id: int64(i), p: maybe(3), v: maybe(8)})
		}
		datum := func(x *int64) plan.Expr {
			if x == nil {
				return &plan.Const{D: types.NullDatum, T: types.Int4}
			}
			return &plan.Const{D: types.NewInt4(*x), T: types.Int4}
		}
		vals := &plan.Values{Cols: []plan.Column{{Name: "id", T: types.Int4}, {Name: "p", T: types.Int4}, {Name: "v", T: types.Int4}}}
		for _, r := range rows {
			vals.Rows = append(vals.Rows, []plan.Expr{&plan.Const{D: types.NewInt4(r.id), T: types.Int4}, datum(r.p), datum(r.v)})
		}
		// A random frame.
		fr := plan.WindowFrame{Mode: plan.FrameMode(rng.Intn(3)), Exclude: plan.FrameExclusion(rng.Intn(4))}
		off := func() plan.Expr { return &plan.Const{D: types.NewInt8(int64(rng.Intn(4))), T: types.Int8} }
		for {
			fr.Start = plan.FrameBound{Kind: plan.BoundKind(rng.Intn(4))}
			fr.End = plan.FrameBound{Kind: plan.BoundKind(1 + rng.Intn(4))}
			if fr.Start.Kind <= fr.End.Kind || fr.Start.Kind == plan.OffsetPreceding && fr.End.Kind == plan.OffsetPreceding ||
				fr.Start.Kind == plan.OffsetFollowing && fr.End.Kind == plan.OffsetFollowing {
				break
			}
		}
		if fr.Start.Kind == plan.OffsetPreceding || fr.Start.Kind == plan.OffsetFollowing {
			fr.Start.Offset = off()
		}
		if fr.End.Kind == plan.OffsetPreceding || fr.End.Kind == plan.OffsetFollowing {
			fr.End.Offset = off()
		}
		col := func(i int) plan.Expr { return &plan.ColRef{Idx: i, T: types.Int4} }
		order := []plan.SortKey{{E: col(2)}}
		if fr.Mode == plan.FrameRows {
			order = append(order, plan.SortKey{E: col(0)}) // a total order: ROWS frames are then defined
		}
		agg := func(name string, args ...plan.Expr) plan.WindowCall {
			f, _ := funcs.Lookup(name)
			ats := make([]types.T, len(args))
			for i, a := range args {
				ats[i] = a.Type()
			}
			rt, ns, _ := f.Agg.Resolve(ats)
			return plan.WindowCall{Name: name, Fn: f, Args: args, Agg: &plan.AggSpec{NewState: ns}, T: rt}
		}
		win := func(name string, args ...plan.Expr) plan.WindowCall {
			f, _ := funcs.Lookup(name)
			return plan.WindowCall{Name: name, Fn: f, Args: args, T: types.Int4}
		}
		calls := []plan.WindowCall{agg("count"), agg("sum", col(2)), agg("min", col(2)), agg("max", col(2)), agg("sum", col(0))}
		if fr.Mode == plan.FrameRows {
			calls = append(calls, win("first_value", col(0)), win("last_value", col(0)), win("nth_value", col(0), &plan.Const{D: types.NewInt4(2), T: types.Int4}))
		}
		w := &plan.Window{Input: vals, Cols: append(append([]plan.Column(nil), vals.Cols...), make([]plan.Column, len(calls))...)}
		for _, call := range calls {
			call.PartitionBy, call.OrderBy, call.Frame = []plan.Expr{col(1)}, order, fr
			w.Calls = append(w.Calls, call)
		}
		op, err := Build(c, w)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]string{}
		if err := Drain(op, func(b []Row) error {
			for _, r := range b {
				got[r[0].I] = fmt.Sprint(r[3:])
			}
			return nil
		}); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		// The definition. Keys: NULL after every value (ascending).
		key := func(r row) [2]int64 {
			if r.v == nil {
				return [2]int64{1, 0}
			}
			return [2]int64{0, *r.v}
		}
		less := func(a, b [2]int64) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }
		for _, r := range rows {
			var part []row
			for _, o := range rows {
				if (o.p == nil) == (r.p == nil) && (o.p == nil || *o.p == *r.p) {
					part = append(part, o)
				}
			}
			sort.SliceStable(part, func(i, j int) bool {
				if ki, kj := key(part[i]), key(part[j]); ki != kj {
					return less(ki, kj)
				}
				return fr.Mode == plan.FrameRows && part[i].id < part[j].id
			})
			pos := 0
			for i, o := range part {
				if o.id == r.id {
					pos = i
				}
			}
			group := func(i int) int {
				g := 0
				for k := 1; k <= i; k++ {
					if key(part[k]) != key(part[k-1]) {
						g++
					}
				}
				return g
			}
			offOf := func(b plan.FrameBound) int64 { return b.Offset.(*plan.Const).D.I }
			// inBound reports whether part[j] is at or after the start
			// (start) / at or before the end.
			inBound := func(j int, b plan.FrameBound, start bool) bool {
				cmp := 0 // j against the bound: <0 before, >0 after
				switch b.Kind {
				case plan.UnboundedPreceding:
					cmp = 1
				case plan.UnboundedFollowing:
					cmp = -1
				default:
					var o int64
					if b.Kind == plan.OffsetPreceding {
						o = -offOf(b)
					} else if b.Kind == plan.OffsetFollowing {
						o = offOf(b)
					}
					switch fr.Mode {
					case plan.FrameRows:
						cmp = sign(int64(j) - (int64(pos) + o))
					case plan.FrameGroups:
						cmp = sign(int64(group(j)) - (int64(group(pos)) + o))
					default:
						kj, kp := key(part[j]), key(part[pos])
						if kp[0] == 1 || o == 0 {
							// NULL row: its peers; CURRENT ROW: peers.
							switch {
							case less(kj, kp):
								cmp = -1
							case less(kp, kj):
								cmp = 1
							}
						} else {
							bound := [2]int64{0, kp[1] + o}
							switch {
							case less(kj, bound):
								cmp = -1
							case less(bound, kj):
								cmp = 1
							}
						}
					}
				}
				if start {
					return cmp >= 0
				}
				return cmp <= 0
			}
			var count, sumV, sumID int64
			var minV, maxV *int64
			anyV := false
			var frame []int64
			for j, o := range part {
				if !inBound(j, fr.Start, true) || !inBound(j, fr.End, false) {
					continue
				}
				// Peers are equal in the window's ORDER BY: in ROWS mode
				// (ordered by value then id) a row has none but itself.
				peer := key(o) == key(part[pos]) && (fr.Mode != plan.FrameRows || j == pos)
				switch fr.Exclude {
				case plan.ExcludeCurrentRow:
					if j == pos {
						continue
					}
				case plan.ExcludeGroup:
					if peer {
						continue
					}
				case plan.ExcludeTies:
					if j != pos && peer {
						continue
					}
				}
				count++
				sumID += o.id
				frame = append(frame, o.id)
				if o.v != nil {
					anyV = true
					sumV += *o.v
					if minV == nil || *o.v < *minV {
						minV = o.v
					}
					if maxV == nil || *o.v > *maxV {
						maxV = o.v
					}
				}
			}
			want := []types.Datum{types.NewInt8(count), types.NullDatum, types.NullDatum, types.NullDatum, types.NullDatum}
			if anyV {
				want[1], want[2], want[3] = types.NewInt8(sumV), types.NewInt4(*minV), types.NewInt4(*maxV)
			}
			if count > 0 {
				want[4] = types.NewInt8(sumID)
			}
			if fr.Mode == plan.FrameRows {
				f, l, n := types.NullDatum, types.NullDatum, types.NullDatum
				if len(frame) > 0 {
					f, l = types.NewInt4(frame[0]), types.NewInt4(frame[len(frame)-1])
				}
				if len(frame) > 1 {
					n = types.NewInt4(frame[1])
				}
				want = append(want, f, l, n)
			}
			if g := got[r.id]; g != fmt.Sprint(want) {
				t.Fatalf("seed %d, frame %s, partition %v, row %d:\n got %s\nwant %s", seed, fr, part, r.id, g, fmt.Sprint(want))
			}
		}
	}
}

func sign(x int64) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}
