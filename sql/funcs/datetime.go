package funcs

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// Date/time functions of R-Q3 with PostgreSQL 15's semantics: EXTRACT
// (numeric) and date_part (double precision) over timestamps, dates and
// intervals; make_date/make_timestamp/make_timestamptz/make_interval; age;
// justify_days/hours/interval; date_bin; isfinite; timezone (AT TIME
// ZONE); the clock functions, which are not deterministic. A timestamptz
// is taken apart in the session's time zone, as PostgreSQL does.

const (
	usPerSec  = int64(1000000)
	usPerMin  = 60 * usPerSec
	usPerHour = 60 * usPerMin
	usPerDay  = 24 * usPerHour
	// unixEpochJD is the Julian day of 1970-01-01.
	unixEpochJD = 2440588
)

// Field units, as PostgreSQL's datetime token tables name them.
const (
	uMicrosec = iota + 1
	uMillisec
	uSecond
	uMinute
	uHour
	uDay
	uWeek
	uMonth
	uQuarter
	uYear
	uDecade
	uCentury
	uMillennium
	uEpoch
	uDow
	uIsodow
	uDoy
	uIsoyear
	uJulian
	uTZ
	uTZHour
	uTZMinute
)

// unitNames maps a unit (lower-cased, cut to PostgreSQL's 10-character
// token length) to its field.
var unitNames = map[string]int{
	"c": uCentury, "cent": uCentury, "centuries": uCentury, "century": uCentury,
	"d": uDay, "day": uDay, "days": uDay,
	"dec": uDecade, "decade": uDecade, "decades": uDecade, "decs": uDecade,
	"h": uHour, "hour": uHour, "hours": uHour, "hr": uHour, "hrs": uHour,
	"m": uMinute, "min": uMinute, "mins": uMinute, "minute": uMinute, "minutes": uMinute,
	"microsecon": uMicrosec, "us": uMicrosec, "usec": uMicrosec, "usecond": uMicrosec, "useconds": uMicrosec, "usecs": uMicrosec,
	"mil": uMillennium, "millennia": uMillennium, "millennium": uMillennium, "mils": uMillennium,
	"millisecon": uMillisec, "ms": uMillisec, "msec": uMillisec, "msecond": uMillisec, "mseconds": uMillisec, "msecs": uMillisec,
	"mon": uMonth, "mons": uMonth, "month": uMonth, "months": uMonth,
	"qtr": uQuarter, "quarter": uQuarter,
	"s": uSecond, "sec": uSecond, "second": uSecond, "seconds": uSecond, "secs": uSecond,
	"timezone": uTZ, "timezone_h": uTZHour, "timezone_m": uTZMinute,
	"w": uWeek, "week": uWeek, "weeks": uWeek,
	"y": uYear, "year": uYear, "years": uYear, "yr": uYear, "yrs": uYear,
	"epoch": uEpoch, "dow": uDow, "isodow": uIsodow, "doy": uDoy, "isoyear": uIsoyear,
	"j": uJulian, "jd": uJulian, "julian": uJulian,
}

// specialUnit: the fields PostgreSQL names in its date token table
// rather than its units table; date_trunc does not know them.
func specialUnit(u int) bool {
	switch u {
	case uEpoch, uDow, uIsodow, uDoy, uIsoyear, uJulian:
		return true
	}
	return false
}

// lookupUnit resolves a unit name; it also returns the name as
// PostgreSQL's messages show it (lower-cased).
func lookupUnit(s string) (int, string) {
	low := strings.ToLower(s)
	key := low
	if len(key) > 10 {
		key = key[:10]
	}
	return unitNames[key], low
}

func unitNotRecognized(low string, t types.T) *pgerror.Error {
	return pgerror.New(pgerror.InvalidParameterValue, "unit \"%s\" not recognized for type %s", low, t.String())
}

func unitNotSupported(low string, t types.T) *pgerror.Error {
	return pgerror.New(pgerror.FeatureNotSupported, "unit \"%s\" not supported for type %s", low, t.String())
}

// pgYear is the year PostgreSQL reports for an astronomical year (there
// is no year 0: 1 BC is -1).
func pgYear(y int) int64 {
	if y > 0 {
		return int64(y)
	}
	return int64(y) - 1
}

// cdiv is C's truncating division.
func cdiv(a, b int64) int64 { return a / b }

func decadeOf(y int64) int64 {
	if y >= 0 {
		return y / 10
	}
	return -((8 - (y - 1)) / 10)
}

func centuryOf(y int64) int64 {
	if y > 0 {
		return (y + 99) / 100
	}
	return -((99 - (y - 1)) / 100)
}

