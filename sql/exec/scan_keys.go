package exec

import (
	"bytes"
	"slices"

	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// A scan's key values (its point, IN list or range bounds) are compiled
// once, when the scan is built, and evaluated into keys by bindKeys: when
// it is built, and again at each rebind (rebind.go), where they read the
// outer row an index nested-loop join looks up (an OuterRef reads its
// Ctx's Outer when evaluated, not when compiled).

// scanKeys holds the compiled key values of a scan, as its plan lists
// them: Point, each In value, Start and End.
type scanKeys struct {
	point, start, end []evalFn
	in                [][]evalFn
}

func compileScanKeys(c *Ctx, s *plan.Scan) (scanKeys, error) {
	var k scanKeys
	var err error
	if k.point, err = compileAll(s.Point, c); err != nil {
		return k, err
	}
	for _, v := range s.In {
		f, err := compile(v, c)
		if err != nil {
			return k, err
		}
		k.in = append(k.in, []evalFn{f})
	}
	if s.Start != nil {
		if k.start, err = compileAll(s.Start.Values, c); err != nil {
			return k, err
		}
	}
	if s.End != nil {
		if k.end, err = compileAll(s.End.Values, c); err != nil {
			return k, err
		}
	}
	return k, nil
}

// evalKey encodes the values of fns as a key prefix.
func evalKey(fns []evalFn) ([]byte, error) {
	var b []byte
	for _, f := range fns {
		d, err := f(nil)
		if err != nil {
			return nil, err
		}
		if b, err = appendKeyDatum(b, d); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// bindKeys evaluates the scan's key values into its point key or its
// key ranges.
func (op *scanOp) bindKeys() error {
	s := op.s
	op.point, op.pointKey, op.ranges = false, nil, nil
	switch {
	case s.Point != nil && (s.Index == nil || s.Index.Unique):
		// The primary key, or every column of a unique key: one entry at
		// most that a value can equal (an entry with a NULL is keyed
		// apart, and no equality holds for NULL).
		key, err := evalKey(op.keys.point)
		if err != nil {
			return err
		}
		op.point, op.pointKey = true, key
	case s.Point != nil:
		// Every column of a non-unique index key: the entries with that
		// key.
		key, err := evalKey(op.keys.point)
		if err != nil {
			return err
		}
		op.ranges = []keyRange{{key, storage.PrefixEnd(key)}}
	case s.In != nil:
		for _, v := range op.keys.in {
			k, err := evalKey(v)
			if err != nil {
				return err
			}
			op.ranges = append(op.ranges, keyRange{k, storage.PrefixEnd(k)})
		}
		// In key order, each value once (IN (1, 1) reads its rows once).
		slices.SortFunc(op.ranges, func(a, b keyRange) int { return bytes.Compare(a.start, b.start) })
		op.ranges = slices.CompactFunc(op.ranges, func(a, b keyRange) bool { return bytes.Equal(a.start, b.start) })
	default:
		var r keyRange
		if s.Start != nil {
			k, err := evalKey(op.keys.start)
			if err != nil {
				return err
			}
			if s.Start.Inclusive {
				r.start = k
			} else {
				r.start = storage.PrefixEnd(k)
			}
		}
		if s.End != nil {
			k, err := evalKey(op.keys.end)
			if err != nil {
				return err
			}
			if s.End.Inclusive {
				r.end = storage.PrefixEnd(k)
			} else {
				r.end = k
			}
			if s.Start == nil && s.Index != nil {
				// An index holds NULLs, which sort first; no upper
				// bound holds for them.
				r.start = storage.AppendNotNullMarker(nil)
			}
		}
		op.ranges = []keyRange{r}
	}
	return nil
}
