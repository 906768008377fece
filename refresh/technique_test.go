package refresh

import "testing"

// Every incremental technique of R-I1 is in the planner's table once, and
// every technique reports a reason when it does not apply.
func TestTechniqueTable(t *testing.T) {
	seen := map[TechniqueName]bool{}
	for _, tech := range techniqueTable {
		if seen[tech.Name()] {
			t.Errorf("%s is in the table twice", tech.Name())
		}
		seen[tech.Name()] = true
		if techniqueByName(tech.Name()) != tech {
			t.Errorf("techniqueByName(%s) is another technique", tech.Name())
		}
	}
	for _, n := range IncrementalTechniques {
		if !seen[n] {
			t.Errorf("%s has no entry in the planner's table", n)
		}
	}
	if len(seen) != len(IncrementalTechniques) {
		t.Errorf("the table has %d techniques, R-I1 %d", len(seen), len(IncrementalTechniques))
	}
	// A row query with a blocker on ROW_BASED only.
	an := &Analysis{Shape: []TechniqueName{AppendOnly, RowBased},
		Blockers: []Blocker{{Code: ReasonRowTrackingOff, Techniques: []TechniqueName{RowBased, AppendOnly}}}}
	for _, tech := range techniqueTable {
		ok, why := tech.Applies(an)
		if ok {
			t.Errorf("%s applies to a blocked row query", tech.Name())
		}
		if why == "" {
			t.Errorf("%s gives no reason", tech.Name())
		}
		if (tech.Name() == RowBased || tech.Name() == AppendOnly) && why != "blocked: "+ReasonRowTrackingOff {
			t.Errorf("%s: %q", tech.Name(), why)
		}
	}
	an.Blockers = nil
	for _, tech := range techniqueTable {
		ok, _ := tech.Applies(an)
		if want := tech.Name() == RowBased || tech.Name() == AppendOnly; ok != want {
			t.Errorf("%s applies = %v, want %v", tech.Name(), ok, want)
		}
	}
}
