package refresh

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// Streaming tables (R-ST1–R-ST4). A streaming table reads some of its
// sources as streams (catalog.Dataset.Streams) and the others whole, at the
// refresh's snapshot (stream–static joins). Its checkpoint holds, per
// stream, the last version consumed. A default refresh runs the table's
// current query once per stream that moved, with that stream's scan
// replaced by the rows committed to it after the checkpoint (and the other
// streams by nothing), and appends what comes out; rows already appended
// are never revisited, so a changed definition applies to new rows only
// (R-ST2). A stream with no checkpoint (the first refresh, a stream the
// definition gained, FULL, RESET CHECKPOINTS) is read whole: its rows at the
// snapshot. FULL truncates the table first; RESET CHECKPOINTS keeps the
// rows, so they may then appear twice, as documented (R-ST3).
//
// A stream is read from its change feed in commit order. A commit that
// updates or deletes rows cannot be appended: the refresh fails naming it,
// unless the table has TBLPROPERTIES ('skipChangeCommits' = 'true'), which
// skips such commits whole (R-ST4).
//
// The appended rows, the new checkpoint, the run record and its events are
// written in the refresh's one transaction, so one storage batch: a crash
// leaves the previous state whole and the next refresh reprocesses exactly
// the rows after the checkpoint that committed — each source row is
// appended once.

// PropSkipChangeCommits is the streaming-table property that skips source
// commits that update or delete rows (R-ST4).
const PropSkipChangeCommits = "skipChangeCommits"

// Technique labels of a streaming table's runs (refresh_history, DESCRIBE).
const (
	// StreamAppend: the rows committed to the streams since the checkpoint
	// were processed and appended (or, after RESET CHECKPOINTS, every row).
	StreamAppend = AppendOnly
)

// CheckStreamingQuery reports what in q keeps it from being the query of a
// streaming table over the given streams, as a 0A000 error: every output
// row must come from one row of one stream — through filters, projections,
// expressions, UNION ALL and joins with static relations on the side whose
// rows a join keeps — so that the rows a stream gains map to rows appended,
// never to changes of rows already written.
func CheckStreamingQuery(q plan.Node, streams []uint32) error {
	set := map[uint32]bool{}
	for _, id := range streams {
		set[id] = true
	}
	n, _, err := streamReads(q, set)
	if err != nil {
		return err
	}
	if n == 0 {
		return pgerror.New(pgerror.InvalidObjectDefinition, "the query of a streaming table reads no stream in its FROM clause").
			WithHint("Read the source with STREAM(name) in FROM.")
	}
	return nil
}

