package funcs

import (
	"strconv"
	"strings"
	"time"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// Databricks date/time spellings (R-Q1, R-Q3): date_add/date_sub (days),
// dateadd/timestampadd and the three-argument date_add (unit, value, t),
// datediff (days, or with a unit), year/month/day/dayofmonth/dayofweek/
// dayofyear/hour/minute/second/quarter/weekofyear, add_months, last_day,
// date_format, unix_timestamp, from_unixtime, and to_date/to_timestamp
// with Spark's datetime patterns (yyyy-MM-dd HH:mm:ss). The PostgreSQL
// spellings keep PostgreSQL's behaviour: a to_date/to_timestamp pattern is
// read as Spark's only when it is unmistakably one (sparkPattern).

// sparkPattern reports whether a to_date/to_timestamp pattern is Spark's:
// a month as upper-case MM beside a lower-case yy or dd, or HH beside
// lower-case mm and ss (minutes and seconds), which PostgreSQL spells MI
// and SS and reads as month and seconds.
func sparkPattern(f string) bool {
	f = stripQuoted(f)
	if strings.Contains(f, "MM") && (strings.Contains(f, "yy") || strings.Contains(f, "dd")) && !strings.Contains(f, "MON") && !strings.Contains(f, "Mon") {
		return true
	}
	return strings.Contains(f, "HH") && !strings.Contains(f, "HH24") && !strings.Contains(f, "HH12") &&
		strings.Contains(f, "mm") && strings.Contains(f, "ss")
}

func stripQuoted(f string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(f); i++ {
		if f[i] == '\'' || f[i] == '"' {
			in = !in
			continue
		}
		if !in {
			b.WriteByte(f[i])
		}
	}
	return b.String()
}

// sparkToken is a run of one pattern letter, or literal text.
type sparkToken struct {
	letter byte
	n      int
	lit    string
}

func sparkTokens(f string) []sparkToken {
	var out []sparkToken
	for i := 0; i < len(f); {
		c := f[i]
		switch {
		case c == '\'':
			j := i + 1
			var b strings.Builder
			for j < len(f) {
				if f[j] == '\'' {
					if j+1 < len(f) && f[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(f[j])
				j++
			}
			if j == i+1 && j < len(f) {
				b.WriteByte('\'') // '' is a quote
			}
			out = append(out, sparkToken{lit: b.String()})
			i = j + 1
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(f) && f[j] == c {
				j++
			}
			out = append(out, sparkToken{letter: c, n: j - i})
			i = j
		default:
			out = append(out, sparkToken{lit: string(c)})
			i++
		}
	}
	return out
}

func sparkParseErr(in, f string) error {
	return pgerror.New(pgerror.InvalidDatetimeFormat, "text \"%s\" does not match the datetime pattern \"%s\"", in, f)
}

// sparkToTimestamp reads in by a Spark pattern as a local time (of the
// session zone for a timestamptz, unless the pattern reads a zone).
func sparkToTimestamp(c *Ctx, in, f string, k types.Kind) (types.Datum, error) {
	year, mon, day, hour, min, sec, nanos := 1970, 1, 1, 0, 0, 0, 0
	doy := 0
	pm, clock12 := false, false
	zoneOff, hasZone := 0, false
	s := in
	num := func(maxDigits int, exact bool) (int, bool) {
		j := 0
		for j < len(s) && j < maxDigits && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == 0 || exact && j != maxDigits {
			return 0, false
		}
		v, _ := strconv.Atoi(s[:j])
		s = s[j:]
		return v, true
	}
	word := func(words []string) (int, bool) {
		for i, w := range words {
			if len(s) >= len(w) && strings.EqualFold(s[:len(w)], w) {
				s = s[len(w):]
				return i, true
			}
		}
		return 0, false
	}
	abbr := func(ws []string) []string {
		out := make([]string, len(ws))
		for i, w := range ws {
			out[i] = w[:3]
		}
		return out
	}
	for _, t := range sparkTokens(f) {
		ok := true
		switch t.letter {
		case 0:
			if !strings.HasPrefix(s, t.lit) {
				return types.Datum{}, sparkParseErr(in, f)
			}
			s = s[len(t.lit):]
		case 'y', 'u':
			if t.n == 2 {
				var v int
				if v, ok = num(2, true); ok {
					year = 2000 + v
				}
			} else {
				year, ok = num(max(t.n, 9), false)
			}
		case 'M', 'L':
			switch {
			case t.n >= 4:
				var v int
				v, ok = word(monthsFull)
				mon = v + 1
			case t.n == 3:
				var v int
				v, ok = word(abbr(monthsFull))
				mon = v + 1
			default:
				mon, ok = num(2, t.n == 2)
			}
		case 'd':
			day, ok = num(2, t.n == 2)
		case 'D':
			doy, ok = num(3, t.n == 3)
		case 'H', 'k':
			hour, ok = num(2, t.n == 2)
			if t.letter == 'k' && hour == 24 {
				hour = 0
			}
		case 'h', 'K':
			hour, ok = num(2, t.n == 2)
			clock12 = true
		case 'm':
			min, ok = num(2, t.n == 2)
		case 's':
			sec, ok = num(2, t.n == 2)
		case 'S':
			j := 0
			for j < len(s) && j < t.n && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == 0 {
				ok = false
				break
			}
			frac := s[:j] + strings.Repeat("0", 9-j)
			nanos, _ = strconv.Atoi(frac[:9])
			s = s[j:]
		case 'a':
			var v int
			v, ok = word([]string{"AM", "PM"})
			pm = v == 1
		case 'E':
			if t.n >= 4 {
				_, ok = word(daysFull)
			} else {
				_, ok = word(abbr(daysFull))
			}
		case 'X', 'Z', 'x', 'O':
			if t.letter == 'X' && strings.HasPrefix(s, "Z") {
				s, hasZone = s[1:], true
				break
			}
			if len(s) < 3 || s[0] != '+' && s[0] != '-' {
				ok = false
				break
			}
			sign := 1
			if s[0] == '-' {
				sign = -1
			}
			s = s[1:]
			h, ok1 := num(2, true)
			m := 0
			if strings.HasPrefix(s, ":") {
				s = s[1:]
			}
			if len(s) >= 2 && s[0] >= '0' && s[0] <= '9' {
				m, _ = num(2, true)
			}
			ok = ok1
			zoneOff, hasZone = sign*(h*3600+m*60), true
		default:
			return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "unsupported datetime pattern letter '%c' in \"%s\"", t.letter, f)
		}
		if !ok {
			return types.Datum{}, sparkParseErr(in, f)
		}
	}
	if s != "" {
		return types.Datum{}, sparkParseErr(in, f)
	}
	if clock12 {
		if hour < 1 || hour > 12 {
			return types.Datum{}, sparkParseErr(in, f)
		}
		if pm && hour < 12 {
			hour += 12
		} else if !pm && hour == 12 {
			hour = 0
		}
	}
	if doy > 0 {
		t := time.Date(year, 1, doy, 0, 0, 0, 0, time.UTC)
		mon, day = int(t.Month()), t.Day()
	}
	if mon < 1 || mon > 12 || day < 1 || day > daysInMonth(year, mon) || hour > 23 || min > 59 || sec > 59 {
		return types.Datum{}, sparkParseErr(in, f)
	}
	local := types.DaysFromCivil(year, mon, day)*usPerDay + ((int64(hour)*60+int64(min))*60+int64(sec))*usPerSec + int64(nanos/1000)
	switch {
	case hasZone:
		utc := local - int64(zoneOff)*usPerSec
		if k == types.KindTimestamp {
			return types.NewTimestamp(k, utcToLocal(utc, c.Env.Location())), nil
		}
		return types.NewTimestamp(k, utc), nil
	case k == types.KindTimestampTZ:
		return types.NewTimestamp(k, localToUTC(local, c.Env.Location())), nil
	}
	return types.NewTimestamp(k, local), nil
}

// sparkFormat writes t by a Spark pattern (date_format, from_unixtime).
func sparkFormat(t time.Time, f string) (string, error) {
	var b strings.Builder
	pad := func(v, n int) string {
		s := strconv.Itoa(v)
		for len(s) < n {
			s = "0" + s
		}
		return s
	}
	for _, tok := range sparkTokens(f) {
		n := tok.n
		switch tok.letter {
		case 0:
			b.WriteString(tok.lit)
		case 'y', 'u':
			if n == 2 {
				b.WriteString(pad(t.Year()%100, 2))
			} else {
				b.WriteString(pad(t.Year(), n))
			}
		case 'M', 'L':
			switch {
			case n >= 4:
				b.WriteString(monthsFull[t.Month()-1])
			case n == 3:
				b.WriteString(monthsFull[t.Month()-1][:3])
			default:
				b.WriteString(pad(int(t.Month()), n))
			}
		case 'd':
			b.WriteString(pad(t.Day(), n))
		case 'D':
			b.WriteString(pad(t.YearDay(), n))
		case 'H':
			b.WriteString(pad(t.Hour(), n))
		case 'k':
			h := t.Hour()
			if h == 0 {
				h = 24
			}
			b.WriteString(pad(h, n))
		case 'h':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			b.WriteString(pad(h, n))
		case 'K':
			b.WriteString(pad(t.Hour()%12, n))
		case 'm':
			b.WriteString(pad(t.Minute(), n))
		case 's':
			b.WriteString(pad(t.Second(), n))
		case 'S':
			frac := pad(t.Nanosecond(), 9)
			for len(frac) < n {
				frac += "0"
			}
			b.WriteString(frac[:n])
		case 'a':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'E':
			if n >= 4 {
				b.WriteString(daysFull[t.Weekday()])
			} else {
				b.WriteString(daysFull[t.Weekday()][:3])
			}
		case 'Q', 'q':
			b.WriteString(pad(int(t.Month()-1)/3+1, n))
		case 'z':
			name, _ := t.Zone()
			b.WriteString(name)
		case 'X', 'Z', 'x':
			_, off := t.Zone()
			if off == 0 && tok.letter == 'X' {
				b.WriteString("Z")
				break
			}
			sign := "+"
			if off < 0 {
				sign, off = "-", -off
			}
			sep := ""
			if n >= 3 {
				sep = ":"
			}
			b.WriteString(sign + pad(off/3600, 2))
			if n >= 2 || off%3600 != 0 {
				b.WriteString(sep + pad(off%3600/60, 2))
			}
		default:
			return "", pgerror.New(pgerror.InvalidParameterValue, "unsupported datetime pattern letter '%c' in \"%s\"", tok.letter, f)
		}
	}
	return b.String(), nil
}

// spark units of dateadd/datediff.
var sparkUnits = map[string]string{
	"year": "year", "years": "year", "yyyy": "year", "yy": "year",
	"quarter": "quarter", "quarters": "quarter", "qq": "quarter", "q": "quarter",
	"month": "month", "months": "month", "mm": "month", "m": "month",
	"week": "week", "weeks": "week", "wk": "week", "ww": "week",
	"day": "day", "days": "day", "dd": "day", "d": "day", "dayofyear": "day", "dy": "day", "y": "day",
	"hour": "hour", "hours": "hour", "hh": "hour",
	"minute": "minute", "minutes": "minute", "mi": "minute", "n": "minute",
	"second": "second", "seconds": "second", "ss": "second", "s": "second",
	"millisecond": "millisecond", "milliseconds": "millisecond", "ms": "millisecond",
	"microsecond": "microsecond", "microseconds": "microsecond", "mcs": "microsecond", "us": "microsecond",
}

// IsSparkUnit reports whether name is a unit of dateadd/datediff (the
// binder reads dateadd(DAY, …)'s keyword as its name).
func IsSparkUnit(name string) bool {
	_, ok := sparkUnits[strings.ToLower(name)]
	return ok
}

func sparkUnit(u string) (string, error) {
	if v, ok := sparkUnits[strings.ToLower(u)]; ok {
		return v, nil
	}
	return "", pgerror.New(pgerror.InvalidParameterValue, "unit \"%s\" not recognized", u)
}

// asLocal is a date/time datum's local wall-clock micros (the session
// zone for a timestamptz).
func asLocal(c *Ctx, d types.Datum) int64 {
	switch d.K {
	case types.KindDate:
		return d.I * usPerDay
	case types.KindTimestampTZ:
		return utcToLocal(d.I, c.Env.Location())
	}
	return d.I
}

func fromLocal(c *Ctx, micros int64, k types.Kind) types.Datum {
	if k == types.KindTimestampTZ {
		return types.NewTimestamp(k, localToUTC(micros, c.Env.Location()))
	}
	return types.NewTimestamp(k, micros)
}

// addMonths adds months to local micros, clamping the day to the
// target month's last (as PostgreSQL's timestamp + interval does).
func addMonths(micros int64, months int64) int64 {
	days := floorDiv64(micros, usPerDay)
	tod := micros - days*usPerDay
	y, m, d := types.CivilFromDays(days)
	total := int64(y)*12 + int64(m-1) + months
	ny, nm := int(floorDiv64(total, 12)), int(total-floorDiv64(total, 12)*12)+1
	if dim := daysInMonth(ny, nm); d > dim {
		d = dim
	}
	return types.DaysFromCivil(ny, nm, d)*usPerDay + tod
}

func sparkAdd(c *Ctx, unit string, n int64, d types.Datum) (types.Datum, error) {
	u, err := sparkUnit(unit)
	if err != nil {
		return types.Datum{}, err
	}
	k := d.K
	if k == types.KindDate {
		k = types.KindTimestamp
	}
	local := asLocal(c, d)
	switch u {
	case "year":
		local = addMonths(local, 12*n)
	case "quarter":
		local = addMonths(local, 3*n)
	case "month":
		local = addMonths(local, n)
	case "week":
		local += 7 * n * usPerDay
	case "day":
		local += n * usPerDay
	case "hour", "minute", "second", "millisecond", "microsecond":
		step := map[string]int64{"hour": usPerHour, "minute": usPerMin, "second": usPerSec, "millisecond": 1000, "microsecond": 1}[u]
		if k == types.KindTimestampTZ {
			return types.NewTimestamp(k, d.I+n*step), nil
		}
		local += n * step
	}
	return fromLocal(c, local, k), nil
}

// sparkDiff is datediff/timestampdiff(unit, start, end): whole units
// from start to end.
func sparkDiff(c *Ctx, unit string, a, b types.Datum) (types.Datum, error) {
	u, err := sparkUnit(unit)
	if err != nil {
		return types.Datum{}, err
	}
	la, lb := asLocal(c, a), asLocal(c, b)
	months := func() int64 {
		da, db := floorDiv64(la, usPerDay), floorDiv64(lb, usPerDay)
		ya, ma, dda := types.CivilFromDays(da)
		yb, mb, ddb := types.CivilFromDays(db)
		m := int64(yb-ya)*12 + int64(mb-ma)
		// a month is complete once the day and time of day are reached
		ra := int64(dda)*usPerDay + (la - da*usPerDay)
		rb := int64(ddb)*usPerDay + (lb - db*usPerDay)
		if m > 0 && rb < ra {
			m--
		} else if m < 0 && rb > ra {
			m++
		}
		return m
	}
	var r int64
	switch u {
	case "year":
		r = months() / 12
	case "quarter":
		r = months() / 3
	case "month":
		r = months()
	case "week":
		r = (lb - la) / (7 * usPerDay)
	case "day":
		r = (lb - la) / usPerDay
	default:
		step := map[string]int64{"hour": usPerHour, "minute": usPerMin, "second": usPerSec, "millisecond": 1000, "microsecond": 1}[u]
		r = (asInstant(c, b) - asInstant(c, a)) / step
	}
	return types.NewInt8(r), nil
}

func asInstant(c *Ctx, d types.Datum) int64 {
	switch d.K {
	case types.KindDate:
		return d.I * usPerDay
	}
	return d.I
}

func init() {
	date, ts, tstz, i4, i8, text := types.Date, types.Timestamp, types.TimestampTZ, types.Int4, types.Int8, types.Text
	addDays := func(sign int64) fnT {
		return func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			return types.NewDate(a[0].I + sign*a[1].I), nil
		}
	}
	threeAdd := func(c *Ctx, a []types.Datum) (types.Datum, error) { return sparkAdd(c, a[0].S, a[1].I, a[2]) }
	pure("date_add", strict(params(date, i4), date, addDays(1)),
		strict(params(text, i8, tstz), tstz, threeAdd), strict(params(text, i8, ts), ts, threeAdd), strict(params(text, i8, date), ts, threeAdd))
	pure("date_sub", strict(params(date, i4), date, addDays(-1)))
	pure("dateadd", strict(params(text, i8, tstz), tstz, threeAdd), strict(params(text, i8, ts), ts, threeAdd), strict(params(text, i8, date), ts, threeAdd))
	alias("timestampadd", "dateadd")
	diff3 := func(c *Ctx, a []types.Datum) (types.Datum, error) { return sparkDiff(c, a[0].S, a[1], a[2]) }
	pure("datediff",
		strict(params(date, date), i4, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return types.NewInt4(a[0].I - a[1].I), nil }),
		strict(params(text, tstz, tstz), i8, diff3), strict(params(text, ts, ts), i8, diff3))
	alias("timestampdiff", "datediff")
	registry["timestampdiff"].Overloads = registry["datediff"].Overloads[1:]
	field := func(name string, fn func(t time.Time) int) {
		get := func(c *Ctx, a []types.Datum) (types.Datum, error) {
			d := a[0]
			var t time.Time
			if d.K == types.KindDate {
				y, m, dd := types.CivilFromDays(d.I)
				t = time.Date(y, time.Month(m), dd, 0, 0, 0, 0, time.UTC)
			} else {
				t = types.TimeOf(d, c.Env)
			}
			return types.NewInt4(int64(fn(t))), nil
		}
		pure(name, strict(params(tstz), i4, get), strict(params(ts), i4, get), strict(params(date), i4, get))
	}
	field("year", func(t time.Time) int { return t.Year() })
	field("month", func(t time.Time) int { return int(t.Month()) })
	field("day", func(t time.Time) int { return t.Day() })
	field("dayofmonth", func(t time.Time) int { return t.Day() })
	field("dayofweek", func(t time.Time) int { return int(t.Weekday()) + 1 })
	field("weekday", func(t time.Time) int { return (int(t.Weekday()) + 6) % 7 })
	field("dayofyear", func(t time.Time) int { return t.YearDay() })
	field("hour", func(t time.Time) int { return t.Hour() })
	field("minute", func(t time.Time) int { return t.Minute() })
	field("second", func(t time.Time) int { return t.Second() })
	field("quarter", func(t time.Time) int { return (int(t.Month())-1)/3 + 1 })
	field("weekofyear", func(t time.Time) int { _, w := t.ISOWeek(); return w })
	pure("add_months", strict(params(date, i4), date, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		return types.NewDate(addMonths(a[0].I*usPerDay, a[1].I) / usPerDay), nil
	}))
	pure("last_day", strict(params(date), date, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		y, m, _ := types.CivilFromDays(a[0].I)
		return types.NewDate(types.DaysFromCivil(y, m, daysInMonth(y, m))), nil
	}))
	dateFormat := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		var t time.Time
		if a[0].K == types.KindDate {
			y, m, d := types.CivilFromDays(a[0].I)
			t = time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
		} else {
			t = types.TimeOf(a[0], c.Env)
		}
		s, err := sparkFormat(t, a[1].S)
		return types.NewText(s), err
	}
	pure("date_format", strict(params(tstz, text), text, dateFormat), strict(params(ts, text), text, dateFormat),
		strict(params(date, text), text, dateFormat))
	pure("from_unixtime",
		strict(params(i8), text, func(c *Ctx, a []types.Datum) (types.Datum, error) {
			s, err := sparkFormat(time.Unix(a[0].I, 0).In(c.Env.Location()), "yyyy-MM-dd HH:mm:ss")
			return types.NewText(s), err
		}),
		strict(params(i8, text), text, func(c *Ctx, a []types.Datum) (types.Datum, error) {
			s, err := sparkFormat(time.Unix(a[0].I, 0).In(c.Env.Location()), a[1].S)
			return types.NewText(s), err
		}))
	unixTS := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		d := a[0]
		if d.K == types.KindDate {
			d = types.NewTimestamp(types.KindTimestampTZ, localToUTC(d.I*usPerDay, c.Env.Location()))
		}
		return types.NewInt8(floorDiv64(d.I, usPerSec)), nil
	}
	// unix_timestamp() is unix_timestamp(current_timestamp): the binder
	// writes it so, which keeps unix_timestamp itself deterministic.
	register(&Func{Name: "unix_timestamp", Deterministic: true, Overloads: []*Overload{
		strict(params(tstz), i8, unixTS), strict(params(date), i8, unixTS),
		strict(params(text, text), i8, func(c *Ctx, a []types.Datum) (types.Datum, error) {
			d, err := sparkToTimestamp(c, a[0].S, a[1].S, types.KindTimestampTZ)
			if err != nil {
				return types.Datum{}, err
			}
			return types.NewInt8(floorDiv64(d.I, usPerSec)), nil
		}),
	}})
}
