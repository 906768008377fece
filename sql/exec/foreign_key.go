package exec

import (
	"slices"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// Foreign keys are enforced at the end of each statement, as PostgreSQL's
// referential-integrity triggers run after it:
//
//  1. Each row written to a referencing (child) table whose key columns
//     are not NULL (MATCH SIMPLE; MATCH FULL: all or none) notes its key;
//     each key a referenced (parent) table's row gives up, by DELETE or by
//     an UPDATE of the referenced columns, notes a removal.
//  2. At the statement's end the removals are worked off: CASCADE,
//     SET NULL and SET DEFAULT delete or update the child rows (their own
//     writes note more work, so cascades follow chains and cycles);
//     RESTRICT fails if a child row still references the key.
//  3. Then the noted child keys must be present in the parent, and the
//     NO ACTION removals must not be referenced (unless the parent holds
//     the key again). Those of a deferred constraint wait for commit
//     (DeferredChecks).

// fkWork is the foreign-key work one statement owes.
type fkWork struct {
	present  map[uint32]*keySet // by foreign key id
	order    []uint32
	removals []removal
	noAction []removal
}

// keySet is a set of key values of one foreign key, each cast to the
// referenced columns' types, by their key encoding.
type keySet struct {
	child *catalog.Table
	fk    *catalog.ForeignKey
	keys  map[string][]types.Datum
}

func (k *keySet) add(enc string, vals []types.Datum) {
	if _, ok := k.keys[enc]; !ok {
		k.keys[enc] = vals
	}
}

// removal is the keys a parent table's rows gave up, for one foreign key
// referencing it; an update also says what each key became.
type removal struct {
	parent *catalog.Table
	ref    catalog.Reference
	update bool
	keys   map[string]removedKey
}

type removedKey struct{ old, new []types.Datum }

func (c *Ctx) fkWork() *fkWork {
	st := c.state()
	if st.fk == nil {
		st.fk = &fkWork{present: map[uint32]*keySet{}}
	}
	return st.fk
}

// fkKey returns the values of cols in row cast to the types of refCols of
// parent, and their key encoding; ok is false when MATCH SIMPLE skips the
// row (a NULL among them) or MATCH FULL does (all NULL).
func (c *Ctx) fkKey(row Row, t *catalog.Table, cols []uint32, parent *catalog.Table, refCols []uint32) (vals []types.Datum, enc string, nulls int, err error) {
	var b []byte
	vals = make([]types.Datum, len(cols))
	for i, id := range cols {
		d := row[t.ColumnByID(id)]
		if d.IsNull() {
			nulls++
			continue
		}
		pt := parent.Columns[parent.ColumnByID(refCols[i])].Type
		if d, err = types.Cast(d, pt, c.Env, false); err != nil {
			return nil, "", 0, err
		}
		vals[i] = d
		if b, err = appendKeyDatum(b, d); err != nil {
			return nil, "", 0, err
		}
	}
	return vals, string(b), nulls, nil
}

// noteChildRow notes the key of a row written to t for each of t's
// foreign keys; old, for an UPDATE, skips keys that did not change.
func (c *Ctx) noteChildRow(r *tableRules, t *catalog.Table, row, old Row) error {
	if r == nil {
		return nil
	}
	for _, fk := range r.fks {
		if old != nil && sameColumns(t, fk.Cols, row, old) {
			continue
		}
		parent, ok := c.Constraints.Cat.Table(fk.RefTable)
		if !ok {
			continue
		}
		vals, enc, nulls, err := c.fkKey(row, t, fk.Cols, parent, fk.RefCols)
		if err != nil {
			return err
		}
		if nulls > 0 {
			if fk.Match == catalog.FKMatchFull && nulls < len(fk.Cols) {
				e := pgerror.New(pgerror.ForeignKeyViolation, "insert or update on table \"%s\" violates foreign key constraint \"%s\"", t.Name, fk.Name).
					WithDetail("MATCH FULL does not allow mixing of null and nonnull key values.")
				e.Table, e.RelationID, e.Constraint = t.Name, t.ID, fk.Name
				return e
			}
			continue
		}
		w := c.fkWork()
		ks := w.present[fk.ID]
		if ks == nil {
			ks = &keySet{child: t, fk: fk, keys: map[string][]types.Datum{}}
			w.present[fk.ID] = ks
			w.order = append(w.order, fk.ID)
		}
		ks.add(enc, vals)
	}
	return nil
}

// noteParentRow notes the keys a row of t gives up (nw nil: deleted) for
// each foreign key that references t.
func (c *Ctx) noteParentRow(r *tableRules, t *catalog.Table, old, nw Row) error {
	if r == nil {
		return nil
	}
	for _, ref := range r.refs {
		if nw != nil && sameColumns(t, ref.FK.RefCols, old, nw) {
			continue
		}
		vals, enc, nulls, err := c.fkKey(old, t, ref.FK.RefCols, t, ref.FK.RefCols)
		if err != nil || nulls > 0 {
			return err
		}
		rk := removedKey{old: vals}
		if nw != nil {
			rk.new = make([]types.Datum, len(ref.FK.RefCols))
			for i, id := range ref.FK.RefCols {
				rk.new[i] = nw[t.ColumnByID(id)]
			}
		}
		w := c.fkWork()
		var rm *removal
		for i := range w.removals {
			if p := &w.removals[i]; p.ref.FK == ref.FK && p.update == (nw != nil) {
				rm = p
			}
		}
		if rm == nil {
			w.removals = append(w.removals, removal{parent: t, ref: ref, update: nw != nil, keys: map[string]removedKey{}})
			rm = &w.removals[len(w.removals)-1]
		}
		rm.keys[enc] = rk
	}
	return nil
}

func sameColumns(t *catalog.Table, ids []uint32, a, b Row) bool {
	for _, id := range ids {
		i := t.ColumnByID(id)
		if a[i].IsNull() != b[i].IsNull() || (!a[i].IsNull() && types.Compare(a[i], b[i]) != 0) {
			return false
		}
	}
	return true
}

// endStatement does the foreign-key work the statement owes.
func (c *Ctx) endStatement() error {
	if c.Constraints == nil || c.stmt == nil || c.stmt.fk == nil {
		return nil
	}
	w := c.stmt.fk
	for len(w.removals) > 0 {
		rm := w.removals[0]
		w.removals = w.removals[1:]
		if err := c.referentialAction(rm); err != nil {
			return err
		}
	}
	c.stmt.fk = nil
	for _, id := range w.order {
		ks := w.present[id]
		if d := c.Constraints.Deferred; d != nil && d.isDeferred(ks.fk) {
			c.Constraints.Deferred.addPresent(ks)
			continue
		}
		if err := c.checkPresent(ks); err != nil {
			return err
		}
	}
	for _, rm := range w.noAction {
		if d := c.Constraints.Deferred; d != nil && d.isDeferred(rm.ref.FK) {
			c.Constraints.Deferred.addUnreferenced(rm)
			continue
		}
		if err := c.checkUnreferenced(rm, false); err != nil {
			return err
		}
	}
	return nil
}

// referentialAction carries out ON DELETE / ON UPDATE for the keys of rm.
func (c *Ctx) referentialAction(rm removal) error {
	fk, child := rm.ref.FK, rm.ref.Table
	action := fk.OnDelete
	if rm.update {
		action = fk.OnUpdate
	}
	switch action {
	case catalog.FKNoAction:
		w := c.fkWork()
		w.noAction = append(w.noAction, rm)
		return nil
	case catalog.FKRestrict:
		return c.checkUnreferenced(rm, true)
	}
	rows, hits, err := c.referencingRows(rm)
	if err != nil || len(rows) == 0 {
		return err
	}
	if action == catalog.FKCascade && !rm.update {
		return deleteRows(c, child, rows, nil, nil)
	}
	news := make([]Row, len(rows))
	var defaults []types.Datum
	if action == catalog.FKSetDefault {
		for _, id := range fk.Cols {
			col := child.Columns[child.ColumnByID(id)]
			d := types.NullDatum
			if col.Default != "" {
				typ := col.Type
				f, err := c.bindRow(child, col.Default, &typ)
				if err != nil {
					return err
				}
				if d, err = f(nil); err != nil {
					return err
				}
			}
			defaults = append(defaults, d)
		}
	}
	for r, old := range rows {
		nw := append(Row(nil), old[:len(child.Columns)]...)
		for i, id := range fk.Cols {
			ci := child.ColumnByID(id)
			switch action {
			case catalog.FKCascade:
				d := rm.keys[hits[r]].new[i]
				if !d.IsNull() {
					if d, err = types.Cast(d, child.Columns[ci].Type, c.Env, false); err != nil {
						return err
					}
				}
				nw[ci] = d
			case catalog.FKSetNull:
				nw[ci] = types.NullDatum
			case catalog.FKSetDefault:
				nw[ci] = defaults[i]
			}
		}
		news[r] = nw
	}
	if err := updateRows(c, child, rows, news, nil, nil); err != nil {
		return err
	}
	if action == catalog.FKSetDefault {
		// The default may be the key given up itself: as PostgreSQL, the
		// removal is then checked as NO ACTION.
		w := c.fkWork()
		w.noAction = append(w.noAction, rm)
	}
	return nil
}

// referencingRows returns the rows of rm's child table that reference one
// of rm's keys, in the table's scan layout (row id included), and the key
// each references.
func (c *Ctx) referencingRows(rm removal) ([]Row, []string, error) {
	fk, child := rm.ref.FK, rm.ref.Table
	scan := plan.NewScan(child)
	for i := range child.Columns {
		scan.Needed[i] = true
	}
	scan.Needed[len(child.Columns)] = true
	all, err := collect(c, scan)
	if err != nil {
		return nil, nil, err
	}
	var rows []Row
	var hits []string
	for _, row := range all {
		_, enc, nulls, err := c.fkKey(row, child, fk.Cols, rm.parent, fk.RefCols)
		if err != nil {
			return nil, nil, err
		}
		if nulls > 0 {
			continue
		}
		if _, ok := rm.keys[enc]; ok {
			rows, hits = append(rows, row), append(hits, enc)
		}
	}
	return rows, hits, nil
}

// checkUnreferenced fails if a child row references one of rm's keys
// (with restrict, even when the parent holds the key again).
func (c *Ctx) checkUnreferenced(rm removal, restrict bool) error {
	if !restrict {
		keys := map[string]removedKey{}
		for enc, k := range rm.keys {
			ok, err := c.parentHas(rm.parent, rm.ref.FK.RefCols, k.old)
			if err != nil {
				return err
			}
			if !ok {
				keys[enc] = k
			}
		}
		if len(keys) == 0 {
			return nil
		}
		rm.keys = keys
	}
	_, hits, err := c.referencingRows(rm)
	if err != nil || len(hits) == 0 {
		return err
	}
	fk, child, parent := rm.ref.FK, rm.ref.Table, rm.parent
	e := pgerror.New(pgerror.ForeignKeyViolation, "update or delete on table \"%s\" violates foreign key constraint \"%s\" on table \"%s\"", parent.Name, fk.Name, child.Name).
		WithDetail("Key (%s)=(%s) is still referenced from table \"%s\".", columnNames(parent, fk.RefCols), datumList(rm.keys[hits[0]].old), child.Name)
	e.Table, e.RelationID, e.Constraint = child.Name, child.ID, fk.Name
	return e
}

// checkPresent fails unless the parent table holds each key of ks.
func (c *Ctx) checkPresent(ks *keySet) error {
	parent, ok := c.Constraints.Cat.Table(ks.fk.RefTable)
	if !ok {
		return nil
	}
	return c.checkPresentIn(ks, parent)
}

func (c *Ctx) checkPresentIn(ks *keySet, parent *catalog.Table) error {
	encs := make([]string, 0, len(ks.keys))
	for enc := range ks.keys {
		encs = append(encs, enc)
	}
	slices.Sort(encs) // the first missing key in key order, stably
	for _, enc := range encs {
		vals := ks.keys[enc]
		ok, err := c.parentHas(parent, ks.fk.RefCols, vals)
		if err != nil {
			return err
		}
		if !ok {
			return missingKey(ks.child, ks.fk, parent, vals)
		}
	}
	return nil
}

func missingKey(child *catalog.Table, fk *catalog.ForeignKey, parent *catalog.Table, vals []types.Datum) error {
	e := pgerror.New(pgerror.ForeignKeyViolation, "insert or update on table \"%s\" violates foreign key constraint \"%s\"", child.Name, fk.Name).
		WithDetail("Key (%s)=(%s) is not present in table \"%s\".", columnNames(child, fk.Cols), datumList(vals), parent.Name)
	e.Table, e.RelationID, e.Constraint = child.Name, child.ID, fk.Name
	return e
}

// parentHas reports whether parent holds a row whose refCols are vals: a
// point lookup through the primary key or the unique index on refCols.
func (c *Ctx) parentHas(parent *catalog.Table, refCols []uint32, vals []types.Datum) (bool, error) {
	tid := storage.TableID(parent.ID)
	keyOf := func(order []uint32) ([]byte, bool, error) {
		if len(order) != len(refCols) {
			return nil, false, nil
		}
		var b []byte
		for _, id := range order {
			i := slices.Index(refCols, id)
			if i < 0 {
				return nil, false, nil
			}
			var err error
			if b, err = appendKeyDatum(b, vals[i]); err != nil {
				return nil, false, err
			}
		}
		return b, true, nil
	}
	if key, ok, err := keyOf(parent.PrimaryKey); err != nil || ok {
		if err != nil {
			return false, err
		}
		_, found, err := c.Txn.Get(tid, key)
		return found, err
	}
	for i := range parent.Indexes {
		ix := &parent.Indexes[i]
		if !ix.Unique {
			continue
		}
		key, ok, err := keyOf(ix.ColumnIDs())
		if err != nil {
			return false, err
		}
		if ok {
			_, found, err := c.Txn.GetUnique(tid, storage.IndexID(ix.ID), key)
			return found, err
		}
	}
	return false, pgerror.New(pgerror.InvalidForeignKey, "there is no unique constraint matching given keys for referenced table \"%s\"", parent.Name)
}

func columnNames(t *catalog.Table, ids []uint32) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = t.Columns[t.ColumnByID(id)].Name
	}
	return strings.Join(names, ", ")
}

