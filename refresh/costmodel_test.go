package refresh

import (
	"math"
	"testing"
	"time"
)

// TestCostRatesObserve: a rate is learned from a run's seconds per unit,
// smoothed with the earlier ones; runs too small to say anything teach
// nothing; each kind has its own.
func TestCostRatesObserve(t *testing.T) {
	var r CostRates
	r = r.observe(true, minRateUnits-1, minRateTime/2)
	if r != (CostRates{}) {
		t.Fatalf("a small estimate that ran quickly taught a rate: %+v", r)
	}
	// A small estimate that took long is the estimate being wrong: it
	// teaches.
	if got := r.observe(true, 100, time.Second); got.Incremental != 0.01 {
		t.Fatalf("a 100-unit run of 1 s taught %+v", got)
	}
	r = r.observe(false, 1e6, 2*time.Second)
	if r.Full != 2e-6 || r.Incremental != 0 {
		t.Fatalf("after one full run: %+v", r)
	}
	r = r.observe(false, 1e6, 4*time.Second)
	if want := (1-rateWeight)*2e-6 + rateWeight*4e-6; math.Abs(r.Full-want) > 1e-15 {
		t.Fatalf("full rate %g, want %g", r.Full, want)
	}
	r = r.observe(true, 1e5, time.Second)
	if r.Incremental != 1e-5 {
		t.Fatalf("incremental rate %g, want 1e-5", r.Incremental)
	}
}

// TestCostRatesSeconds: with both rates the estimates become seconds; with
// one, the other kind borrows it; with none, the units compare as they are.
func TestCostRatesSeconds(t *testing.T) {
	i, f, known := CostRates{}.seconds(10, 20)
	if known || i != 10 || f != 20 {
		t.Fatalf("no rates: %g %g %v", i, f, known)
	}
	i, f, known = CostRates{Full: 2}.seconds(10, 20)
	if !known || i != 20 || f != 40 {
		t.Fatalf("full rate only: %g %g %v", i, f, known)
	}
	// An incremental unit that ran 10× slower than a full one turns an
	// estimate that looked cheaper into the dearer one.
	i, f, _ = CostRates{Full: 1, Incremental: 10}.seconds(10, 20)
	if i <= f {
		t.Fatalf("learned rates: incremental %g s, full %g s", i, f)
	}
}

// TestExpectedGroups: rows spread over groups touch at most either, about
// 63% of the groups when there are as many rows.
func TestExpectedGroups(t *testing.T) {
	for _, c := range []struct{ groups, rows, want float64 }{
		{100000, 100000, 63212},
		{100000, 1, 1},
		{100000, 0, 0},
		{10, 1e6, 10},
		{1, 5, 1},
	} {
		if got := expectedGroups(c.groups, c.rows); math.Abs(got-c.want) > 1 {
			t.Errorf("expectedGroups(%g, %g) = %g, want %g", c.groups, c.rows, got, c.want)
		}
	}
}

// TestLearnFromRun: a refresh's checkpoint carries the rates with its own
// run folded in, under the kind it ran; NO_OP keeps them.
func TestLearnFromRun(t *testing.T) {
	prev := &Checkpoint{Rates: &CostRates{Full: 1e-6}}
	p := &refreshPlan{technique: "GROUP_AGGREGATE", incrCost: 1e5, fullCost: 1e6, actual: 300 * time.Millisecond}
	got := p.learn(prev)
	if got == nil || got.Full != 1e-6 || math.Abs(got.Incremental-3e-6) > 1e-15 {
		t.Fatalf("after GROUP_AGGREGATE: %+v", got)
	}
	p = &refreshPlan{technique: NoOp}
	if got := p.learn(prev); got == nil || *got != *prev.Rates {
		t.Fatalf("NO_OP changed the rates: %+v", got)
	}
	if got := p.learn(nil); got != nil {
		t.Fatalf("NO_OP without rates: %+v", got)
	}
}

