package scheduler

import (
	"strings"
	"time"

	// Every IANA zone is compiled in, so a bare container without
	// /usr/share/zoneinfo still knows AT TIME ZONE 'America/Los_Angeles'
	// (DESIGN.md "Scheduler"). It also serves sql/parse's check at CREATE.
	_ "time/tzdata"

	"github.com/robfig/cron/v3"

	"github.com/mvserver/mvserver/pgerror"
)

// Cron is a Quartz cron expression in a time zone (R-S2), ready to give its
// occurrences.
//
// Occurrences are wall-clock readings in the zone that match the
// expression. Across a daylight-saving change the rules are chosen so a view
// is never staler than its schedule says:
//
//   - a matching wall time the clocks skip (spring forward: 02:30 in
//     America/Los_Angeles on 8 March 2026) runs at the instant the clocks
//     jump (03:00 PDT); several skipped matches make one run;
//   - a matching wall time that happens twice (fall back: 01:30 on
//     1 November 2026) runs both times, so '0 */15 * * * ?' keeps a run
//     every 15 minutes of real time through the repeated hour.
//
// robfig/cron searches matches in wall-clock time only (its schedule is
// pinned to UTC, where no clock jumps); Next maps wall-clock time to instants
// one zone period (ZoneBounds) at a time. robfig's own location handling
// would drop the skipped wall times altogether.
type Cron struct {
	expr string
	q    quartz
	wall *cron.SpecSchedule
	loc  *time.Location
}

// ParseCron checks and translates a Quartz expression and loads its zone
// ("" = UTC). Errors carry SQLSTATE 22023 (0A000 for L, W and #).
func ParseCron(expr, zone string) (*Cron, error) {
	q, err := translateQuartz(expr)
	if err != nil {
		return nil, err
	}
	loc, err := LoadZone(zone)
	if err != nil {
		return nil, err
	}
	s, err := robfigParser.Parse(q.spec)
	if err != nil {
		// translateQuartz only writes what robfig reads; this is a bug.
		return nil, pgerror.New(pgerror.InternalError, "cron expression '%s' translated to '%s': %v", expr, q.spec, err)
	}
	spec := s.(*cron.SpecSchedule)
	spec.Location = time.UTC
	return &Cron{expr: expr, q: q, wall: spec, loc: loc}, nil
}

// LoadZone returns the location of an AT TIME ZONE name; "", UTC, GMT and Z
// (any case) are UTC.
func LoadZone(name string) (*time.Location, error) {
	switch strings.ToUpper(name) {
	case "", "UTC", "GMT", "Z":
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, pgerror.New(pgerror.InvalidParameterValue, "unknown time zone \"%s\"", name)
	}
	return loc, nil
}

// String returns the expression as written.
func (c *Cron) String() string { return c.expr }

// RobfigSpec returns the six-field spec robfig/cron runs (for tests and
// EXPLAIN-like output); the year filter is not part of it.
func (c *Cron) RobfigSpec() string { return c.q.spec }

// Location returns the zone the expression is read in.
func (c *Cron) Location() *time.Location { return c.loc }

// maxZonePeriods bounds Next's walk over zone periods; robfig looks at most
// five years ahead, which no real zone fills with this many changes.
const maxZonePeriods = 1000

// Next returns the first occurrence strictly after t, or the zero time when
// there is none (a year list in the past, 30 February).
func (c *Cron) Next(t time.Time) time.Time {
	cur, inclusive := t, false
	for i := 0; i < maxZonePeriods; i++ {
		lt := cur.In(c.loc)
		_, off := lt.Zone()
		offset := time.Duration(off) * time.Second
		_, end := lt.ZoneBounds()
		w := lt.UTC().Add(offset) // the wall-clock reading, as a UTC time
		if inclusive {
			w = w.Add(-time.Nanosecond)
		}
		m := c.wallNext(w)
		if m.IsZero() {
			return time.Time{}
		}
		at := m.Add(-offset)
		if end.IsZero() || at.Before(end) {
			return at.In(t.Location())
		}
		// The match lies past this zone period. If the clocks jump forward
		// over it, it runs when they jump.
		_, nextOff := end.In(c.loc).Zone()
		if nextOff > off && m.Before(end.Add(time.Duration(nextOff)*time.Second)) {
			return end.In(t.Location())
		}
		cur, inclusive = end, true
	}
	return time.Time{}
}

// wallNext returns the first wall-clock match strictly after w (a UTC time
// standing for a wall-clock reading) that the year filter allows.
func (c *Cron) wallNext(w time.Time) time.Time {
	for i := 0; i <= maxYear-minYear+1; i++ {
		m := c.wall.Next(w)
		if m.IsZero() {
			// robfig looked five years past w and found nothing; a later
			// allowed year may still match (29 February in a leap year).
			y, ok := c.q.nextYear(w.Year() + 6)
			if !ok || c.q.years == nil {
				return time.Time{}
			}
			w = time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Nanosecond)
			continue
		}
		if c.q.yearAllowed(m.Year()) {
			return m
		}
		y, ok := c.q.nextYear(m.Year() + 1)
		if !ok {
			return time.Time{}
		}
		w = time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).Add(-time.Nanosecond)
	}
	return time.Time{}
}
