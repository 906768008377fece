package scheduler

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/robfig/cron/v3"

	"github.com/mvserver/mvserver/pgerror"
)

// quartzField describes one field of a Quartz expression: its name, its range
// in Quartz numbering, the names it accepts (index 0 = min) and how far its
// values move to reach robfig/cron's numbering (day-of-week: Quartz 1 =
// Sunday … 7 = Saturday, robfig 0 = Sunday … 6 = Saturday).
type quartzField struct {
	name     string
	min, max int
	names    []string
	shift    int
}

var quartzFields = [...]quartzField{
	{name: "seconds", min: 0, max: 59},
	{name: "minutes", min: 0, max: 59},
	{name: "hours", min: 0, max: 23},
	{name: "day-of-month", min: 1, max: 31},
	{name: "month", min: 1, max: 12, names: []string{"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"}},
	{name: "day-of-week", min: 1, max: 7, names: []string{"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"}, shift: -1},
	{name: "year", min: 1970, max: 2199},
}

const (
	fieldDayOfMonth = 3
	fieldDayOfWeek  = 5
	fieldYear       = 6
	minYear         = 1970
	maxYear         = 2199
)

// robfigParser reads the translated six-field spec: seconds first, no
// descriptors (a Quartz expression never has them).
var robfigParser = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)

// quartz is a Quartz expression translated for robfig/cron (R-S2).
type quartz struct {
	spec  string // robfig's six fields
	years []bool // index year-minYear; nil = every year
}

// translateQuartz checks a Quartz expression and translates it: `?` becomes
// `*`, names become numbers, day-of-week numbers move from 1–7 to 0–6, and an
// optional seventh (year) field is kept apart as a filter, since robfig has
// no year field. It accepts exactly what sql/parse.ValidateQuartzCron accepts
// and answers with the same SQLSTATEs (22023; 0A000 for L, W and #).
func translateQuartz(expr string) (quartz, error) {
	bad := func(format string, args ...any) error {
		return pgerror.New(pgerror.InvalidParameterValue, "invalid cron expression '%s': %s", expr, fmt.Sprintf(format, args...)).
			WithHint("Quartz syntax: seconds minutes hours day-of-month month day-of-week [year], e.g. '0 */15 * * * ?'.")
	}
	f := strings.Fields(expr)
	if len(f) != 6 && len(f) != 7 {
		return quartz{}, bad("expected 6 or 7 fields, got %d", len(f))
	}
	for _, x := range f {
		if strings.ContainsAny(strings.ToUpper(x), "LW#") && !onlyNamesAndNumbers(x) {
			return quartz{}, pgerror.New(pgerror.FeatureNotSupported, "cron expression '%s': the Quartz features L, W and # are not supported", expr).
				WithHint("Use explicit days instead, e.g. '0 0 12 1 * ?' for the first day of the month.")
		}
	}
	question := 0
	out := make([]string, 6)
	var q quartz
	for i, x := range f {
		fd := quartzFields[i]
		if x == "?" {
			if i != fieldDayOfMonth && i != fieldDayOfWeek {
				return quartz{}, bad("'?' is allowed only in the day-of-month or day-of-week field")
			}
			question++
			out[i] = "*"
			continue
		}
		parts := strings.Split(x, ",")
		robfig := make([]string, len(parts))
		for j, part := range parts {
			r, err := fd.translatePart(part)
			if err != nil {
				return quartz{}, bad("%s field '%s': %s", fd.name, x, err.Error())
			}
			robfig[j] = r
		}
		if i == fieldYear {
			if x != "*" {
				q.years = fd.set(parts)
			}
			continue
		}
		out[i] = strings.Join(robfig, ",")
	}
	if question > 1 {
		return quartz{}, bad("'?' may appear in only one of day-of-month and day-of-week")
	}
	if question == 0 && f[fieldDayOfMonth] != "*" && f[fieldDayOfWeek] != "*" {
		return quartz{}, bad("specify '?' in day-of-month or day-of-week when the other is set")
	}
	// One day field is now exactly "*", which robfig marks as a star: the day
	// matches when both fields match, so the other field alone decides, as
	// Quartz's `?` means.
	q.spec = strings.Join(out, " ")
	return q, nil
}

