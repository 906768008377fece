package refresh

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// A materialized view's rows are keyed by their content: the 64-bit hash of
// the encoded row, then a 32-bit number telling copies apart. A refresh that
// must remove one copy of a row finds it with one prefix seek, whatever the
// view's size (invariant 3 of doc.go).

const viewKeyLen = 12

func contentPrefix(value []byte) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, viewKeyLen), xxhash.Sum64(value))
}

// viewWriter turns query rows into stored view rows: casts to the column
// types, NOT NULL checks, expectations (R-M2).
type viewWriter struct {
	v    *catalog.Table
	info storage.TableInfo
	txn  *storage.Txn
	env  *types.Env
	ids  []uint32
	es   []*expectation
	row  []types.Datum
	// seqs numbers copies of rows inserted after a Truncate (full refresh:
	// the table is known empty, so no seek is needed).
	seqs map[uint64]uint32
	key  []byte // insertCopy's (storage copies keys it keeps)
	// writes charges what the writer writes (write_budget.go).
	writes writeBudget
	// rw is the view's new generation when a full recompute writes one
	// (rewrite.go), chunks the chunks written to it.
	rw     *storage.Rewrite
	chunks int
}

func newViewWriter(in *Input) (*viewWriter, error) {
	v := in.View
	w := &viewWriter{v: v, info: exec.StorageInfo(v), txn: in.Txn, env: in.Exec.Env,
		row: make([]types.Datum, len(v.Columns)), writes: writeBudget{mem: in.Exec.Mem}}
	for _, c := range v.Columns {
		w.ids = append(w.ids, c.ID)
	}
	es, err := compileExpectations(in)
	if err != nil {
		return nil, err
	}
	w.es = es
	in.expectations = es
	return w, nil
}

// encode casts r to the view's columns and encodes it. checkOnly (rows
// leaving the view) skips the expectation counts and FAIL UPDATE; keep is
// false for a row a DROP ROW expectation removes.
func (w *viewWriter) encode(dst []byte, r exec.Row, leaving bool) (out []byte, keep bool, err error) {
	for i, c := range w.v.Columns {
		d := r[i]
		if !d.IsNull() && (d.K != c.Type.Kind || c.Type.Width > 0 || c.Type.Precision > 0) && !fitsNumeric(d, c.Type) {
			if d, err = types.Cast(d, c.Type, w.env, false); err != nil {
				return nil, false, err
			}
		}
		if c.NotNull && d.IsNull() {
			if leaving {
				return nil, false, nil
			}
			return nil, false, pgerror.New(pgerror.NotNullViolation, "null value in column \"%s\" of %s \"%s\" violates not-null constraint", c.Name, datasetNoun(w.v), w.v.Name)
		}
		w.row[i] = d
	}
	if w.es != nil {
		if leaving {
			keep, err = checkExpectations(w.es, w.row)
		} else {
			keep, err = applyExpectations(w.es, w.v, w.row)
		}
		if err != nil || !keep {
			return nil, false, err
		}
	}
	return types.AppendRowValue(dst, w.ids, w.row), true, nil
}

// fitsNumeric reports whether d is a decimal that a cast to t (a
// NUMERIC(p,s) column) would leave as it is: already of scale s, with at
// most p-s digits before the point. (Most values of a DECIMAL view column
// come from a column of that type: the cast, a quantize and a copy per
// value, is skipped.)
func fitsNumeric(d types.Datum, t types.T) bool {
	if d.K != types.KindNumeric || t.Kind != types.KindNumeric || t.Precision == 0 || d.D.Form != apd.Finite || d.D.Exponent != -t.Scale {
		return false
	}
	return d.D.IsZero() || int32(d.D.NumDigits())+d.D.Exponent <= t.Precision-t.Scale
}

// insertFresh writes a row into a view truncated in this transaction.
func (w *viewWriter) insertFresh(value []byte) error {
	h := xxhash.Sum64(value)
	if w.seqs == nil {
		w.seqs = map[uint64]uint32{}
	}
	seq := w.seqs[h]
	w.seqs[h] = seq + 1
	// Storage copies the key: one buffer serves every row.
	w.key = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint64(w.key[:0], h), seq)
	return w.insert(w.key, value)
}

// errDrift reports a view whose stored rows are not what its checkpoint
// says: an incremental change could not be applied. The refresh falls back
// to a full recompute (and the invariants build fails loudly).
type errDrift struct{ msg string }

func (e *errDrift) Error() string { return e.msg }

