package refresh

import (
	"encoding/binary"
	"encoding/json"
	"maps"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// TOP_K's spare rows. A view of ORDER BY … LIMIT k holds the first k rows
// of its input X; next to it the refresh keeps the rows that follow them,
// up to topKSpares(k) of them, in that order. Every row of X that is in
// neither sorts at or after the last spare (the bound), so a refresh whose
// changes leave at least k rows before the bound knows the new first k
// without reading X: the common "nothing enters the top k" case, where the
// view's last row stays the k-th, needs no recompute. Only when the changes
// use up the spares, or the k-th row ties the bound, does TOP_K recompute.
//
// The spares are written by every refresh that changes the view's rows
// (TOP_K and the full recompute: nothing else maintains a top-k view), and
// are used only when they were written at the versions of the checkpoint
// the refresh starts from.

// topKSpareState is the stored spare rows of a top-k view.
type topKSpareState struct {
	// Sources are the source versions the spares were computed at (the
	// checkpoint's, when they are current).
	Sources map[uint32]int64 `json:"sources"`
	// Rows are the spare rows in ORDER BY order, encoded as the view's
	// rows are.
	Rows [][]byte `json:"rows"`
	// Complete: X had no rows beyond the spares (there is no bound).
	Complete bool `json:"complete,omitempty"`
}

// topKSpares is how many spare rows a top-k view of k keeps.
func topKSpares(k int64) int64 {
	return min(max(k, 32), 1000)
}

func topKSpareKey(view uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte("r/topk/"), view)
}

// viewColumns are the view's column ids and columns (how its rows, and
// the spares, are encoded).
func viewColumns(in *Input) ([]uint32, []plan.Column) {
	v := in.View
	ids := make([]uint32, len(v.Columns))
	cols := make([]plan.Column, len(v.Columns))
	for i, c := range v.Columns {
		ids[i], cols[i] = c.ID, plan.Column{Name: c.Name, T: c.Type}
	}
	return ids, cols
}

// readTopKSpares returns the view's spare rows and whether X had no more
// (complete); ok is false when there are none current for the checkpoint.
func readTopKSpares(in *Input) (rows [][]types.Datum, complete, ok bool, err error) {
	v, found, err := in.Txn.GetMeta(topKSpareKey(in.View.ID))
	if err != nil || !found || in.Checkpoint == nil {
		return nil, false, false, err
	}
	var st topKSpareState
	if err := json.Unmarshal(v, &st); err != nil {
		return nil, false, false, err
	}
	if !maps.Equal(st.Sources, in.Checkpoint.Sources) {
		return nil, false, false, nil
	}
	ids, _ := viewColumns(in)
	dec := types.NewRowDecoder(ids)
	for _, b := range st.Rows {
		row := make([]types.Datum, len(ids))
		if err := dec.Decode(b, row); err != nil {
			return nil, false, false, err
		}
		rows = append(rows, row)
	}
	return rows, st.Complete, true, nil
}

// writeTopKSpares stores rows (the view's width, in ORDER BY order) as the
// view's spares at the refresh's versions.
func writeTopKSpares(in *Input, rows [][]types.Datum, complete bool) error {
	ids, _ := viewColumns(in)
	st := topKSpareState{Sources: in.Versions, Complete: complete, Rows: make([][]byte, len(rows))}
	for i, r := range rows {
		st.Rows[i] = types.AppendRowValue(nil, ids, r[:len(ids)])
	}
	return putJSON(in.Txn, topKSpareKey(in.View.ID), &st)
}

// clearTopKSpares deletes the view's spares (none are current).
func clearTopKSpares(txn *storage.Txn, view uint32) error {
	return txn.DeleteMeta(topKSpareKey(view))
}

// withSpares is the top-k query q asking for the spare rows too: its
// LIMIT raised by topKSpares(k).
func (s *topKShape) withSpares() plan.Node {
	l := *s.limit
	c := *s.limit.Count.(*plan.Const)
	c.D = types.NewInt8(s.k + topKSpares(s.k))
	c.T = types.Int8
	l.Count = &c
	return &l
}