// TestWeighUsesLearnedRates: a large change goes full when the learned
// rates say a full recompute takes less time, even when its units are
// more; a small change never does.
func TestWeighUsesLearnedRates(t *testing.T) {
	ckpt := &Checkpoint{Rates: &CostRates{Full: 1e-6, Incremental: 1e-5}}
	p := &refreshPlan{incrCost: 5e5, fullCost: 1e6, changed: 1e5}
	why, full := p.weigh(ckpt, "GROUP_AGGREGATE", true)
	if !full || why == "" || len(p.candidates) != 1 || p.candidates[0].Cost != 5e5 {
		t.Fatalf("5 s incremental against 1 s full: full=%v %q %+v", full, why, p.candidates)
	}
	p = &refreshPlan{incrCost: 5e5, fullCost: 1e6, changed: 1e5}
	if _, full := p.weigh(ckpt, "GROUP_AGGREGATE", false); full {
		t.Fatal("a change too small to go full went full")
	}
	p = &refreshPlan{incrCost: 5e5, fullCost: 1e6, changed: 1e5}
	if _, full := p.weigh(&Checkpoint{}, "GROUP_AGGREGATE", true); full {
		t.Fatal("without rates, the smaller estimate lost")
	}
}

// TestOneSlowRunSendsFull: an incremental run that took longer than the
// full recompute would have (at the learned full rate) replaces the
// incremental rate, so the next refresh of a change of that size goes full;
// a much smaller change still goes incremental (it can come back).
func TestOneSlowRunSendsFull(t *testing.T) {
	prev := &Checkpoint{Rates: &CostRates{Full: 1e-7, Incremental: 1e-7}}
	// Estimated 1e4 units (1 ms) but took 2 s; full: 1e6 units (0.1 s).
	run := &refreshPlan{technique: GenericAggregate, incrCost: 1e4, fullCost: 1e6, actual: 2 * time.Second}
	rates := run.learn(prev)
	if rates == nil || rates.Incremental != 2e-4 {
		t.Fatalf("after a slow run: %+v, want the run's own rate 2e-4", rates)
	}
	next := &Checkpoint{Rates: rates}
	p := &refreshPlan{incrCost: 1e4, fullCost: 1e6, changed: 500}
	if _, full := p.weigh(next, GenericAggregate, true); !full {
		t.Fatalf("the same change after a slow run stayed incremental: %g s against %g s", p.incrSeconds, p.fullSeconds)
	}
	p = &refreshPlan{incrCost: 100, fullCost: 1e6, changed: 5}
	if _, full := p.weigh(next, GenericAggregate, true); full {
		t.Fatalf("a change 100× smaller went full: %g s against %g s", p.incrSeconds, p.fullSeconds)
	}
	// A run that was not slower than full is smoothed in as before.
	ok := &refreshPlan{technique: GenericAggregate, incrCost: 1e4, fullCost: 1e6, actual: 5 * time.Millisecond}
	if r := ok.learn(prev); r.Incremental != (1-rateWeight)*1e-7+rateWeight*5e-7 {
		t.Fatalf("a fast run: %+v", r)
	}
}

// TestSpentRefusalCharged: a technique that ran its change plans and then
// refused (TOP_K) cost the whole refresh: the incremental rate takes that
// time, the full rate learns nothing from it.
func TestSpentRefusalCharged(t *testing.T) {
	prev := &Checkpoint{Rates: &CostRates{Full: 1e-7, Incremental: 1e-7}}
	p := &refreshPlan{technique: FullRecompute, spent: TopK, incrCost: 1e4, fullCost: 1e6, actual: time.Second}
	r := p.learn(prev)
	if r.Full != 1e-7 || r.Incremental != 1e-4 {
		t.Fatalf("after TOP_K refused and recomputed: %+v", r)
	}
}

// TestComeBack: each refresh the cost model sends full lowers the
// incremental rate, so a view whose bad run was a passing slowness is
// tried incrementally again after a few; a refresh sent full for another
// reason (REFRESH … FULL) does not.
func TestComeBack(t *testing.T) {
	ckpt := &Checkpoint{Rates: &CostRates{Full: 1e-7, Incremental: 2e-4}}
	forced := &refreshPlan{technique: FullRecompute, fullCost: 1e6, actual: 100 * time.Millisecond}
	if r := forced.learn(ckpt); r.Incremental != 2e-4 {
		t.Fatalf("REFRESH … FULL changed the incremental rate: %+v", r)
	}
	for i := 0; i < 50; i++ {
		p := &refreshPlan{incrCost: 1e4, fullCost: 1e6, changed: 500}
		if _, full := p.weigh(ckpt, GenericAggregate, true); !full {
			if i == 0 {
				t.Fatal("incremental right after the slow run")
			}
			return
		}
		p.technique, p.actual = FullRecompute, 100*time.Millisecond
		ckpt = &Checkpoint{Rates: p.learn(ckpt)}
	}
	t.Fatalf("50 full refreshes later, still full: %+v", ckpt.Rates)
}