// applyDelta writes plus − minus, consolidated by content, into the view.
// It returns the rows inserted and deleted.
func (w *viewWriter) applyDelta(ctx context.Context, xc *exec.Ctx, plus, minus plan.Node) (ins, del int64, err error) {
	z, err := consolidate([]zTerm{{planRows(ctx, xc, minus), -1}, {planRows(ctx, xc, plus), 1}},
		func(dst []byte, r exec.Row, sign int64) ([]byte, bool, error) { return w.encode(dst, r, sign < 0) }, false)
	if err != nil {
		return 0, 0, err
	}
	// In the view's key order (content hash): the transaction's write set
	// appends ascending keys without a tree descent, so the deletions (and
	// the inserts among themselves) go in as runs rather than scattered
	// (W1's 26k touched groups: applyDelta was 0.63 s of a 0.92 s refresh,
	// most of it in the write set's tree).
	entries := byViewKey(z.Entries())
	// The rows deleted and inserted as copy 0 (nearly all of them): read
	// in one ordered pass rather than a lookup each. (A unique index entry
	// an insert takes was usually freed by a deletion here, which the
	// transaction's own writes answer.)
	var keys [][]byte
	for _, e := range entries {
		if e.Weight == 1 || e.Weight == -1 {
			keys = append(keys, binary.BigEndian.AppendUint32(contentPrefix([]byte(e.Key)), 0))
		}
	}
	if err := w.txn.PrefetchRows(w.info.ID, keys); err != nil {
		return 0, 0, err
	}
	// Deletions first: a row that moves between copies keeps numbers low.
	for _, e := range entries {
		if n := e.Weight; n < 0 {
			if err := w.deleteCopies([]byte(e.Key), -n); err != nil {
				return ins, del, err
			}
			del += -n
		}
	}
	for _, e := range entries {
		if n := e.Weight; n > 0 {
			if err := w.insertCopies([]byte(e.Key), n); err != nil {
				return ins, del, err
			}
			ins += n
		}
	}
	return ins, del, nil
}

// byViewKey returns the entries (encoded view rows) sorted by their
// storage key's prefix, the content hash; ties by content.
func byViewKey(entries []ZEntry) []ZEntry {
	type keyed struct {
		h uint64
		e ZEntry
	}
	ks := make([]keyed, len(entries))
	for i, e := range entries {
		ks[i] = keyed{xxhash.Sum64String(e.Key), e}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := cmp.Compare(a.h, b.h); c != 0 {
			return c
		}
		return strings.Compare(a.e.Key, b.e.Key)
	})
	out := make([]ZEntry, len(ks))
	for i := range ks {
		out[i] = ks[i].e
	}
	return out
}

func (w *viewWriter) deleteCopies(value []byte, n int64) error {
	prefix := contentPrefix(value)
	// Most rows have one copy, numbered 0: one point lookup.
	if n == 1 {
		r, ok, err := w.txn.Get(w.info.ID, binary.BigEndian.AppendUint32(append([]byte(nil), prefix...), 0))
		if err != nil {
			return err
		}
		if ok && string(r.Value) == string(value) {
			return w.deleteRow(r)
		}
	}
	it := w.txn.Scan(w.info.ID, prefix, storage.PrefixEnd(prefix))
	var victims []storage.Row
	for int64(len(victims)) < n && it.Next() {
		r := it.Row()
		if string(r.Value) == string(value) {
			victims = append(victims, storage.Row{Key: append([]byte(nil), r.Key...), RowID: r.RowID, Value: append([]byte(nil), r.Value...), CommitVersion: r.CommitVersion})
		}
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return err
	}
	if int64(len(victims)) < n {
		return &errDrift{msg: "materialized view \"" + w.v.Name + "\" does not hold a row its last refresh wrote"}
	}
	for _, r := range victims {
		if err := w.deleteRow(r); err != nil {
			return err
		}
	}
	return nil
}

func (w *viewWriter) insertCopies(value []byte, n int64) error {
	prefix := contentPrefix(value)
	if n == 1 {
		// The usual case: no row with this hash yet, so copy 0 is free.
		// Insert checks that itself (one lookup, not two); a taken key
		// falls through to numbering after the copies there.
		key := binary.BigEndian.AppendUint32(append([]byte(nil), prefix...), 0)
		err := w.insert(key, value)
		var dup *storage.DuplicateKeyError
		if !errors.As(err, &dup) || dup.Index != 0 {
			return err
		}
	}
	it := w.txn.Scan(w.info.ID, prefix, storage.PrefixEnd(prefix))
	next := uint32(0)
	for it.Next() {
		k := it.Row().Key
		if len(k) == viewKeyLen {
			if s := binary.BigEndian.Uint32(k[8:]); s >= next {
				next = s + 1
			}
		}
	}
	err := it.Err()
	it.Close()
	if err != nil {
		return err
	}
	for i := int64(0); i < n; i++ {
		key := binary.BigEndian.AppendUint32(append([]byte(nil), prefix...), next)
		next++
		if err := w.insert(key, value); err != nil {
			return err
		}
	}
	return nil
}
