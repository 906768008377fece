package scheduler

import "github.com/mvserver/mvserver/pgerror"

// Validate checks a view's schedule and trigger as Upsert would (cron
// syntax, zone, the upstream limits of R-S3) without registering anything,
// so CREATE and ALTER can fail before they commit.
func Validate(spec ViewSpec) error {
	if spec.Schedule != nil && spec.Trigger != nil {
		return pgerror.New(pgerror.InvalidObjectDefinition, "materialized view \"%s\" cannot have both a schedule and a trigger", spec.Name)
	}
	if spec.Schedule != nil {
		if _, err := compileSchedule(spec.Schedule); err != nil {
			return err
		}
	}
	if spec.Trigger != nil {
		spec.Tables = distinct(spec.Tables, spec.ID)
		spec.Views = distinct(spec.Views, spec.ID)
		return checkSources(spec)
	}
	return nil
}
