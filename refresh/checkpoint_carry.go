package refresh

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/storage"
)

// KeepCheckpoints carries the refresh checkpoints of the materialized
// views of after over from before, when a statement rewrote stored
// queries to mean what they meant (ALTER … RENAME TO / SET SCHEMA: the
// views name the moved relation anew, sql/ddl's MoveRelation). The
// fingerprint holds the query text (and a plain view's it reads), so it
// changed; a checkpoint that matched the view in before gets the
// view's fingerprint in after, and the next refresh can stay incremental
// instead of recomputing in full. Any other checkpoint is left alone.
func KeepCheckpoints(txn *storage.Txn, before, after *catalog.Catalog) error {
	for _, v := range after.Tables() {
		if v.Kind != catalog.KindMaterializedView {
			continue // a streaming table's checkpoint is not a fingerprint's
		}
		old, ok := before.Table(v.ID)
		if !ok {
			continue
		}
		was, now := Fingerprint(before, old), Fingerprint(after, v)
		if was == now {
			continue
		}
		ckpt, err := ReadCheckpoint(txn, v.ID)
		if err != nil {
			return err
		}
		if ckpt == nil || ckpt.Definition != was {
			continue
		}
		ckpt.Definition = now
		if err := putJSON(txn, checkpointKey(v.ID), ckpt); err != nil {
			return err
		}
	}
	return nil
}
