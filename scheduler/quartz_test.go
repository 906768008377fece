package scheduler

import (
	"strings"
	"testing"

	"github.com/mvserver/mvserver/pgerror"
)

// TestQuartzTranslation is the translation table of the package doc: each
// Quartz expression, the robfig spec it becomes, and its year filter.
func TestQuartzTranslation(t *testing.T) {
	for _, tc := range []struct {
		quartz, robfig string
		years          []int // allowed years; nil = every year
	}{
		{"0 */15 * * * ?", "0 */15 * * * *", nil},
		{"0 0/5 14,18 * * ?", "0 0/5 14,18 * * *", nil},
		{"15,45 * * * * ?", "15,45 * * * * *", nil},
		{"0 0 12 * * *", "0 0 12 * * *", nil},
		{"0 0 12 ? * MON-FRI", "0 0 12 * * 1-5", nil},
		{"0 0 12 ? * mon-fri", "0 0 12 * * 1-5", nil},
		{"0 0 12 ? * 2-6", "0 0 12 * * 1-5", nil},
		{"0 30 9 ? * 1,7", "0 30 9 * * 0,6", nil},
		{"0 30 9 ? * SUN,SAT", "0 30 9 * * 0,6", nil},
		{"0 0 0 ? * WED", "0 0 0 * * 3", nil},
		{"0 0 0 ? * 7", "0 0 0 * * 6", nil},
		{"0 15 10 ? * 2/3", "0 15 10 * * 1/3", nil},
		{"0 15 10 ? * */2", "0 15 10 * * */2", nil},
		{"0 15 10 ? * 2-6/2", "0 15 10 * * 1-5/2", nil},
		{"0 0 0 * * 5", "0 0 0 * * 4", nil},
		{"0 0 6 1 JAN,JUL ?", "0 0 6 1 1,7 *", nil},
		{"0 0 12 ? JUL *", "0 0 12 * 7 *", nil},
		{"0 0 12 1/5 * ?", "0 0 12 1/5 * *", nil},
		{"0 0 12 * * ? 2027", "0 0 12 * * *", []int{2027}},
		{"0 0 12 * * ? *", "0 0 12 * * *", nil},
		{"0 0 0 1 1 ? 2026-2030/2", "0 0 0 1 1 *", []int{2026, 2028, 2030}},
		{"0 0 0 1 1 ? 2199,1970", "0 0 0 1 1 *", []int{1970, 2199}},
	} {
		q, err := translateQuartz(tc.quartz)
		if err != nil {
			t.Errorf("%q: %v", tc.quartz, err)
			continue
		}
		if q.spec != tc.robfig {
			t.Errorf("%q → %q, want %q", tc.quartz, q.spec, tc.robfig)
		}
		var got []int
		if q.years != nil {
			for y := minYear; y <= maxYear; y++ {
				if q.yearAllowed(y) {
					got = append(got, y)
				}
			}
		}
		if !equalInts(got, tc.years) {
			t.Errorf("%q years %v, want %v", tc.quartz, got, tc.years)
		}
		if _, err := robfigParser.Parse(q.spec); err != nil {
			t.Errorf("robfig refuses %q (from %q): %v", q.spec, tc.quartz, err)
		}
	}
}

// TestQuartzDayOfWeekBits checks the day-of-week shift on robfig's parsed
// bits: Quartz 1 = Sunday is robfig's bit 0.
func TestQuartzDayOfWeekBits(t *testing.T) {
	for _, tc := range []struct {
		dow  string
		days []int // robfig weekdays (0 = Sunday)
	}{
		{"1", []int{0}},
		{"7", []int{6}},
		{"SUN", []int{0}},
		{"SAT", []int{6}},
		{"2-6", []int{1, 2, 3, 4, 5}},
		{"MON-FRI", []int{1, 2, 3, 4, 5}},
		{"2/3", []int{1, 4}},       // Quartz 2, 5: Monday, Thursday
		{"*/2", []int{0, 2, 4, 6}}, // Quartz 1, 3, 5, 7
		{"1/2", []int{0, 2, 4, 6}}, // the same days
		{"3-7/2", []int{2, 4, 6}},  // Tuesday, Thursday, Saturday
		{"TUE,THU", []int{2, 4}},   // names in a list
		{"1,SAT,4-5", []int{0, 6, 3, 4}},
	} {
		c, err := ParseCron("0 0 12 ? * "+tc.dow, "")
		if err != nil {
			t.Errorf("%s: %v", tc.dow, err)
			continue
		}
		var want uint64
		for _, d := range tc.days {
			want |= 1 << d
		}
		if got := c.wall.Dow &^ (1 << 63); got != want {
			t.Errorf("day-of-week %q: robfig bits %07b, want %07b (spec %q)", tc.dow, got, want, c.RobfigSpec())
		}
	}
}

