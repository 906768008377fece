package dataset

import (
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/parse"
)

// A dataset's definition as its DDL changes it: the clauses of CREATE, and
// ALTER's schedule, trigger, policy and properties, checked against the
// dataset as it stands. Privileges, the incrementality analysis and the
// catalog write are the caller's.

// ClausesToCatalog copies the parsed policy, schedule and trigger
// into a dataset descriptor.
func ClausesToCatalog(cl *parse.DatasetClauses, ds *catalog.Dataset) {
	if cl.Policy != "" {
		ds.Policy = string(cl.Policy)
	}
	if cl.Schedule != nil {
		sc := catalog.Schedule{Every: cl.Schedule.Every, Unit: cl.Schedule.Unit, Cron: cl.Schedule.Cron, TimeZone: cl.Schedule.TimeZone}
		if sc.Cron != "" && sc.TimeZone == "" {
			sc.TimeZone = "UTC"
		}
		ds.Schedule = &sc
	}
	if cl.Trigger != nil {
		ds.Trigger = &catalog.Trigger{AtMostEverySeconds: cl.Trigger.AtMostEverySeconds}
	}
}

// KindOf checks that t is a dataset of the kind a statement names:
// MATERIALIZED VIEW statements take materialized views, STREAMING TABLE
// statements streaming tables.
func KindOf(t *catalog.Table, streaming bool, name parse.Name) error {
	want, what := catalog.KindMaterializedView, "materialized view"
	if streaming {
		want, what = catalog.KindStreamingTable, "streaming table"
	}
	if t.Kind == want {
		return nil
	}
	e := pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a %s", t.Name, what).WithPosition(name.Pos)
	switch t.Kind {
	case catalog.KindStreamingTable:
		e = e.WithHint("It is a streaming table: use … STREAMING TABLE.")
	case catalog.KindMaterializedView:
		e = e.WithHint("It is a materialized view: use … MATERIALIZED VIEW.")
	}
	return e
}

// NotRefreshable is PostgreSQL 15's error for REFRESH MATERIALIZED VIEW
// of a relation that is not one: a table passes its ownership check and
// fails with 0A000 "is not a materialized view"; any other relation (a
// plain view) fails that check first with 42809 "is not a table or
// materialized view".
func NotRefreshable(t *catalog.Table) error {
	if t.Kind == catalog.KindTable {
		return pgerror.New(pgerror.FeatureNotSupported, "\"%s\" is not a materialized view", t.Name)
	}
	return pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a table or materialized view", t.Name)
}

// CheckStreamingProperties checks the properties a streaming table's
// refresh reads: skipChangeCommits is true or false (R-ST4).
func CheckStreamingProperties(t *catalog.Table) error {
	if t.Kind != catalog.KindStreamingTable {
		return nil
	}
	if v, ok := t.Property(refresh.PropSkipChangeCommits); ok && !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
		return pgerror.New(pgerror.InvalidParameterValue, "invalid value for table property %s: \"%s\"", refresh.PropSkipChangeCommits, v).
			WithHint("Use 'true' (skip source commits that update or delete rows) or 'false'.")
	}
	return nil
}

// Alter is t after ALTER MATERIALIZED VIEW / STREAMING TABLE's schedule,
// trigger, refresh policy or properties clause a; t itself is unchanged.
// A REFRESH POLICY INCREMENTAL [STRICT] is checked against the query by the
// caller (CheckIncrementalPolicy).
func Alter(t *catalog.Table, a *parse.AlterDataset) (*catalog.Table, error) {
	what := KindName(t.Kind)
	nt := t.Clone()
	ds := nt.Dataset
	switch {
	case a.SetSchedule != nil:
		if a.AddSchedule && ds.Schedule != nil {
			return nil, pgerror.New(pgerror.DuplicateObject, "%s \"%s\" already has a schedule", what, t.Name).WithHint("Use ALTER SCHEDULE to change it.")
		}
		if a.AddSchedule && ds.Trigger != nil {
			return nil, pgerror.New(pgerror.InvalidObjectDefinition, "%s \"%s\" has a TRIGGER ON UPDATE; a schedule and a trigger are mutually exclusive", what, t.Name).WithHint("Use ALTER SCHEDULE to switch from the trigger to a schedule.")
		}
		if !a.AddSchedule && ds.Schedule == nil && ds.Trigger == nil {
			return nil, pgerror.New(pgerror.UndefinedObject, "%s \"%s\" has no schedule to alter", what, t.Name).WithHint("Use ADD SCHEDULE.")
		}
		cl := parse.DatasetClauses{Schedule: a.SetSchedule}
		ds.Trigger = nil
		ClausesToCatalog(&cl, ds)
	case a.SetTrigger != nil:
		if a.AddTrigger && ds.Trigger != nil {
			return nil, pgerror.New(pgerror.DuplicateObject, "%s \"%s\" already has a TRIGGER ON UPDATE", what, t.Name).WithHint("Use ALTER TRIGGER ON UPDATE to change it.")
		}
		if a.AddTrigger && ds.Schedule != nil {
			return nil, pgerror.New(pgerror.InvalidObjectDefinition, "%s \"%s\" has a schedule; a schedule and a trigger are mutually exclusive", what, t.Name).WithHint("Use ALTER TRIGGER ON UPDATE to switch from the schedule to a trigger.")
		}
		if !a.AddTrigger && ds.Schedule == nil && ds.Trigger == nil {
			return nil, pgerror.New(pgerror.UndefinedObject, "%s \"%s\" has no trigger to alter", what, t.Name).WithHint("Use ADD TRIGGER ON UPDATE.")
		}
		ds.Schedule = nil
		ds.Trigger = &catalog.Trigger{AtMostEverySeconds: a.SetTrigger.AtMostEverySeconds}
	case a.DropSchedule:
		if ds.Schedule == nil {
			return nil, pgerror.New(pgerror.UndefinedObject, "%s \"%s\" has no schedule", what, t.Name)
		}
		ds.Schedule = nil
	case a.DropTrigger:
		if ds.Trigger == nil {
			return nil, pgerror.New(pgerror.UndefinedObject, "%s \"%s\" has no TRIGGER ON UPDATE", what, t.Name)
		}
		ds.Trigger = nil
	case a.SetPolicy != "":
		ds.Policy = string(a.SetPolicy)
	case a.SetProperties != nil:
		for _, p := range a.SetProperties {
			np, err := catalog.NormalizeProperty(p.Key, p.Value)
			if err != nil {
				return nil, err
			}
			nt.SetProperty(np)
		}
		if err := CheckStreamingProperties(nt); err != nil {
			return nil, err
		}
	}
	return nt, nil
}
