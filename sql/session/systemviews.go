package session

import (
	"time"

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
		rows := make([]exec.Row, len(events))
		for i, e := range events {
			rows[i] = exec.Row{
				types.NewText(e.ID), types.NewInt8(e.Sequence), types.NewText(e.Origin),
				types.NewTimestamp(types.KindTimestampTZ, e.Timestamp.UnixMicro()),
				types.NewText(e.Message), types.NewText(e.Level), textOrNull(e.Error), types.NewText(e.Details), types.NewText(e.EventType),
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
			rows[i] = exec.Row{
				types.NewText(r.RunID), types.NewText(r.ViewName), types.NewText(r.Cause),
				types.NewTimestamp(types.KindTimestampTZ, r.Start.UnixMicro()),
				types.NewTimestamp(types.KindTimestampTZ, r.End.UnixMicro()),
				types.NewInt8(r.End.Sub(r.Start).Milliseconds()),
				types.NewText(r.Status), textOrNull(r.Technique),
				types.NewInt8(r.RowsRead), types.NewInt8(r.RowsWritten), textOrNull(r.Error),
			}
		}
		return rows, nil
	})
}

// activityRows are the pg_stat_activity rows of the server's sessions.
func (e *Engine) activityRows() [][]types.Datum {
	if e.Activity == nil {
		return nil
	}
	ts := func(t time.Time) types.Datum {
		if t.IsZero() {
			return types.NullDatum
		}
		return types.NewTimestamp(types.KindTimestampTZ, t.UnixMicro())
	}
	var rows [][]types.Datum
	for _, a := range e.Activity() {
		rows = append(rows, []types.Datum{
			types.NewText(a.Database), types.NewInt4(int64(a.PID)), types.NewText(a.User),
			types.NewText(a.App), textOrNull(a.ClientAddr), ts(a.BackendStart), ts(a.QueryStart),
			types.NewText(a.State), types.NewText(a.Query),
		})
	}
	return rows
}