func millenniumOf(y int64) int64 {
	if y > 0 {
		return (y + 999) / 1000
	}
	return -((999 - (y - 1)) / 1000)
}

// julianDay is the Julian day number of t's calendar date.
func julianDay(t time.Time) int64 {
	y, m, d := t.Date()
	return types.DaysFromCivil(y, int(m), d) + unixEpochJD
}

// partValue is a field's value: an integer scaled by 10^-scale, or (for
// julian) a numeric; f is date_part's double precision value.
type partValue struct {
	i     int64
	scale int32
	num   *apd.Decimal
	f     float64
}

func intPart(v int64) partValue { return partValue{i: v, f: float64(v)} }

// timePart extracts field u from t (in its zone; offset is its UTC
// offset in seconds east for a timestamptz) whose value is micros.
func timePart(u int, low string, t time.Time, micros int64, typ types.T) (partValue, error) {
	sec, usec := int64(t.Second()), int64(t.Nanosecond()/1000)
	astroYear := t.Year()
	switch u {
	case uMicrosec:
		return intPart(sec*usPerSec + usec), nil
	case uMillisec:
		return partValue{i: sec*usPerSec + usec, scale: 3, f: float64(sec)*1000.0 + float64(usec)/1000.0}, nil
	case uSecond:
		return partValue{i: sec*usPerSec + usec, scale: 6, f: float64(sec) + float64(usec)/1000000.0}, nil
	case uMinute:
		return intPart(int64(t.Minute())), nil
	case uHour:
		return intPart(int64(t.Hour())), nil
	case uDay:
		return intPart(int64(t.Day())), nil
	case uMonth:
		return intPart(int64(t.Month())), nil
	case uQuarter:
		return intPart((int64(t.Month())-1)/3 + 1), nil
	case uWeek:
		_, w := t.ISOWeek()
		return intPart(int64(w)), nil
	case uYear:
		return intPart(pgYear(astroYear)), nil
	case uDecade:
		return intPart(decadeOf(int64(astroYear))), nil
	case uCentury:
		return intPart(centuryOf(int64(astroYear))), nil
	case uMillennium:
		return intPart(millenniumOf(int64(astroYear))), nil
	case uJulian:
		dayUs := ((int64(t.Hour())*60+int64(t.Minute()))*60+sec)*usPerSec + usec
		q, err := types.NumericDiv(apd.New(dayUs, 0), apd.New(usPerDay, 0))
		if err != nil {
			return partValue{}, err
		}
		r := new(apd.Decimal)
		types.DecimalCtx.Add(r, apd.New(julianDay(t), 0), q)
		f := float64(julianDay(t)) + (float64((int64(t.Hour())*60+int64(t.Minute()))*60+sec)+float64(usec)/1000000.0)/86400.0
		return partValue{num: r, f: f}, nil
	case uIsoyear:
		y, _ := t.ISOWeek()
		iy := int64(y)
		if iy <= 0 {
			iy--
		}
		return intPart(iy), nil
	case uDow:
		return intPart(int64(t.Weekday())), nil
	case uIsodow:
		d := int64(t.Weekday())
		if d == 0 {
			d = 7
		}
		return intPart(d), nil
	case uDoy:
		return intPart(int64(t.YearDay())), nil
	case uEpoch:
		return partValue{i: micros, scale: 6, f: float64(micros) / 1000000.0}, nil
	case uTZ, uTZHour, uTZMinute:
		if typ.Kind != types.KindTimestampTZ {
			return partValue{}, unitNotSupported(low, typ)
		}
		_, off := t.Zone()
		switch u {
		case uTZ:
			return intPart(int64(off)), nil
		case uTZHour:
			return intPart(int64(off) / 3600), nil
		}
		return intPart((int64(off) / 60) % 60), nil
	}
	return partValue{}, unitNotRecognized(low, typ)
}

// datePart extracts field u from a date (PostgreSQL 14's extract_date:
// time fields are not supported).
func datePart(u int, low string, days int64) (partValue, error) {
	switch u {
	case uDay, uMonth, uQuarter, uWeek, uYear, uDecade, uCentury, uMillennium, uIsoyear, uDow, uIsodow, uDoy:
		y, m, d := types.CivilFromDays(days)
		return timePart(u, low, time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC), 0, types.Date)
	case uJulian:
		return intPart(days + unixEpochJD), nil
	case uEpoch:
		return intPart(days * 86400), nil
	case 0:
		return partValue{}, unitNotRecognized(low, types.Date)
	}
	return partValue{}, unitNotSupported(low, types.Date)
}

