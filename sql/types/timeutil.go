package types

import "time"

func unixMicroIn(micros int64, loc *time.Location) time.Time {
	t := time.UnixMicro(micros)
	if loc == nil {
		return t.UTC()
	}
	return t.In(loc)
}

func dateIn(y, m, d int, clock time.Time, loc *time.Location) time.Time {
	if loc == nil {
		loc = time.UTC
	}
	return time.Date(y, time.Month(m), d, clock.Hour(), clock.Minute(), clock.Second(), clock.Nanosecond(), loc)
}

// TimeOf returns the time.Time of a timestamp datum, in UTC for timestamp
// and in the session zone for timestamptz.
func TimeOf(d Datum, env *Env) time.Time {
	if d.K == KindTimestampTZ {
		return time.UnixMicro(d.I).In(env.loc())
	}
	return time.UnixMicro(d.I).UTC()
}

// Location returns the session zone of env.
func (e *Env) Location() *time.Location { return e.loc() }
