package refresh

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/storage"
)

// A materialized view is unpopulated after CREATE … WITH NO DATA and
// REFRESH … WITH NO DATA, as in PostgreSQL: it has no rows and no
// checkpoint, reading it fails with 55000 (the binder refuses it, from the
// catalog's Dataset.Unpopulated), and the next refresh, a full recompute,
// populates it and clears the flag in its own commit.

// Unpopulate empties view v in txn for REFRESH … WITH NO DATA: its rows,
// its aggregate states and its checkpoint. The caller marks the catalog.
func Unpopulate(txn *storage.Txn, v *catalog.Table) error {
	info := exec.StorageInfo(v)
	if err := txn.Truncate(info); err != nil {
		return err
	}
	txn.SetOperation(info, "REFRESH", map[string]string{"technique": "WITH NO DATA"})
	if err := clearGroupStates(txn, v.ID); err != nil {
		return err
	}
	if err := clearInnerStates(txn, v.ID); err != nil {
		return err
	}
	return txn.DeleteMeta(checkpointKey(v.ID))
}

// markPopulated clears v's Unpopulated flag in txn (the refresh that
// populates it); cat is txn's catalog, v its current descriptor.
func (r *Runner) markPopulated(txn *storage.Txn, cat *catalog.Catalog, v *catalog.Table) error {
	if v.Dataset == nil || !v.Dataset.Unpopulated {
		return nil
	}
	nc := cat.Clone()
	nt := v.Clone()
	nt.Dataset.Unpopulated = false
	nc.PutTable(nt)
	return r.Catalog.Persist(txn, nc, []uint32{v.ID}, nil)
}

// CheckConcurrently applies PostgreSQL's rules of REFRESH MATERIALIZED
// VIEW CONCURRENTLY v [WITH NO DATA] (every refresh here leaves readers
// unblocked, so the option changes nothing else): v must be populated
// (0A000), the option excludes WITH NO DATA (42601), and v needs a unique
// index (55000; indexes here have no WHERE clause or expressions).
func CheckConcurrently(cat *catalog.Catalog, v *catalog.Table, noData bool) error {
	if v.Dataset != nil && v.Dataset.Unpopulated {
		return pgerror.New(pgerror.FeatureNotSupported, "CONCURRENTLY cannot be used when the materialized view is not populated")
	}
	if noData {
		return pgerror.New(pgerror.SyntaxError, "CONCURRENTLY and WITH NO DATA options cannot be used together")
	}
	for _, ix := range v.Indexes {
		if ix.Unique {
			return nil
		}
	}
	return pgerror.New(pgerror.ObjectNotInPrerequisiteState, "cannot refresh materialized view \"%s\" concurrently", cat.QualifiedName(v)).
		WithHint("Create a unique index with no WHERE clause on one or more columns of the materialized view.")
}