// intervalPart extracts field u from an interval (interval2itm's fields).
func intervalPart(u int, low string, iv types.Datum) (partValue, error) {
	year, mon, mday := int64(iv.M)/12, int64(iv.M)%12, int64(iv.Dd)
	t := iv.I
	hour := t / usPerHour
	t -= hour * usPerHour
	min := t / usPerMin
	t -= min * usPerMin
	sec := t / usPerSec
	usec := t - sec*usPerSec
	switch u {
	case uMicrosec:
		return intPart(sec*usPerSec + usec), nil
	case uMillisec:
		return partValue{i: sec*usPerSec + usec, scale: 3, f: float64(sec)*1000.0 + float64(usec)/1000.0}, nil
	case uSecond:
		return partValue{i: sec*usPerSec + usec, scale: 6, f: float64(sec) + float64(usec)/1000000.0}, nil
	case uMinute:
		return intPart(min), nil
	case uHour:
		return intPart(hour), nil
	case uDay:
		return intPart(mday), nil
	case uMonth:
		return intPart(mon), nil
	case uQuarter:
		return intPart(cdiv(mon, 3) + 1), nil
	case uYear:
		return intPart(year), nil
	case uDecade:
		return intPart(cdiv(year, 10)), nil
	case uCentury:
		return intPart(cdiv(year, 100)), nil
	case uMillennium:
		return intPart(cdiv(year, 1000)), nil
	case uEpoch:
		// a year is 365.25 days, a month 30
		fromDM := int64(365.25*86400)*(int64(iv.M)/12) + 30*86400*(int64(iv.M)%12) + 86400*int64(iv.Dd)
		f := float64(iv.I)/1000000.0 + (365.25*86400)*float64(int64(iv.M)/12) + (30.0*86400)*float64(int64(iv.M)%12) + 86400.0*float64(iv.Dd)
		hi, lo := bits64Mul(uint64(absI(fromDM)), uint64(usPerSec))
		if hi == 0 && lo <= math.MaxInt64 {
			v := int64(lo)
			if fromDM < 0 {
				v = -v
			}
			if s := v + iv.I; (iv.I >= 0) == (s >= v) {
				return partValue{i: s, scale: 6, f: f}, nil
			}
		}
		r := new(apd.Decimal)
		types.DecimalCtx.Mul(r, apd.New(fromDM, 0), apd.New(usPerSec, 0))
		types.DecimalCtx.Add(r, r, apd.New(iv.I, 0))
		r.Exponent -= 6
		return partValue{num: r, f: f}, nil
	case 0:
		return partValue{}, unitNotRecognized(low, types.Interval)
	}
	return partValue{}, unitNotSupported(low, types.Interval)
}