// streamReads returns how many scans of a stream n reads at its level and
// the name of one of them.
func streamReads(n plan.Node, streams map[uint32]bool) (int, string, error) {
	for _, e := range plan.NodeExprs(n) {
		if name := streamInSubquery(e, streams); name != "" {
			return 0, "", notStreamable(name, "a subquery reads it", "Read the stream in the FROM clause; subqueries may read static tables.")
		}
	}
	if a, ok := n.(*plan.Apply); ok {
		if name := streamIn(a.Right, streams); name != "" {
			return 0, "", notStreamable(name, "a LATERAL item reads it", "Read the stream in the FROM clause before the LATERAL item.")
		}
	}
	if s, ok := n.(*plan.Scan); ok {
		if streams[s.Table.ID] {
			return 1, s.Table.Name, nil
		}
		return 0, "", nil
	}
	ins := plan.NodeInputs(n)
	counts := make([]int, len(ins))
	total, name := 0, ""
	for i, in := range ins {
		c, nm, err := streamReads(in, streams)
		if err != nil {
			return 0, "", err
		}
		counts[i], total = c, total+c
		if nm != "" {
			name = nm
		}
	}
	if total == 0 {
		return 0, "", nil
	}
	switch x := n.(type) {
	case *plan.Filter, *plan.Project, *plan.ProjectSet, *plan.Sort, *plan.CTEScan, *plan.KeyIn, *plan.Apply:
	case *plan.Join:
		l, r := counts[0], counts[1]
		if l > 0 && r > 0 {
			return 0, "", notStreamable(name, "it is joined with another stream (stream–stream joins are not supported)",
				"Join the stream with tables read whole (no STREAM), or union the streams with UNION ALL.")
		}
		switch {
		case x.Kind == plan.JoinFull:
			return 0, "", notStreamable(name, "it is a side of a FULL JOIN, whose unmatched rows would change as more rows arrive", "Use an inner join or a LEFT JOIN with the stream on the left.")
		case r > 0 && (x.Kind == plan.JoinLeft || x.Kind.LeftOnly()):
			return 0, "", notStreamable(name, "it is on the right of a LEFT, SEMI or ANTI join (or in IN/EXISTS), where a row it adds later would change rows already appended", "Put the stream on the left side, or use an inner join.")
		case l > 0 && x.Kind == plan.JoinRight:
			return 0, "", notStreamable(name, "it is on the left of a RIGHT JOIN, where a row it adds later would change rows already appended", "Put the stream on the right side of a RIGHT JOIN, or use an inner join.")
		}
	case *plan.SetOp:
		if x.Kind != plan.Union || !x.All {
			return 0, "", notStreamable(name, fmt.Sprintf("%s removes duplicates across rows already appended", setOpName(x)), "Use UNION ALL; a materialized view over the streaming table can remove duplicates.")
		}
	case *plan.Aggregate:
		return 0, "", notStreamable(name, "the query aggregates it, and an aggregate over rows already appended would have to change", aggHint)
	case *plan.Distinct:
		return 0, "", notStreamable(name, "DISTINCT would compare new rows with rows already appended", aggHint)
	case *plan.DistinctOn:
		return 0, "", notStreamable(name, "DISTINCT ON would compare new rows with rows already appended", aggHint)
	case *plan.Limit:
		return 0, "", notStreamable(name, "LIMIT/OFFSET depends on the whole stream", "Drop the LIMIT; read the streaming table with LIMIT instead.")
	case *plan.RecursiveUnion:
		return 0, "", notStreamable(name, "WITH RECURSIVE reads it", "Read the stream outside the recursive query.")
	default:
		return 0, "", notStreamable(name, "this query shape over a stream is not supported", "")
	}
	return total, name, nil
}

const aggHint = "Keep the streaming table to filters, projections and joins, and aggregate in a materialized view over it (CREATE MATERIALIZED VIEW … AS SELECT … FROM the_streaming_table GROUP BY …), which is refreshed incrementally."

func setOpName(s *plan.SetOp) string {
	if s.All {
		return s.Kind.String() + " ALL"
	}
	return s.Kind.String()
}

func notStreamable(stream, why, hint string) error {
	e := pgerror.New(pgerror.FeatureNotSupported, "a streaming table cannot read \"%s\" as a stream here: %s", stream, why)
	if hint != "" {
		e = e.WithHint("%s", hint)
	}
	return e
}

// streamIn returns the name of a stream n reads anywhere (its subqueries
// included), or "".
func streamIn(n plan.Node, streams map[uint32]bool) string {
	for id := range streams {
		if plan.ReadsTable(n, id) {
			return scanName(n, id)
		}
	}
	return ""
}

// streamInSubquery returns the name of a stream a subquery of e reads.
func streamInSubquery(e plan.Expr, streams map[uint32]bool) string {
	found := ""
	plan.Walk(e, func(x plan.Expr) bool {
		if sq, ok := x.(*plan.Subquery); ok && found == "" {
			for id := range streams {
				if plan.ReadsTable(sq.Plan, id) {
					found = scanName(sq.Plan, id)
				}
			}
		}
		return found == ""
	})
	return found
}