// onlyNamesAndNumbers reports whether x is made of month or day names (which
// contain the letters L and W: JUL, WED) and numbers rather than the L, W
// and # operators.
func onlyNamesAndNumbers(x string) bool {
	u := strings.ToUpper(x)
	if strings.Contains(u, "#") {
		return false
	}
	for _, tok := range strings.FieldsFunc(u, func(r rune) bool { return r == ',' || r == '-' || r == '/' }) {
		if tok == "*" || tok == "?" || nameIndex(quartzFields[4].names, tok) >= 0 || nameIndex(quartzFields[5].names, tok) >= 0 {
			continue
		}
		if _, err := strconv.Atoi(tok); err != nil {
			return false
		}
	}
	return true
}

func nameIndex(names []string, s string) int {
	for i, n := range names {
		if strings.EqualFold(s, n) {
			return i
		}
	}
	return -1
}

// translatePart checks one list element (`*`, `v`, `a-b`, each with an
// optional `/step`) and writes it in robfig's numbering.
func (fd quartzField) translatePart(part string) (string, error) {
	lo, hi, _, err := fd.parsePart(part)
	if err != nil {
		return "", err
	}
	rng, stepText, hasStep := strings.Cut(part, "/")
	var b strings.Builder
	switch {
	case rng == "*":
		// A star covers the whole range in both numberings; `*/n` starts at
		// the minimum in both (Quartz 1,1+n,… on day-of-week is robfig's
		// 0,n,…: the same days).
		b.WriteString("*")
	case strings.Contains(rng, "-"):
		fmt.Fprintf(&b, "%d-%d", lo+fd.shift, hi+fd.shift)
	default:
		fmt.Fprintf(&b, "%d", lo+fd.shift)
	}
	if hasStep {
		fmt.Fprintf(&b, "/%s", stepText)
	}
	return b.String(), nil
}

// parsePart returns the values of one list element in Quartz numbering: the
// first, the last and the step. `v/n` runs from v to the field's maximum.
func (fd quartzField) parsePart(part string) (lo, hi, step int, err error) {
	if part == "" {
		return 0, 0, 0, fmt.Errorf("empty list element")
	}
	rng, stepText, hasStep := strings.Cut(part, "/")
	step = 1
	if hasStep {
		n, err := strconv.Atoi(stepText)
		if err != nil || n <= 0 || n > fd.max-fd.min+1 {
			return 0, 0, 0, fmt.Errorf("bad step '%s'", stepText)
		}
		step = n
	}
	if rng == "*" {
		return fd.min, fd.max, step, nil
	}
	a, b, isRange := strings.Cut(rng, "-")
	lo, err = fd.value(a)
	if err != nil {
		return 0, 0, 0, err
	}
	hi = lo
	if isRange {
		if hi, err = fd.value(b); err != nil {
			return 0, 0, 0, err
		}
		if hi < lo {
			return 0, 0, 0, fmt.Errorf("range %s is reversed", rng)
		}
	} else if hasStep {
		hi = fd.max
	}
	return lo, hi, step, nil
}

func (fd quartzField) value(s string) (int, error) {
	if i := nameIndex(fd.names, s); i >= 0 {
		return fd.min + i, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("'%s' is not a number", s)
	}
	if v < fd.min || v > fd.max {
		return 0, fmt.Errorf("%d is out of range %d-%d", v, fd.min, fd.max)
	}
	return v, nil
}

// set returns the values the (already checked) list elements select, as a
// table indexed by value-min.
func (fd quartzField) set(parts []string) []bool {
	s := make([]bool, fd.max-fd.min+1)
	for _, part := range parts {
		lo, hi, step, _ := fd.parsePart(part)
		for v := lo; v <= hi; v += step {
			s[v-fd.min] = true
		}
	}
	return s
}

// yearAllowed reports whether year y passes the year filter.
func (q quartz) yearAllowed(y int) bool {
	if q.years == nil {
		return true
	}
	return y >= minYear && y <= maxYear && q.years[y-minYear]
}

// nextYear returns the first allowed year ≥ y.
func (q quartz) nextYear(y int) (int, bool) {
	if q.years == nil {
		return y, true
	}
	if y < minYear {
		y = minYear
	}
	for ; y <= maxYear; y++ {
		if q.years[y-minYear] {
			return y, true
		}
	}
	return 0, false
}