func absI(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// part extracts a field from a date/time datum.
func part(c *Ctx, unit string, d types.Datum) (partValue, error) {
	u, low := lookupUnit(unit)
	switch d.K {
	case types.KindDate:
		return datePart(u, low, d.I)
	case types.KindInterval:
		return intervalPart(u, low, d)
	}
	typ := types.T{Kind: d.K}
	if u == 0 {
		return partValue{}, unitNotRecognized(low, typ)
	}
	return timePart(u, low, types.TimeOf(d, c.Env), d.I, typ)
}

func (p partValue) numeric() *apd.Decimal {
	if p.num != nil {
		return p.num
	}
	return apd.New(p.i, -p.scale)
}

// isfinite and the infinities: mvserver has no infinite date/time values.
func alwaysTrue(*Ctx, []types.Datum) (types.Datum, error) { return types.NewBool(true), nil }

func init() {
	ts, tstz, date, iv, text, f8, i4, num := types.Timestamp, types.TimestampTZ, types.Date, types.Interval, types.Text, types.Float8, types.Int4, types.Numeric
	extract := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		p, err := part(c, a[0].S, a[1])
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewNumeric(p.numeric()), nil
	}
	datePartFn := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		d := a[1]
		if d.K == types.KindDate {
			// date_part(text, date) is date_part(text, date::timestamp)
			d = types.NewTimestamp(types.KindTimestamp, d.I*usPerDay)
		}
		p, err := part(c, a[0].S, d)
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewFloat8(p.f), nil
	}
	// timestamptz first: PostgreSQL's preferred date/time type.
	pure("extract",
		strict(params(text, tstz), num, extract), strict(params(text, ts), num, extract),
		strict(params(text, date), num, extract), strict(params(text, iv), num, extract))
	pure("date_part",
		strict(params(text, tstz), f8, datePartFn), strict(params(text, ts), f8, datePartFn),
		strict(params(text, date), f8, datePartFn), strict(params(text, iv), f8, datePartFn))
	// timestamptz first: it is PostgreSQL's preferred date/time type, so a
	// date argument (an implicit cast either way) resolves to it, as there.
	pure("date_trunc",
		strict(params(text, tstz), tstz, func(c *Ctx, a []types.Datum) (types.Datum, error) {
			r, err := truncTime(a[0].S, a[1].I, c.Env.Location(), tstz)
			return types.NewTimestamp(types.KindTimestampTZ, r), err
		}),
		strict(params(text, ts), ts, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			r, err := truncTime(a[0].S, a[1].I, time.UTC, ts)
			return types.NewTimestamp(types.KindTimestamp, r), err
		}),
		strict(params(text, tstz, text), tstz, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			loc, err := ParseZone(a[2].S)
			if err != nil {
				return types.Datum{}, err
			}
			r, err := truncTime(a[0].S, a[1].I, loc, tstz)
			return types.NewTimestamp(types.KindTimestampTZ, r), err
		}),
		strict(params(text, iv), iv, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return truncInterval(a[0].S, a[1]) }))
	pure("make_date", strict(params(i4, i4, i4), date, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		y, m, d := a[0].I, a[1].I, a[2].I
		bc := y < 0
		if bc {
			y = -y
		}
		if !validDate(y, m, d) {
			return types.Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "date field value out of range: %d-%02d-%02d", y, m, d)
		}
		if bc {
			y = -y + 1
		}
		// PostgreSQL's dates run from 4714-11-24 BC to 5874897-12-31
		if j := date2j(int(y), int(m), int(d)); y < -4712 || y > 5874897 || j < 0 {
			yy := y
			if bc {
				yy = -(y - 1)
			}
			return types.Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "date out of range: %d-%02d-%02d", yy, m, d)
		}
		return types.NewDate(types.DaysFromCivil(int(y), int(m), int(d))), nil
	}))
	pure("make_timestamp", strict(params(i4, i4, i4, i4, i4, f8), ts, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		us, err := makeTimestamp(a)
		return types.NewTimestamp(types.KindTimestamp, us), err
	}))
	makeTZ := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		us, err := makeTimestamp(a)
		if err != nil {
			return types.Datum{}, err
		}
		loc := c.Env.Location()
		if len(a) > 6 {
			if loc, err = ParseZone(a[6].S); err != nil {
				return types.Datum{}, err
			}
		}
		return types.NewTimestamp(types.KindTimestampTZ, localToUTC(us, loc)), nil
	}
	register(&Func{Name: "make_timestamptz", Deterministic: true, Overloads: []*Overload{
		strict(params(i4, i4, i4, i4, i4, f8), tstz, makeTZ), strict(params(i4, i4, i4, i4, i4, f8, text), tstz, makeTZ)}})
	var mi []*Overload
	for n := 0; n <= 7; n++ {
		ps := []types.T{i4, i4, i4, i4, i4, i4, f8}[:n]
		mi = append(mi, strict(ps, iv, makeInterval))
	}
	register(&Func{Name: "make_interval", Deterministic: true, Overloads: mi,
		Named: []NamedParam{{"years", types.NewInt4(0)}, {"months", types.NewInt4(0)}, {"weeks", types.NewInt4(0)},
			{"days", types.NewInt4(0)}, {"hours", types.NewInt4(0)}, {"mins", types.NewInt4(0)}, {"secs", types.NewFloat8(0)}}})
	ageFn := func(c *Ctx, a []types.Datum) (types.Datum, error) { return age(c, a[0], a[1]) }
	// age(t) is age(current_date, t): the binder writes it so, which
	// keeps age itself deterministic.
	pure("age", strict(params(tstz, tstz), iv, ageFn), strict(params(ts, ts), iv, ageFn))
	pure("justify_days", strict(params(iv), iv, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return justifyDays(a[0]) }))
	pure("justify_hours", strict(params(iv), iv, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return justifyHours(a[0]) }))
	pure("justify_interval", strict(params(iv), iv, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return justifyInterval(a[0]) }))
	bin := func(_ *Ctx, a []types.Datum) (types.Datum, error) {
		r, err := dateBin(a[0], a[1].I, a[2].I)
		return types.NewTimestamp(a[1].K, r), err
	}
	pure("date_bin", strict(params(iv, tstz, tstz), tstz, bin), strict(params(iv, ts, ts), ts, bin))
	pure("isfinite", strict(params(date), types.Bool, alwaysTrue), strict(params(tstz), types.Bool, alwaysTrue),
		strict(params(ts), types.Bool, alwaysTrue), strict(params(iv), types.Bool, alwaysTrue))
	// timezone(zone, t): AT TIME ZONE. A timestamp is read as the local
	// time of zone (giving a timestamptz); a timestamptz is shown as the
	// local time of zone (giving a timestamp).
	pure("timezone",
		strict(params(text, tstz), ts, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			loc, err := ParseZone(a[0].S)
			if err != nil {
				return types.Datum{}, err
			}
			return types.NewTimestamp(types.KindTimestamp, utcToLocal(a[1].I, loc)), nil
		}),
		strict(params(text, ts), tstz, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			loc, err := ParseZone(a[0].S)
			if err != nil {
				return types.Datum{}, err
			}
			return types.NewTimestamp(types.KindTimestampTZ, localToUTC(a[1].I, loc)), nil
		}),
		strict(params(iv, tstz), ts, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			off, err := intervalZone(a[0])
			if err != nil {
				return types.Datum{}, err
			}
			return types.NewTimestamp(types.KindTimestamp, a[1].I+off), nil
		}),
		strict(params(iv, ts), tstz, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			off, err := intervalZone(a[0])
			if err != nil {
				return types.Datum{}, err
			}
			return types.NewTimestamp(types.KindTimestampTZ, a[1].I-off), nil
		}))
	// The clock functions. now(), current_timestamp and
	// transaction_timestamp() are the transaction's start;
	// statement_timestamp() the statement's; clock_timestamp() and
	// timeofday() the wall clock at each call.
	register(&Func{Name: "transaction_timestamp", Deterministic: false, Overloads: []*Overload{{Ret: ret(tstz),
		Fn: func(c *Ctx, _ []types.Datum) (types.Datum, error) {
			return types.NewTimestamp(types.KindTimestampTZ, c.StatementTime.UnixMicro()), nil
		}}}})
	register(&Func{Name: "statement_timestamp", Deterministic: false, Overloads: []*Overload{{Ret: ret(tstz),
		Fn: func(c *Ctx, _ []types.Datum) (types.Datum, error) {
			t := c.StatementStart
			if t.IsZero() {
				t = c.StatementTime
			}
			return types.NewTimestamp(types.KindTimestampTZ, t.UnixMicro()), nil
		}}}})
	register(&Func{Name: "clock_timestamp", Deterministic: false, Overloads: []*Overload{{Ret: ret(tstz),
		Fn: func(*Ctx, []types.Datum) (types.Datum, error) {
			return types.NewTimestamp(types.KindTimestampTZ, time.Now().UnixMicro()), nil
		}}}})
	register(&Func{Name: "timeofday", Deterministic: false, Overloads: []*Overload{{Ret: ret(text),
		Fn: func(c *Ctx, _ []types.Datum) (types.Datum, error) {
			t := time.Now().In(c.Env.Location())
			return types.NewText(t.Format("Mon Jan 02 15:04:05.000000 2006 MST")), nil
		}}}})
}