// scanName is the name of table id as n reads it (its id if not found).
func scanName(n plan.Node, id uint32) string {
	name := fmt.Sprint(id)
	var walk func(n plan.Node)
	walk = func(n plan.Node) {
		if s, ok := n.(*plan.Scan); ok && s.Table.ID == id {
			name = s.Table.Name
		}
		for _, in := range plan.NodeInputs(n) {
			walk(in)
		}
	}
	walk(n)
	return name
}

// substituteScans returns n with every scan for which repl returns a node
// replaced by it (nodes on the way copied, CTE references inlined). Scans
// under subqueries and LATERAL items are left alone: they read no stream
// (CheckStreamingQuery).
func substituteScans(n plan.Node, repl func(*plan.Scan) plan.Node) plan.Node {
	switch x := n.(type) {
	case *plan.Scan:
		if r := repl(x); r != nil {
			return r
		}
		return x
	case *plan.CTEScan:
		return substituteScans(x.Input, repl)
	case *plan.Apply:
		return rebuild(x, substituteScans(x.Left, repl), x.Right)
	case *plan.Filter, *plan.Project, *plan.ProjectSet, *plan.Sort, *plan.Distinct, *plan.Aggregate, *plan.Limit, *plan.KeyIn, *plan.Join, *plan.SetOp:
		ch := append([]plan.Node(nil), n.Children()...)
		for i, c := range ch {
			ch[i] = substituteScans(c, repl)
		}
		return rebuild(n, ch...)
	}
	return n
}

// streamBatch is what one stream gives a refresh: its rows committed after
// the checkpoint, or (snapshot) all its rows at the refresh's snapshot.
type streamBatch struct {
	source   *catalog.Table
	snapshot bool
	rows     [][]types.Datum
	from, to int64 // versions (from, to] read from the change feed
}

