package storage

import (
	"context"
)

// Ingesting a built index (CREATE INDEX on a big table, R-T10).
//
// A fresh index (BuildIndex: nothing of it is on disk) with at least
// ingestEntries entries (the stage threshold, Options.StageRows, capped
// at 16384: past that an ingest costs less than the batch, measured by
// BenchmarkBuildIndex at 20k entries) is not written through
// the commit's batch: its entries, already sorted in the write set, go
// to an SSTable of their own, and the commit takes the staged-commit
// path (stage.go): the rest of its batch is written as SSTables beside
// it, the log is synced, and one ingest makes everything visible at one
// sequence number. The index's key span is new, so Pebble places the
// file at the bottom of the tree: no WAL record, no memtable, no flush
// and no compaction rewrites the entries.
//
//   - Atomic and crash-safe as a staged insert: before the ingest only
//     files under the stage directory exist (start-up deletes them), the
//     ingest is one version edit, and readers see the catalog's index
//     and its entries together or neither.
//   - Conflicts are unchanged: BuildIndex's rules (a concurrent commit
//     that wrote the table's rows or changed its indexes fails the
//     commit) are checked by validate as before; the entries hold no
//     conflict keys of their own (a fresh index never had).
//   - Only a commit that writes no range deletion can ingest (the
//     staged path writes sets and deletes only): one that drops or
//     truncates a table, drops an index, vacuums a feed or switches a
//     rewrite writes its fresh indexes through the batch, as before.
//     TiKV never ingests (its stage threshold is off).

// ingestEntries caps the entries a built index needs to be ingested.
const ingestEntries = 1 << 14

// ingestIndexes marks the fresh indexes the commit ingests and returns
// the bytes their entries take, or 0 when it ingests none.
func (t *Txn) ingestIndexes(plans []*tablePlan) int {
	db := t.db
	if db.stage.threshold <= 0 || db.sharedStore || db.pdb == nil {
		return 0
	}
	for _, p := range plans {
		tw := p.tw
		if tw.dropped || tw.truncated || p.wipes || tw.vacuum || tw.rewrite != nil || len(tw.droppedIdx) > 0 {
			return 0
		}
	}
	size := 0
	for _, p := range plans {
		for _, ix := range p.tw.idx {
			if !ix.fresh || ix.entries.Len() < min(db.stage.threshold, ingestEntries) {
				continue
			}
			ix.ingest = true
			for w := range ix.entries.All() {
				size += indexPrefixLen + len(w.key) + len(w.value)
			}
		}
	}
	return size
}

// buildIndexes writes each ingested index of p's table as one SSTable.
func (sc *stagedCommit) buildIndexes(ctx context.Context, t *Txn, p *tablePlan) error {
	tw := p.tw
	for _, id := range tw.sortedIndexes() {
		ix := tw.idx[id]
		if !ix.ingest {
			continue
		}
		w, err := sc.db.newSST()
		if err != nil {
			return err
		}
		var key, first, last []byte
		n := 0
		for e := range ix.entries.All() {
			if n++; n%commitCheckEvery == 0 {
				if err = ctx.Err(); err != nil {
					break
				}
			}
			if e.del {
				continue // nothing of a fresh index is on disk to delete
			}
			key = indexKey(key[:0], p.into(), id, e.key)
			if first == nil {
				first = cloneBytes(key)
			}
			last = append(last[:0], key...)
			if err = w.set(key, e.value); err != nil {
				break
			}
		}
		if ferr := sc.finishSST(w, first, last); err == nil {
			err = ferr
		}
		if err != nil {
			return err
		}
	}
	return nil
}
