package refresh

import (
	"context"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// fullRecompute clears the view and writes the query's rows (R-M4 FULL).
type fullRecompute struct{}

func (fullRecompute) Name() string { return FullRecompute }

func (fullRecompute) Plan(in *Input) (float64, bool, string) {
	// A full recompute reads every source (its cost model comes with the
	// incremental techniques).
	return float64(len(in.Versions)), true, ""
}

func (fullRecompute) Run(ctx context.Context, in *Input) (Stats, error) {
	var st Stats
	v := in.View
	info := storage.TableInfo{ID: storage.TableID(v.ID), ChangeDataFeed: v.ChangeDataFeed()}
	if err := in.Txn.Truncate(info); err != nil {
		return st, err
	}
	ids := make([]uint32, len(v.Columns))
	for i, c := range v.Columns {
		ids[i] = c.ID
	}
	es, err := compileExpectations(in)
	if err != nil {
		return st, err
	}
	op, err := exec.Build(in.Exec, in.Query)
	if err != nil {
		return st, err
	}
	env := in.Exec.Env
	row := make([]types.Datum, len(v.Columns))
	var buf []byte
	err = exec.Drain(op, func(rows []exec.Row) error {
		for _, r := range rows {
			for i, c := range v.Columns {
				d := r[i]
				if !d.IsNull() && (d.K != c.Type.Kind || c.Type.Width > 0 || c.Type.Precision > 0) {
					var err error
					if d, err = types.Cast(d, c.Type, env, false); err != nil {
						return err
					}
				}
				if c.NotNull && d.IsNull() {
					return pgerror.New(pgerror.NotNullViolation, "null value in column \"%s\" of materialized view \"%s\" violates not-null constraint", c.Name, v.Name)
				}
				row[i] = d
			}
			if es != nil {
				keep, err := applyExpectations(es, v, row)
				if err != nil {
					return err
				}
				if !keep {
					st.RowsDropped++
					continue
				}
			}
			buf = types.AppendRowValue(buf[:0], ids, row)
			if _, err := in.Txn.Insert(info, nil, buf); err != nil {
				return err
			}
			st.RowsWritten++
		}
		st.RowsRead += int64(len(rows))
		return ctx.Err()
	})
	in.expectations = es
	return st, err
}
