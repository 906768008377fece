package exec

import (
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// conflictResolver carries out INSERT … ON CONFLICT for rows whose primary
// key or unique index key (an arbiter's) is taken.
type conflictResolver struct {
	c     *Ctx
	ins   *plan.Insert
	codec *tableCodec
	info  storage.TableInfo
	sets  []evalFn
	where evalFn
	dec   *types.RowDecoder
	// touched are the row keys this statement inserted or updated: DO
	// UPDATE may not change a row twice (PostgreSQL's 21000).
	touched map[string]bool
}

func newConflictResolver(c *Ctx, ins *plan.Insert, codec *tableCodec, info storage.TableInfo) (*conflictResolver, error) {
	r := &conflictResolver{c: c, ins: ins, codec: codec, info: info, touched: map[string]bool{}}
	oc := ins.OnConflict
	for _, s := range oc.Sets {
		f, err := compile(s.E, c)
		if err != nil {
			return nil, err
		}
		r.sets = append(r.sets, f)
	}
	if oc.Where != nil {
		f, err := compile(oc.Where, c)
		if err != nil {
			return nil, err
		}
		r.where = f
	}
	r.dec = types.NewRowDecoder(codec.ids)
	return r, nil
}

// inserted notes the row key of a row the statement inserted.
func (r *conflictResolver) inserted(key []byte) { r.touched[string(key)] = true }

// existing finds the row holding the key a conflict names: the primary
// key, or an entry of a unique index.
func (r *conflictResolver) existing(de *storage.DuplicateKeyError) (storage.Row, bool, error) {
	tid := storage.TableID(r.ins.Table.ID)
	if de.Index == 0 {
		return r.c.Txn.Get(tid, de.Key)
	}
	it := r.c.Txn.ScanIndex(tid, de.Index, de.Key, storage.PrefixEnd(de.Key))
	defer it.Close()
	if !it.Next() {
		return storage.Row{}, false, it.Err()
	}
	row := it.Row()
	row.Key = append([]byte(nil), row.Key...)
	row.Value = append([]byte(nil), row.Value...)
	return row, true, nil
}

// resolve handles proposed, whose key (de's) is taken: DO NOTHING skips
// it, DO UPDATE rewrites the existing row. It returns the row written, nil
// if none.
func (r *conflictResolver) resolve(de *storage.DuplicateKeyError, proposed Row) (Row, error) {
	oc := r.ins.OnConflict
	if oc.DoNothing {
		return nil, nil
	}
	t := r.ins.Table
	stored, ok, err := r.existing(de)
	if err != nil {
		return nil, err
	}
	if !ok {
		// The key was taken by a row this snapshot cannot see (a
		// concurrent commit): the conflict is real, report it.
		return nil, r.codec.storageErr(de, proposed)
	}
	if r.touched[string(stored.Key)] {
		return nil, pgerror.New(pgerror.CardinalityViolation, "ON CONFLICT DO UPDATE command cannot affect row a second time").
			WithHint("Ensure that no rows proposed for insertion within the same command have duplicate constrained values.")
	}
	n := len(t.Columns)
	// existing row in scan layout (columns, row id, commit version), then EXCLUDED
	both := make(Row, n+2+n)
	if err := r.dec.Decode(stored.Value, both[:n]); err != nil {
		return nil, err
	}
	both[n] = types.NewInt8(stored.RowID)
	if stored.CommitVersion >= 0 {
		both[n+1] = types.NewInt8(stored.CommitVersion)
	}
	copy(both[n+2:], proposed[:n])
	if r.where != nil {
		ok, err := r.where(both)
		if err != nil {
			return nil, err
		}
		if ok.IsNull() || ok.I == 0 {
			return nil, nil
		}
	}
	nw := make(Row, n)
	copy(nw, both[:n])
	for i, f := range r.sets {
		d, err := f(both)
		if err != nil {
			return nil, err
		}
		nw[oc.Sets[i].Col] = d
	}
	rules, err := r.c.rules(t)
	if err != nil {
		return nil, err
	}
	if err := rules.generate(nw); err != nil {
		return nil, err
	}
	if err := r.codec.checkRow(nw); err != nil {
		return nil, err
	}
	if err := rules.check(t, nw); err != nil {
		return nil, err
	}
	newKey, err := r.codec.key(nw)
	if err != nil {
		return nil, err
	}
	if newKey == nil {
		newKey = stored.Key // keyed by row id: the row stays where it is
	}
	if err := r.c.Txn.UpdateRow(r.info, stored, newKey, r.codec.value(nw)); err != nil {
		return nil, r.codec.storageErr(err, nw)
	}
	r.touched[string(newKey)] = true
	if err := r.c.noteChildRow(rules, t, nw, both[:n]); err != nil {
		return nil, err
	}
	if err := r.c.noteParentRow(rules, t, both[:n], nw); err != nil {
		return nil, err
	}
	return nw, nil
}
