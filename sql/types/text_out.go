package types

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"
)

// Env carries the session settings that value input and output depend on.
type Env struct {
	// Loc is the session TimeZone (timestamptz input/output, casts).
	Loc *time.Location
	// Names resolves the OID alias types (regclass, …) to and from object
	// names; nil knows no names (only numeric OIDs are read and written).
	Names Names
}

// Names maps OIDs of catalog objects to names and back for the OID alias
// types, as the session's catalog and search path see them.
type Names interface {
	// OIDName returns the name of the object of OID oid as the alias type
	// of kind k prints it (qualified when not visible), false if unknown.
	OIDName(k Kind, oid uint32) (string, bool)
	// NameOID finds the object called name (as written in SQL, possibly
	// qualified or quoted) for the alias type of kind k; its error is
	// PostgreSQL's (42P01 relation does not exist, 42704 type …).
	NameOID(k Kind, name string) (uint32, error)
}

// DefaultEnv uses UTC.
var DefaultEnv = &Env{Loc: time.UTC}

func (e *Env) loc() *time.Location {
	if e == nil || e.Loc == nil {
		return time.UTC
	}
	return e.Loc
}

// AppendText appends the PostgreSQL text output of d (not NULL) to buf.
func AppendText(buf []byte, d Datum, env *Env) []byte {
	switch d.K {
	case KindBool:
		if d.I != 0 {
			return append(buf, 't')
		}
		return append(buf, 'f')
	case KindInt2, KindInt4, KindInt8, KindOid:
		return strconv.AppendInt(buf, d.I, 10)
	case KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole:
		return appendOidAlias(buf, d, env)
	case KindFloat4:
		return appendFloat(buf, d.F, 32)
	case KindFloat8:
		return appendFloat(buf, d.F, 64)
	case KindNumeric:
		return appendNumeric(buf, d)
	case KindBytea:
		buf = append(buf, '\\', 'x')
		return hex.AppendEncode(buf, []byte(d.S))
	case KindDate:
		return appendDate(buf, d.I)
	case KindTimestamp:
		return appendTimestamp(buf, time.UnixMicro(d.I).UTC(), false)
	case KindTimestampTZ:
		return appendTimestamp(buf, time.UnixMicro(d.I).In(env.loc()), true)
	case KindInterval:
		return appendInterval(buf, d)
	case KindArray, KindInt2Vector, KindOidVector:
		return appendArrayText(buf, d, env)
	case KindRecord:
		return appendRecordText(buf, d, env)
	default:
		return append(buf, d.S...)
	}
}

// Text returns the PostgreSQL text output of d ("NULL" for NULL, for messages).
func (d Datum) String() string {
	if d.K == KindNull {
		return "NULL"
	}
	return string(AppendText(nil, d, nil))
}

func appendNumeric(buf []byte, d Datum) []byte {
	if d.D == nil {
		return append(buf, '0')
	}
	if d.D.Form == 2 { // NaN
		return append(buf, "NaN"...)
	}
	if d.D.Form == 1 { // Infinite
		if d.D.Negative {
			return append(buf, "-Infinity"...)
		}
		return append(buf, "Infinity"...)
	}
	return append(buf, d.D.Text('f')...)
}

// appendFloat formats like PostgreSQL's float4out/float8out with
// extra_float_digits = 1: the shortest exact representation, in exponential
// form when the decimal exponent is < -4 or >= 15 (6 for real).
func appendFloat(buf []byte, f float64, bits int) []byte {
	switch {
	case math.IsNaN(f):
		return append(buf, "NaN"...)
	case math.IsInf(f, 1):
		return append(buf, "Infinity"...)
	case math.IsInf(f, -1):
		return append(buf, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(buf, "-0"...)
		}
		return append(buf, '0')
	}
	e := strconv.FormatFloat(f, 'e', -1, bits)
	i := strings.LastIndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	limit := 15
	if bits == 32 {
		limit = 6
	}
	if exp < -4 || exp >= limit {
		return append(buf, e...)
	}
	return strconv.AppendFloat(buf, f, 'f', -1, bits)
}

const unixEpochJulian = 2440588 // Julian day of 1970-01-01

func appendDate(buf []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	return appendYMD(buf, y, m, d)
}

func appendYMD(buf []byte, y, m, d int) []byte {
	bc := y <= 0
	if bc {
		y = -y + 1
	}
	buf = appendPadded(buf, y, 4)
	buf = append(buf, '-')
	buf = appendPadded(buf, m, 2)
	buf = append(buf, '-')
	buf = appendPadded(buf, d, 2)
	if bc {
		buf = append(buf, " BC"...)
	}
	return buf
}

