package types

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
)

func invalidInput(t T, s string) error {
	code := pgerror.InvalidTextRepresentation
	if t.IsTime() || t.Kind == KindInterval {
		// PostgreSQL's date/time input functions report a bad format as
		// invalid_datetime_format, not invalid_text_representation.
		code = pgerror.InvalidDatetimeFormat
	}
	// PostgreSQL names the type without its modifier (numeric, not
	// numeric(10,2)).
	return pgerror.New(code, "invalid input syntax for type %s: \"%s\"", T{Kind: t.Kind, Elem: t.Elem}.String(), s)
}

func outOfRange(t T, s string) error {
	return pgerror.New(pgerror.NumericValueOutOfRange, "value \"%s\" is out of range for type %s", s, t.String())
}

// ParseText converts the text form of a value (as a client or a string
// literal gives it) to a datum of type t, with PostgreSQL's errors.
func ParseText(s string, t T, env *Env) (Datum, error) {
	switch t.Kind {
	case KindBool:
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "t", "true", "y", "yes", "on", "1", "tr", "tru", "ye":
			return NewBool(true), nil
		case "f", "false", "n", "no", "off", "0", "fa", "fal", "fals", "of":
			return NewBool(false), nil
		}
		return Datum{}, invalidInput(t, s)
	case KindInt2, KindInt4, KindInt8, KindOid:
		v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return Datum{}, outOfRange(t, s)
			}
			return Datum{}, invalidInput(t, s)
		}
		if !IntFits(t.Kind, v) {
			return Datum{}, outOfRange(t, s)
		}
		return NewInt(t.Kind, v), nil
	case KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole:
		return parseOidAlias(s, t, env)
	case KindFloat4, KindFloat8:
		str := strings.TrimSpace(s)
		var f float64
		switch strings.ToLower(str) {
		case "nan":
			f = math.NaN()
		case "infinity", "inf", "+infinity", "+inf":
			f = math.Inf(1)
		case "-infinity", "-inf":
			f = math.Inf(-1)
		default:
			bits := 64
			if t.Kind == KindFloat4 {
				bits = 32
			}
			v, err := strconv.ParseFloat(str, bits)
			if err != nil {
				if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
					return Datum{}, pgerror.New(pgerror.NumericValueOutOfRange, "\"%s\" is out of range for type %s", s, t.String())
				}
				return Datum{}, invalidInput(t, s)
			}
			f = v
		}
		return NewFloat(t.Kind, f), nil
	case KindNumeric:
		str := strings.TrimSpace(s)
		d, _, err := apd.NewFromString(str)
		if err != nil || strings.ContainsAny(str, "xX_") {
			return Datum{}, invalidInput(t, s)
		}
		if d.Form == apd.Infinite && !strings.Contains(strings.ToLower(str), "inf") {
			return Datum{}, invalidInput(t, s)
		}
		return ApplyNumericTypmod(NewNumeric(d), t)
	case KindJSON, KindJSONB:
		if !utf8.ValidString(s) {
			return Datum{}, pgerror.New(pgerror.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
		}
		v, err := ParseJSON(s)
		if err != nil {
			return Datum{}, err
		}
		if t.Kind == KindJSONB {
			return NewString(KindJSONB, NormalizeJSONB(v)), nil
		}
		return NewString(KindJSON, s), nil
	case KindText, KindUnknown:
		if !utf8.ValidString(s) {
			return Datum{}, pgerror.New(pgerror.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
		}
		return NewString(t.Kind, s), nil
	case KindVarchar, KindChar, KindName, KindInternalChar:
		if !utf8.ValidString(s) {
			return Datum{}, pgerror.New(pgerror.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
		}
		return ApplyStringTypmod(NewString(t.Kind, s), t, false)
	case KindBytea:
		return parseBytea(s)
	case KindDate:
		return parseDate(s, t)
	case KindTimestamp, KindTimestampTZ:
		return parseTimestamp(s, t, env)
	case KindInterval:
		return ParseInterval(s)
	case KindArray:
		return parseArray(s, t, env)
	case KindInt2Vector, KindOidVector:
		return parseVector(s, t)
	case KindEnum:
		if t.Enum != nil {
			return t.Enum.parse(s)
		}
	}
	return Datum{}, pgerror.New(pgerror.FeatureNotSupported, "cannot parse values of type %s", t.String())
}

// IntFits reports whether v is in range for the integer kind k.
func IntFits(k Kind, v int64) bool {
	switch k {
	case KindInt2:
		return v >= math.MinInt16 && v <= math.MaxInt16
	case KindInt4:
		return v >= math.MinInt32 && v <= math.MaxInt32
	case KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole:
		return v >= math.MinInt32 && v <= math.MaxUint32
	}
	return true
}

// ApplyStringTypmod enforces VARCHAR(n)/CHAR(n): too long is 22001 unless
// explicit (a cast truncates, as PostgreSQL does); CHAR pads with spaces.
func ApplyStringTypmod(d Datum, t T, explicit bool) (Datum, error) {
	if d.K == KindNull {
		return d, nil
	}
	d.K = t.Kind
	if t.Width > 0 {
		n := utf8.RuneCountInString(d.S)
		if n > int(t.Width) {
			trimmed := d.S
			// Trailing spaces beyond the limit are silently dropped.
			cut := 0
			for i := range trimmed {
				if cut == int(t.Width) {
					trimmed = trimmed[:i]
					break
				}
				cut++
			}
			if !explicit && strings.TrimRight(d.S[len(trimmed):], " ") != "" {
				name := "character varying"
				if t.Kind == KindChar {
					name = "character"
				}
				return Datum{}, pgerror.New(pgerror.StringDataRightTruncation, "value too long for type %s(%d)", name, t.Width)
			}
			d.S = trimmed
		} else if t.Kind == KindChar && n < int(t.Width) {
			d.S += strings.Repeat(" ", int(t.Width)-n)
		}
	}
	return d, nil
}

var numericCtx = apd.Context{Precision: 1000, MaxExponent: apd.MaxExponent, MinExponent: apd.MinExponent, Rounding: apd.RoundHalfUp, Traps: apd.DefaultTraps}

// ApplyNumericTypmod rounds a NUMERIC to the scale of t and checks its
// precision (22003 "numeric field overflow").
func ApplyNumericTypmod(d Datum, t T) (Datum, error) {
	if d.K == KindNull || t.Precision == 0 || d.D.Form != apd.Finite {
		return d, nil
	}
	r := d.D
	if r.Exponent != -t.Scale || (r.Negative && r.IsZero()) {
		// Else it is at the scale already (COPY's binary numerics are):
		// no copy, and NewNumeric below changes nothing of it.
		r = new(apd.Decimal)
		if _, err := numericCtx.Quantize(r, d.D, -t.Scale); err != nil {
			return Datum{}, pgerror.New(pgerror.NumericValueOutOfRange, "numeric field overflow")
		}
	}
	// digits before the decimal point must fit p - s
	intDigits := int32(r.NumDigits()) + r.Exponent
	if !r.IsZero() && intDigits > t.Precision-t.Scale {
		return Datum{}, pgerror.New(pgerror.NumericValueOutOfRange, "numeric field overflow").
			WithDetail("A field with precision %d, scale %d must round to an absolute value less than 10^%d.", t.Precision, t.Scale, t.Precision-t.Scale)
	}
	return NewNumeric(r), nil
}

func parseBytea(s string) (Datum, error) {
	if strings.HasPrefix(s, `\x`) {
		h := strings.Map(func(r rune) rune {
			if r == ' ' || r == '\n' || r == '\t' || r == '\r' {
				return -1
			}
			return r
		}, s[2:])
		b, err := hex.DecodeString(h)
		if err != nil {
			return Datum{}, pgerror.New(pgerror.InvalidTextRepresentation, "invalid hexadecimal data")
		}
		return NewBytea(b), nil
	}
	// escape format
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 < len(s) && s[i+1] == '\\' {
			out = append(out, '\\')
			i++
			continue
		}
		if i+3 < len(s) {
			v, err := strconv.ParseUint(s[i+1:i+4], 8, 8)
			if err == nil {
				out = append(out, byte(v))
				i += 3
				continue
			}
		}
		return Datum{}, pgerror.New(pgerror.InvalidTextRepresentation, "invalid input syntax for type bytea")
	}
	return NewBytea(out), nil
}

