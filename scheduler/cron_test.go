package scheduler

import (
	"fmt"
	"testing"
	"time"
)

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// occurrences returns the first n occurrences of c after from.
func occurrences(c *Cron, from time.Time, n int) []time.Time {
	var out []time.Time
	for t := from; len(out) < n; {
		t = c.Next(t)
		if t.IsZero() {
			break
		}
		out = append(out, t)
	}
	return out
}

func checkInstants(t *testing.T, what string, c *Cron, from time.Time, want []string) {
	t.Helper()
	got := occurrences(c, from, len(want)+1)
	for i, w := range want {
		if i >= len(got) {
			t.Errorf("%s: only %d occurrences, want %s next", what, len(got), w)
			return
		}
		if !got[i].Equal(utc(w)) {
			t.Errorf("%s: occurrence %d is %s (%s), want %s", what, i, got[i].UTC().Format(time.RFC3339), got[i].In(c.loc).Format("15:04 MST"), w)
		}
	}
}

func mustCron(t *testing.T, expr, zone string) *Cron {
	t.Helper()
	c, err := ParseCron(expr, zone)
	if err != nil {
		t.Fatalf("%s %s: %v", expr, zone, err)
	}
	return c
}

// TestCronEvery15MinutesUTC: '0 */15 * * * ?' in UTC.
func TestCronEvery15MinutesUTC(t *testing.T) {
	c := mustCron(t, "0 */15 * * * ?", "")
	checkInstants(t, "UTC", c, utc("2026-03-08T01:40:00Z"), []string{
		"2026-03-08T01:45:00Z", "2026-03-08T02:00:00Z", "2026-03-08T02:15:00Z",
		"2026-03-08T02:30:00Z", "2026-03-08T02:45:00Z", "2026-03-08T03:00:00Z",
	})
	// From an occurrence: strictly after it.
	checkInstants(t, "UTC from an occurrence", c, utc("2026-03-08T02:00:00Z"), []string{"2026-03-08T02:15:00Z"})
	// From inside a second.
	checkInstants(t, "UTC sub-second", c, utc("2026-03-08T01:59:59Z").Add(999*time.Millisecond), []string{"2026-03-08T02:00:00Z"})
}

// TestCronLosAngelesSpringForward: on Sunday 8 March 2026 the clocks in
// America/Los_Angeles go from 01:59:59 PST (UTC-8) to 03:00:00 PDT (UTC-7)
// at 10:00Z. The matches 02:00–02:45 do not exist; they run when the clocks
// jump, together with 03:00 itself: a run every 15 minutes of real time.
func TestCronLosAngelesSpringForward(t *testing.T) {
	c := mustCron(t, "0 */15 * * * ?", "America/Los_Angeles")
	checkInstants(t, "*/15 March", c, utc("2026-03-08T09:10:00Z"), []string{
		"2026-03-08T09:15:00Z", // 01:15 PST
		"2026-03-08T09:30:00Z", // 01:30 PST
		"2026-03-08T09:45:00Z", // 01:45 PST
		"2026-03-08T10:00:00Z", // 03:00 PDT (02:00, 02:15, 02:30, 02:45 skipped by the clocks)
		"2026-03-08T10:15:00Z", // 03:15 PDT
		"2026-03-08T10:30:00Z", // 03:30 PDT
	})
	// A daily 02:30 is not lost on the day 02:30 does not exist.
	daily := mustCron(t, "0 30 2 * * ?", "America/Los_Angeles")
	checkInstants(t, "02:30 daily", daily, utc("2026-03-06T12:00:00Z"), []string{
		"2026-03-07T10:30:00Z", // Sat 02:30 PST
		"2026-03-08T10:00:00Z", // Sun 03:00 PDT: the jump
		"2026-03-09T09:30:00Z", // Mon 02:30 PDT
	})
	// Hourly: 01:00 PST, then 03:00 PDT (02:00 does not exist), 04:00 PDT.
	hourly := mustCron(t, "0 0 * * * ?", "America/Los_Angeles")
	checkInstants(t, "hourly", hourly, utc("2026-03-08T08:30:00Z"), []string{
		"2026-03-08T09:00:00Z", "2026-03-08T10:00:00Z", "2026-03-08T11:00:00Z",
	})
	// A time outside the gap is untouched.
	checkInstants(t, "04:10 daily", mustCron(t, "0 10 4 * * ?", "America/Los_Angeles"), utc("2026-03-07T00:00:00Z"), []string{
		"2026-03-07T12:10:00Z", // 04:10 PST
		"2026-03-08T11:10:00Z", // 04:10 PDT
	})
}

