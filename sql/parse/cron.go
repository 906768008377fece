package parse

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mvserver/mvserver/pgerror"
)

// ValidateQuartzCron checks a Quartz cron expression (R-S2): seconds,
// minutes, hours, day-of-month, month, day-of-week (1 = Sunday … 7 =
// Saturday or SUN–SAT), optional year; `?` in one day field. L, W and # are
// not supported and say so.
func ValidateQuartzCron(expr string) error {
	bad := func(format string, args ...any) error {
		return pgerror.New(pgerror.InvalidParameterValue, "invalid cron expression '%s': %s", expr, fmt.Sprintf(format, args...)).
			WithHint("Quartz syntax: seconds minutes hours day-of-month month day-of-week [year], e.g. '0 */15 * * * ?'.")
	}
	f := strings.Fields(expr)
	if len(f) != 6 && len(f) != 7 {
		return bad("expected 6 or 7 fields, got %d", len(f))
	}
	for _, x := range f {
		if strings.ContainsAny(strings.ToUpper(x), "LW#") && !monthOrDayName(x) {
			return pgerror.New(pgerror.FeatureNotSupported, "cron expression '%s': the Quartz features L, W and # are not supported", expr).
				WithHint("Use explicit days instead, e.g. '0 0 12 1 * ?' for the first day of the month.")
		}
	}
	type field struct {
		name     string
		min, max int
		names    []string
	}
	fields := []field{
		{"seconds", 0, 59, nil},
		{"minutes", 0, 59, nil},
		{"hours", 0, 23, nil},
		{"day-of-month", 1, 31, nil},
		{"month", 1, 12, []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
		{"day-of-week", 1, 7, []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}},
		{"year", 1970, 2199, nil},
	}
	q := 0
	for i, x := range f {
		fd := fields[i]
		if x == "?" {
			if i != 3 && i != 5 {
				return bad("'?' is allowed only in the day-of-month or day-of-week field")
			}
			q++
			continue
		}
		for _, part := range strings.Split(x, ",") {
			if err := checkCronPart(part, fd.min, fd.max, fd.names); err != nil {
				return bad("%s field '%s': %s", fd.name, x, err.Error())
			}
		}
	}
	if q > 1 {
		return bad("'?' may appear in only one of day-of-month and day-of-week")
	}
	if q == 0 && f[3] != "*" && f[5] != "*" {
		return bad("specify '?' in day-of-month or day-of-week when the other is set")
	}
	return nil
}

// monthOrDayName reports whether x is made of month or day names (which
// contain L or W letters: JUL, WED) rather than the L/W/# operators.
func monthOrDayName(x string) bool {
	u := strings.ToUpper(x)
	if strings.Contains(u, "#") {
		return false
	}
	for _, tok := range strings.FieldsFunc(u, func(r rune) bool { return r == ',' || r == '-' || r == '/' }) {
		switch tok {
		case "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
			"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT", "*", "?":
			continue
		}
		if _, err := strconv.Atoi(tok); err != nil {
			return false
		}
	}
	return true
}

func checkCronPart(part string, min, max int, names []string) error {
	if part == "" {
		return fmt.Errorf("empty list element")
	}
	rng, step, hasStep := strings.Cut(part, "/")
	if hasStep {
		n, err := strconv.Atoi(step)
		if err != nil || n <= 0 || n > max-min+1 && max > 0 {
			return fmt.Errorf("bad step '%s'", step)
		}
	}
	if rng == "*" {
		return nil
	}
	lo, hi, isRange := strings.Cut(rng, "-")
	a, err := cronValue(lo, min, max, names)
	if err != nil {
		return err
	}
	if isRange {
		b, err := cronValue(hi, min, max, names)
		if err != nil {
			return err
		}
		if b < a {
			return fmt.Errorf("range %s is reversed", rng)
		}
	}
	return nil
}

func cronValue(s string, min, max int, names []string) (int, error) {
	for i, n := range names {
		if strings.EqualFold(s, n) {
			return min + i, nil
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("'%s' is not a number", s)
	}
	if v < min || v > max {
		return 0, fmt.Errorf("%d is out of range %d-%d", v, min, max)
	}
	return v, nil
}

// validateZone checks a time-zone name.
func validateZone(tz string) error {
	switch strings.ToUpper(tz) {
	case "UTC", "GMT", "Z":
		return nil
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return fmt.Errorf("unknown time zone \"%s\"", tz)
	}
	return nil
}