// TestQuartzInvalid lists every refused form with its SQLSTATE.
func TestQuartzInvalid(t *testing.T) {
	for _, tc := range []struct{ expr, code, mention string }{
		// Quartz features robfig has not.
		{"0 0 12 L * ?", pgerror.FeatureNotSupported, "L, W and #"},
		{"0 0 12 LW * ?", pgerror.FeatureNotSupported, "L, W and #"},
		{"0 0 12 15W * ?", pgerror.FeatureNotSupported, "L, W and #"},
		{"0 0 12 L-3 * ?", pgerror.FeatureNotSupported, "L, W and #"},
		{"0 0 12 ? * L", pgerror.FeatureNotSupported, "L, W and #"},
		{"0 0 12 ? * 6L", pgerror.FeatureNotSupported, "L, W and #"},
		{"0 0 12 ? * FRIL", pgerror.FeatureNotSupported, "L, W and #"},
		{"0 0 12 ? * 6#3", pgerror.FeatureNotSupported, "L, W and #"},
		{"0 0 12 ? * SUN#2", pgerror.FeatureNotSupported, "L, W and #"},
		// Field counts.
		{"", pgerror.InvalidParameterValue, "got 0"},
		{"0 */15 * * *", pgerror.InvalidParameterValue, "got 5"},
		{"0 0 12 * * ? 2027 1", pgerror.InvalidParameterValue, "got 8"},
		{"@hourly", pgerror.InvalidParameterValue, "got 1"},
		// Out of range, per field.
		{"60 * * * * ?", pgerror.InvalidParameterValue, "seconds"},
		{"0 60 * * * ?", pgerror.InvalidParameterValue, "minutes"},
		{"0 0 24 * * ?", pgerror.InvalidParameterValue, "hours"},
		{"0 0 0 0 * ?", pgerror.InvalidParameterValue, "day-of-month"},
		{"0 0 0 32 * ?", pgerror.InvalidParameterValue, "day-of-month"},
		{"0 0 0 ? 0 *", pgerror.InvalidParameterValue, "month"},
		{"0 0 0 ? 13 *", pgerror.InvalidParameterValue, "month"},
		{"0 0 0 ? * 0", pgerror.InvalidParameterValue, "day-of-week"},
		{"0 0 0 ? * 8", pgerror.InvalidParameterValue, "day-of-week"},
		{"0 0 12 * * ? 1969", pgerror.InvalidParameterValue, "year"},
		{"0 0 12 * * ? 2200", pgerror.InvalidParameterValue, "year"},
		// Bad ranges, steps, lists and words.
		{"0 0 10-5 * * ?", pgerror.InvalidParameterValue, "reversed"},
		{"0 0 0 ? * FRI-MON", pgerror.InvalidParameterValue, "reversed"},
		{"0 0 0 ? DEC-FEB *", pgerror.InvalidParameterValue, "reversed"},
		{"0 0 12 * * ? 2030-2027", pgerror.InvalidParameterValue, "reversed"},
		{"0 */0 * * * ?", pgerror.InvalidParameterValue, "step"},
		{"0 */61 * * * ?", pgerror.InvalidParameterValue, "step"},
		{"0 0 0 ? * 1-7/8", pgerror.InvalidParameterValue, "step"},
		{"0 0/x * * * ?", pgerror.InvalidParameterValue, "step"},
		{"0 0 0 ? * MON,,FRI", pgerror.InvalidParameterValue, "empty"},
		{"0 0 0 ? * 2-", pgerror.InvalidParameterValue, "not a number"},
		{"0 0 0 ? * 1-2-3", pgerror.InvalidParameterValue, "not a number"},
		{"0 0 0 ? * MONDAY", pgerror.InvalidParameterValue, "not a number"},
		{"0 0 0 ? * JAN", pgerror.InvalidParameterValue, "day-of-week"},
		{"0 0 0 MON * ?", pgerror.InvalidParameterValue, "day-of-month"},
		{"a b c d e f", pgerror.InvalidParameterValue, "not a number"},
		{"0 0 12 * * ? abc", pgerror.InvalidParameterValue, "year"},
		{"-1 0 0 * * ?", pgerror.InvalidParameterValue, "seconds"},
		// Where `?` may go.
		{"? 0 0 * * ?", pgerror.InvalidParameterValue, "'?'"},
		{"0 0 0 ? JAN ? ", pgerror.InvalidParameterValue, "only one"},
		{"0 0 0 ? ? *", pgerror.InvalidParameterValue, "'?'"},
		{"0 0 0 5 * 3", pgerror.InvalidParameterValue, "'?'"},
		{"0 0 0 * * ? ?", pgerror.InvalidParameterValue, "'?'"},
		{"0 0 0 ?,1 * *", pgerror.InvalidParameterValue, "not a number"},
	} {
		_, err := ParseCron(tc.expr, "")
		if err == nil {
			t.Errorf("%q: accepted", tc.expr)
			continue
		}
		if got := pgerror.Code(err); got != tc.code {
			t.Errorf("%q: SQLSTATE %s, want %s (%v)", tc.expr, got, tc.code, err)
		}
		if !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%q: error %q does not mention %q", tc.expr, err, tc.mention)
		}
	}
}

func TestLoadZone(t *testing.T) {
	for _, name := range []string{"", "UTC", "utc", "GMT", "z"} {
		if loc, err := LoadZone(name); err != nil || loc.String() != "UTC" {
			t.Errorf("%q: %v %v", name, loc, err)
		}
	}
	for _, name := range []string{"America/Los_Angeles", "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kathmandu"} {
		if _, err := LoadZone(name); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
	for _, name := range []string{"Mars/Olympus_Mons", "PST8PDT8", "america/los_angeles"} {
		_, err := LoadZone(name)
		if pgerror.Code(err) != pgerror.InvalidParameterValue {
			t.Errorf("%q: %v, want 22023", name, err)
		}
	}
	if _, err := ParseCron("0 0 12 * * ?", "Nowhere/City"); pgerror.Code(err) != pgerror.InvalidParameterValue {
		t.Errorf("unknown zone: %v", err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
