package scheduler

import (
	"strings"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// timing is a view's compiled SCHEDULE (R-S2): a zoned cron expression or a
// fixed interval.
type timing struct {
	cron  *Cron
	every time.Duration
}

func (t timing) scheduled() bool { return t.cron != nil || t.every > 0 }

// everyAfter returns the first anchor + k·every (k ≥ 1) after t.
func (t timing) everyAfter(anchor, after time.Time) time.Time {
	next := anchor.Add(t.every)
	if next.After(after) {
		return next
	}
	k := after.Sub(anchor)/t.every + 1
	return anchor.Add(k * t.every)
}

// everyLimits are SCHEDULE EVERY's units and ranges (R-S2).
var everyLimits = map[string]struct {
	unit time.Duration
	max  int
}{
	"HOUR": {time.Hour, 72},
	"DAY":  {24 * time.Hour, 31},
	"WEEK": {7 * 24 * time.Hour, 8},
}

// compileSchedule checks a stored schedule and compiles it.
func compileSchedule(s *catalog.Schedule) (timing, error) {
	if s.Cron != "" {
		c, err := ParseCron(s.Cron, s.TimeZone)
		if err != nil {
			return timing{}, err
		}
		return timing{cron: c}, nil
	}
	unit := strings.TrimSuffix(strings.ToUpper(s.Unit), "S")
	lim, ok := everyLimits[unit]
	if !ok {
		return timing{}, pgerror.New(pgerror.InvalidParameterValue, "SCHEDULE EVERY accepts HOURS, DAYS or WEEKS, not \"%s\"", s.Unit).
			WithHint("For intervals under an hour use SCHEDULE CRON, e.g. CRON '0 */15 * * * ?'.")
	}
	if s.Every < 1 || s.Every > lim.max {
		return timing{}, pgerror.New(pgerror.InvalidParameterValue, "SCHEDULE EVERY %d %sS is out of range: %sS must be between 1 and %d", s.Every, unit, unit, lim.max)
	}
	return timing{every: time.Duration(s.Every) * lim.unit}, nil
}

// window returns a trigger's AT MOST EVERY window, raised to the minimum.
func (s *Scheduler) window(tr *catalog.Trigger) time.Duration {
	if tr.AtMostEverySeconds <= 0 {
		return 0
	}
	w := time.Duration(tr.AtMostEverySeconds) * time.Second
	if w < s.cfg.TriggerMinInterval {
		w = s.cfg.TriggerMinInterval
	}
	return w
}

// checkSources applies R-S3's per-dataset limits.
func checkSources(spec ViewSpec) error {
	if n := len(spec.Tables); n > MaxTriggerTables {
		return pgerror.New(pgerror.ProgramLimitExceeded, "TRIGGER ON UPDATE on \"%s\" would watch %d upstream tables; the limit is %d", spec.Name, n, MaxTriggerTables).
			WithHint("Use SCHEDULE instead, or split the view.")
	}
	if n := len(spec.Views); n > MaxTriggerViews {
		return pgerror.New(pgerror.ProgramLimitExceeded, "TRIGGER ON UPDATE on \"%s\" would watch %d upstream views; the limit is %d", spec.Name, n, MaxTriggerViews).
			WithHint("Use SCHEDULE instead, or split the view.")
	}
	return nil
}

// distinct returns ids without duplicates and without self, in order.
func distinct(ids []uint32, self uint32) []uint32 {
	out := make([]uint32, 0, len(ids))
	seen := make(map[uint32]bool, len(ids))
	for _, id := range ids {
		if id != self && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
