package plan

import (
	"slices"
	"sort"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// OnConflict is INSERT … ON CONFLICT [(key) | ON CONSTRAINT name] DO NOTHING
// | DO UPDATE SET … [WHERE …]. A conflict is on the primary key or a
// unique index (R-T10): the arbiters, inferred from the key columns or
// named. Sets and Where are bound over the existing row (the table's scan
// layout) followed by the proposed row (EXCLUDED, the table's columns).
type OnConflict struct {
	DoNothing bool
	// Arbiters are the unique keys whose conflicts the clause handles: 0
	// for the primary key, else a unique index's id. Empty (DO NOTHING
	// without a target): every unique key.
	Arbiters []uint32
	Sets     []SetClause
	Where    Expr
}

// IsArbiter reports whether a conflict on key (0: the primary key, else a
// unique index id) is the clause's to handle.
func (oc *OnConflict) IsArbiter(key uint32) bool {
	if len(oc.Arbiters) == 0 {
		return true
	}
	for _, a := range oc.Arbiters {
		if a == key {
			return true
		}
	}
	return false
}

func (b *Binder) bindOnConflict(oc *pg_query.OnConflictClause, t *catalog.Table, rv *pg_query.RangeVar) (*OnConflict, error) {
	out := &OnConflict{DoNothing: oc.Action == pg_query.OnConflictAction_ONCONFLICT_NOTHING}
	if inf := oc.Infer; inf != nil {
		if inf.WhereClause != nil {
			return nil, b.errAt(oc.Location, pgerror.FeatureNotSupported, "ON CONFLICT with a partial-index WHERE is not supported")
		}
		if inf.Conname != "" {
			switch ix := t.IndexByName(inf.Conname); {
			case len(t.PrimaryKey) > 0 && inf.Conname == t.PrimaryKeyName():
				out.Arbiters = []uint32{0}
			case ix != nil && ix.IsConstraint():
				out.Arbiters = []uint32{ix.ID}
			default:
				return nil, b.errAt(oc.Location, pgerror.UndefinedObject, "constraint \"%s\" for table \"%s\" does not exist", inf.Conname, t.Name)
			}
		} else {
			var cols []int
			for _, e := range inf.IndexElems {
				ie := e.GetIndexElem()
				if ie == nil || ie.Name == "" {
					return nil, b.errAt(oc.Location, pgerror.FeatureNotSupported, "ON CONFLICT on an expression is not supported")
				}
				i := t.ColumnIndex(ie.Name)
				if i < 0 {
					return nil, b.errAt(oc.Location, pgerror.UndefinedColumn, "column \"%s\" does not exist", ie.Name)
				}
				cols = append(cols, i)
			}
			sort.Ints(cols)
			cols = slices.Compact(cols)
			// Every unique key on exactly these columns is an arbiter.
			keyCols := func(ids []uint32) []int {
				var out []int
				for _, id := range ids {
					out = append(out, t.ColumnByID(id))
				}
				sort.Ints(out)
				return slices.Compact(out)
			}
			if len(t.PrimaryKey) > 0 && equalInts(cols, keyCols(t.PrimaryKey)) {
				out.Arbiters = append(out.Arbiters, 0)
			}
			for _, ix := range t.Indexes {
				if ix.Unique && equalInts(cols, keyCols(ix.ColumnIDs())) {
					out.Arbiters = append(out.Arbiters, ix.ID)
				}
			}
			if len(out.Arbiters) == 0 {
				return nil, b.errAt(oc.Location, pgerror.InvalidColumnReference, "there is no unique or exclusion constraint matching the ON CONFLICT specification")
			}
		}
	} else if !out.DoNothing {
		return nil, b.errAt(oc.Location, pgerror.SyntaxError, "ON CONFLICT DO UPDATE requires inference specification or constraint name").
			WithHint("For example, ON CONFLICT (column_name).")
	}
	if out.DoNothing {
		return out, nil
	}
	alias := t.Name
	if rv.Alias != nil {
		alias = rv.Alias.Aliasname
	}
	scan := NewScan(t)
	sc := b.scanScope(scan, alias, t.RowTracking()).add(b.scanScope(NewScan(t), "excluded", false))
	var err error
	if out.Sets, err = b.bindSetClauses(oc.TargetList, t, sc); err != nil {
		return nil, err
	}
	if oc.WhereClause != nil {
		cond, err := b.bindExpr(oc.WhereClause, &exprCtx{sc: sc, clause: "WHERE"})
		if err != nil {
			return nil, err
		}
		if out.Where, err = b.boolArg(cond, nodeLocation(oc.WhereClause), "WHERE"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
