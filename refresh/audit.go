package refresh

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"

	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// ContentDiff is how a view's stored rows differ from its query's rows.
type ContentDiff struct {
	// Missing are rows the query returns that the view lacks; Extra rows
	// the view holds that the query does not return (as text, at most a
	// few of each); the counts are complete.
	Missing, Extra           []string
	MissingCount, ExtraCount int64
}

// Equal reports whether there is no difference.
func (d *ContentDiff) Equal() bool { return d.MissingCount == 0 && d.ExtraCount == 0 }

func (d *ContentDiff) String() string {
	return fmt.Sprintf("%d rows missing %v, %d rows extra %v", d.MissingCount, d.Missing, d.ExtraCount, d.Extra)
}

const diffSamples = 10

// compareContent evaluates q and compares its rows, as the view would store
// them, with the view's rows in in.Txn.
func compareContent(ctx context.Context, in *Input, q plan.Node) (*ContentDiff, error) {
	saved := in.expectations // the run's counts, which this must not reset
	defer func() { in.expectations = saved }()
	w, err := newViewWriter(in)
	if err != nil {
		return nil, err
	}
	want := map[string]int64{}
	op, err := exec.Build(in.Exec, q)
	if err != nil {
		return nil, err
	}
	var buf []byte
	err = exec.Drain(op, func(rows []exec.Row) error {
		for _, r := range rows {
			var keep bool
			var err error
			if buf, keep, err = w.encode(buf[:0], r, true); err != nil {
				return err
			}
			if keep {
				want[string(buf)]++
			}
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	it := in.Txn.Scan(storage.TableID(in.View.ID), nil, nil)
	for it.Next() {
		want[string(it.Row().Value)]--
	}
	err = it.Err()
	it.Close()
	if err != nil {
		return nil, err
	}
	d := &ContentDiff{}
	dec := types.NewRowDecoder(w.ids)
	show := func(v string) string {
		row := make([]types.Datum, len(w.ids))
		if err := dec.Decode([]byte(v), row); err != nil {
			return fmt.Sprintf("<%x>", v)
		}
		parts := make([]string, len(row))
		for i, x := range row {
			if x.IsNull() {
				parts[i] = "NULL"
			} else {
				parts[i] = string(types.AppendText(nil, x, nil))
			}
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch n := want[k]; {
		case n > 0:
			d.MissingCount += n
			if len(d.Missing) < diffSamples {
				d.Missing = append(d.Missing, show(k))
			}
		case n < 0:
			d.ExtraCount += -n
			if len(d.Extra) < diffSamples {
				d.Extra = append(d.Extra, show(k))
			}
		}
	}
	return d, nil
}

// checkInvariant compares the view, as the refresh leaves it, with a full
// evaluation of its query on the refresh's snapshot (build tag invariants).
func checkInvariant(ctx context.Context, in *Input) error {
	q, err := in.evalQuery()
	if err != nil {
		return err
	}
	d, err := compareContent(ctx, in, q)
	if err != nil {
		return err
	}
	if !d.Equal() && !(d.MissingCount == d.ExtraCount && limitMayTie(in.Query)) {
		return fmt.Errorf("view differs from its query: %s", d)
	}
	return nil
}

// limitMayTie reports whether n is ORDER BY … LIMIT with fewer keys than
// columns: rows that tie at the LIMIT's edge may be either, in PostgreSQL
// too, so a view and one evaluation of its query may differ by such rows
// and both be answers. The IVM property test checks those views for
// exactly that (its limitPeers); every other view is compared row for row.
func limitMayTie(n plan.Node) bool {
	for {
		switch x := n.(type) {
		case *plan.Project:
			n = x.Input
		case *plan.Limit:
			s, ok := x.Input.(*plan.Sort)
			return ok && len(s.Keys) < len(s.Columns())
		default:
			return false
		}
	}
}

// Check is CHECK MATERIALIZED VIEW: it evaluates the view's query on the
// snapshot of its checkpoint — the current snapshot when no source moved
// since, otherwise the sources as of the checkpoint rebuilt from their
// change feeds — and compares it with the stored rows (R-M5). The caller
// logs a drift event when they differ (LogDrift).
func Check(ctx context.Context, txn *storage.Txn, cat *catalog.Catalog, view uint32, opt Options) (*ContentDiff, error) {
	v, ok := cat.Table(view)
	if !ok || v.Kind != catalog.KindMaterializedView {
		return nil, pgerror.New(pgerror.UndefinedTable, "materialized view %d does not exist", view)
	}
	in, _, err := loadInput(ctx, txn, cat, v, opt)
	if err != nil {
		return nil, err
	}
	q, versions, ckpt := in.Query, in.Versions, in.Checkpoint
	if ckpt == nil {
		return nil, pgerror.New(pgerror.ObjectNotInPrerequisiteState, "materialized view \"%s\" has not been populated", v.Name)
	}
	if ckpt.Definition != Fingerprint(cat, v) {
		return nil, pgerror.New(pgerror.ObjectNotInPrerequisiteState, "materialized view \"%s\" was redefined since its last refresh; refresh it first", v.Name)
	}
	if len(ckpt.OwnWrites) > 0 {
		return nil, pgerror.New(pgerror.ObjectNotInPrerequisiteState, "materialized view \"%s\" was last refreshed in the transaction that changed %s; refresh it first", v.Name, tableNames(cat, ckpt.OwnWrites))
	}
	// Time functions read the time of the checkpoint's refresh (R-I5).
	in.Exec.Funcs.StatementTime = ckpt.At
	if !sameVersions(ckpt.Sources, versions) {
		deltas := map[uint32]*sourceDelta{}
		for id, ver := range versions {
			from, ok := ckpt.Sources[id]
			if !ok {
				return nil, pgerror.New(pgerror.ObjectNotInPrerequisiteState, "materialized view \"%s\" reads a source its last refresh did not; refresh it first", v.Name)
			}
			if from == ver {
				continue
			}
			t, _ := cat.Table(id)
			d, err := readDelta(txn, t, from, ver)
			if err != nil {
				pe := pgerror.Convert(err)
				return nil, pgerror.New(pgerror.ObjectNotInPrerequisiteState, "cannot rebuild the snapshot of the last refresh of \"%s\": %s", v.Name, pe.Message).
					WithHint("REFRESH the view, then CHECK it.")
			}
			deltas[id] = d
		}
		df := &differ{ctx: in.Exec, est: in.estimator(), deltas: deltas, then: ckpt.At}
		d, err := df.diff(q)
		if err != nil {
			var be *blockedError
			if errors.As(err, &be) {
				return nil, pgerror.New(pgerror.FeatureNotSupported, "cannot rebuild the snapshot of the last refresh of \"%s\": %s", v.Name, be.b.Message).
					WithHint("REFRESH the view, then CHECK it.")
			}
			return nil, err
		}
		q = d.old
	}
	if q, err = in.optimized(q); err != nil {
		return nil, err
	}
	return compareContent(ctx, in, q)
}

// LogDrift records in txn that CHECK found the view different from its
// query (event type drift).
func LogDrift(txn *storage.Txn, view uint32, name string, d *ContentDiff, at time.Time) error {
	w := newEventWriter(view, name, "")
	w.add(at, "drift", "ERROR", fmt.Sprintf("Materialized view '%s' differs from its query: %d rows missing, %d rows extra.", name, d.MissingCount, d.ExtraCount),
		map[string]any{"drift": map[string]any{"missing": d.MissingCount, "extra": d.ExtraCount, "missing_rows": d.Missing, "extra_rows": d.Extra}}, "")
	return w.write(txn)
}
