package scheduler

import (
	"context"
	"testing"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// checkRuns compares the instants (and causes) of runs with want.
func checkRuns(t *testing.T, runs []runRec, cause Cause, want []time.Time) {
	t.Helper()
	if len(runs) != len(want) {
		t.Fatalf("%d runs, want %d (first %v)", len(runs), len(want), firstRuns(runs))
	}
	for i, r := range runs {
		if !r.at.Equal(want[i]) || r.cause != cause {
			t.Fatalf("run %d at %s (%s), want %s (%s)", i, r.at.UTC().Format(time.RFC3339), r.cause, want[i].UTC().Format(time.RFC3339), cause)
		}
	}
}

func firstRuns(runs []runRec) []string {
	var s []string
	for i, r := range runs {
		if i == 5 {
			break
		}
		s = append(s, r.at.UTC().Format(time.RFC3339)+" "+string(r.cause))
	}
	return s
}

// TestScheduleCronWeekUTC runs a week of '0 */15 * * * ?' (672 runs).
func TestScheduleCronWeekUTC(t *testing.T) {
	h := newHarness(t, t0, nil)
	h.upsert(cronSpec(1, "0 */15 * * * ?", ""))
	h.s.Start()
	if next, ok := h.s.NextRun(1); !ok || !next.Equal(t0.Add(15*time.Minute)) {
		t.Fatalf("NextRun %s %v", next, ok)
	}
	h.advance(7 * 24 * time.Hour)
	var want []time.Time
	for k := 1; k <= 7*24*4; k++ {
		want = append(want, t0.Add(time.Duration(k)*15*time.Minute))
	}
	checkRuns(t, h.recorded(1), CauseSchedule, want)
	if next, _ := h.s.NextRun(1); !next.Equal(t0.Add(7*24*time.Hour + 15*time.Minute)) {
		t.Fatalf("NextRun after a week: %s", next)
	}
}

// TestScheduleCronLosAngelesDST runs '0 */15 * * * ?' AT TIME ZONE
// 'America/Los_Angeles' for a week around each 2026 change: a run every 15
// minutes of real time, through the skipped and the repeated hour (the
// exact instants are in TestCronLosAngeles*).
func TestScheduleCronLosAngelesDST(t *testing.T) {
	for _, week := range []struct {
		name   string
		start  time.Time
		change time.Time
	}{
		{"spring forward", utc("2026-03-05T00:00:00Z"), utc("2026-03-08T10:00:00Z")},
		{"fall back", utc("2026-10-29T00:00:00Z"), utc("2026-11-01T09:00:00Z")},
	} {
		t.Run(week.name, func(t *testing.T) {
			h := newHarness(t, week.start, nil)
			h.upsert(cronSpec(1, "0 */15 * * * ?", "America/Los_Angeles"))
			h.s.Start()
			h.advance(7 * 24 * time.Hour)
			var want []time.Time
			for k := 1; k <= 7*24*4; k++ {
				want = append(want, week.start.Add(time.Duration(k)*15*time.Minute))
			}
			runs := h.recorded(1)
			checkRuns(t, runs, CauseSchedule, want)
			// Around the change, the wall readings.
			loc, _ := LoadZone("America/Los_Angeles")
			var around []string
			for _, r := range runs {
				if d := r.at.Sub(week.change); d >= -30*time.Minute && d <= 30*time.Minute {
					around = append(around, r.at.In(loc).Format("15:04 MST"))
				}
			}
			wantAround := map[string][]string{
				"spring forward": {"01:30 PST", "01:45 PST", "03:00 PDT", "03:15 PDT", "03:30 PDT"},
				"fall back":      {"01:30 PDT", "01:45 PDT", "01:00 PST", "01:15 PST", "01:30 PST"},
			}[week.name]
			if len(around) != len(wantAround) {
				t.Fatalf("around the change: %v, want %v", around, wantAround)
			}
			for i := range around {
				if around[i] != wantAround[i] {
					t.Fatalf("around the change: %v, want %v", around, wantAround)
				}
			}
		})
	}
}

// TestScheduleDailyAcrossDST: a daily 02:30 in Los Angeles runs on the day
// 02:30 does not exist (at 03:00 PDT) and a daily 01:30 runs twice on the
// day it happens twice.
func TestScheduleDailyAcrossDST(t *testing.T) {
	h := newHarness(t, utc("2026-03-06T12:00:00Z"), nil)
	h.upsert(cronSpec(1, "0 30 2 * * ?", "America/Los_Angeles"))
	h.s.Start()
	h.advanceTo(utc("2026-03-10T00:00:00Z"))
	checkRuns(t, h.recorded(1), CauseSchedule, []time.Time{
		utc("2026-03-07T10:30:00Z"), utc("2026-03-08T10:00:00Z"), utc("2026-03-09T09:30:00Z"),
	})

	h2 := newHarness(t, utc("2026-10-31T00:00:00Z"), nil)
	h2.upsert(cronSpec(1, "0 30 1 * * ?", "America/Los_Angeles"))
	h2.s.Start()
	h2.advanceTo(utc("2026-11-03T00:00:00Z"))
	checkRuns(t, h2.recorded(1), CauseSchedule, []time.Time{
		utc("2026-10-31T08:30:00Z"), utc("2026-11-01T08:30:00Z"), utc("2026-11-01T09:30:00Z"), utc("2026-11-02T09:30:00Z"),
	})
}

// TestScheduleEvery72Hours: a fixed interval from the Upsert when the view
// never ran, then from each run's start, a manual one included.
func TestScheduleEvery72Hours(t *testing.T) {
	h := newHarness(t, t0, nil)
	h.upsert(everySpec(1, 72, "HOURS"))
	h.s.Start()
	h.advance(30 * 24 * time.Hour)
	var want []time.Time
	for k := 1; k <= 10; k++ {
		want = append(want, t0.Add(time.Duration(k)*72*time.Hour))
	}
	checkRuns(t, h.recorded(1), CauseSchedule, want)

	// A manual refresh restarts the interval.
	h.advance(5 * time.Hour) // t0 + 725h; last scheduled run at 720h
	manualAt := h.clock.Now()
	if err := h.s.RunNow(t.Context(), 1, CauseManual); err != nil {
		t.Fatal(err)
	}
	if next, _ := h.s.NextRun(1); !next.Equal(manualAt.Add(72 * time.Hour)) {
		t.Fatalf("NextRun after a manual refresh: %s, want %s", next, manualAt.Add(72*time.Hour))
	}
	h.advance(72 * time.Hour)
	runs := h.recorded(1)
	if last := runs[len(runs)-1]; last.cause != CauseSchedule || !last.at.Equal(manualAt.Add(72*time.Hour)) {
		t.Fatalf("after the manual run: %v", last)
	}
}

// TestScheduleEvery8Weeks counts from the stored last run.
func TestScheduleEvery8Weeks(t *testing.T) {
	h := newHarness(t, t0, nil)
	spec := everySpec(1, 8, "WEEK")
	spec.LastRun = t0.Add(-10 * 24 * time.Hour)
	h.upsert(spec)
	h.s.Start()
	if next, _ := h.s.NextRun(1); !next.Equal(spec.LastRun.Add(56 * 24 * time.Hour)) {
		t.Fatalf("NextRun %s", next)
	}
	h.advance(40 * 7 * 24 * time.Hour)
	var want []time.Time
	for k := 1; spec.LastRun.Add(time.Duration(k) * 56 * 24 * time.Hour).Before(h.clock.Now()); k++ {
		want = append(want, spec.LastRun.Add(time.Duration(k)*56*24*time.Hour))
	}
	if len(want) != 5 {
		t.Fatalf("test arithmetic: %d", len(want))
	}
	checkRuns(t, h.recorded(1), CauseSchedule, want)

	// Days, and a stored last run long ago without catch-up: the next run
	// is on the grid, not now.
	h2 := newHarness(t, t0, nil)
	spec = everySpec(2, 3, "DAYS")
	spec.LastRun = t0.Add(-10*24*time.Hour - time.Hour)
	h2.upsert(spec)
	h2.s.Start()
	if next, _ := h2.s.NextRun(2); !next.Equal(t0.Add(2*24*time.Hour - time.Hour)) {
		t.Fatalf("NextRun on the grid: %s", next)
	}
}

// TestScheduleYearField: '0 0 12 * * ? 2027' runs every day of 2027 and
// then never again.
func TestScheduleYearField(t *testing.T) {
	h := newHarness(t, utc("2026-12-30T00:00:00Z"), nil)
	h.upsert(cronSpec(1, "0 0 12 * * ? 2027", ""))
	h.s.Start()
	if next, _ := h.s.NextRun(1); !next.Equal(utc("2027-01-01T12:00:00Z")) {
		t.Fatalf("NextRun %s", next)
	}
	h.advanceTo(utc("2028-01-05T00:00:00Z"))
	runs := h.recorded(1)
	if len(runs) != 365 || !runs[0].at.Equal(utc("2027-01-01T12:00:00Z")) || !runs[364].at.Equal(utc("2027-12-31T12:00:00Z")) {
		t.Fatalf("%d runs, %v", len(runs), firstRuns(runs))
	}
	if _, ok := h.s.NextRun(1); ok {
		t.Fatal("a next run after 2027")
	}
	if h.clock.Pending() != 0 {
		t.Fatalf("%d timers pending", h.clock.Pending())
	}
}

// TestUpsertInvalid: every refused schedule, and nothing changes on error.
func TestUpsertInvalid(t *testing.T) {
	h := newHarness(t, t0, nil)
	h.upsert(cronSpec(1, "0 0 * * * ?", ""))
	before, _ := h.s.NextRun(1)
	for _, tc := range []struct {
		spec ViewSpec
		code string
	}{
		{cronSpec(1, "0 0 12 L * ?", ""), pgerror.FeatureNotSupported},
		{cronSpec(1, "0 0 12 ? * 6#3", ""), pgerror.FeatureNotSupported},
		{cronSpec(1, "0 0 12 15W * ?", ""), pgerror.FeatureNotSupported},
		{cronSpec(1, "0 */15 * * *", ""), pgerror.InvalidParameterValue},
		{cronSpec(1, "0 0 25 * * ?", ""), pgerror.InvalidParameterValue},
		{cronSpec(1, "0 0 12 * * ?", "Atlantis/Capital"), pgerror.InvalidParameterValue},
		{everySpec(1, 0, "HOURS"), pgerror.InvalidParameterValue},
		{everySpec(1, 73, "HOURS"), pgerror.InvalidParameterValue},
		{everySpec(1, 32, "DAYS"), pgerror.InvalidParameterValue},
		{everySpec(1, 9, "WEEKS"), pgerror.InvalidParameterValue},
		{everySpec(1, 30, "MINUTES"), pgerror.InvalidParameterValue},
		{ViewSpec{ID: 1, Schedule: &catalog.Schedule{Every: 1, Unit: "HOUR"}, Trigger: &catalog.Trigger{}}, pgerror.InvalidObjectDefinition},
	} {
		err := h.s.Upsert(tc.spec)
		if pgerror.Code(err) != tc.code {
			t.Errorf("%+v: %v, want %s", tc.spec.Schedule, err, tc.code)
		}
	}
	if after, _ := h.s.NextRun(1); !after.Equal(before) {
		t.Fatalf("a failed Upsert changed the schedule: %s → %s", before, after)
	}
	for _, ok := range []ViewSpec{everySpec(2, 1, "hour"), everySpec(2, 72, "HOURS"), everySpec(2, 31, "DAY"), everySpec(2, 8, "weeks")} {
		if err := h.s.Upsert(ok); err != nil {
			t.Errorf("%+v: %v", ok.Schedule, err)
		}
	}
}

// TestUpsertAlterTakesEffect: a new cron replaces the old at once; switching
// schedule → trigger stops the schedule, trigger → schedule stops reacting
// to commits; DROP SCHEDULE (neither) stops everything.
func TestUpsertAlterTakesEffect(t *testing.T) {
	h := newHarness(t, t0, nil)
	h.upsert(cronSpec(1, "0 0 * * * ?", ""))
	h.s.Start()
	h.advance(150 * time.Minute) // runs at 1:00, 2:00
	h.upsert(cronSpec(1, "0 */10 * * * ?", ""))
	if next, _ := h.s.NextRun(1); !next.Equal(t0.Add(160 * time.Minute)) {
		t.Fatalf("NextRun after ALTER: %s", next)
	}
	h.advance(30 * time.Minute) // 2:40, 2:50, 3:00
	checkRuns(t, h.recorded(1), CauseSchedule, []time.Time{
		t0.Add(time.Hour), t0.Add(2 * time.Hour), t0.Add(160 * time.Minute), t0.Add(170 * time.Minute), t0.Add(180 * time.Minute),
	})

	// Schedule → trigger.
	h.upsert(triggerSpec(1, 0, []uint32{100}, nil))
	if _, ok := h.s.NextRun(1); ok {
		t.Fatal("a triggered view has a next run")
	}
	h.advance(2 * time.Hour)
	if n := len(h.recorded(1)); n != 5 {
		t.Fatalf("the old schedule still runs: %d runs", n)
	}
	h.s.Committed(map[uint32]int64{100: 7})
	h.settle()
	runs := h.recorded(1)
	if len(runs) != 6 || runs[5].cause != CauseTrigger {
		t.Fatalf("the trigger did not fire: %v", runs)
	}

	// Trigger → schedule.
	h.upsert(everySpec(1, 1, "HOUR"))
	h.s.Committed(map[uint32]int64{100: 8})
	h.settle()
	if n := len(h.recorded(1)); n != 6 {
		t.Fatalf("a commit triggered a scheduled view: %d runs", n)
	}
	h.advance(time.Hour)
	runs = h.recorded(1)
	if len(runs) != 7 || runs[6].cause != CauseSchedule {
		t.Fatalf("the new schedule did not run: %v", runs)
	}

	// Neither: nothing more.
	h.upsert(ViewSpec{ID: 1, Name: "v"})
	h.advance(10 * time.Hour)
	h.s.Committed(map[uint32]int64{100: 9})
	h.settle()
	if n := len(h.recorded(1)); n != 7 || h.clock.Pending() != 0 {
		t.Fatalf("after DROP SCHEDULE: %d runs, %d timers", n, h.clock.Pending())
	}
}

// TestRemove: a removed view neither runs on schedule nor on commits, its
// timer is gone and its running refresh is canceled.
func TestRemove(t *testing.T) {
	h := newHarness(t, t0, nil)
	g := newGate()
	h.setHook(g.hook)
	h.upsert(cronSpec(1, "0 0 * * * ?", ""))
	h.upsert(triggerSpec(2, 0, []uint32{100}, nil))
	h.s.Start()
	h.s.Remove(1)
	if h.clock.Pending() != 0 {
		t.Fatalf("%d timers after Remove", h.clock.Pending())
	}
	h.clock.Advance(3 * time.Hour)
	h.settle()
	g.none(t)

	var cause error
	h.setHook(func(ctx context.Context, view uint32, c Cause) error {
		err := g.hook(ctx, view, c)
		cause = context.Cause(ctx)
		return err
	})
	h.s.Committed(map[uint32]int64{100: 1})
	g.next(t)
	h.s.Remove(2)
	h.settle()
	if cause != ErrRemoved {
		t.Fatalf("cause %v, want ErrRemoved", cause)
	}
	h.s.Committed(map[uint32]int64{100: 2})
	h.settle()
	g.none(t)
	h.s.Remove(42) // unknown: nothing
	if len(h.s.views) != 0 {
		t.Fatalf("views left: %d", len(h.s.views))
	}
}

// TestStartupCatchUp (R-S8): a scheduled time missed while down runs once
// at start, with cause STARTUP_CATCHUP; nothing missed, nothing run.
func TestStartupCatchUp(t *testing.T) {
	now := t0.Add(10*time.Hour + 30*time.Minute) // 10:30
	h := newHarness(t, now, nil)
	missed := cronSpec(1, "0 0 * * * ?", "")
	missed.LastRun, missed.CatchUp = now.Add(-3*time.Hour), true // last run 07:30: 08:00, 09:00, 10:00 missed
	notMissed := cronSpec(2, "0 0 * * * ?", "")
	notMissed.LastRun, notMissed.CatchUp = now.Add(-20*time.Minute), true // 10:10: nothing missed
	every := everySpec(3, 1, "HOUR")
	every.LastRun, every.CatchUp = now.Add(-5*time.Hour), true
	trig := triggerSpec(4, 120, []uint32{100}, nil)
	trig.LastRun, trig.CatchUp = now.Add(-time.Hour), true
	noFlag := cronSpec(5, "0 0 * * * ?", "")
	noFlag.LastRun = now.Add(-3 * time.Hour)
	neverRun := cronSpec(6, "0 0 * * * ?", "")
	neverRun.CatchUp = true
	for _, s := range []ViewSpec{missed, notMissed, every, trig, noFlag, neverRun} {
		h.upsert(s)
	}
	h.settle()
	if n := len(h.recorded()); n != 0 {
		t.Fatalf("%d runs before Start", n)
	}
	h.s.Start()
	h.settle()
	runs := h.recorded()
	got := map[uint32]Cause{}
	for _, r := range runs {
		if !r.at.Equal(now) {
			t.Fatalf("catch-up at %s", r.at)
		}
		got[r.view] = r.cause
	}
	if len(runs) != 3 || got[1] != CauseStartupCatchUp || got[3] != CauseStartupCatchUp || got[4] != CauseStartupCatchUp {
		t.Fatalf("catch-up runs %v", runs)
	}
	// Then the schedules go on: EVERY from the catch-up run.
	if next, _ := h.s.NextRun(3); !next.Equal(now.Add(time.Hour)) {
		t.Fatalf("EVERY after catch-up: %s", next)
	}
	if next, _ := h.s.NextRun(1); !next.Equal(t0.Add(11 * time.Hour)) {
		t.Fatalf("cron after catch-up: %s", next)
	}
}
