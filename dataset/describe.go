package dataset

import (
	"fmt"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/refresh"
)

// How a dataset's schedule, trigger and last technique read, the same in
// DESCRIBE EXTENDED, SHOW MATERIALIZED VIEWS and the web console.

// ProcessingStatus is the "Incremental processing" column of R-O3 for a
// run's technique.
func ProcessingStatus(technique refresh.TechniqueName) string {
	switch technique {
	case refresh.NoOp:
		return "NO_CHANGES"
	case refresh.FullRecompute:
		return "FULL_RECOMPUTE"
	case "":
		return ""
	}
	return "INCREMENTAL"
}

// ScheduleText is a dataset's schedule as DESCRIBE EXTENDED shows it ("" if none).
func ScheduleText(ds *catalog.Dataset) string {
	if ds == nil || ds.Schedule == nil {
		return ""
	}
	sc := ds.Schedule
	if sc.Cron != "" {
		tz := sc.TimeZone
		if tz == "" {
			tz = "UTC"
		}
		return fmt.Sprintf("CRON '%s' AT TIME ZONE '%s'", sc.Cron, tz)
	}
	unit := sc.Unit
	if sc.Every != 1 {
		unit += "S"
	}
	return fmt.Sprintf("EVERY %d %s", sc.Every, unit)
}

// TriggerText is a dataset's trigger as DESCRIBE EXTENDED shows it ("" if none).
func TriggerText(ds *catalog.Dataset) string {
	if ds == nil || ds.Trigger == nil {
		return ""
	}
	if s := ds.Trigger.AtMostEverySeconds; s > 0 {
		switch {
		case s%3600 == 0:
			return fmt.Sprintf("ON UPDATE AT MOST EVERY INTERVAL %d HOURS", s/3600)
		case s%60 == 0:
			return fmt.Sprintf("ON UPDATE AT MOST EVERY INTERVAL %d MINUTES", s/60)
		}
		return fmt.Sprintf("ON UPDATE AT MOST EVERY INTERVAL %d SECONDS", s)
	}
	return "ON UPDATE"
}

// TimeoutText is a dataset's statement timeout as DESCRIBE EXTENDED and the
// console show it.
func TimeoutText(ds *catalog.Dataset) string {
	if ds.StatementTimeoutMs > 0 {
		return (time.Duration(ds.StatementTimeoutMs) * time.Millisecond).String()
	}
	return "2d (default)"
}