// TestCronLosAngelesFallBack: on Sunday 1 November 2026 the clocks go from
// 01:59:59 PDT (UTC-7) back to 01:00:00 PST (UTC-8) at 09:00Z, so 01:00–01:59
// happens twice; matches in it run both times.
func TestCronLosAngelesFallBack(t *testing.T) {
	c := mustCron(t, "0 */15 * * * ?", "America/Los_Angeles")
	checkInstants(t, "*/15 November", c, utc("2026-11-01T07:50:00Z"), []string{
		"2026-11-01T08:00:00Z", // 01:00 PDT
		"2026-11-01T08:15:00Z", // 01:15 PDT
		"2026-11-01T08:30:00Z", // 01:30 PDT
		"2026-11-01T08:45:00Z", // 01:45 PDT
		"2026-11-01T09:00:00Z", // 01:00 PST
		"2026-11-01T09:15:00Z", // 01:15 PST
		"2026-11-01T09:30:00Z", // 01:30 PST
		"2026-11-01T09:45:00Z", // 01:45 PST
		"2026-11-01T10:00:00Z", // 02:00 PST
	})
	daily := mustCron(t, "0 30 1 * * ?", "America/Los_Angeles")
	checkInstants(t, "01:30 daily", daily, utc("2026-10-31T00:00:00Z"), []string{
		"2026-10-31T08:30:00Z", // Sat 01:30 PDT
		"2026-11-01T08:30:00Z", // Sun 01:30 PDT
		"2026-11-01T09:30:00Z", // Sun 01:30 PST
		"2026-11-02T09:30:00Z", // Mon 01:30 PST
	})
	// From inside the repeated hour (01:40 PST): the next is 01:45 PST.
	checkInstants(t, "inside the repeat", c, utc("2026-11-01T09:40:00Z"), []string{"2026-11-01T09:45:00Z"})
}

// TestCronZones compares Next with a brute-force reading of the rules, a
// minute at a time, over two days around every 2026 offset change of zones
// with odd changes: half-hour DST (Lord Howe), DST at midnight (Santiago,
// Havana), +2h DST (Troll), :45 offsets (Chatham, Kathmandu), none
// (Kolkata), and the usual (Los Angeles, Berlin, Sydney).
func TestCronZones(t *testing.T) {
	zones := []string{"America/Los_Angeles", "Europe/Berlin", "Australia/Sydney", "Australia/Lord_Howe",
		"America/Santiago", "America/Havana", "Antarctica/Troll", "Pacific/Chatham", "Asia/Kathmandu", "Asia/Kolkata"}
	exprs := []string{"0 */15 * * * ?", "0 30 2 * * ?", "0 0 0 * * ?", "0 0 * * * ?", "0 45 1 ? * SUN", "0 */7 0-3 * * ?"}
	for _, zone := range zones {
		loc, err := LoadZone(zone)
		if err != nil {
			t.Fatal(err)
		}
		windows := [][2]time.Time{{utc("2026-07-14T00:00:00Z"), utc("2026-07-15T00:00:00Z")}}
		for _, tr := range transitions(loc, utc("2026-01-01T00:00:00Z"), utc("2027-01-01T00:00:00Z")) {
			windows = append(windows, [2]time.Time{tr.Add(-26 * time.Hour), tr.Add(26 * time.Hour)})
		}
		for _, expr := range exprs {
			c := mustCron(t, expr, zone)
			for _, w := range windows {
				want := bruteForce(c, w[0], w[1])
				var got []time.Time
				for at := c.Next(w[0].Add(-time.Nanosecond)); !at.IsZero() && at.Before(w[1]); at = c.Next(at) {
					got = append(got, at)
				}
				if d := diffTimes(got, want, loc); d != "" {
					t.Errorf("%s in %s, %s…%s:\n%s", expr, zone, w[0].Format(time.RFC3339), w[1].Format(time.RFC3339), d)
				}
			}
		}
	}
}

// transitions returns the instants in [from, to) where loc's offset
// changes.
func transitions(loc *time.Location, from, to time.Time) []time.Time {
	var out []time.Time
	for t := from; t.Before(to); {
		_, end := t.In(loc).ZoneBounds()
		if end.IsZero() || !end.Before(to) {
			break
		}
		_, a := end.Add(-time.Nanosecond).In(loc).Zone()
		_, b := end.In(loc).Zone()
		if a != b {
			out = append(out, end)
		}
		t = end
	}
	return out
}

