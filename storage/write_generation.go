package storage

import (
	"bytes"
	"context"
)

// Big writes on an engine that cannot hold them in one transaction
// (TiKV): a commit whose write set for a table holds at least the stage
// threshold's rows (Options.StageRows) — an UPDATE or DELETE of many
// rows, an INSERT that did not stage — makes the table a new generation
// (generation.go), as a staged load does (stage_generation.go):
//
//   - the change records are those the commit would have written (the
//     net effect per row id, updates paired across key moves, in key
//     order), under the generation's change slot, written and synced
//     before the commit in batches of their own; the counts are the
//     history entry's;
//   - the new content is the snapshot's rows with the write set laid
//     over them in key order: a row the transaction did not touch keeps
//     its row id and commit version, a written one gets the version;
//   - the commit's small transaction switches to it; the previous
//     generation is deleted after it, in parts, where it is a dead key
//     space (every table created on such an engine has one of its own).
//
// The write set is still held in memory until the commit (bounded-memory
// UPDATE and DELETE are the executor's, not built yet); what this bounds
// is each engine transaction. Copying the rows the table had makes such
// a write cost as much as the table.
func (t *Txn) writesAsGenerations(ctx context.Context) error {
	threshold := t.db.stage.threshold
	if threshold <= 0 {
		return nil
	}
	for _, id := range t.order {
		tw := t.tables[id]
		if tw.rows.Len() < threshold || tw.rewrite != nil || tw.stage != nil || tw.truncated ||
			tw.created || tw.dropped || tw.indexChanged || tw.indexBuilt || tw.written.ID != tw.id {
			continue
		}
		if err := t.writeAsGeneration(ctx, tw); err != nil {
			return err
		}
	}
	return nil
}

func (t *Txn) writeAsGeneration(ctx context.Context, tw *tableWrites) error {
	old, err := t.rowsOf(tw.id)
	if err != nil {
		return err
	}
	ws, ops := tw.rows, tw.ops
	p := &tablePlan{tw: tw, st: tw.st, rows: old, moved: movedRows(ws)}
	r, err := t.RewriteRows(tw.written)
	if err != nil {
		return err
	}
	tw.ops = ops // RewriteRows noted a TRUNCATE
	p.version = r.version

	// The change records, counted (and written, with the feed on) as the
	// commit would have, but under the generation's slot.
	ce := changeEncoder{t: t, p: p, cdf: tw.info.ChangeDataFeed}
	if ce.cdf {
		r.slot = changeSlot(r.rows)
	}
	ce.toSlot(changeSlot(r.rows))
	for w := range ws.All() {
		if err := ce.diff(&w); err == nil {
			err = ce.err
		}
		if err != nil {
			_ = ce.endSlot()
			return err
		}
	}
	if err := ce.endSlot(); err != nil {
		return err
	}
	r.counted, r.ins, r.upd, r.del = true, p.ins, p.upd, p.del

	// The new content: the snapshot's rows, the writes laid over them.
	s, e := tableSpan(prefixRows, old)
	it, err := t.snap.newIter(s, e)
	if err != nil {
		return err
	}
	defer it.Close()
	valid := it.First()
	n := 0
	for w := range ws.All() {
		for ; valid && bytes.Compare(it.Key()[tablePrefixLen:], w.key) < 0; valid = it.Next() {
			if err := r.keepRow(ctx, it, &n); err != nil {
				return err
			}
		}
		if valid && bytes.Equal(it.Key()[tablePrefixLen:], w.key) {
			valid = it.Next() // the write replaces or deletes it
		}
		if !w.del {
			if err := r.insertRow(w.key, w.rowID, r.version, w.value); err != nil {
				return err
			}
		}
	}
	for ; valid; valid = it.Next() {
		if err := r.keepRow(ctx, it, &n); err != nil {
			return err
		}
	}
	return it.Error()
}

// keepRow writes the snapshot row at it into the new content as it is.
func (r *Rewrite) keepRow(ctx context.Context, it engineIter, n *int) error {
	if *n++; *n%commitCheckEvery == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	v, err := it.ValueAndErr()
	if err != nil {
		return err
	}
	rowID, version, val, err := parseRowValue(v)
	if err != nil {
		return err
	}
	r.kept++
	return r.insertRow(it.Key()[tablePrefixLen:], rowID, version, val)
}

// movedRows is the rows an Update moved to another key, by row id, each
// paired when the row existed in the snapshot (an update, not an
// insert): what the change records pair across keys (tablePlan.moved).
func movedRows(ws *writeSet) map[int64]*movedRow {
	var moved map[int64]*movedRow
	for w := range ws.All() {
		if w.moved && !w.del {
			if moved == nil {
				moved = make(map[int64]*movedRow)
			}
			moved[w.rowID] = &movedRow{key: w.key, value: w.value}
		}
	}
	pairMoves(moved, ws)
	return moved
}

// pairMoves marks the moved rows whose row id the snapshot had.
func pairMoves(moved map[int64]*movedRow, ws *writeSet) {
	if moved == nil {
		return
	}
	for w := range ws.All() {
		if w.origExists && (w.del || w.rowID != w.origRowID) {
			if m := moved[w.origRowID]; m != nil {
				m.paired = true
			}
		}
	}
}