func datumList(vals []types.Datum) string {
	var b []byte
	for i, d := range vals {
		if i > 0 {
			b = append(b, ", "...)
		}
		if d.IsNull() {
			b = append(b, "null"...)
		} else {
			b = types.AppendText(b, d, nil)
		}
	}
	return string(b)
}

// ValidateForeignKey checks that every row of child references a row of
// parent through fk: ALTER TABLE … ADD FOREIGN KEY and VALIDATE
// CONSTRAINT.
func ValidateForeignKey(c *Ctx, child *catalog.Table, fk *catalog.ForeignKey, parent *catalog.Table) error {
	scan := plan.NewScan(child)
	for i := range child.Columns {
		scan.Needed[i] = true
	}
	rows, err := collect(c, scan)
	if err != nil {
		return err
	}
	ks := &keySet{child: child, fk: fk, keys: map[string][]types.Datum{}}
	for _, row := range rows {
		vals, enc, nulls, err := c.fkKey(row, child, fk.Cols, parent, fk.RefCols)
		if err != nil {
			return err
		}
		if nulls > 0 {
			if fk.Match == catalog.FKMatchFull && nulls < len(fk.Cols) {
				return pgerror.New(pgerror.ForeignKeyViolation, "insert or update on table \"%s\" violates foreign key constraint \"%s\"", child.Name, fk.Name).
					WithDetail("MATCH FULL does not allow mixing of null and nonnull key values.")
			}
			continue
		}
		ks.add(enc, vals)
	}
	return c.checkPresentIn(ks, parent)
}