// refreshStreaming runs one refresh of streaming table v inside txn.
func (r *Runner) refreshStreaming(ctx context.Context, txn *storage.Txn, cat *catalog.Catalog, v *catalog.Table, opt Options) (*Result, error) {
	start := r.now()
	in, opt, err := loadInput(ctx, txn, cat, v, opt)
	if err != nil {
		return nil, err
	}
	in.Exec.Mem = r.budget()
	in.Exec.Funcs.StatementTime = start
	q, ckpt := in.Query, in.Checkpoint
	streams := append([]uint32(nil), v.Dataset.Streams...)
	slices.Sort(streams)
	if err := CheckStreamingQuery(q, streams); err != nil {
		return nil, err
	}
	consumed := map[uint32]int64{}
	if ckpt != nil && !opt.Full && !opt.ResetCheckpoints {
		consumed = ckpt.Sources
	}
	skip := false
	if val, ok := v.Property(PropSkipChangeCommits); ok && strings.EqualFold(val, "true") {
		skip = true
	}

	// What each stream gives this refresh.
	versions := map[uint32]int64{}
	var batches []*streamBatch
	var skipped []string
	for _, id := range streams {
		src, ok := cat.Table(id)
		if !ok {
			return nil, pgerror.New(pgerror.UndefinedTable, "a source of streaming table \"%s\" no longer exists", v.Name)
		}
		if txn.WritesTable(storage.TableID(id)) {
			// Its rows written here have no version yet: a checkpoint
			// cannot say they were processed, so they would be again.
			return nil, pgerror.New(pgerror.InvalidTransactionState, "streaming table \"%s\" cannot be refreshed in a transaction that wrote to its source %s", v.Name, cat.QualifiedName(src)).
				WithHint("Commit the writes to %s first, then create or refresh the streaming table.", cat.QualifiedName(src))
		}
		cur, err := txn.TableVersion(storage.TableID(id))
		if err != nil {
			return nil, err
		}
		versions[id] = cur
		from, ok := consumed[id]
		switch {
		case !ok:
			batches = append(batches, &streamBatch{source: src, snapshot: true, to: cur})
		case from < cur:
			b := &streamBatch{source: src, from: from, to: cur}
			sk, err := readStream(txn, cat, v, b, skip)
			if err != nil {
				return nil, err
			}
			skipped = append(skipped, sk...)
			if len(b.rows) > 0 {
				batches = append(batches, b)
			}
		}
	}

	res := &Result{Versions: versions, RunID: newID()}
	w, err := newViewWriter(in)
	if err != nil {
		return nil, err
	}
	ap := &appender{w: w}
	if opt.Full {
		if err := txn.Truncate(w.info); err != nil {
			return nil, err
		}
		ap.fresh = true
	}
	var read []string
	for _, b := range batches {
		id := b.source.ID
		n := substituteScans(q, func(s *plan.Scan) plan.Node {
			switch {
			case s.Table.ID == id && b.snapshot:
				return s
			case s.Table.ID == id:
				return &plan.Given{Cols: s.Columns(), Rows: b.rows}
			case slices.Contains(streams, s.Table.ID):
				return &plan.Given{Cols: s.Columns()}
			}
			return nil
		})
		if b.snapshot {
			rows, err := txn.RowCount(storage.TableID(id))
			if err != nil {
				return nil, err
			}
			res.Stats.RowsRead += rows
			read = append(read, fmt.Sprintf("%s: all %d rows at version %d", cat.QualifiedName(b.source), rows, b.to))
		} else {
			res.Stats.RowsRead += int64(len(b.rows))
			read = append(read, fmt.Sprintf("%s: %d rows committed in versions %d..%d", cat.QualifiedName(b.source), len(b.rows), b.from+1, b.to))
		}
		if err := ap.run(ctx, in.Exec, n, &res.Stats); err != nil {
			return nil, err
		}
	}
	if err := ap.flush(&res.Stats); err != nil {
		return nil, err
	}
	switch {
	case opt.Full:
		res.Technique = FullRecompute
		res.Reason = "REFRESH FULL: the table was truncated, its checkpoints cleared and every source row reprocessed"
	case len(batches) == 0:
		res.Technique, res.Reason = NoOp, "no source rows were committed since the checkpoint"
	case opt.ResetCheckpoints:
		res.Technique = StreamAppend
		res.Reason = "RESET CHECKPOINTS: every source row was reprocessed and appended; the rows already in the table were kept"
	default:
		res.Technique = StreamAppend
		res.Reason = "processed and appended the rows committed since the checkpoint"
	}
	if len(read) > 0 {
		res.Reason += " (" + strings.Join(read, "; ") + ")"
	}
	if len(skipped) > 0 {
		res.Reason += "; skipped commits that update or delete rows (skipChangeCommits): " + strings.Join(skipped, ", ")
	}
	if res.Technique != NoOp {
		txn.SetOperation(w.info, "STREAMING UPDATE", map[string]string{"outputMode": "Append", "refresh": streamMode(opt)})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := putJSON(txn, checkpointKey(v.ID), &Checkpoint{Sources: versions, At: start, Definition: v.Query}); err != nil {
		return nil, err
	}
	planning := map[string]any{"planning_information": map[string]any{
		"technique": res.Technique, "reason": res.Reason, "mode": streamMode(opt),
		"stream_versions": namedVersions(cat, versions), "checkpoint_versions": namedVersions(cat, consumed),
		"skipped_commits": skipped,
	}}
	return res, r.recordRun(txn, v, opt, start, res, planning, in.expectations)
}

func streamMode(opt Options) string {
	switch {
	case opt.Full:
		return "FULL"
	case opt.ResetCheckpoints:
		return "RESET CHECKPOINTS"
	}
	return "DEFAULT"
}

func namedVersions(cat *catalog.Catalog, m map[uint32]int64) map[string]int64 {
	out := map[string]int64{}
	for id, v := range m {
		name := fmt.Sprint(id)
		if t, ok := cat.Table(id); ok {
			name = cat.QualifiedName(t)
		}
		out[name] = v
	}
	return out
}

// readStream reads the rows committed to b.source in versions (b.from,
// b.to], commit by commit. A commit that updates or deletes rows fails the
// refresh (R-ST4) or, with skip, is left out whole; the skipped commits are
// returned as "name@vN".
func readStream(txn *storage.Txn, cat *catalog.Catalog, v *catalog.Table, b *streamBatch, skip bool) ([]string, error) {
	src := b.source
	name := cat.QualifiedName(src)
	ids := make([]uint32, len(src.Columns))
	for i, c := range src.Columns {
		ids[i] = c.ID
	}
	dec := types.NewRowDecoder(ids)
	width := len(src.Columns) + 2
	var skipped []string
	var pending [][]types.Datum
	version, changed := int64(-1), false
	flush := func() error {
		if version < 0 {
			return nil
		}
		if changed {
			if !skip {
				return changeCommitError(txn, cat, v, src, version)
			}
			skipped = append(skipped, fmt.Sprintf("%s@v%d", name, version))
		} else {
			b.rows = append(b.rows, pending...)
		}
		pending, changed = pending[:0:0], false
		return nil
	}
	it := txn.Changes(storage.TableID(src.ID), b.from+1, b.to)
	defer it.Close()
	for it.Next() {
		c := it.Change()
		if c.Version != version {
			if err := flush(); err != nil {
				return nil, err
			}
			version = c.Version
		}
		if c.Type != storage.ChangeInsert {
			changed = true
			continue
		}
		if changed && skip {
			continue
		}
		row := make([]types.Datum, width)
		if err := dec.Decode(c.Value, row[:len(src.Columns)]); err != nil {
			return nil, err
		}
		row[len(src.Columns)] = types.NewInt8(c.RowID)
		row[len(src.Columns)+1] = types.NewInt8(c.Version)
		pending = append(pending, row)
	}
	if err := it.Err(); err != nil {
		var cu *storage.ChangesUnavailableError
		if errors.As(err, &cu) {
			return nil, feedUnavailableError(v, name, b.from, cu)
		}
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return skipped, nil
}

// changeCommitError is R-ST4's error: it names the commit and the choices.
func changeCommitError(txn *storage.Txn, cat *catalog.Catalog, v, src *catalog.Table, version int64) error {
	what := "updated or deleted rows"
	if hist, err := txn.History(storage.TableID(src.ID)); err == nil {
		for _, h := range hist {
			if h.Version == version {
				what = fmt.Sprintf("%s: %d rows updated, %d deleted", h.Operation, h.RowsUpdated, h.RowsDeleted)
			}
		}
	}
	qn := cat.QualifiedName(v)
	return pgerror.New(pgerror.ObjectNotInPrerequisiteState,
		"streaming table \"%s\" cannot process version %d of its source %s: that commit updated or deleted rows (%s), and a streaming table only appends the rows its sources add",
		v.Name, version, cat.QualifiedName(src), what).
		WithDetail("Rows already appended are never changed by a refresh; nothing was changed by this one.").
		WithHint("Either run REFRESH STREAMING TABLE %s FULL to truncate it and reprocess every row of its sources, or run ALTER STREAMING TABLE %s SET TBLPROPERTIES ('skipChangeCommits' = 'true') to skip such commits (whole, their inserts too) from now on.", qn, qn)
}

// feedUnavailableError explains a stream whose change feed does not cover
// the versions after the checkpoint (feed off or vacuumed, R-T7, R-T9).
func feedUnavailableError(v *catalog.Table, src string, from int64, cu *storage.ChangesUnavailableError) error {
	why := "its change data feed was off for some of them"
	if cu.Vacuumed {
		why = "VACUUM removed their change records"
	}
	e := pgerror.New(pgerror.ObjectNotInPrerequisiteState,
		"streaming table \"%s\" cannot read the rows committed to %s after version %d: %s", v.Name, src, from, why)
	if cu.AvailableFrom >= 0 {
		e = e.WithDetail("The change feed of %s is available from version %d.", src, cu.AvailableFrom)
	}
	return e.WithHint("Run REFRESH STREAMING TABLE %s FULL to reprocess %s from its current rows; keep delta.enableChangeDataFeed = true on it.", v.Name, src)
}

// appender writes a streaming table's new rows: consolidated by content and
// added as copies, or, after a truncate, numbered from zero.
type appender struct {
	w     *viewWriter
	fresh bool
	rows  []zTerm
}

func (a *appender) run(ctx context.Context, xc *exec.Ctx, n plan.Node, st *Stats) error {
	if !a.fresh {
		a.rows = append(a.rows, zTerm{planRows(ctx, xc, n), 1})
		return nil
	}
	var buf []byte
	return planRows(ctx, xc, n)(func(r exec.Row) error {
		var keep bool
		var err error
		if buf, keep, err = a.w.encode(buf[:0], r, false); err != nil || !keep {
			if !keep {
				st.RowsDropped++
			}
			return err
		}
		st.RowsWritten++
		return a.w.insertFresh(buf)
	})
}

func (a *appender) flush(st *Stats) error {
	z, err := consolidate(a.rows, func(dst []byte, r exec.Row, _ int64) ([]byte, bool, error) {
		out, keep, err := a.w.encode(dst, r, false)
		if err == nil && !keep {
			st.RowsDropped++
		}
		return out, keep, err
	}, false)
	if err != nil {
		return err
	}
	for _, e := range z.Entries() {
		if err := a.w.insertCopies([]byte(e.Key), e.Weight); err != nil {
			return err
		}
		st.RowsWritten += e.Weight
	}
	return nil
}

// recordRun writes a completed run of v in txn: its last-run record, its
// events (create_update, update_progress, planning_information,
// flow_progress with the data quality, R-O1) and its refresh_history row
// (R-S6), in the refresh's commit.
func (r *Runner) recordRun(txn *storage.Txn, v *catalog.Table, opt Options, start time.Time, res *Result, planning map[string]any, es []*expectation) error {
	end := r.now()
	last := &LastRun{Technique: res.Technique, Status: "COMPLETED", Start: start, End: end, RowsWritten: res.Stats.RowsWritten, Reason: res.Reason}
	if err := putJSON(txn, lastRunKey(v.ID), last); err != nil {
		return err
	}
	cause := causeOf(opt)
	w := newEventWriter(v.ID, v.Name, res.RunID)
	w.add(start, "create_update", "INFO", fmt.Sprintf("Update %s started by %s.", res.RunID[:6], cause), map[string]any{"create_update": map[string]string{"cause": cause}}, "")
	w.add(start, "update_progress", "INFO", fmt.Sprintf("Update %s is RUNNING.", res.RunID[:6]), map[string]any{"update_progress": map[string]string{"state": "RUNNING"}}, "")
	w.add(start, "planning_information", "INFO", fmt.Sprintf("Flow '%s' has been planned to be executed as %s.", v.Name, res.Technique), planning, "")
	progress := map[string]any{"status": "COMPLETED", "metrics": map[string]int64{"num_output_rows": res.Stats.RowsWritten, "num_input_rows": res.Stats.RowsRead}}
	if es != nil {
		progress["data_quality"] = qualityDetails(es, v, res.Stats.RowsDropped)
	}
	w.add(end, "flow_progress", "METRICS", fmt.Sprintf("Flow '%s' has COMPLETED.", v.Name), map[string]any{"flow_progress": progress}, "")
	w.add(end, "update_progress", "INFO", fmt.Sprintf("Update %s is COMPLETED.", res.RunID[:6]), map[string]any{"update_progress": map[string]string{"state": "COMPLETED"}}, "")
	if err := w.write(txn); err != nil {
		return err
	}
	return writeRun(txn, &Run{RunID: res.RunID, View: v.ID, ViewName: v.Name, Cause: cause, Start: start, End: end, Status: "COMPLETED",
		Technique: res.Technique, RowsRead: res.Stats.RowsRead, RowsWritten: res.Stats.RowsWritten})
}