func validDate(y, m, d int64) bool {
	return y != 0 && m >= 1 && m <= 12 && d >= 1 && d <= int64(daysInMonth(int(y), int(m)))
}

func daysInMonth(y, m int) int {
	return time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// makeTimestamp is make_timestamp's micros (as a local time) for
// year, month, day, hour, minute and seconds.
func makeTimestamp(a []types.Datum) (int64, error) {
	y, m, d, h, mi, sec := a[0].I, a[1].I, a[2].I, a[3].I, a[4].I, a[5].F
	// a negative year is BC
	if !validDate(max(y, -y), m, d) {
		return 0, pgerror.New(pgerror.DatetimeFieldOverflow, "date field value out of range: %d-%02d-%02d", y, m, d)
	}
	if y < 0 {
		y++
	}
	if y < -4712 || y > 294276 {
		return 0, pgerror.New(pgerror.DatetimeFieldOverflow, "date out of range: %d-%02d-%02d", a[0].I, m, d)
	}
	if h < 0 || mi < 0 || mi > 59 || sec < 0 || sec > 60 || math.IsNaN(sec) || h > 24 || h == 24 && (mi > 0 || sec > 0) ||
		math.Round(sec*1e6) > 60e6 {
		return 0, pgerror.New(pgerror.DatetimeFieldOverflow, "time field value out of range: %d:%02d:%s", h, mi, cG(sec))
	}
	days := types.DaysFromCivil(int(y), int(m), int(d))
	return days*usPerDay + (h*60+mi)*usPerMin + int64(math.RoundToEven(sec*1e6)), nil
}

// cG formats a double as C's %02g.
func cG(f float64) string {
	s := strconv.FormatFloat(f, 'g', 6, 64)
	if strings.Contains(s, "e") {
		// C writes at least two exponent digits
		mant, exp, _ := strings.Cut(s, "e")
		sign := exp[0]
		digits := exp[1:]
		if len(digits) < 2 {
			digits = "0" + digits
		}
		s = mant + "e" + string(sign) + digits
	}
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}

func makeInterval(_ *Ctx, a []types.Datum) (types.Datum, error) {
	v := [7]float64{}
	var iv [6]int64
	for i := range a {
		if i < 6 {
			iv[i] = a[i].I
		} else {
			v[6] = a[i].F
		}
	}
	rangeErr := pgerror.New(pgerror.DatetimeFieldOverflow, "interval out of range")
	// PostgreSQL 15 computes months and days in 32-bit integers that wrap.
	months := int32(int32(iv[0])*12 + int32(iv[1]))
	days := int32(int32(iv[2])*7 + int32(iv[3]))
	secs := math.RoundToEven(v[6] * 1e6)
	if math.IsNaN(secs) || math.IsInf(secs, 0) || math.Abs(secs) > 9.2e18 {
		return types.Datum{}, rangeErr
	}
	us := iv[4]*usPerHour + iv[5]*usPerMin + int64(secs)
	return types.NewInterval(months, days, us), nil
}

// localToUTC reads micros as a local time of loc.
func localToUTC(micros int64, loc *time.Location) int64 {
	t := time.UnixMicro(micros).UTC()
	l := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
	return l.UnixMicro()
}

// utcToLocal is the local time in loc of an instant, as micros.
func utcToLocal(micros int64, loc *time.Location) int64 {
	_, off := time.UnixMicro(micros).In(loc).Zone()
	return micros + int64(off)*usPerSec
}

// intervalZone is an interval used as a time zone: its offset east in
// micros (it may hold no months or days).
func intervalZone(iv types.Datum) (int64, error) {
	if iv.M != 0 || iv.Dd != 0 {
		return 0, pgerror.New(pgerror.InvalidParameterValue, "interval time zone \"%s\" must not include months or days", iv.String())
	}
	return iv.I, nil
}

// ParseZone resolves a time zone name as AT TIME ZONE reads it: a zone
// name, UTC and its aliases, or a POSIX offset ("+05" is five hours WEST
// of Greenwich, as in PostgreSQL).
func ParseZone(z string) (*time.Location, error) {
	switch strings.ToUpper(z) {
	case "UTC", "GMT", "Z", "ZULU", "UCT", "ETC/UTC", "UT":
		return time.UTC, nil
	}
	if len(z) >= 2 && (z[0] == '+' || z[0] == '-' || z[0] >= '0' && z[0] <= '9') {
		body, sign := z, 1
		if z[0] == '+' || z[0] == '-' {
			body = z[1:]
			if z[0] == '-' {
				sign = -1
			}
		}
		parts := strings.Split(body, ":")
		if len(parts) <= 3 {
			off, ok := 0, true
			for i, p := range parts {
				v, err := strconv.Atoi(p)
				if err != nil || v < 0 {
					ok = false
					break
				}
				off += v * []int{3600, 60, 1}[i]
			}
			if ok && off <= 15*3600+59*60 {
				// POSIX: positive is west of Greenwich.
				return time.FixedZone(z, -sign*off), nil
			}
		}
	}
	if loc, err := time.LoadLocation(z); err == nil && z != "" && !strings.EqualFold(z, "local") {
		return loc, nil
	}
	for _, name := range []string{z, strings.ToUpper(z)} {
		if off, ok := zoneAbbrevs[strings.ToUpper(name)]; ok {
			return time.FixedZone(strings.ToUpper(name), off), nil
		}
	}
	return nil, pgerror.New(pgerror.InvalidParameterValue, "time zone \"%s\" not recognized", z)
}

// zoneAbbrevs are common abbreviations of PostgreSQL's default
// timezone_abbreviations, as fixed offsets east in seconds.
var zoneAbbrevs = map[string]int{
	"EST": -5 * 3600, "EDT": -4 * 3600, "CST": -6 * 3600, "CDT": -5 * 3600, "MST": -7 * 3600, "MDT": -6 * 3600,
	"PST": -8 * 3600, "PDT": -7 * 3600, "AKST": -9 * 3600, "AKDT": -8 * 3600, "HST": -10 * 3600,
	"CET": 3600, "CEST": 2 * 3600, "EET": 2 * 3600, "EEST": 3 * 3600, "WET": 0, "WEST": 3600,
	"BST": 3600, "IST": 2 * 3600, "MSK": 3 * 3600, "JST": 9 * 3600, "KST": 9 * 3600,
	"AEST": 10 * 3600, "AEDT": 11 * 3600, "ACST": 9*3600 + 1800, "AWST": 8 * 3600, "NZST": 12 * 3600, "NZDT": 13 * 3600,
}

// age is PostgreSQL's timestamp_age: the field-wise difference of two
// timestamps, borrowing from the larger fields.
func age(c *Ctx, a, b types.Datum) (types.Datum, error) {
	t1, t2 := types.TimeOf(a, c.Env), types.TimeOf(b, c.Env)
	type tm struct{ year, mon, mday, hour, min, sec, usec int64 }
	get := func(t time.Time) tm {
		return tm{int64(t.Year()), int64(t.Month()), int64(t.Day()), int64(t.Hour()), int64(t.Minute()), int64(t.Second()), int64(t.Nanosecond() / 1000)}
	}
	x, y := get(t1), get(t2)
	r := tm{x.year - y.year, x.mon - y.mon, x.mday - y.mday, x.hour - y.hour, x.min - y.min, x.sec - y.sec, x.usec - y.usec}
	neg := a.I < b.I
	flip := func() {
		r = tm{-r.year, -r.mon, -r.mday, -r.hour, -r.min, -r.sec, -r.usec}
	}
	if neg {
		flip()
	}
	for r.usec < 0 {
		r.usec += usPerSec
		r.sec--
	}
	for r.sec < 0 {
		r.sec += 60
		r.min--
	}
	for r.min < 0 {
		r.min += 60
		r.hour--
	}
	for r.hour < 0 {
		r.hour += 24
		r.mday--
	}
	for r.mday < 0 {
		if neg {
			r.mday += int64(daysInMonth(int(x.year), int(x.mon)))
		} else {
			r.mday += int64(daysInMonth(int(y.year), int(y.mon)))
		}
		r.mon--
	}
	for r.mon < 0 {
		r.mon += 12
		r.year--
	}
	if neg {
		flip()
	}
	months := r.year*12 + r.mon
	if months > math.MaxInt32 || months < math.MinInt32 {
		return types.Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "interval out of range")
	}
	return types.NewInterval(int32(months), int32(r.mday), ((r.hour*60+r.min)*60+r.sec)*usPerSec+r.usec), nil
}

