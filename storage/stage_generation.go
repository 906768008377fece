package storage

import (
	"context"
	"encoding/binary"
	"fmt"
)

// Staged inserts on an engine that cannot ingest (TiKV). Pebble makes a
// staged table's rows visible with one ingest (stage.go); another engine
// has no such thing, and one transaction of millions of keys would pass
// its transaction size limit (and hold them all in memory). So there the
// commit turns each staged table into a new generation of it
// (generation.go), written in bounded batches outside the transaction:
//
//   - the rows the snapshot holds, each with its row id, commit version
//     and value as they were (R-T6: a row's id never changes), then the
//     staged rows, merged from their runs in key order (a key in two runs
//     is a *DuplicateKeyError, as on Pebble); index entries are made
//     from the rows, as every rewrite makes them;
//   - the commit's small transaction switches the table to it; the
//     previous generation is deleted after the commit, in bounded parts,
//     where it is a dead key space (delKeySpace);
//   - the conflict rules are a rewrite's, which are the staged commit's
//     on Pebble too: it counts as a TRUNCATE;
//   - the history entry keeps the statement's operation and counts only
//     the staged rows as inserted (Rewrite.kept);
//   - with the feed on, an insert record per staged row is written with
//     the rows, in key order, under the generation's change slot
//     (changeSlot) instead of the version, which a concurrent commit of
//     the table could take before the switch fails: no key of the slot
//     is another commit's, and none is read before the switch, whose
//     history entry names it (ChangesAt; the change iterator reads the
//     slot for that version). The slot goes with its version's records
//     (a vacuum, a drop) and with the generation when the switch fails.
//
// Copying the snapshot's rows makes a load into a table that has rows
// cost as much as the table: staging pays off for loads into new or
// small tables (COPY, CREATE TABLE AS, a restore), which is what it is
// for.
func (t *Txn) stageAsGenerations(ctx context.Context) error {
	for _, id := range t.order {
		tw := t.tables[id]
		if tw.stage == nil {
			continue
		}
		if err := t.stageAsGeneration(ctx, tw); err != nil {
			return err
		}
	}
	return nil
}

func (t *Txn) stageAsGeneration(ctx context.Context, tw *tableWrites) error {
	st := tw.stage
	old, err := t.rowsOf(tw.id)
	if err != nil {
		return err
	}
	ops, info := tw.ops, tw.written
	tw.stage = nil
	r, err := t.RewriteRows(info)
	if err != nil {
		tw.stage = st // endStages removes its runs
		return err
	}
	tw.ops = ops // RewriteRows noted a TRUNCATE
	if info.ChangeDataFeed {
		r.slot = changeSlot(r.rows)
	}
	defer removeRuns(t.db, st)
	if err := r.keepSnapshotRows(ctx, old); err != nil {
		return err
	}
	var kbuf, vbuf []byte
	return t.db.mergeRuns(ctx, st.rows, func(k, v []byte) error {
		id, n := binary.Uvarint(v)
		if n <= 0 {
			return fmt.Errorf("storage: corrupt staged row of table %d", tw.id)
		}
		rowID, val := int64(id), v[n:]
		if err := r.insertRow(k, rowID, r.version, val); err != nil || r.slot == 0 {
			return err
		}
		kbuf = cdfKey(kbuf[:0], tw.id, r.slot, r.cdfSeq)
		r.cdfSeq++
		vbuf = appendChangeRecord(vbuf[:0], recInsert, rowID, k, val, nil, nil)
		if err := r.b.set(kbuf, vbuf); err != nil {
			r.err = err
			return err
		}
		return nil
	}, func(k []byte) error {
		return &DuplicateKeyError{Table: tw.id, Key: cloneBytes(k)}
	})
}

// keepSnapshotRows writes every row the snapshot holds under rows id old
// into the new content as it is.
func (r *Rewrite) keepSnapshotRows(ctx context.Context, old TableID) error {
	s, e := tableSpan(prefixRows, old)
	it, err := r.t.snap.newIter(s, e)
	if err != nil {
		return err
	}
	defer it.Close()
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if err := r.keepRow(ctx, it, &n); err != nil {
			return err
		}
	}
	return it.Error()
}

// removeRuns deletes a staged table's run files.
func removeRuns(db *DB, st *stagedTable) {
	for _, p := range st.rows {
		_ = db.stage.fs.Remove(p)
	}
	for _, ps := range st.idx {
		for _, p := range ps {
			_ = db.stage.fs.Remove(p)
		}
	}
}

// changeSlot is the key the change records of the staged generation
// under rows id rows are kept under in place of a version (cdfKey): past
// every version (they stay below 1<<62), and one rows id's alone.
func changeSlot(rows TableID) int64 { return 1<<62 | int64(rows) }

// slotSpan is the change records of a slot.
func slotSpan(tbl TableID, slot int64) (start, end []byte) {
	return cdfKey(nil, tbl, slot, 0), cdfKey(nil, tbl, slot+1, 0)
}
