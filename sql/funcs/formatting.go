package funcs

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// to_char, to_date and to_timestamp over date/time values with
// PostgreSQL's template patterns (formatting.c): YYYY MM DD HH24 MI SS MS
// US FF1-6 Mon Month Dy Day AM/PM TZ OF J Q WW IW … with the FM, TM and
// FX modifiers and the TH suffix; "quoted text" and other characters are
// copied (to_char) or skipped (to_date, to_timestamp).

// dchKey is one template pattern.
type dchKey struct {
	name  string
	id    int
	digit bool // reads a number (to_date/to_timestamp)
}

const (
	dADdots = iota + 1
	dAMdots
	dAD
	dAM
	dBCdots
	dBC
	dCC
	dDAY
	dDDD
	dDD
	dDY
	dDay
	dDy
	dD
	dFF1
	dFF2
	dFF3
	dFF4
	dFF5
	dFF6
	dFX
	dHH24
	dHH12
	dHH
	dIDDD
	dID
	dIW
	dIYYY
	dIYY
	dIY
	dI
	dJ
	dMI
	dMM
	dMONTH
	dMON
	dMS
	dMonth
	dMon
	dOF
	dPMdots
	dPM
	dQ
	dRM
	dSSSS
	dSS
	dTZH
	dTZM
	dTZ
	dUS
	dWW
	dW
	dYcommaYYY
	dYYYY
	dYYY
	dYY
	dY
	dadDots
	damDots
	dad
	dam
	dbcDots
	dbc
	dday
	ddy
	dmonth
	dmon
	dpmDots
	dpm
	drm
	dtz
)

// dchKeys in PostgreSQL's lookup order: at each position the first
// pattern that matches wins (longer ones are listed first).
var dchKeys = []dchKey{
	{"A.D.", dADdots, false}, {"A.M.", dAMdots, false}, {"AD", dAD, false}, {"AM", dAM, false},
	{"B.C.", dBCdots, false}, {"BC", dBC, false},
	{"CC", dCC, true},
	{"DAY", dDAY, false}, {"DDD", dDDD, true}, {"DD", dDD, true}, {"DY", dDY, false}, {"Day", dDay, false}, {"Dy", dDy, false}, {"D", dD, true},
	{"FF1", dFF1, false}, {"FF2", dFF2, false}, {"FF3", dFF3, false}, {"FF4", dFF4, false}, {"FF5", dFF5, false}, {"FF6", dFF6, false}, {"FX", dFX, false},
	{"HH24", dHH24, true}, {"HH12", dHH12, true}, {"HH", dHH, true},
	{"IDDD", dIDDD, true}, {"ID", dID, true}, {"IW", dIW, true}, {"IYYY", dIYYY, true}, {"IYY", dIYY, true}, {"IY", dIY, true}, {"I", dI, true},
	{"J", dJ, true},
	{"MI", dMI, true}, {"MM", dMM, true}, {"MONTH", dMONTH, false}, {"MON", dMON, false}, {"MS", dMS, true}, {"Month", dMonth, false}, {"Mon", dMon, false},
	{"OF", dOF, false},
	{"P.M.", dPMdots, false}, {"PM", dPM, false},
	{"Q", dQ, true},
	{"RM", dRM, false},
	{"SSSSS", dSSSS, true}, {"SSSS", dSSSS, true}, {"SS", dSS, true},
	{"TZH", dTZH, false}, {"TZM", dTZM, true}, {"TZ", dTZ, false},
	{"US", dUS, true},
	{"WW", dWW, true}, {"W", dW, true},
	{"Y,YYY", dYcommaYYY, true}, {"YYYY", dYYYY, true}, {"YYY", dYYY, true}, {"YY", dYY, true}, {"Y", dY, true},
	{"a.d.", dadDots, false}, {"a.m.", damDots, false}, {"ad", dad, false}, {"am", dam, false},
	{"b.c.", dbcDots, false}, {"bc", dbc, false},
	{"cc", dCC, true},
	{"day", dday, false}, {"ddd", dDDD, true}, {"dd", dDD, true}, {"dy", ddy, false}, {"d", dD, true},
	{"ff1", dFF1, false}, {"ff2", dFF2, false}, {"ff3", dFF3, false}, {"ff4", dFF4, false}, {"ff5", dFF5, false}, {"ff6", dFF6, false}, {"fx", dFX, false},
	{"hh24", dHH24, true}, {"hh12", dHH12, true}, {"hh", dHH, true},
	{"iddd", dIDDD, true}, {"id", dID, true}, {"iw", dIW, true}, {"iyyy", dIYYY, true}, {"iyy", dIYY, true}, {"iy", dIY, true}, {"i", dI, true},
	{"j", dJ, true},
	{"mi", dMI, true}, {"mm", dMM, true}, {"month", dmonth, false}, {"mon", dmon, false}, {"ms", dMS, true},
	{"of", dOF, false},
	{"p.m.", dpmDots, false}, {"pm", dpm, false},
	{"q", dQ, true},
	{"rm", drm, false},
	{"sssss", dSSSS, true}, {"ssss", dSSSS, true}, {"ss", dSS, true},
	{"tzh", dTZH, false}, {"tzm", dTZM, true}, {"tz", dtz, false},
	{"us", dUS, true},
	{"ww", dWW, true}, {"w", dW, true},
	{"y,yyy", dYcommaYYY, true}, {"yyyy", dYYYY, true}, {"yyy", dYYY, true}, {"yy", dYY, true}, {"y", dY, true},
}

// Node kinds of a parsed template.
const (
	nAction    = iota
	nChar      // literal text
	nSeparator // a non-letter, non-digit character
	nSpace
)

type dchNode struct {
	kind int
	key  *dchKey
	text string
	fm   bool // FM prefix: no padding
	th   int  // 1: TH, 2: th suffix
}