func parseDate(s string, t T) (Datum, error) {
	str := strings.TrimSpace(s)
	switch strings.ToLower(str) {
	case "epoch":
		return NewDate(0), nil
	case "infinity", "-infinity":
		return Datum{}, pgerror.New(pgerror.FeatureNotSupported, "infinite dates are not supported")
	}
	bc := false
	if u := strings.ToUpper(str); strings.HasSuffix(u, " BC") {
		bc = true
		str = strings.TrimSpace(str[:len(str)-3])
	}
	// Accept a timestamp text too: the date part is kept.
	if i := strings.IndexAny(str, " T"); i > 0 {
		str = str[:i]
	}
	y, m, d, ok := splitYMD(str)
	if !ok {
		return Datum{}, invalidInput(t, s)
	}
	if bc {
		y = -y + 1
	}
	if m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s)
	}
	days := daysFromCivil(y, m, d)
	if !DateInRange(days) {
		return Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "date out of range: \"%s\"", s)
	}
	return NewDate(days), nil
}

func splitYMD(s string) (int, int, int, bool) {
	sep := "-"
	if strings.Contains(s, "/") {
		sep = "/"
	}
	parts := strings.Split(s, sep)
	if len(parts) != 3 {
		if len(s) == 8 && sep == "-" { // YYYYMMDD
			parts = []string{s[:4], s[4:6], s[6:]}
		} else {
			return 0, 0, 0, false
		}
	}
	a, e1 := strconv.Atoi(parts[0])
	b, e2 := strconv.Atoi(parts[1])
	c, e3 := strconv.Atoi(parts[2])
	if e1 != nil || e2 != nil || e3 != nil {
		return 0, 0, 0, false
	}
	if len(parts[0]) <= 2 && len(parts[2]) == 4 { // MM-DD-YYYY (DateStyle MDY)
		return c, a, b, true
	}
	return a, b, c, true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if (y%4 == 0 && y%100 != 0) || y%400 == 0 {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// parseTimestamp accepts ISO 8601 forms: date, date time, with optional
// fraction and zone (Z, ±HH, ±HH:MM, ±HHMM, or a zone name).
func parseTimestamp(s string, t T, env *Env) (Datum, error) {
	str := strings.TrimSpace(s)
	switch strings.ToLower(str) {
	case "epoch":
		return NewTimestamp(t.Kind, 0), nil
	case "now":
		return NewTimestamp(t.Kind, time.Now().UnixMicro()), nil
	case "infinity", "-infinity":
		return Datum{}, pgerror.New(pgerror.FeatureNotSupported, "infinite timestamps are not supported")
	}
	bc := false
	if u := strings.ToUpper(str); strings.HasSuffix(u, " BC") {
		bc = true
		str = strings.TrimSpace(str[:len(str)-3])
	}
	datePart, rest := str, ""
	if i := strings.IndexAny(str, " T"); i > 0 {
		datePart, rest = str[:i], strings.TrimSpace(str[i+1:])
	}
	y, mo, d, ok := splitYMD(datePart)
	if !ok {
		return Datum{}, invalidInput(t, s)
	}
	if bc {
		y = -y + 1
	}
	if mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) {
		return Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s)
	}
	var hh, mi, ss, us int64
	zone := ""
	if rest != "" {
		// split the clock from a zone
		clock := rest
		if i := strings.IndexAny(rest, "+-Zz "); i >= 0 {
			clock, zone = rest[:i], strings.TrimSpace(rest[i:])
		}
		parts := strings.Split(clock, ":")
		if len(parts) < 2 || len(parts) > 3 {
			return Datum{}, invalidInput(t, s)
		}
		var err error
		if hh, err = strconv.ParseInt(parts[0], 10, 64); err != nil {
			return Datum{}, invalidInput(t, s)
		}
		if mi, err = strconv.ParseInt(parts[1], 10, 64); err != nil {
			return Datum{}, invalidInput(t, s)
		}
		if len(parts) == 3 {
			sec := parts[2]
			frac := ""
			if i := strings.IndexByte(sec, '.'); i >= 0 {
				sec, frac = sec[:i], sec[i+1:]
			}
			if ss, err = strconv.ParseInt(sec, 10, 64); err != nil {
				return Datum{}, invalidInput(t, s)
			}
			if frac != "" {
				for len(frac) < 7 {
					frac += "0"
				}
				f, err := strconv.ParseInt(frac[:7], 10, 64)
				if err != nil {
					return Datum{}, invalidInput(t, s)
				}
				us = (f + 5) / 10 // round to microseconds
			}
		}
		if hh > 24 || mi > 59 || ss > 60 || (hh == 24 && (mi > 0 || ss > 0 || us > 0)) {
			return Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", s)
		}
	}
	micros, ok := civilMicros(daysFromCivil(y, mo, d), hh*3600e6+mi*60e6+ss*1e6+us)
	if !ok {
		return Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	if t.Kind == KindTimestamp {
		return NewTimestamp(KindTimestamp, micros), nil
	}
	// timestamptz: interpret in the given zone or the session zone.
	if zone == "" {
		loc := env.loc()
		wall := time.UnixMicro(micros).UTC()
		lt := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), loc)
		return NewTimestamp(KindTimestampTZ, lt.UnixMicro()), nil
	}
	off, ok := parseZoneOffset(zone)
	if !ok {
		loc, err := time.LoadLocation(zone)
		if err != nil {
			return Datum{}, invalidInput(t, s)
		}
		wall := time.UnixMicro(micros).UTC()
		lt := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), loc)
		return NewTimestamp(KindTimestampTZ, lt.UnixMicro()), nil
	}
	utc, err := addMicros(micros, -int64(off)*1e6)
	if err != nil {
		return Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", s)
	}
	return NewTimestamp(KindTimestampTZ, utc), nil
}

