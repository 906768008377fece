package session

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// genDeferred is the generator of rows a statement computes when it runs
// (CHECK MATERIALIZED VIEW): plan.Rows' Arg is the deferredRows to call.
const genDeferred = "session.deferred"

// deferredRows computes a statement's rows at execution, in its context.
type deferredRows func(c *exec.Ctx) ([]exec.Row, error)

// The event log and the refresh history are stored by refresh/; exec reads
// them through these generators (R-O1, R-S6).
func init() {
	exec.RegisterRowSource(genDeferred, func(c *exec.Ctx, arg any) ([]exec.Row, error) {
		return arg.(deferredRows)(c)
	})
	exec.RegisterRowSource(plan.GenEventLog, func(c *exec.Ctx, arg any) ([]exec.Row, error) {
		events, err := refresh.Events(c.Txn, arg.(uint32))
		if err != nil {
			return nil, err
		}
		full := maySeeDetails(c, arg.(uint32))
		rows := make([]exec.Row, len(events))
		for i, e := range events {
			if !full {
				e.Redact()
			}
			rows[i] = exec.Row{
				types.NewText(e.ID), types.NewInt8(e.Sequence), types.NewText(e.Origin),
				types.NewTimestamp(types.KindTimestampTZ, e.Timestamp.UnixMicro()),
				types.NewText(e.Message), types.NewText(e.Level), dataset.TextOrNull(e.Error), types.NewText(e.Details), types.NewText(e.EventType),
			}
		}
		return rows, nil
	})
	exec.RegisterRowSource(plan.GenPgStatActivity, func(c *exec.Ctx, arg any) ([]exec.Row, error) {
		if c.Funcs == nil || c.Funcs.Activity == nil {
			return nil, nil
		}
		rows := c.Funcs.Activity()
		out := make([]exec.Row, len(rows))
		for i, r := range rows {
			out[i] = r
		}
		return out, nil
	})
	exec.RegisterRowSource(plan.GenRefreshHistory, func(c *exec.Ctx, arg any) ([]exec.Row, error) {
		runs, err := refresh.Runs(c.Txn, 0)
		if err != nil {
			return nil, err
		}
		rows := make([]exec.Row, len(runs))
		for i, r := range runs {
			if !maySeeDetails(c, r.View) {
				r.Redact()
			}
			rows[i] = exec.Row{
				types.NewText(r.RunID), types.NewText(r.ViewName), types.NewText(r.Cause),
				types.NewTimestamp(types.KindTimestampTZ, r.Start.UnixMicro()),
				types.NewTimestamp(types.KindTimestampTZ, r.End.UnixMicro()),
				types.NewInt8(r.End.Sub(r.Start).Milliseconds()),
				types.NewText(r.Status), dataset.TextOrNull(string(r.Technique)),
				types.NewInt8(r.RowsRead), types.NewInt8(r.RowsWritten), dataset.TextOrNull(r.Error),
			}
		}
		return rows, nil
	})
}

// maySeeDetails reports whether the statement's reader may see view's
// refresh errors in full (catalog.MaySeeDetails): its user is the
// session's, or the owner of a materialized view whose refresh reads the
// system views. Without a reader or a catalog, no one may.
func maySeeDetails(c *exec.Ctx, view uint32) bool {
	if c.Funcs == nil {
		return false
	}
	cat, ok := c.Funcs.Catalog.(*catalog.Catalog)
	if !ok || cat == nil {
		return false
	}
	v, ok := cat.Table(view)
	if !ok {
		// A dropped view's runs: its grants are gone with it.
		_, super := cat.UserRole(c.Funcs.User, c.Funcs.RequireRoles)
		return super
	}
	return cat.MaySeeDetails(c.Funcs.User, c.Funcs.RequireRoles, v)
}
