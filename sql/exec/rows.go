package exec

import (
	"encoding/json"
	"sort"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// HistoryColumns are DESCRIBE HISTORY's columns (R-T4).
var HistoryColumns = []plan.Column{
	{Name: "version", T: types.Int8},
	{Name: "timestamp", T: types.TimestampTZ},
	{Name: "operation", T: types.Text},
	{Name: "operationParameters", T: types.Text},
	{Name: "operationMetrics", T: types.Text},
}

// RowSource produces the rows of a virtual relation (plan.Rows) that a
// package above exec owns: the refresh event log and history are read by
// generators the session registers, since exec may not import refresh.
type RowSource func(c *Ctx, arg any) ([]Row, error)

var rowSources = map[string]RowSource{}

// RegisterRowSource makes plan.Rows{Gen: name} read fn. Call it from init.
func RegisterRowSource(name string, fn RowSource) { rowSources[name] = fn }

func newRowsOp(c *Ctx, r *plan.Rows) (Operator, error) {
	if fn, ok := rowSources[r.Gen]; ok {
		rows, err := fn(c, r.Arg)
		if err != nil {
			return nil, err
		}
		return &sliceOp{rows: rows}, nil
	}
	switch r.Gen {
	case "history":
		hist, err := c.Txn.History(storage.TableID(r.Arg.(uint32)))
		if err != nil {
			return nil, err
		}
		var rows []Row
		for _, h := range hist {
			params := "{}"
			if len(h.Params) > 0 {
				params = jsonObject(h.Params)
			}
			metrics := map[string]string{}
			switch {
			case h.Operation == "CREATE TABLE" || h.Operation == "SET TBLPROPERTIES" || h.Operation == "UNSET TBLPROPERTIES":
			default:
				metrics["numOutputRows"] = itoa(h.RowsInserted + h.RowsUpdated)
				metrics["numInsertedRows"] = itoa(h.RowsInserted)
				metrics["numUpdatedRows"] = itoa(h.RowsUpdated)
				metrics["numDeletedRows"] = itoa(h.RowsDeleted)
			}
			rows = append(rows, Row{
				types.NewInt8(h.Version),
				types.NewTimestamp(types.KindTimestampTZ, h.Timestamp.UnixMicro()),
				types.NewText(h.Operation),
				types.NewText(params),
				types.NewText(jsonObject(metrics)),
			})
		}
		return &sliceOp{rows: rows}, nil
	}
	return nil, pgerror.New(pgerror.InternalError, "unknown row generator %q", r.Gen)
}

func itoa(v int64) string { return types.NewInt8(v).String() }

// jsonObject renders a map with sorted keys.
func jsonObject(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(m[k])
		b = append(b, kb...)
		b = append(b, ':')
		b = append(b, vb...)
	}
	return string(append(b, '}'))
}