func appendPadded(buf []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		buf = append(buf, '0')
	}
	return append(buf, s...)
}

func appendTimestamp(buf []byte, t time.Time, tz bool) []byte {
	bc := t.Year() <= 0
	y := t.Year()
	if bc {
		y = -y + 1
	}
	buf = appendPadded(buf, y, 4)
	buf = append(buf, '-')
	buf = appendPadded(buf, int(t.Month()), 2)
	buf = append(buf, '-')
	buf = appendPadded(buf, t.Day(), 2)
	buf = append(buf, ' ')
	buf = appendClock(buf, int64(t.Hour())*3600e6+int64(t.Minute())*60e6+int64(t.Second())*1e6+int64(t.Nanosecond()/1000))
	if tz {
		_, off := t.Zone()
		if off < 0 {
			buf = append(buf, '-')
			off = -off
		} else {
			buf = append(buf, '+')
		}
		buf = appendPadded(buf, off/3600, 2)
		if m := (off % 3600) / 60; m != 0 || off%60 != 0 {
			buf = append(buf, ':')
			buf = appendPadded(buf, m, 2)
			if s := off % 60; s != 0 {
				buf = append(buf, ':')
				buf = appendPadded(buf, s, 2)
			}
		}
	}
	if bc {
		buf = append(buf, " BC"...)
	}
	return buf
}

// appendClock appends HH:MM:SS[.ffffff] for a non-negative number of micros.
func appendClock(buf []byte, micros int64) []byte {
	h := micros / 3600e6
	micros -= h * 3600e6
	m := micros / 60e6
	micros -= m * 60e6
	s := micros / 1e6
	frac := micros - s*1e6
	buf = appendPadded(buf, int(h), 2)
	buf = append(buf, ':')
	buf = appendPadded(buf, int(m), 2)
	buf = append(buf, ':')
	buf = appendPadded(buf, int(s), 2)
	if frac != 0 {
		f := strconv.FormatInt(frac+1e6, 10)[1:]
		f = strings.TrimRight(f, "0")
		buf = append(buf, '.')
		buf = append(buf, f...)
	}
	return buf
}

// appendInterval formats in PostgreSQL's default "postgres" IntervalStyle.
func appendInterval(buf []byte, d Datum) []byte {
	years := d.M / 12
	months := d.M % 12
	start := len(buf)
	// PostgreSQL's postgres style: after a negative field, a positive one
	// carries an explicit '+' ("-3 mons +4 days"); the time part's sign
	// follows the last field before it.
	before := false // the previous field was negative
	part := func(v int64, unit string) {
		if v == 0 {
			return
		}
		if len(buf) > start {
			buf = append(buf, ' ')
		}
		if before && v > 0 {
			buf = append(buf, '+')
		}
		before = v < 0
		buf = strconv.AppendInt(buf, v, 10)
		buf = append(buf, ' ')
		buf = append(buf, unit...)
		if v != 1 { // PostgreSQL: "-1 days", "1 day", "2 mons"
			buf = append(buf, 's')
		}
	}
	part(int64(years), "year")
	part(int64(months), "mon")
	part(int64(d.Dd), "day")
	if d.I != 0 || len(buf) == start {
		if len(buf) > start {
			buf = append(buf, ' ')
		}
		us := d.I
		if us < 0 {
			buf = append(buf, '-')
			us = -us
		} else if before {
			buf = append(buf, '+')
		}
		buf = appendClock(buf, us)
	}
	return buf
}

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian date.
func civilFromDays(z int64) (int, int, int) {
	z += 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era = (z - 146096) / 146097
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if mp >= 10 {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return int(y), int(m), int(d)
}

// daysFromCivil converts a proleptic Gregorian date to days since 1970-01-01.
func daysFromCivil(y, m, d int) int64 {
	yy := int64(y)
	if m <= 2 {
		yy--
	}
	era := yy / 400
	if yy < 0 && yy%400 != 0 {
		era = (yy - 399) / 400
	}
	yoe := yy - era*400
	mm := int64(m)
	var mp int64
	if mm > 2 {
		mp = mm - 3
	} else {
		mp = mm + 9
	}
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// DaysFromCivil is the exported form of daysFromCivil.
func DaysFromCivil(y, m, d int) int64 { return daysFromCivil(y, m, d) }

// CivilFromDays is the exported form of civilFromDays.
func CivilFromDays(days int64) (int, int, int) { return civilFromDays(days) }
