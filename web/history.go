package web

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mvserver/mvserver/refresh"
)

// The run-history chart: one bar per refresh run of the last 48 hours at
// the time it started, its height the run's duration, its colour its
// status, with a tooltip of technique, rows and error.

const (
	historyWindow = 48 * time.Hour
	chartW        = 1200
	chartH        = 150
	chartLeft     = 46
	chartTop      = 8
	chartBottom   = 22
	barW          = 5
)

type historyBar struct {
	RunID       string
	Status      string
	StatusClass string
	X, Y, W, H  int
	Tip         string
}

type historyTick struct {
	X     int
	Label string
}

type historyChart struct {
	Bars       []historyBar
	Ticks      []historyTick
	YTicks     []historyTick // X is the y coordinate
	Width      int
	Height     int
	PlotLeft   int
	PlotRight  int
	PlotBottom int
	Runs       int
	From, To   time.Time
}

// statusClass is the CSS class of a run status.
func statusClass(status string) string {
	switch status {
	case "COMPLETED":
		return "ok"
	case "FAILED", "TIMED_OUT":
		return "bad"
	case "CANCELED", "SKIPPED":
		return "warn"
	case "RUNNING":
		return "run"
	}
	return "none"
}

// buildHistory lays out runs (any order) over [now-48h, now].
func buildHistory(runs []refresh.Run, now time.Time) *historyChart {
	from := now.Add(-historyWindow)
	c := &historyChart{Width: chartW, Height: chartH + chartTop + chartBottom, PlotLeft: chartLeft, PlotRight: chartW - 8,
		PlotBottom: chartTop + chartH, From: from, To: now}
	plotW := c.PlotRight - c.PlotLeft - barW
	var longest time.Duration
	for _, r := range runs {
		longest = max(longest, runDuration(r))
	}
	if longest <= 0 {
		longest = time.Millisecond
	}
	in := make([]refresh.Run, 0, len(runs))
	for _, r := range runs {
		if !r.Start.Before(from) && !r.Start.After(now) {
			in = append(in, r)
		}
	}
	// Newest first: the newest bar stands at its time, and a bar that would
	// overlap the next newer one moves left of it, so that every run of a
	// burst stays visible (the tooltip has its exact time).
	sort.SliceStable(in, func(i, j int) bool { return in[i].Start.After(in[j].Start) })
	next := c.PlotRight + barW + 1
	for _, r := range in {
		d := runDuration(r)
		h := int(float64(chartH) * float64(d) / float64(longest))
		h = max(h, 3)
		x := c.PlotLeft + int(float64(plotW)*float64(r.Start.Sub(from))/float64(historyWindow))
		x = min(x, next-barW-1)
		if x < c.PlotLeft {
			break // the rest would not fit; the table lists them
		}
		next = x
		c.Bars = append(c.Bars, historyBar{RunID: r.RunID, Status: r.Status, StatusClass: statusClass(r.Status),
			X: x, Y: c.PlotBottom - h, W: barW, H: h, Tip: runTip(r)})
	}
	c.Runs = len(in)
	// A tick every 6 hours, on the hour (UTC).
	t := from.UTC().Truncate(6 * time.Hour).Add(6 * time.Hour)
	for ; !t.After(now); t = t.Add(6 * time.Hour) {
		x := c.PlotLeft + int(float64(plotW)*float64(t.Sub(from))/float64(historyWindow))
		label := t.Format("15:04")
		if t.Hour() == 0 {
			label = t.Format("Jan 2")
		}
		c.Ticks = append(c.Ticks, historyTick{X: x, Label: label})
	}
	c.YTicks = []historyTick{{X: c.PlotBottom, Label: "0"}, {X: chartTop + 4, Label: shortDuration(longest)}}
	return c
}

func runDuration(r refresh.Run) time.Duration {
	if r.End.IsZero() || r.End.Before(r.Start) {
		return 0
	}
	return r.End.Sub(r.Start)
}

// runTip is a run's tooltip text.
func runTip(r refresh.Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s UTC · %s · %s", r.Start.UTC().Format("2006-01-02 15:04:05"), r.Status, shortDuration(runDuration(r)))
	if r.Technique != "" {
		fmt.Fprintf(&b, "\ntechnique %s", r.Technique)
	}
	if r.Cause != "" {
		fmt.Fprintf(&b, " · cause %s", r.Cause)
	}
	fmt.Fprintf(&b, "\nrows read %d, written %d", r.RowsRead, r.RowsWritten)
	if r.Error != "" {
		fmt.Fprintf(&b, "\nerror: %s", shorten(r.Error, 300))
	}
	return b.String()
}

// shortDuration prints d to about three significant digits.
func shortDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	case d < time.Minute:
		return fmt.Sprintf("%.3gs", d.Seconds())
	}
	return d.Round(time.Second).String()
}
