package types

import (
	"math"
	"time"

	"github.com/mvserver/mvserver/pgerror"
)

// The ranges of date and timestamp, and the checks every path that makes one
// (input, casts, arithmetic) applies, with PostgreSQL 15's errors (22008).
//
// A date is days since 1970-01-01 and runs, as in PostgreSQL, from
// 4714-11-24 BC (Julian day 0) to 5874897-12-31. A timestamp is
// microseconds since 1970-01-01 00:00 UTC and starts, as in PostgreSQL, at
// 4714-11-24 00:00:00 BC. PostgreSQL's timestamps end at
// 294276-12-31 23:59:59.999999 (it counts from 2000); an int64 counted from
// 1970 ends 30 years earlier, at 294247-01-10 04:00:54.775807, and later
// timestamps are out of range here.
const (
	// MinDate and MaxDate are the first and last valid dates.
	MinDate int64 = -2440588
	MaxDate int64 = 2145042905
	// MinTimestamp and MaxTimestamp are the first and last valid
	// timestamps (in UTC for timestamptz).
	MinTimestamp int64 = MinDate * 86400e6
	MaxTimestamp int64 = math.MaxInt64
)

var (
	errDateRange      = pgerror.New(pgerror.DatetimeFieldOverflow, "date out of range")
	errTimestampRange = pgerror.New(pgerror.DatetimeFieldOverflow, "timestamp out of range")
)

// DateInRange reports whether days is a valid date.
func DateInRange(days int64) bool { return days >= MinDate && days <= MaxDate }

// CheckDate returns days as a date, or PostgreSQL's "date out of range".
func CheckDate(days int64) (Datum, error) {
	if !DateInRange(days) {
		return Datum{}, errDateRange
	}
	return NewDate(days), nil
}

// DateAddDays is date ± integer (date_pli / date_mii): sign is 1 or -1.
func DateAddDays(days, n int64, sign int) (Datum, error) {
	if sign < 0 {
		if n == math.MinInt64 {
			return Datum{}, errDateRange
		}
		n = -n
	}
	// days and n are at most 32 bits wide: the sum cannot overflow.
	return CheckDate(days + n)
}

// DateToTimestamp is the timestamp of a date's midnight, or PostgreSQL's
// "date out of range for timestamp".
func DateToTimestamp(days int64) (int64, error) {
	if days < MinDate || days > MaxTimestamp/86400e6 {
		return 0, pgerror.New(pgerror.DatetimeFieldOverflow, "date out of range for timestamp")
	}
	return days * 86400e6, nil
}

// TimestampInRange reports whether micros is a valid timestamp.
func TimestampInRange(micros int64) bool { return micros >= MinTimestamp }

// timeMicros returns t as microseconds since the epoch, or "timestamp out
// of range" when it lies outside the timestamp range (time.Time reaches
// much further than an int64 of microseconds).
func timeMicros(t time.Time) (int64, error) {
	s := t.Unix()
	if s < MinTimestamp/1e6 || s > MaxTimestamp/1e6 {
		return 0, errTimestampRange
	}
	m := t.UnixMicro()
	if !TimestampInRange(m) || (s > 0 && m < 0) {
		return 0, errTimestampRange
	}
	return m, nil
}

// civilMicros is the timestamp of a wall-clock date and time given as
// days and microseconds into the day (which may exceed a day by a leap
// second or 24:00), false when it is out of range.
func civilMicros(days, clock int64) (int64, bool) {
	if days < MinDate || days > MaxTimestamp/86400e6 {
		return 0, false
	}
	r := days * 86400e6
	if clock > 0 && r > MaxTimestamp-clock {
		return 0, false
	}
	return r + clock, true
}

// addMicros adds us to a timestamp, or fails with "timestamp out of range".
func addMicros(micros, us int64) (int64, error) {
	r := micros + us
	if (us > 0 && r < micros) || (us < 0 && r > micros) || !TimestampInRange(r) {
		return 0, errTimestampRange
	}
	return r, nil
}
