package refresh

import (
	"context"
	"fmt"
	"sort"
	"strings"

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
	d, err := compareContent(ctx, in, in.Query)
	if err != nil {
		return err
	}
	if !d.Equal() {
		return fmt.Errorf("view differs from its query: %s", d)
	}
	return nil
}