// bruteForce lists the occurrences in [from, to) by the rules read
// literally: a minute whose wall reading matches, and the end of a gap
// holding a matching wall minute (expressions with seconds = 0 only).
func bruteForce(c *Cron, from, to time.Time) []time.Time {
	matches := func(wall time.Time) bool { return c.wallNext(wall.Add(-time.Nanosecond)).Equal(wall) }
	var out []time.Time
	for at := from.Truncate(time.Minute); at.Before(to); at = at.Add(time.Minute) {
		if at.Before(from) {
			continue
		}
		lt := at.In(c.loc)
		_, off := lt.Zone()
		hit := matches(lt.UTC().Add(time.Duration(off) * time.Second))
		_, prevOff := at.Add(-time.Nanosecond).In(c.loc).Zone()
		if !hit && off > prevOff {
			// at ends a gap: wall times [at+prevOff, at+off) were skipped.
			for w := at.Add(time.Duration(prevOff) * time.Second); w.Before(at.Add(time.Duration(off) * time.Second)); w = w.Add(time.Minute) {
				if matches(w.UTC()) {
					hit = true
					break
				}
			}
		}
		if hit {
			out = append(out, at)
		}
	}
	return out
}

func diffTimes(got, want []time.Time, loc *time.Location) string {
	f := func(ts []time.Time) map[int64]bool {
		m := map[int64]bool{}
		for _, t := range ts {
			m[t.Unix()] = true
		}
		return m
	}
	g, w := f(got), f(want)
	s := ""
	for _, t := range got {
		if !w[t.Unix()] {
			s += fmt.Sprintf("  extra   %s (%s)\n", t.UTC().Format(time.RFC3339), t.In(loc).Format("2006-01-02 15:04 MST"))
		}
	}
	for _, t := range want {
		if !g[t.Unix()] {
			s += fmt.Sprintf("  missing %s (%s)\n", t.UTC().Format(time.RFC3339), t.In(loc).Format("2006-01-02 15:04 MST"))
		}
	}
	for i := 1; i < len(got); i++ {
		if !got[i].After(got[i-1]) {
			s += fmt.Sprintf("  not increasing at %s\n", got[i].UTC().Format(time.RFC3339))
		}
	}
	return s
}

// TestCronYear: the optional year field is a filter on the zone's year.
func TestCronYear(t *testing.T) {
	c := mustCron(t, "0 0 12 * * ? 2027", "")
	checkInstants(t, "2027 only", c, utc("2026-06-01T00:00:00Z"), []string{"2027-01-01T12:00:00Z", "2027-01-02T12:00:00Z"})
	if n := c.Next(utc("2027-12-31T12:00:00Z")); !n.IsZero() {
		t.Errorf("after 2027: %s, want none", n)
	}
	if n := c.Next(utc("2030-01-01T00:00:00Z")); !n.IsZero() {
		t.Errorf("from 2030: %s, want none", n)
	}
	// 29 February in listed years: 2100 is not a leap year; robfig's
	// five-year horizon is crossed by jumping to the next listed year.
	leap := mustCron(t, "0 0 12 29 2 ? 2028,2100,2104", "")
	checkInstants(t, "leap days", leap, utc("2026-01-01T00:00:00Z"), []string{"2028-02-29T12:00:00Z", "2104-02-29T12:00:00Z"})
	if n := leap.Next(utc("2104-02-29T12:00:00Z")); !n.IsZero() {
		t.Errorf("after 2104: %s, want none", n)
	}
	checkInstants(t, "far year", mustCron(t, "0 0 0 1 1 ? 2150", ""), utc("2026-01-01T00:00:00Z"), []string{"2150-01-01T00:00:00Z"})
	checkInstants(t, "year step", mustCron(t, "0 0 0 1 1 ? 2026-2032/3", ""), utc("2025-01-01T00:00:00Z"),
		[]string{"2026-01-01T00:00:00Z", "2029-01-01T00:00:00Z", "2032-01-01T00:00:00Z"})
	// The year is the zone's: New Year in Tokyo is 15:00Z the day before.
	checkInstants(t, "Tokyo", mustCron(t, "0 0 0 1 1 ? 2027", "Asia/Tokyo"), utc("2026-01-01T00:00:00Z"), []string{"2026-12-31T15:00:00Z"})
	// Never: 30 February.
	if n := mustCron(t, "0 0 12 30 2 ?", "").Next(utc("2026-01-01T00:00:00Z")); !n.IsZero() {
		t.Errorf("30 February: %s", n)
	}
	if n := mustCron(t, "0 0 12 30 2 ? 2030", "").Next(utc("2026-01-01T00:00:00Z")); !n.IsZero() {
		t.Errorf("30 February 2030: %s", n)
	}
}