// parseDCH splits a template into patterns and literal text.
func parseDCH(f string) []dchNode {
	var out []dchNode
	for i := 0; i < len(f); {
		fm := false
		// prefixes
		for {
			if strings.HasPrefix(f[i:], "FM") || strings.HasPrefix(f[i:], "fm") {
				fm = true
				i += 2
				continue
			}
			if strings.HasPrefix(f[i:], "TM") || strings.HasPrefix(f[i:], "tm") {
				i += 2
				continue
			}
			break
		}
		if i >= len(f) {
			break
		}
		var key *dchKey
		for k := range dchKeys {
			if strings.HasPrefix(f[i:], dchKeys[k].name) {
				key = &dchKeys[k]
				break
			}
		}
		if key != nil {
			n := dchNode{kind: nAction, key: key, fm: fm}
			i += len(key.name)
			switch {
			case strings.HasPrefix(f[i:], "TH"):
				n.th = 1
				i += 2
			case strings.HasPrefix(f[i:], "th"):
				n.th = 2
				i += 2
			case strings.HasPrefix(f[i:], "SP") || strings.HasPrefix(f[i:], "sp"):
				i += 2
			}
			out = append(out, n)
			continue
		}
		c := f[i]
		switch {
		case c == '"':
			// quoted literal text; \" inside is a quote
			i++
			var b strings.Builder
			for i < len(f) && f[i] != '"' {
				if f[i] == '\\' && i+1 < len(f) {
					i++
				}
				b.WriteByte(f[i])
				i++
			}
			i++
			for _, r := range b.String() {
				out = append(out, dchNode{kind: nChar, text: string(r)})
			}
		case c == '\\' && i+1 < len(f) && f[i+1] == '"':
			out = append(out, dchNode{kind: nChar, text: `"`})
			i += 2
		default:
			_, size := decodeRune(f[i:])
			s := f[i : i+size]
			kind := nChar
			switch {
			case c == ' ' || c == '\t' || c == '\n':
				kind = nSpace
			case isSeparatorChar(c):
				kind = nSeparator
			}
			out = append(out, dchNode{kind: kind, text: s})
			i += size
		}
	}
	return out
}

func decodeRune(s string) (rune, int) {
	for i, r := range s {
		if i > 0 {
			return r, i
		}
		_ = r
	}
	r := []rune(s)
	if len(r) == 0 {
		return 0, 0
	}
	return r[0], len(s)
}