// DeferredChecks are the checks of deferred foreign keys a transaction
// owes at commit.
type DeferredChecks struct {
	present []*keySet
	removed []removal
	// all and named are SET CONSTRAINTS' modes (nil/absent: the
	// constraint's own INITIALLY).
	all   *bool
	named map[uint32]bool
}

// SetMode is SET CONSTRAINTS: deferred or immediate for every deferrable
// foreign key (ids nil) or for those ids. Checks pending for a constraint
// made immediate run at once, as in PostgreSQL.
func (d *DeferredChecks) SetMode(c *Ctx, ids []uint32, deferred bool) error {
	if ids == nil {
		d.all, d.named = &deferred, nil
	} else {
		if d.named == nil {
			d.named = map[uint32]bool{}
		}
		for _, id := range ids {
			d.named[id] = deferred
		}
	}
	if deferred {
		return nil
	}
	now := &DeferredChecks{}
	var present []*keySet
	var removed []removal
	for _, ks := range d.present {
		if d.isDeferred(ks.fk) {
			present = append(present, ks)
		} else {
			now.present = append(now.present, ks)
		}
	}
	for _, rm := range d.removed {
		if d.isDeferred(rm.ref.FK) {
			removed = append(removed, rm)
		} else {
			now.removed = append(now.removed, rm)
		}
	}
	d.present, d.removed = present, removed
	return CheckDeferred(c, now)
}