// parseZoneOffset parses Z, ±HH, ±HH:MM, ±HHMM into seconds east of UTC.
func parseZoneOffset(z string) (int, bool) {
	if z == "Z" || z == "z" || strings.EqualFold(z, "UTC") {
		return 0, true
	}
	if len(z) < 2 || (z[0] != '+' && z[0] != '-') {
		return 0, false
	}
	sign := 1
	if z[0] == '-' {
		sign = -1
	}
	body := strings.ReplaceAll(z[1:], ":", "")
	var h, m, sec int
	var err error
	switch len(body) {
	case 1, 2:
		h, err = strconv.Atoi(body)
	case 4:
		h, err = strconv.Atoi(body[:2])
		if err == nil {
			m, err = strconv.Atoi(body[2:])
		}
	case 6:
		h, err = strconv.Atoi(body[:2])
		if err == nil {
			m, err = strconv.Atoi(body[2:4])
		}
		if err == nil {
			sec, err = strconv.Atoi(body[4:])
		}
	default:
		return 0, false
	}
	if err != nil {
		return 0, false
	}
	return sign * (h*3600 + m*60 + sec), true
}

// ParseInterval parses PostgreSQL interval input: "1 hour", "2 days 03:00:00",
// "-1 year 2 mons", "01:02:03", "1h" is not accepted, "P1DT2H" (ISO 8601).
func ParseInterval(s string) (Datum, error) {
	str := strings.TrimSpace(strings.ToLower(s))
	bad := func() (Datum, error) {
		return Datum{}, pgerror.New(pgerror.InvalidDatetimeFormat, "invalid input syntax for type interval: \"%s\"", s)
	}
	if str == "" {
		return bad()
	}
	if strings.HasPrefix(str, "p") {
		return parseISOInterval(str, s)
	}
	ago := false
	if strings.HasSuffix(str, " ago") {
		ago = true
		str = strings.TrimSpace(strings.TrimSuffix(str, " ago"))
	}
	str = strings.TrimPrefix(str, "@")
	fields := strings.Fields(str)
	var months, days int64
	var micros float64
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.Contains(f, ":") {
			neg := strings.HasPrefix(f, "-")
			f = strings.TrimLeft(f, "+-")
			parts := strings.Split(f, ":")
			if len(parts) < 2 || len(parts) > 3 {
				return bad()
			}
			h, e1 := strconv.ParseFloat(parts[0], 64)
			m, e2 := strconv.ParseFloat(parts[1], 64)
			sec := 0.0
			var e3 error
			if len(parts) == 3 {
				sec, e3 = strconv.ParseFloat(parts[2], 64)
			}
			if e1 != nil || e2 != nil || e3 != nil {
				return bad()
			}
			v := h*3600e6 + m*60e6 + sec*1e6
			if neg {
				v = -v
			}
			micros += v
			continue
		}
		num, err := strconv.ParseFloat(f, 64)
		unit := ""
		if err != nil {
			// number glued to unit: "1day"
			j := 0
			for j < len(f) && (f[j] == '-' || f[j] == '+' || f[j] == '.' || (f[j] >= '0' && f[j] <= '9')) {
				j++
			}
			if j == 0 {
				return bad()
			}
			num, err = strconv.ParseFloat(f[:j], 64)
			if err != nil {
				return bad()
			}
			unit = f[j:]
		} else {
			if i+1 >= len(fields) {
				// a bare number is seconds
				micros += num * 1e6
				continue
			}
			i++
			unit = fields[i]
		}
		switch strings.TrimSuffix(unit, ",") {
		case "microsecond", "microseconds", "us", "usec", "usecs":
			micros += num
		case "millisecond", "milliseconds", "ms", "msec", "msecs":
			micros += num * 1e3
		case "second", "seconds", "s", "sec", "secs":
			micros += num * 1e6
		case "minute", "minutes", "m", "min", "mins":
			micros += num * 60e6
		case "hour", "hours", "h", "hr", "hrs":
			micros += num * 3600e6
		case "day", "days", "d":
			whole := math.Trunc(num)
			days += int64(whole)
			micros += (num - whole) * 86400e6
		case "week", "weeks", "w":
			d := num * 7
			whole := math.Trunc(d)
			days += int64(whole)
			micros += (d - whole) * 86400e6
		case "month", "months", "mon", "mons":
			whole := math.Trunc(num)
			months += int64(whole)
			d := (num - whole) * 30
			days += int64(math.Trunc(d))
		case "year", "years", "y", "yr", "yrs":
			months += int64(math.Round(num * 12))
		case "decade", "decades":
			months += int64(math.Round(num * 120))
		case "century", "centuries":
			months += int64(math.Round(num * 1200))
		default:
			return bad()
		}
	}
	if ago {
		months, days, micros = -months, -days, -micros
	}
	if months > math.MaxInt32 || months < math.MinInt32 || days > math.MaxInt32 || days < math.MinInt32 {
		return Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "interval field value out of range: \"%s\"", s)
	}
	return NewInterval(int32(months), int32(days), int64(math.Round(micros))), nil
}

func parseISOInterval(str, orig string) (Datum, error) {
	bad := func() (Datum, error) {
		return Datum{}, pgerror.New(pgerror.InvalidDatetimeFormat, "invalid input syntax for type interval: \"%s\"", orig)
	}
	var months, days int64
	var micros float64
	inTime := false
	num := ""
	for _, c := range str[1:] {
		switch {
		case c == 't':
			inTime = true
		case (c >= '0' && c <= '9') || c == '.' || c == '-':
			num += string(c)
		default:
			v, err := strconv.ParseFloat(num, 64)
			if err != nil {
				return bad()
			}
			num = ""
			switch {
			case c == 'y' && !inTime:
				months += int64(v * 12)
			case c == 'm' && !inTime:
				months += int64(v)
			case c == 'w' && !inTime:
				days += int64(v * 7)
			case c == 'd' && !inTime:
				days += int64(v)
			case c == 'h' && inTime:
				micros += v * 3600e6
			case c == 'm' && inTime:
				micros += v * 60e6
			case c == 's' && inTime:
				micros += v * 1e6
			default:
				return bad()
			}
		}
	}
	if num != "" {
		return bad()
	}
	return NewInterval(int32(months), int32(days), int64(micros)), nil
}