func intervalRangeErr() error {
	return pgerror.New(pgerror.DatetimeFieldOverflow, "interval out of range")
}

func add32(a, b int64) (int32, error) {
	s := a + b
	if s > math.MaxInt32 || s < math.MinInt32 {
		return 0, intervalRangeErr()
	}
	return int32(s), nil
}

func justifyDays(iv types.Datum) (types.Datum, error) {
	month, day, t := int64(iv.M), int64(iv.Dd), iv.I
	whole := day / 30
	day -= whole * 30
	m, err := add32(month, whole)
	if err != nil {
		return types.Datum{}, err
	}
	month = int64(m)
	if month > 0 && day < 0 {
		day += 30
		month--
	} else if month < 0 && day > 0 {
		day -= 30
		month++
	}
	return types.NewInterval(int32(month), int32(day), t), nil
}

func justifyHours(iv types.Datum) (types.Datum, error) {
	day, t := int64(iv.Dd), iv.I
	whole := t / usPerDay
	t -= whole * usPerDay
	d, err := add32(day, whole)
	if err != nil {
		return types.Datum{}, err
	}
	day = int64(d)
	if day > 0 && t < 0 {
		t += usPerDay
		day--
	} else if day < 0 && t > 0 {
		t -= usPerDay
		day++
	}
	return types.NewInterval(iv.M, int32(day), t), nil
}