// isDeferred reports whether fk's checks wait for commit.
func (d *DeferredChecks) isDeferred(fk *catalog.ForeignKey) bool {
	if !fk.Deferrable {
		return false
	}
	if m, ok := d.named[fk.ID]; ok {
		return m
	}
	if d.all != nil {
		return *d.all
	}
	return fk.Deferred
}

// Pending reports whether any check waits for commit.
func (d *DeferredChecks) Pending() bool {
	return d != nil && (len(d.present) > 0 || len(d.removed) > 0)
}

func (d *DeferredChecks) addPresent(ks *keySet) { d.present = append(d.present, ks) }

func (d *DeferredChecks) addUnreferenced(rm removal) { d.removed = append(d.removed, rm) }

// CheckDeferred runs the deferred checks against the transaction's state
// at commit, with c's catalog (a constraint dropped since is not checked).
func CheckDeferred(c *Ctx, d *DeferredChecks) error {
	if !d.Pending() || c.Constraints == nil {
		return nil
	}
	cat := c.Constraints.Cat
	current := func(tableID uint32, fkID uint32) (*catalog.Table, *catalog.ForeignKey) {
		t, ok := cat.Table(tableID)
		if !ok {
			return nil, nil
		}
		for i := range t.ForeignKeys {
			if t.ForeignKeys[i].ID == fkID {
				return t, &t.ForeignKeys[i]
			}
		}
		return nil, nil
	}
	for _, ks := range d.present {
		t, fk := current(ks.child.ID, ks.fk.ID)
		if fk == nil {
			continue
		}
		if err := c.checkPresent(&keySet{child: t, fk: fk, keys: ks.keys}); err != nil {
			return err
		}
	}
	for _, rm := range d.removed {
		t, fk := current(rm.ref.Table.ID, rm.ref.FK.ID)
		parent, ok := cat.Table(rm.parent.ID)
		if fk == nil || !ok {
			continue
		}
		rm.ref, rm.parent = catalog.Reference{Table: t, FK: fk}, parent
		if err := c.checkUnreferenced(rm, false); err != nil {
			return err
		}
	}
	return nil
}