func isSeparatorChar(c byte) bool {
	return c > 0x20 && c < 0x7f && !(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z') && !(c >= '0' && c <= '9')
}

var (
	monthsFull = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	daysFull   = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	// monthsAbbr and daysAbbr are their three-letter forms (Mon, Dy).
	monthsAbbr = abbreviate(monthsFull)
	daysAbbr   = abbreviate(daysFull)
	romanMon   = []string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"}
)

// ordinal is PostgreSQL's str_numth suffix of a number's text.
func ordinal(s string, upper bool) string {
	suf := "th"
	if n := len(s); n > 0 {
		last := s[n-1]
		teen := n > 1 && s[n-2] == '1'
		switch {
		case teen:
		case last == '1':
			suf = "st"
		case last == '2':
			suf = "nd"
		case last == '3':
			suf = "rd"
		}
	}
	if upper {
		suf = strings.ToUpper(suf)
	}
	return s + suf
}

// tmFields is a broken-down time for to_char.
type tmFields struct {
	year, mon, mday, hour, min, sec int // year is astronomical
	usec                            int
	wday, yday                      int
	gmtoff                          int
	zone                            string // "" for a timestamp without time zone
	interval                        bool
	julian                          int64
	isoYear, isoWeek, isoYday       int
}

func tmOf(t time.Time, tz bool) tmFields {
	f := tmFields{year: t.Year(), mon: int(t.Month()), mday: t.Day(), hour: t.Hour(), min: t.Minute(), sec: t.Second(),
		usec: t.Nanosecond() / 1000, wday: int(t.Weekday()), yday: t.YearDay()}
	f.calendar()
	if tz {
		f.zone, f.gmtoff = t.Zone()
	}
	return f
}

// calendar fills the Julian day and ISO fields from year, mon and mday
// with PostgreSQL's date2j arithmetic, which also takes an interval's
// out-of-range months and days.
func (f *tmFields) calendar() {
	f.julian = int64(date2j(f.year, f.mon, f.mday))
	f.isoYear = date2isoyear(f.year, f.mon, f.mday)
	f.isoWeek = date2isoweek(f.year, f.mon, f.mday)
	f.isoYday = date2j(f.year, f.mon, f.mday) - isoweek2j(f.isoYear, 1) + 1
}

// date2j is PostgreSQL's Julian day of a (proleptic Gregorian,
// astronomical) date.
func date2j(y, m, d int) int {
	if m > 2 {
		m++
		y += 4800
	} else {
		m += 13
		y += 4799
	}
	century := y / 100
	julian := y*365 - 32167
	julian += y/4 - century + century/4
	julian += 7834*m/256 + d
	return julian
}

func j2day(j int) int {
	d := (j + 1) % 7
	if d < 0 {
		d += 7
	}
	return d
}

func date2isoweek(year, mon, mday int) int {
	dayn := date2j(year, mon, mday)
	day4 := date2j(year, 1, 4)
	day0 := j2day(day4 - 1)
	if dayn < day4-day0 {
		day4 = date2j(year-1, 1, 4)
		day0 = j2day(day4 - 1)
	}
	result := (dayn-(day4-day0))/7 + 1
	if result >= 52 {
		day4 = date2j(year+1, 1, 4)
		day0 = j2day(day4 - 1)
		if dayn >= day4-day0 {
			result = (dayn-(day4-day0))/7 + 1
		}
	}
	return result
}

func date2isoyear(year, mon, mday int) int {
	dayn := date2j(year, mon, mday)
	day4 := date2j(year, 1, 4)
	day0 := j2day(day4 - 1)
	if dayn < day4-day0 {
		day4 = date2j(year-1, 1, 4)
		day0 = j2day(day4 - 1)
		year--
	}
	result := (dayn-(day4-day0))/7 + 1
	if result >= 52 {
		day4 = date2j(year+1, 1, 4)
		day0 = j2day(day4 - 1)
		if dayn >= day4-day0 {
			year++
		}
	}
	return year
}

func isoweek2j(year, week int) int {
	day4 := date2j(year, 1, 4)
	day0 := j2day(day4 - 1)
	return (week-1)*7 + (day4 - day0)
}

// invalidForInterval: the patterns an interval has no value for.
func invalidForInterval(id int) bool {
	switch id {
	case dADdots, dAD, dBCdots, dBC, dadDots, dad, dbcDots, dbc, dMONTH, dMonth, dmonth, dMON, dMon, dmon,
		dDAY, dDay, dday, dDY, dDy, ddy, dD, dID, dtz, dTZ, dOF, dTZH, dTZM:
		return true
	}
	return false
}

// adjustYear: a BC year prints as positive (1 BC is year 0).
func adjustYear(y int, interval bool) int {
	if !interval && y <= 0 {
		return -(y - 1)
	}
	return y
}

func padInt(v, width int, fm bool) string {
	if fm {
		width = 0
	}
	neg := v < 0
	s := strconv.Itoa(iabs(v))
	if neg {
		width--
	}
	for len(s) < width {
		s = "0" + s
	}
	if neg {
		s = "-" + s
	}
	return s
}

func iabs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func padName(s string, fm bool) string {
	if fm {
		return s
	}
	for len(s) < 9 {
		s += " "
	}
	return s
}

// dchToChar formats tm by a template.
func dchToChar(nodes []dchNode, tm tmFields) (string, error) {
	var b strings.Builder
	for _, n := range nodes {
		if n.kind != nAction {
			b.WriteString(n.text)
			continue
		}
		if tm.interval && invalidForInterval(n.key.id) {
			return "", errFormat("invalid format specification for an interval value").
				WithHint("Intervals are not tied to specific calendar dates.")
		}
		num := func(s string) {
			if n.th > 0 {
				s = ordinal(s, n.th == 1)
			}
			b.WriteString(s)
		}
		w2 := func(v int) int {
			if v >= 0 {
				return 2
			}
			return 3
		}
		year := adjustYear(tm.year, tm.interval)
		isoYear := adjustYear(tm.isoYear, tm.interval)
		switch n.key.id {
		case dAM, dPM:
			b.WriteString(map[bool]string{true: "PM", false: "AM"}[tm.hour%24 >= 12])
		case dam, dpm:
			b.WriteString(map[bool]string{true: "pm", false: "am"}[tm.hour%24 >= 12])
		case dAMdots, dPMdots:
			b.WriteString(map[bool]string{true: "P.M.", false: "A.M."}[tm.hour%24 >= 12])
		case damDots, dpmDots:
			b.WriteString(map[bool]string{true: "p.m.", false: "a.m."}[tm.hour%24 >= 12])
		case dHH, dHH12:
			h := tm.hour % 12
			if h == 0 {
				h = 12
			}
			num(padInt(h, w2(tm.hour), n.fm))
		case dHH24:
			num(padInt(tm.hour, w2(tm.hour), n.fm))
		case dMI:
			num(padInt(tm.min, w2(tm.min), n.fm))
		case dSS:
			num(padInt(tm.sec, w2(tm.sec), n.fm))
		case dFF1:
			num(padInt(tm.usec/100000, 1, false))
		case dFF2:
			num(padInt(tm.usec/10000, 2, false))
		case dFF3, dMS:
			num(padInt(tm.usec/1000, 3, false))
		case dFF4:
			num(padInt(tm.usec/100, 4, false))
		case dFF5:
			num(padInt(tm.usec/10, 5, false))
		case dFF6, dUS:
			num(padInt(tm.usec, 6, false))
		case dSSSS:
			num(strconv.Itoa(tm.hour*3600 + tm.min*60 + tm.sec))
		case dtz:
			b.WriteString(strings.ToLower(tm.zone))
		case dTZ:
			b.WriteString(strings.ToUpper(tm.zone))
		case dTZH:
			sign := byte('+')
			if tm.gmtoff < 0 {
				sign = '-'
			}
			b.WriteByte(sign)
			b.WriteString(padInt(iabs(tm.gmtoff)/3600, 2, false))
		case dTZM:
			num(padInt((iabs(tm.gmtoff)%3600)/60, 2, false))
		case dOF:
			sign := byte('+')
			if tm.gmtoff < 0 {
				sign = '-'
			}
			b.WriteByte(sign)
			b.WriteString(padInt(iabs(tm.gmtoff)/3600, 2, n.fm))
			if m := iabs(tm.gmtoff) % 3600; m != 0 {
				b.WriteString(":" + padInt(m/60, 2, false))
			}
		case dADdots, dBCdots:
			b.WriteString(map[bool]string{true: "B.C.", false: "A.D."}[tm.year <= 0])
		case dadDots, dbcDots:
			b.WriteString(map[bool]string{true: "b.c.", false: "a.d."}[tm.year <= 0])
		case dAD, dBC:
			b.WriteString(map[bool]string{true: "BC", false: "AD"}[tm.year <= 0])
		case dad, dbc:
			b.WriteString(map[bool]string{true: "bc", false: "ad"}[tm.year <= 0])
		case dMONTH, dMonth, dmonth:
			if tm.mon == 0 {
				break
			}
			s := monthsFull[tm.mon-1]
			if n.key.id == dMONTH {
				s = strings.ToUpper(s)
			} else if n.key.id == dmonth {
				s = strings.ToLower(s)
			}
			b.WriteString(padName(s, n.fm))
		case dMON, dMon, dmon:
			if tm.mon == 0 {
				break
			}
			s := monthsFull[tm.mon-1][:3]
			if n.key.id == dMON {
				s = strings.ToUpper(s)
			} else if n.key.id == dmon {
				s = strings.ToLower(s)
			}
			b.WriteString(s)
		case dMM:
			num(padInt(tm.mon, w2(tm.mon), n.fm))
		case dDAY, dDay, dday:
			s := daysFull[tm.wday]
			if n.key.id == dDAY {
				s = strings.ToUpper(s)
			} else if n.key.id == dday {
				s = strings.ToLower(s)
			}
			b.WriteString(padName(s, n.fm))
		case dDY, dDy, ddy:
			s := daysFull[tm.wday][:3]
			if n.key.id == dDY {
				s = strings.ToUpper(s)
			} else if n.key.id == ddy {
				s = strings.ToLower(s)
			}
			b.WriteString(s)
		case dDDD:
			num(padInt(tm.yday, 3, n.fm))
		case dIDDD:
			num(padInt(tm.isoYday, 3, n.fm))
		case dDD:
			num(padInt(tm.mday, 2, n.fm))
		case dD:
			num(strconv.Itoa(tm.wday + 1))
		case dID:
			d := tm.wday
			if d == 0 {
				d = 7
			}
			num(strconv.Itoa(d))
		case dWW:
			num(padInt((tm.yday-1)/7+1, 2, n.fm))
		case dIW:
			num(padInt(tm.isoWeek, 2, n.fm))
		case dQ:
			if tm.mon == 0 {
				break
			}
			num(strconv.Itoa((tm.mon-1)/3 + 1))
		case dCC:
			var c int
			switch {
			case tm.interval:
				c = tm.year / 100
			case tm.year > 0:
				c = (tm.year-1)/100 + 1
			default:
				c = tm.year/100 - 1
			}
			if c <= 99 && c >= -99 {
				num(padInt(c, w2(c), n.fm))
			} else {
				num(strconv.Itoa(c))
			}
		case dYcommaYYY:
			i := year / 1000
			num(strconv.Itoa(i) + "," + padInt(year-i*1000, 3, false))
		case dYYYY, dIYYY:
			y := year
			if n.key.id == dIYYY {
				y = isoYear
			}
			w := 4
			if year < 0 {
				w = 5
			}
			num(padInt(y, w, n.fm))
		case dYYY, dIYY:
			y := year
			if n.key.id == dIYY {
				y = isoYear
			}
			w := 3
			if year < 0 {
				w = 4
			}
			num(padInt(y%1000, w, n.fm))
		case dYY, dIY:
			y := year
			if n.key.id == dIY {
				y = isoYear
			}
			w := 2
			if year < 0 {
				w = 3
			}
			num(padInt(y%100, w, n.fm))
		case dY, dI:
			y := year
			if n.key.id == dI {
				y = isoYear
			}
			num(strconv.Itoa(y % 10))
		case dRM, drm:
			if tm.mon == 0 && !(tm.interval && tm.year != 0) {
				break
			}
			// an interval's months may be 0 (whole years) or negative
			// (-1 is December)
			var s string
			switch {
			case tm.mon == 0 && tm.year >= 0:
				s = romanMon[11]
			case tm.mon == 0:
				s = romanMon[0]
			case tm.mon < 0:
				s = romanMon[12+tm.mon]
			default:
				s = romanMon[tm.mon-1]
			}
			if n.key.id == drm {
				s = strings.ToLower(s)
			}
			if !n.fm {
				for len(s) < 4 {
					s += " "
				}
			}
			b.WriteString(s)
		case dW:
			num(strconv.Itoa((tm.mday-1)/7 + 1))
		case dJ:
			num(strconv.FormatInt(tm.julian, 10))
		}
	}
	return b.String(), nil
}

// fromChar is what to_date/to_timestamp read from the input.
type fromChar struct {
	year, yysz, cc, bc, mm, dd, ddd, d, ww, w, j int
	hh, mi, ss, ssss, ms, us                     int
	pm, clock12                                  bool
	isoMode                                      bool
	tzSign, tzh, tzm                             int
	set                                          map[int]int // pattern field → value, for conflicts
}

func errFormat(format string, args ...any) *pgerror.Error {
	return pgerror.New(pgerror.InvalidDatetimeFormat, format, args...)
}

// setInt sets a field once; a second, different value is an error.
func (fc *fromChar) setInt(dst *int, v int, key *dchKey) error {
	if *dst != 0 && *dst != v {
		return errFormat("conflicting values for \"%s\" field in formatting string", key.name).
			WithDetail("This value contradicts a previous setting for the same field type.")
	}
	*dst = v
	return nil
}

// isNextSeparator: the pattern after n reads no digits, so a number of n
// may take as many digits as there are.
func isNextSeparator(nodes []dchNode, i int) bool {
	n := nodes[i]
	if n.kind == nAction && n.th > 0 {
		return true
	}
	if i+1 >= len(nodes) {
		return true
	}
	next := nodes[i+1]
	if next.kind == nAction {
		return !next.key.digit
	}
	if len(next.text) == 1 && next.text[0] >= '0' && next.text[0] <= '9' {
		return false
	}
	return true
}

// parseIntField reads a number of up to width characters (any number of
// digits in FM mode or before a non-digit); it returns the number of
// characters used.
func parseIntField(s *string, width int, nodes []dchNode, i int, dst *int, fc *fromChar) (int, error) {
	n := nodes[i]
	str := strings.TrimLeft(*s, " \t\n\r\f\v")
	skipped := len(*s) - len(str)
	copyLen := min(width, len(str))
	copied := str[:copyLen]
	var v int64
	used := 0
	if n.fm || isNextSeparator(nodes, i) {
		j := 0
		if j < len(str) && (str[j] == '+' || str[j] == '-') {
			j++
		}
		for j < len(str) && str[j] >= '0' && str[j] <= '9' {
			j++
		}
		digits := str[:j]
		if j == 0 || digits == "+" || digits == "-" {
			return 0, errFormat("invalid value \"%s\" for \"%s\"", copied, n.key.name).WithDetail("Value must be an integer.")
		}
		var err error
		v, err = strconv.ParseInt(digits, 10, 64)
		if err != nil || v > 2147483647 || v < -2147483648 {
			return 0, pgerror.New(pgerror.DatetimeFieldOverflow, "value for \"%s\" in source string is out of range", n.key.name).
				WithDetail("Value must be in the range %d to %d.", -2147483648, 2147483647)
		}
		used = j
	} else {
		if len(str) < width {
			return 0, errFormat("source string too short for \"%s\" formatting field", n.key.name).
				WithDetail("Field requires %d characters, but only %d remain.", width, len(str)).
				WithHint("If your source string is not fixed-width, try using the \"FM\" modifier.")
		}
		j := 0
		for j < len(copied) && (copied[j] == ' ' || copied[j] == '\t') {
			j++
		}
		if j < len(copied) && (copied[j] == '+' || copied[j] == '-') {
			j++
		}
		for j < len(copied) && copied[j] >= '0' && copied[j] <= '9' {
			j++
		}
		num := strings.TrimSpace(copied[:j])
		if num == "" || num == "+" || num == "-" {
			return 0, errFormat("invalid value \"%s\" for \"%s\"", copied, n.key.name).WithDetail("Value must be an integer.")
		}
		if j < width {
			return 0, errFormat("invalid value \"%s\" for \"%s\"", copied, n.key.name).
				WithDetail("Field requires %d characters, but only %d could be parsed.", width, j).
				WithHint("If your source string is not fixed-width, try using the \"FM\" modifier.")
		}
		v, _ = strconv.ParseInt(num, 10, 64)
		used = j
	}
	*s = str[used:]
	if dst != nil {
		if err := fc.setInt(dst, int(v), n.key); err != nil {
			return 0, err
		}
	}
	return used + skipped, nil
}

// seqSearch matches one of words (case-insensitively) at the start of s.
func seqSearch(s *string, words []string, key *dchKey) (int, error) {
	best, bestLen := -1, 0
	for i, w := range words {
		if len(*s) >= len(w) && strings.EqualFold((*s)[:len(w)], w) && len(w) > bestLen {
			best, bestLen = i, len(w)
		}
	}
	if best < 0 {
		word := *s
		if i := strings.IndexAny(word, " \t\n\r\f\v"); i >= 0 {
			word = word[:i]
		}
		return 0, errFormat("invalid value \"%s\" for \"%s\"", word, key.name).
			WithDetail("The given value did not match any of the allowed values for this field.")
	}
	*s = (*s)[bestLen:]
	return best, nil
}

func adjustPartialYear(y int) int {
	switch {
	case y < 70:
		return y + 2000
	case y < 100:
		return y + 1900
	case y < 520:
		return y + 2000
	case y < 1000:
		return y + 1000
	}
	return y
}

func skipTH(s *string, n dchNode) {
	if n.th > 0 && len(*s) >= 2 {
		*s = (*s)[2:]
	}
}

// dchFromChar reads input by template nodes.
func dchFromChar(nodes []dchNode, in string) (*fromChar, error) {
	fc := &fromChar{}
	s := in
	fx := false
	extraSkip := 0
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v' }
	for i := 0; i < len(nodes) && s != ""; i++ {
		n := nodes[i]
		if !fx && !(n.kind == nAction && n.key.id == dFX) && (n.kind == nAction || i == 0) {
			for s != "" && isSpace(s[0]) {
				s = s[1:]
				extraSkip++
			}
		}
		if n.kind == nSpace || n.kind == nSeparator {
			if !fx {
				extraSkip--
				if s != "" && (isSpace(s[0]) || isSeparatorChar(s[0])) {
					s = s[1:]
					extraSkip++
				}
			} else {
				_, size := decodeRune(s)
				s = s[size:]
			}
			continue
		}
		if n.kind != nAction {
			if !fx && extraSkip > 0 {
				extraSkip--
			} else {
				_, size := decodeRune(s)
				s = s[size:]
			}
			continue
		}
		if n.key.digit || n.key.id >= dFF1 && n.key.id <= dFF6 {
			switch n.key.id {
			case dDDD, dDD, dD, dMM, dWW, dW, dYcommaYYY, dYYYY, dYYY, dYY, dY:
				// Gregorian fields
			case dIDDD, dID, dIW, dIYYY, dIYY, dIY, dI:
				fc.isoMode = true
			}
		}
		var err error
		width := len(n.key.name)
		switch n.key.id {
		case dFX:
			fx = true
		case dHH, dHH12:
			_, err = parseIntField(&s, 2, nodes, i, &fc.hh, fc)
			fc.clock12 = true
			skipTH(&s, n)
		case dHH24:
			_, err = parseIntField(&s, 2, nodes, i, &fc.hh, fc)
			skipTH(&s, n)
		case dMI:
			_, err = parseIntField(&s, 2, nodes, i, &fc.mi, fc)
			skipTH(&s, n)
		case dSS:
			_, err = parseIntField(&s, 2, nodes, i, &fc.ss, fc)
			skipTH(&s, n)
		case dMS:
			var l int
			l, err = parseIntField(&s, 3, nodes, i, &fc.ms, fc)
			switch l {
			case 1:
				fc.ms *= 100
			case 2:
				fc.ms *= 10
			}
			skipTH(&s, n)
		case dFF1, dFF2, dFF3, dFF4, dFF5, dFF6, dUS:
			w := 6
			if n.key.id != dUS {
				w = n.key.id - dFF1 + 1
			}
			var l int
			l, err = parseIntField(&s, w, nodes, i, &fc.us, fc)
			for ; l < 6 && l > 0; l++ {
				fc.us *= 10
			}
			skipTH(&s, n)
		case dSSSS:
			_, err = parseIntField(&s, width, nodes, i, &fc.ssss, fc)
			skipTH(&s, n)
		case dtz, dTZ, dOF:
			err = pgerror.New(pgerror.FeatureNotSupported, "formatting field \"%s\" is only supported in to_char", n.key.name)
		case dTZH:
			if s != "" && (s[0] == '+' || s[0] == '-' || s[0] == ' ') {
				fc.tzSign = 1
				if s[0] == '-' {
					fc.tzSign = -1
				}
				s = s[1:]
			} else if extraSkip > 0 && len(in)-len(s) > 0 && in[len(in)-len(s)-1] == '-' {
				fc.tzSign = -1
			} else {
				fc.tzSign = 1
			}
			_, err = parseIntField(&s, 2, nodes, i, &fc.tzh, fc)
		case dTZM:
			if fc.tzSign == 0 {
				fc.tzSign = 1
			}
			_, err = parseIntField(&s, 2, nodes, i, &fc.tzm, fc)
		case dADdots, dBCdots, dadDots, dbcDots:
			var v int
			if v, err = seqSearch(&s, []string{"a.d.", "b.c."}, n.key); err == nil {
				err = fc.setInt(&fc.bc, v, n.key)
			}
		case dAD, dBC, dad, dbc:
			var v int
			if v, err = seqSearch(&s, []string{"ad", "bc"}, n.key); err == nil {
				err = fc.setInt(&fc.bc, v, n.key)
			}
		case dAM, dPM, dam, dpm:
			var v int
			if v, err = seqSearch(&s, []string{"am", "pm"}, n.key); err == nil {
				fc.pm, fc.clock12 = v == 1, true
			}
		case dAMdots, dPMdots, damDots, dpmDots:
			var v int
			if v, err = seqSearch(&s, []string{"a.m.", "p.m."}, n.key); err == nil {
				fc.pm, fc.clock12 = v == 1, true
			}
		case dMONTH, dMonth, dmonth:
			var v int
			if v, err = seqSearch(&s, monthsFull, n.key); err == nil {
				err = fc.setInt(&fc.mm, v+1, n.key)
			}
		case dMON, dMon, dmon:
			var v int
			if v, err = seqSearch(&s, monthsAbbr, n.key); err == nil {
				err = fc.setInt(&fc.mm, v+1, n.key)
			}
		case dMM:
			_, err = parseIntField(&s, 2, nodes, i, &fc.mm, fc)
			skipTH(&s, n)
		case dDAY, dDay, dday:
			var v int
			if v, err = seqSearch(&s, daysFull, n.key); err == nil {
				err = fc.setInt(&fc.d, v+1, n.key)
			}
		case dDY, dDy, ddy:
			var v int
			if v, err = seqSearch(&s, daysAbbr, n.key); err == nil {
				err = fc.setInt(&fc.d, v+1, n.key)
			}
		case dDDD:
			_, err = parseIntField(&s, 3, nodes, i, &fc.ddd, fc)
			skipTH(&s, n)
		case dIDDD:
			_, err = parseIntField(&s, 3, nodes, i, &fc.ddd, fc)
			skipTH(&s, n)
		case dDD:
			_, err = parseIntField(&s, 2, nodes, i, &fc.dd, fc)
			skipTH(&s, n)
		case dD:
			_, err = parseIntField(&s, 1, nodes, i, &fc.d, fc)
			skipTH(&s, n)
		case dID:
			_, err = parseIntField(&s, 1, nodes, i, &fc.d, fc)
			if fc.d++; fc.d > 7 {
				fc.d = 1
			}
			skipTH(&s, n)
		case dWW, dIW:
			_, err = parseIntField(&s, 2, nodes, i, &fc.ww, fc)
			skipTH(&s, n)
		case dQ:
			_, err = parseIntField(&s, 1, nodes, i, nil, fc)
			skipTH(&s, n)
		case dCC:
			_, err = parseIntField(&s, 2, nodes, i, &fc.cc, fc)
			skipTH(&s, n)
		case dYcommaYYY:
			j := 0
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			if j == 0 || j >= len(s) || s[j] != ',' || j+4 > len(s) {
				err = errFormat("invalid input string for \"Y,YYY\"")
				break
			}
			mil, _ := strconv.Atoi(s[:j])
			k := j + 1
			for k < len(s) && k < j+4 && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			yrs, e2 := strconv.Atoi(s[j+1 : k])
			if e2 != nil {
				err = errFormat("invalid input string for \"Y,YYY\"")
				break
			}
			if err = fc.setInt(&fc.year, mil*1000+yrs, n.key); err == nil {
				fc.yysz = 4
				s = s[k:]
				skipTH(&s, n)
			}
		case dYYYY, dIYYY:
			_, err = parseIntField(&s, 4, nodes, i, &fc.year, fc)
			fc.yysz = 4
			skipTH(&s, n)
		case dYYY, dIYY, dYY, dIY, dY, dI:
			w := map[int]int{dYYY: 3, dIYY: 3, dYY: 2, dIY: 2, dY: 1, dI: 1}[n.key.id]
			var l int
			l, err = parseIntField(&s, w, nodes, i, &fc.year, fc)
			if err == nil && l < 4 {
				fc.year = adjustPartialYear(fc.year)
			}
			fc.yysz = w
			skipTH(&s, n)
		case dRM, drm:
			upper := []string{"XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I"}
			var v int
			if v, err = seqSearch(&s, upper, n.key); err == nil {
				err = fc.setInt(&fc.mm, 12-v, n.key)
			}
		case dW:
			_, err = parseIntField(&s, 1, nodes, i, &fc.w, fc)
			skipTH(&s, n)
		case dJ:
			_, err = parseIntField(&s, 1, nodes, i, &fc.j, fc)
			skipTH(&s, n)
		}
		if err != nil {
			return nil, err
		}
		if !fx {
			extraSkip = 0
			for s != "" && isSpace(s[0]) {
				s = s[1:]
				extraSkip++
			}
		}
	}
	return fc, nil
}

// tmResult is the broken-down time to_date/to_timestamp build.
type tmResult struct {
	year, mon, mday, hour, min, sec, usec int
	hasTZ                                 bool
	gmtoff                                int
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// toTM turns what was read into a date and time (do_to_timestamp).
func toTM(fc *fromChar, input, typ string) (tmResult, error) {
	tm := tmResult{mday: 1, mon: 1}
	overflow := func() error {
		return pgerror.New(pgerror.DatetimeFieldOverflow, "date/time field value out of range: \"%s\"", input)
	}
	if fc.ssss != 0 {
		x := fc.ssss
		tm.hour = x / 3600
		x %= 3600
		tm.min = x / 60
		tm.sec = x % 60
	}
	if fc.ss != 0 {
		tm.sec = fc.ss
	}
	if fc.mi != 0 {
		tm.min = fc.mi
	}
	if fc.hh != 0 {
		tm.hour = fc.hh
	}
	if fc.clock12 {
		if tm.hour < 1 || tm.hour > 12 {
			return tm, errFormat("hour \"%d\" is invalid for the 12-hour clock", tm.hour).
				WithHint("Use the 24-hour clock, or give an hour between 1 and 12.")
		}
		if fc.pm && tm.hour < 12 {
			tm.hour += 12
		} else if !fc.pm && tm.hour == 12 {
			tm.hour = 0
		}
	}
	dateSet := false
	if fc.year != 0 {
		if fc.cc != 0 && fc.yysz <= 2 {
			if fc.bc != 0 {
				fc.cc = -fc.cc
			}
			tm.year = fc.year % 100
			if tm.year != 0 {
				if fc.cc >= 0 {
					tm.year += (fc.cc - 1) * 100
				} else {
					tm.year = (fc.cc+1)*100 - tm.year + 1
				}
			} else if fc.cc >= 0 {
				tm.year = fc.cc * 100
			} else {
				tm.year = fc.cc*100 + 1
			}
		} else {
			tm.year = fc.year
			if fc.bc != 0 {
				tm.year = -tm.year
			}
			if tm.year < 0 {
				tm.year++
			}
		}
		dateSet = true
	} else if fc.cc != 0 {
		if fc.bc != 0 {
			fc.cc = -fc.cc
		}
		if fc.cc >= 0 {
			tm.year = (fc.cc-1)*100 + 1
		} else {
			tm.year = fc.cc*100 + 1
		}
		dateSet = true
	}
	if fc.j != 0 {
		y, m, d := types.CivilFromDays(int64(fc.j) - unixEpochJD)
		tm.year, tm.mon, tm.mday = y, m, d
		dateSet = true
	}
	if fc.ww != 0 {
		if fc.isoMode {
			// the ISO week's Monday (or the given ISO day)
			day := fc.d
			if day == 0 {
				day = 2 // Monday in to_date's numbering (Sunday = 1)
			}
			isoDay := day - 1
			if isoDay == 0 {
				isoDay = 7
			}
			jan4 := time.Date(tm.year, 1, 4, 0, 0, 0, 0, time.UTC)
			wd := int(jan4.Weekday())
			if wd == 0 {
				wd = 7
			}
			t := jan4.AddDate(0, 0, (fc.ww-1)*7+isoDay-wd)
			tm.year, tm.mon, tm.mday = t.Year(), int(t.Month()), t.Day()
			dateSet = true
		} else {
			fc.ddd = (fc.ww-1)*7 + 1
		}
	}
	if fc.w != 0 {
		fc.dd = (fc.w-1)*7 + 1
	}
	if fc.dd != 0 {
		tm.mday = fc.dd
		dateSet = true
	}
	if fc.mm != 0 {
		tm.mon = fc.mm
		dateSet = true
	}
	if fc.ddd != 0 && (tm.mon <= 1 || tm.mday <= 1) {
		if tm.year == 0 && fc.bc == 0 {
			return tm, errFormat("cannot calculate day of year without year information")
		}
		if fc.isoMode {
			jan4 := time.Date(tm.year, 1, 4, 0, 0, 0, 0, time.UTC)
			wd := int(jan4.Weekday())
			if wd == 0 {
				wd = 7
			}
			t := jan4.AddDate(0, 0, fc.ddd-wd)
			tm.year, tm.mon, tm.mday = t.Year(), int(t.Month()), t.Day()
		} else {
			ysum := [2][13]int{{0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365}, {0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335, 366}}
			y := ysum[0]
			if isLeap(tm.year) {
				y = ysum[1]
			}
			i := 1
			for ; i <= 12; i++ {
				if fc.ddd <= y[i] {
					break
				}
			}
			if tm.mon <= 1 {
				tm.mon = i
			}
			if tm.mday <= 1 && i <= 12 {
				tm.mday = fc.ddd - y[i-1]
			}
		}
		dateSet = true
	}
	tm.usec = fc.ms*1000 + fc.us
	if dateSet {
		if tm.mon < 1 || tm.mon > 12 || tm.mday < 1 || tm.mday > daysInMonth(tm.year, tm.mon) {
			return tm, overflow()
		}
	}
	if tm.hour < 0 || tm.hour >= 24 || tm.min < 0 || tm.min >= 60 || tm.sec < 0 || tm.sec >= 60 || tm.usec < 0 || tm.usec >= 1000000 {
		return tm, overflow()
	}
	if fc.tzSign != 0 {
		tm.hasTZ = true
		tm.gmtoff = fc.tzSign * (fc.tzh*3600 + fc.tzm*60)
	}
	_ = typ
	return tm, nil
}

// timeTM breaks a date/time datum down for to_char.
func timeTM(c *Ctx, d types.Datum) tmFields {
	switch d.K {
	case types.KindDate:
		y, m, dd := types.CivilFromDays(d.I)
		return tmOf(time.Date(y, time.Month(m), dd, 0, 0, 0, 0, time.UTC), false)
	case types.KindInterval:
		tm := tmFields{interval: true, year: int(d.M / 12), mon: int(d.M % 12), mday: int(d.Dd)}
		t := d.I
		tm.hour = int(t / usPerHour)
		t -= int64(tm.hour) * usPerHour
		tm.min = int(t / usPerMin)
		t -= int64(tm.min) * usPerMin
		tm.sec = int(t / usPerSec)
		tm.usec = int(t - int64(tm.sec)*usPerSec)
		// the day of year approximates the span in days
		tm.yday = (tm.year*12+tm.mon)*30 + tm.mday
		tm.calendar()
		return tm
	}
	return tmOf(types.TimeOf(d, c.Env), d.K == types.KindTimestampTZ)
}

func init() {
	text := types.Text
	toChar := func(c *Ctx, a []types.Datum) (types.Datum, error) {
		if a[1].S == "" {
			return types.NullDatum, nil
		}
		s, err := dchToChar(parseDCH(a[1].S), timeTM(c, a[0]))
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewText(s), nil
	}
	toCharOvs := []*Overload{
		strict(params(types.TimestampTZ, text), text, toChar), strict(params(types.Timestamp, text), text, toChar),
		strict(params(types.Interval, text), text, toChar),
	}
	toCharOvs = append(toCharOvs, numericToCharOverloads()...)
	// to_char(timestamptz) reads the session's time zone (stable in
	// PostgreSQL): deterministic for one session setting, as now() is not.
	register(&Func{Name: "to_char", Deterministic: true, Overloads: toCharOvs})
	register(&Func{Name: "to_timestamp", Deterministic: true, Overloads: []*Overload{
		strict(params(types.Float8), types.TimestampTZ, func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			// float8_timestamptz: seconds since the Unix epoch, rounded to
			// microseconds (half to even) from PostgreSQL's 2000 epoch.
			f := a[0].F
			if math.IsNaN(f) {
				return types.Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "timestamp cannot be NaN")
			}
			if math.IsInf(f, 0) {
				return types.Datum{}, pgerror.New(pgerror.FeatureNotSupported, "infinite timestamps are not supported")
			}
			if f < 86400*(0-unixEpochJD) || f >= 86400*float64(109203528-unixEpochJD) {
				return types.Datum{}, pgerror.New(pgerror.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", cG(f))
			}
			const pgEpoch = 946684800
			us := math.RoundToEven((f - pgEpoch) * 1e6)
			return types.NewTimestamp(types.KindTimestampTZ, int64(us)+pgEpoch*usPerSec), nil
		}),
		strict(params(text, text), types.TimestampTZ, func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if sparkPattern(a[1].S) {
				return sparkToTimestamp(c, a[0].S, a[1].S, types.KindTimestampTZ)
			}
			tm, err := parseWithTemplate(a[0].S, a[1].S)
			if err != nil {
				return types.Datum{}, err
			}
			days := types.DaysFromCivil(tm.year, tm.mon, tm.mday)
			local := days*usPerDay + ((int64(tm.hour)*60+int64(tm.min))*60+int64(tm.sec))*usPerSec + int64(tm.usec)
			if tm.hasTZ {
				return types.NewTimestamp(types.KindTimestampTZ, local-int64(tm.gmtoff)*usPerSec), nil
			}
			return types.NewTimestamp(types.KindTimestampTZ, localToUTC(local, c.Env.Location())), nil
		}),
	}})
	register(&Func{Name: "to_date", Deterministic: true, Overloads: []*Overload{
		strict(params(text, text), types.Date, func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if sparkPattern(a[1].S) {
				d, err := sparkToTimestamp(c, a[0].S, a[1].S, types.KindTimestamp)
				if err != nil || d.IsNull() {
					return d, err
				}
				return types.NewDate(floorDiv64(d.I, usPerDay)), nil
			}
			tm, err := parseWithTemplate(a[0].S, a[1].S)
			if err != nil {
				return types.Datum{}, err
			}
			return types.NewDate(types.DaysFromCivil(tm.year, tm.mon, tm.mday)), nil
		}),
		// Databricks: to_date(expr) casts.
		strict(params(text), types.Date, func(c *Ctx, a []types.Datum) (types.Datum, error) {
			return types.ParseText(a[0].S, types.Date, c.Env)
		}),
	}})
}

func floorDiv64(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func parseWithTemplate(in, format string) (tmResult, error) {
	fc, err := dchFromChar(parseDCH(format), in)
	if err != nil {
		return tmResult{}, err
	}
	return toTM(fc, in, "timestamp")
}

// abbreviate returns the first three letters of each name.
func abbreviate(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = n[:3]
	}
	return out
}