func justifyInterval(iv types.Datum) (types.Datum, error) {
	month, day, t := int64(iv.M), int64(iv.Dd), iv.I
	if day > 0 && t > 0 || day < 0 && t < 0 {
		whole := day / 30
		day -= whole * 30
		m, err := add32(month, whole)
		if err != nil {
			return types.Datum{}, err
		}
		month = int64(m)
	}
	whole := t / usPerDay
	t -= whole * usPerDay
	d, err := add32(day, whole)
	if err != nil {
		return types.Datum{}, err
	}
	day = int64(d)
	wm := day / 30
	day -= wm * 30
	m, err := add32(month, wm)
	if err != nil {
		return types.Datum{}, err
	}
	month = int64(m)
	if month > 0 && (day < 0 || day == 0 && t < 0) {
		day += 30
		month--
	} else if month < 0 && (day > 0 || day == 0 && t > 0) {
		day -= 30
		month++
	}
	if day > 0 && t < 0 {
		t += usPerDay
		day--
	} else if day < 0 && t > 0 {
		t -= usPerDay
		day++
	}
	return types.NewInterval(int32(month), int32(day), t), nil
}

// dateBin is date_bin(stride, source, origin) on micros.
func dateBin(stride types.Datum, src, origin int64) (int64, error) {
	if stride.M != 0 {
		return 0, pgerror.New(pgerror.FeatureNotSupported, "timestamps cannot be binned into intervals containing months or years")
	}
	strideUs := int64(stride.Dd)*usPerDay + stride.I
	if strideUs <= 0 {
		return 0, pgerror.New(pgerror.DatetimeFieldOverflow, "stride must be greater than zero")
	}
	diff := src - origin
	if (src >= origin) != (diff >= 0) {
		return 0, intervalRangeErr()
	}
	mod := diff % strideUs
	r := origin + (diff - mod)
	if mod < 0 {
		r -= strideUs
	}
	return r, nil
}

