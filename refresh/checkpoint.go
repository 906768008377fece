package refresh

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/parse"

	"github.com/mvserver/mvserver/storage"
)

// Checkpoint records what a view's content was computed from: the version of
// each source it consumed (R-M5), and when.
type Checkpoint struct {
	Sources map[uint32]int64 `json:"sources"`
	At      time.Time        `json:"at"`
	// Definition is the Fingerprint of what the content was computed with:
	// a changed definition — of the view or of anything it reads — forces
	// a full refresh (R-M8).
	Definition string `json:"definition"`
	// GroupState: the view's GROUP_AGGREGATE states (groupagg.go) were
	// written by the refresh that made this checkpoint and match its rows.
	GroupState bool `json:"group_state,omitempty"`
	// Scalars are the states of the query's MIN/MAX scalar subqueries
	// at these versions (scalar_state.go); a refresh that did not
	// compute one leaves it out.
	Scalars []ScalarState `json:"scalars,omitempty"`
	// InnerStates are the ids of the inner aggregates whose stored states
	// (inner_state.go) match these versions.
	InnerStates []int `json:"inner_states,omitempty"`
	// OwnWrites are the sources whose rows the refresh read with writes of
	// its own transaction (REFRESH inside a transaction block that changed
	// them): those writes get their version only at the commit, so Sources
	// cannot say the content holds them, and the next refresh is full.
	OwnWrites []uint32 `json:"own_writes,omitempty"`
	// Rates are the seconds per cost unit the view's refreshes took, by
	// kind, learned run by run (costmodel.go); nil before the first.
	Rates *CostRates `json:"cost_rates,omitempty"`
}

// scalarsByID is c's MIN/MAX scalar states by subquery id (nil c: none).
func (c *Checkpoint) scalarsByID() map[int]ScalarState {
	if c == nil || len(c.Scalars) == 0 {
		return nil
	}
	m := make(map[int]ScalarState, len(c.Scalars))
	for _, st := range c.Scalars {
		m[st.ID] = st
	}
	return m
}

// LastRun is the outcome of a view's latest refresh (DESCRIBE, SHOW).
type LastRun struct {
	Technique   TechniqueName `json:"technique"`
	Status      string        `json:"status"`
	Start       time.Time     `json:"start"`
	End         time.Time     `json:"end"`
	RowsWritten int64         `json:"rows_written"`
	Reason      string        `json:"reason,omitempty"`
}

func checkpointKey(view uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte("r/ckpt/"), view)
}

func lastRunKey(view uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte("r/last/"), view)
}

// ReadCheckpoint returns a view's checkpoint as txn sees it (nil if none).
func ReadCheckpoint(txn *storage.Txn, view uint32) (*Checkpoint, error) {
	v, ok, err := txn.GetMeta(checkpointKey(view))
	if err != nil || !ok {
		return nil, err
	}
	var c Checkpoint
	if err := json.Unmarshal(v, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// ReadLastRun returns a view's latest run as txn sees it (nil if none).
func ReadLastRun(txn *storage.Txn, view uint32) (*LastRun, error) {
	v, ok, err := txn.GetMeta(lastRunKey(view))
	if err != nil || !ok {
		return nil, err
	}
	var r LastRun
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Forget deletes a dropped view's refresh state in txn.
func Forget(txn *storage.Txn, view uint32) error {
	if err := txn.DeleteMeta(checkpointKey(view)); err != nil {
		return err
	}
	if err := txn.DeleteMeta(lastRunKey(view)); err != nil {
		return err
	}
	if err := clearGroupStates(txn, view); err != nil {
		return err
	}
	if err := clearTopKSpares(txn, view); err != nil {
		return err
	}
	if err := clearInnerStates(txn, view); err != nil {
		return err
	}
	return forgetLog(txn, view)
}

func putJSON(txn *storage.Txn, key []byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return txn.PutMeta(key, b)
}

// Fingerprint identifies what a view's stored rows were computed with: its
// query text, columns (ids, types, NOT NULL: the stored rows' encoding),
// expectations, partitioning and time zone, and for every object it reads
// (through plain views) its column ids and types and, for a plain view, its
// query. A checkpoint whose fingerprint differs is not a base an incremental
// refresh can start from: CREATE OR REPLACE of the view, of a view it
// reads or of a materialized view below it, or a source's changed schema,
// all force a full refresh; so does CREATE OR REPLACE of a SQL function
// it calls.
func Fingerprint(cat *catalog.Catalog, v *catalog.Table) string {
	h := sha256.New()
	w := func(parts ...any) { fmt.Fprintln(h, parts...) }
	w("query", v.Query)
	for _, c := range v.Columns {
		w("column", c.ID, c.Name, c.Type.String(), c.NotNull)
	}
	w("partition", v.PartitionBy)
	if d := v.Dataset; d != nil {
		for _, e := range d.Expectations {
			w("expectation", e.Name, e.Expr, e.Action)
		}
		w("timezone", d.TimeZone)
	}
	calls := map[string]bool{}
	called := func(query string) {
		if len(cat.Functions()) == 0 {
			return
		}
		for _, n := range parse.QueryCalls(query) {
			calls[n] = true
		}
	}
	called(v.Query)
	seen := map[uint32]bool{}
	var walk func(ids []uint32)
	walk = func(ids []uint32) {
		ids = slices.Clone(ids)
		slices.Sort(ids)
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			t, ok := cat.Table(id)
			if !ok {
				w("missing", id)
				continue
			}
			w("source", id, t.Kind)
			for _, c := range t.Columns {
				w(" column", c.ID, c.Type.String())
			}
			if t.Kind == catalog.KindView {
				w(" query", t.Query)
				called(t.Query)
				walk(t.DependsOn)
			}
		}
	}
	walk(v.DependsOn)
	// R-M8: the SQL functions the query (or a plain view it reads) calls
	// are inlined; a replaced body changes what the rows were computed
	// with.
	for _, f := range cat.Functions() {
		if calls[f.Name] {
			w("function", f.ID, f.Name, f.Body, f.Version, f.Returns.String(), len(f.Args))
			for _, a := range f.Args {
				w(" arg", a.Name, a.Type.String())
			}
		}
	}
	return "fp1:" + hex.EncodeToString(h.Sum(nil))
}