// truncTime is date_trunc on micros: the local time (of loc) cut to the
// unit. Units of a day or more are read back as a local time of loc (the
// offset there may differ); smaller ones keep the instant's offset.
func truncTime(unit string, micros int64, loc *time.Location, typ types.T) (int64, error) {
	u, low := lookupUnit(unit)
	if specialUnit(u) {
		u = 0
	}
	t := time.UnixMicro(micros).In(loc)
	y, mon, d := t.Year(), int(t.Month()), t.Day()
	usec := int64(t.Nanosecond() / 1000)
	sinceHour := int64(t.Minute())*usPerMin + int64(t.Second())*usPerSec + usec
	switch u {
	case uMicrosec:
		return micros, nil
	case uMillisec:
		return micros - usec%1000, nil
	case uSecond:
		return micros - usec, nil
	case uMinute:
		return micros - int64(t.Second())*usPerSec - usec, nil
	case uHour:
		return micros - sinceHour, nil
	case uWeek:
		woy := date2isoweek(y, mon, d)
		if woy >= 52 && mon == 1 {
			y--
		}
		if woy <= 1 && mon == 12 {
			y++
		}
		j := isoweek2j(y, woy)
		days := int64(j) - unixEpochJD
		return localToUTC(days*usPerDay, loc), nil
	case uMillennium, uCentury, uDecade, uYear, uQuarter, uMonth, uDay:
	case 0:
		return 0, unitNotRecognized(low, typ)
	default:
		return 0, unitNotSupported(low, typ)
	}
	switch u {
	case uMillennium:
		if y > 0 {
			y = ((y+999)/1000)*1000 - 999
		} else {
			y = -((999-(y-1))/1000)*1000 + 1
		}
	case uCentury:
		if y > 0 {
			y = ((y+99)/100)*100 - 99
		} else {
			y = -((99-(y-1))/100)*100 + 1
		}
	case uDecade:
		if y > 0 {
			y = (y / 10) * 10
		} else {
			y = -((8 - (y - 1)) / 10) * 10
		}
	}
	switch u {
	case uMillennium, uCentury, uDecade, uYear:
		mon, d = 1, 1
	case uQuarter:
		mon, d = 3*((mon-1)/3)+1, 1
	case uMonth:
		d = 1
	}
	days := types.DaysFromCivil(y, mon, d)
	if loc == time.UTC {
		return days * usPerDay, nil
	}
	return localToUTC(days*usPerDay, loc), nil
}

// truncInterval is date_trunc on an interval's fields.
func truncInterval(unit string, iv types.Datum) (types.Datum, error) {
	u, low := lookupUnit(unit)
	if specialUnit(u) {
		u = 0
	}
	year, mon, mday := int64(iv.M)/12, int64(iv.M)%12, int64(iv.Dd)
	t := iv.I
	hour := t / usPerHour
	t -= hour * usPerHour
	mins := t / usPerMin
	t -= mins * usPerMin
	sec := t / usPerSec
	usec := t - sec*usPerSec
	switch u {
	case uMillennium, uCentury, uDecade, uYear, uQuarter, uMonth, uDay, uHour, uMinute, uSecond, uMillisec, uMicrosec:
	case 0:
		return types.Datum{}, unitNotRecognized(low, types.Interval)
	case uWeek:
		return types.Datum{}, unitNotSupported(low, types.Interval).WithDetail("Months usually have fractional weeks.")
	default:
		return types.Datum{}, unitNotSupported(low, types.Interval)
	}
	order := []int{uMillennium, uCentury, uDecade, uYear, uQuarter, uMonth, uDay, uHour, uMinute, uSecond}
	from := len(order)
	for i, o := range order {
		if o == u {
			from = i
		}
	}
	for _, o := range order[from:] {
		switch o {
		case uMillennium:
			year = year / 1000 * 1000
		case uCentury:
			year = year / 100 * 100
		case uDecade:
			year = year / 10 * 10
		case uYear:
			mon = 0
		case uQuarter:
			mon = 3 * (mon / 3)
		case uMonth:
			mday = 0
		case uDay:
			hour = 0
		case uHour:
			mins = 0
		case uMinute:
			sec = 0
		case uSecond:
			usec = 0
		}
	}
	if u == uMillisec {
		usec = usec / 1000 * 1000
	}
	return types.NewInterval(int32(year*12+mon), int32(mday), ((hour*60+mins)*60+sec)*usPerSec+usec), nil
}
