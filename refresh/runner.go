package refresh

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// Runner runs refreshes and keeps at most one per view at a time.
type Runner struct {
	DB      *storage.DB
	Catalog *catalog.Manager
	Clock   func() time.Time
	// HistoryRetention is how long events and run records are kept; each
	// refresh of a view deletes its older ones (0: DefaultHistoryRetention).
	HistoryRetention time.Duration
	// OnRun, when set, hears of every run of Refresh: its start, its
	// success after the commit and its failure (cancel and timeout
	// included). It must not block for long.
	OnRun func(RunEvent)
	// MemoryLimit is each refresh's memory budget in bytes (0 = none) and
	// TempDir where its sorts spill (exec.Memory): past the budget a
	// refresh fails with 53200 and changes nothing.
	MemoryLimit int64
	TempDir     string
	// RewriteThreshold is the size in rows past which a full recompute
	// writes the view's new content as a generation, in bounded memory
	// (rewrite.go); 0: DefaultRewriteThreshold, < 0: never.
	RewriteThreshold int64
	// DiffLimit is the largest view (rows) whose full recompute is
	// written as a difference, so its change feed holds the real row
	// changes (fulldiff.go); the new rows are held in memory. 0: 2000000,
	// < 0: none.
	DiffLimit int64

	mu      sync.Mutex
	locks   map[uint32]*sync.Mutex
	running map[uint32]context.CancelCauseFunc
}

// ErrCanceledByUser is the cause of a refresh stopped by CANCEL REFRESH (R-S5).
var ErrCanceledByUser = pgerror.New(pgerror.QueryCanceled, "canceling refresh due to CANCEL REFRESH")

// ErrTimedOut is the error of a refresh stopped by its timeout (R-S4): the
// view's stored statement_timeout for scheduled and triggered runs.
var ErrTimedOut = pgerror.New(pgerror.QueryCanceled, "canceling refresh due to statement timeout")

// Cancel stops the running refresh of view, if any (CANCEL REFRESH): it
// changes nothing and is recorded CANCELED (R-S5).
func (r *Runner) Cancel(view uint32) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.running[view]; ok {
		c(ErrCanceledByUser)
		return true
	}
	return false
}

// budget is a new memory budget for one refresh.
func (r *Runner) budget() *exec.Memory {
	return &exec.Memory{Limit: r.MemoryLimit, Setting: "--refresh-memory-limit", TempDir: r.TempDir}
}

func (r *Runner) now() time.Time {
	if r.Clock != nil {
		return r.Clock()
	}
	return time.Now()
}

// lock serializes refreshes of one view (R-M4).
func (r *Runner) lock(view uint32) func() {
	r.mu.Lock()
	if r.locks == nil {
		r.locks = map[uint32]*sync.Mutex{}
	}
	l := r.locks[view]
	if l == nil {
		l = &sync.Mutex{}
		r.locks[view] = l
	}
	r.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// DatasetEnv, when set (the session package sets it), gives the
// environment a view's query is evaluated in: the time zone stored with it
// at CREATE, so a refresh's result does not depend on who runs it.
var DatasetEnv func(v *catalog.Table) *types.Env

// envFor is v's environment, or fallback.
func envFor(v *catalog.Table, fallback *types.Env) *types.Env {
	if DatasetEnv != nil {
		if e := DatasetEnv(v); e != nil {
			return e
		}
	}
	return fallback
}

// Options of one refresh.
type Options struct {
	// Full forces a full recompute (REFRESH … FULL).
	Full bool
	// OptimalRefreshOff is the setting optimal_refresh = off: every refresh
	// is full, also when nothing changed (R-I7).
	OptimalRefreshOff bool
	Env               *types.Env
	Funcs             *funcs.Ctx
	// Cause is what started the run (CREATE, MANUAL, SCHEDULE, TRIGGER,
	// STARTUP_CATCHUP), recorded in refresh_history (R-S6).
	Cause string
	// ResetCheckpoints: REFRESH STREAMING TABLE … RESET CHECKPOINTS
	// reprocesses every source row and keeps the table's rows (R-ST3).
	ResetCheckpoints bool
	// InTransactionBlock: the refresh runs in a transaction that may go
	// on to read the view (a CREATE inside BEGIN … COMMIT), so it keeps
	// its rows in the transaction's write set instead of writing a new
	// generation (rewrite.go).
	InTransactionBlock bool
	// Lease, when set, is the view's refresh-runner lease on a shared
	// store (app/shared.go): the refresh commits only while its holder
	// still has it (storage.Txn.CheckLease, a fencing token), else fails
	// with storage.ErrLeaseLost and changes nothing.
	Lease *storage.Lease
}

// Result is what a refresh did.
type Result struct {
	RunID     string
	Technique TechniqueName
	Reason    string
	Stats     Stats
	Versions  map[uint32]int64
	// Duration is the run's time inside RefreshIn (its commit excluded).
	Duration time.Duration
	// Analysis is what the refresh found maintainable in the view's
	// query (nil for a streaming table): a caller reporting blockers
	// need not analyse the query again.
	Analysis *Analysis
}

// Refresh runs one refresh of view in its own transaction and commits it.
func (r *Runner) Refresh(ctx context.Context, view uint32, opt Options) (*Result, error) {
	unlock := r.lock(view)
	defer unlock()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.mu.Lock()
	if r.running == nil {
		r.running = map[uint32]context.CancelCauseFunc{}
	}
	r.running[view] = cancel
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.running, view)
		r.mu.Unlock()
	}()
	txn := r.DB.Begin()
	defer txn.Rollback()
	cat, err := r.Catalog.Snapshot(txn)
	if err != nil {
		return nil, err
	}
	start := r.now()
	ev, hook := r.event(cat, view, "start")
	ev.Cause = causeOf(opt)
	if hook {
		ev.Status = "RUNNING"
		r.OnRun(ev)
	}
	res, err := r.RefreshIn(ctx, txn, cat, view, opt)
	if err == nil && opt.Lease != nil {
		err = txn.CheckLease(*opt.Lease)
	}
	if err == nil {
		// A cancel while the commit builds its batch still stops the
		// refresh, changing nothing.
		err = commitError(cat, view, txn.CommitContext(ctx))
	}
	if err != nil {
		if cause := context.Cause(ctx); errors.Is(cause, ErrCanceledByUser) {
			err = ErrCanceledByUser
		} else if errors.Is(cause, context.DeadlineExceeded) {
			err = ErrTimedOut
		}
		txn.Rollback()
		status, runID := r.recordFailure(view, opt, start, err)
		if hook {
			ev.Kind, ev.Status, ev.RunID = "failure", status, runID
			pe := pgerror.Convert(err)
			ev.Duration, ev.Err, ev.ErrCode = r.now().Sub(start), pe.Message, pe.Code
			r.OnRun(ev)
		}
		return nil, err
	}
	if hook {
		ev.Kind, ev.Status, ev.RunID, ev.Technique = "success", "COMPLETED", res.RunID, res.Technique
		ev.Duration = r.now().Sub(start)
		r.OnRun(ev)
	}
	return res, nil
}

// recordFailure records a failed, canceled or timed-out run in its own
// commit: the refresh itself changed nothing (R-S5, R-S6).
// It returns the run's status and id.
func (r *Runner) recordFailure(view uint32, opt Options, start time.Time, cause error) (status, runID string) {
	status = "FAILED"
	switch pgerror.Convert(cause).Code {
	case pgerror.QueryCanceled:
		status = "CANCELED"
		if errors.Is(cause, context.DeadlineExceeded) || errors.Is(cause, ErrTimedOut) {
			status = "TIMED_OUT"
		}
	}
	runID = newID()
	txn := r.DB.Begin()
	defer txn.Rollback()
	cat, err := r.Catalog.Snapshot(txn)
	if err != nil {
		return
	}
	v, ok := cat.Table(view)
	if !ok {
		return
	}
	end := r.now()
	pe := pgerror.Convert(cause)
	msg := pe.Message
	w := newEventWriter(view, v.Name, runID)
	w.add(end, "update_progress", "ERROR", fmt.Sprintf("Update %s is %s.", runID[:6], status), map[string]any{"update_progress": map[string]string{"state": status}}, msg)
	w.events[len(w.events)-1].ErrorCode = pe.Code
	if w.write(txn) != nil {
		return
	}
	run := &Run{RunID: runID, View: view, ViewName: v.Name, Cause: causeOf(opt), Start: start, End: end, Status: status, Error: msg, ErrorCode: pe.Code}
	if writeRun(txn, run) != nil {
		return
	}
	_ = txn.Commit()
	return
}

func causeOf(opt Options) string {
	if opt.Cause == "" {
		return "MANUAL"
	}
	return opt.Cause
}

// RefreshIn runs a refresh inside txn (CREATE's first population uses the
// CREATE's transaction); the caller commits. cat is txn's catalog.
func (r *Runner) RefreshIn(ctx context.Context, txn *storage.Txn, cat *catalog.Catalog, view uint32, opt Options) (*Result, error) {
	res, err := r.refreshIn(ctx, txn, cat, view, opt)
	if err != nil {
		// A row the refresh writes that repeats a unique key of one of
		// the view's indexes: 23505 naming the index (R-T10).
		err = exec.UniqueViolation(cat, err)
	}
	return res, err
}

func (r *Runner) refreshIn(ctx context.Context, txn *storage.Txn, cat *catalog.Catalog, view uint32, opt Options) (*Result, error) {
	start := r.now()
	v, ok := cat.Table(view)
	if ok && v.Kind == catalog.KindStreamingTable {
		return r.refreshStreaming(ctx, txn, cat, v, opt)
	}
	if !ok || v.Kind != catalog.KindMaterializedView {
		return nil, pgerror.New(pgerror.UndefinedTable, "materialized view %d does not exist", view)
	}
	in, opt, err := loadInput(ctx, txn, cat, v, opt)
	if err != nil {
		return nil, err
	}
	in.Exec.Mem = r.budget()
	in.Exec.Funcs.StatementTime = start
	if !opt.InTransactionBlock {
		in.rewriteAt = r.rewriteThreshold()
	}
	in.diffAt = r.DiffLimit
	q, versions, ckpt := in.Query, in.Versions, in.Checkpoint
	res := &Result{Versions: versions, RunID: newID()}
	an := Analyze(cat, v, q, v.DependsOn)
	res.Analysis = an
	p, err := planRefresh(ctx, in, an, opt, false)
	var drift *errDrift
	if errors.As(err, &drift) {
		// Group states that do not match the view (found while folding
		// the change): recompute, say so.
		if invariants {
			panic("refresh: " + drift.msg)
		}
		p, err = &refreshPlan{analysis: an, technique: FullRecompute, reason: "drift: " + drift.msg + "; recomputed in full"}, nil
	}
	if err != nil {
		return nil, err
	}
	res.Technique, res.Reason = p.technique, p.reason
	groupState := ckpt != nil && ckpt.GroupState
	var scalars []ScalarState
	var inner []int
	switch p.technique {
	case NoOp:
		if ckpt != nil {
			scalars, inner = ckpt.Scalars, ckpt.InnerStates
		}
	case FullRecompute:
		if res.Stats, inner, err = runFull(ctx, in, an); err != nil {
			return nil, err
		}
		groupState = an.groupAgg != nil
		if scalars, err = fullScalars(in, an); err != nil {
			return nil, err
		}
		p.actual = r.now().Sub(start)
	default:
		res.Stats, err = runIncremental(ctx, in, p)
		var drift *errDrift
		if errors.As(err, &drift) {
			if invariants {
				panic("refresh: " + drift.msg)
			}
			// The view is not what its checkpoint says: recompute it
			// and say so in the event log.
			res.Technique, res.Reason = FullRecompute, "drift: "+drift.msg+"; recomputed in full"
			p.technique, p.reason = res.Technique, res.Reason
			res.Stats, inner, err = runFull(ctx, in, an)
			if err == nil {
				scalars, err = fullScalars(in, an)
			}
		} else {
			scalars, inner = p.scalars, p.inner
		}
		if err != nil {
			return nil, err
		}
		// Only GROUP_AGGREGATE and a full recompute maintain the group
		// states (invariant 4).
		groupState = an.groupAgg != nil && (res.Technique == GroupAggregate || res.Technique == FullRecompute)
		p.actual = r.now().Sub(start) // the invariants check aside
		if invariants && res.Technique != FullRecompute {
			if err := checkInvariant(ctx, in); err != nil {
				panic(fmt.Sprintf("refresh: %s after %s: %v", v.Name, res.Technique, err))
			}
			if err := checkScalars(in, an, scalars); err != nil {
				panic(fmt.Sprintf("refresh: %s after %s: %v", v.Name, res.Technique, err))
			}
			if err := checkInnerStates(ctx, in, inner); err != nil {
				panic(fmt.Sprintf("refresh: %s after %s: %v", v.Name, res.Technique, err))
			}
		}
	}
	if p.technique != NoOp {
		txn.SetOperation(storage.TableInfo{ID: storage.TableID(v.ID), ChangeDataFeed: v.ChangeDataFeed()}, "REFRESH",
			map[string]string{"technique": string(res.Technique)})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := r.markPopulated(txn, cat, v); err != nil {
		return nil, err
	}
	if err := putJSON(txn, checkpointKey(view), &Checkpoint{Sources: versions, At: start, Definition: Fingerprint(cat, v), GroupState: groupState, Scalars: scalars, InnerStates: inner, OwnWrites: in.OwnWrites, Rates: p.learn(ckpt)}); err != nil {
		return nil, err
	}
	end := r.now()
	res.Duration = end.Sub(start)
	last := &LastRun{Technique: res.Technique, Status: "COMPLETED", Start: start, End: end, RowsWritten: res.Stats.RowsWritten, Reason: res.Reason}
	if err := putJSON(txn, lastRunKey(view), last); err != nil {
		return nil, err
	}
	retention := r.HistoryRetention
	if retention <= 0 {
		retention = DefaultHistoryRetention
	}
	if err := pruneLog(txn, view, start.Add(-retention)); err != nil {
		return nil, err
	}
	// The run's events and history row go in the same commit (R-O1, R-S6).
	cause := causeOf(opt)
	w := newEventWriter(view, v.Name, res.RunID)
	w.add(start, "create_update", "INFO", fmt.Sprintf("Update %s started by %s.", res.RunID[:6], cause), map[string]any{"create_update": map[string]string{"cause": cause}}, "")
	w.add(start, "update_progress", "INFO", fmt.Sprintf("Update %s is RUNNING.", res.RunID[:6]), map[string]any{"update_progress": map[string]string{"state": "RUNNING"}}, "")
	w.add(start, "planning_information", "INFO", fmt.Sprintf("Flow '%s' has been planned to be executed as %s.", v.Name, res.Technique), planningDetails(cat, res, ckpt, p), "")
	progress := map[string]any{"status": "COMPLETED", "metrics": map[string]int64{"num_output_rows": res.Stats.RowsWritten, "num_input_rows": res.Stats.RowsRead}}
	if in.expectations != nil {
		progress["data_quality"] = qualityDetails(in.expectations, v, res.Stats.RowsDropped)
	}
	w.add(end, "flow_progress", "METRICS", fmt.Sprintf("Flow '%s' has COMPLETED.", v.Name), map[string]any{"flow_progress": progress}, "")
	w.add(end, "update_progress", "INFO", fmt.Sprintf("Update %s is COMPLETED.", res.RunID[:6]), map[string]any{"update_progress": map[string]string{"state": "COMPLETED"}}, "")
	if err := w.write(txn); err != nil {
		return nil, err
	}
	run := &Run{RunID: res.RunID, View: view, ViewName: v.Name, Cause: cause, Start: start, End: end, Status: "COMPLETED", Technique: res.Technique, RowsRead: res.Stats.RowsRead, RowsWritten: res.Stats.RowsWritten}
	if err := writeRun(txn, run); err != nil {
		return nil, err
	}
	return res, nil
}

// planningDetails lists every candidate technique, its estimate and why it
// was or was not chosen (R-O1 planning_information, R-I6).
func planningDetails(cat *catalog.Catalog, res *Result, ckpt *Checkpoint, p *refreshPlan) map[string]any {
	sources := map[string]int64{}
	for id, v := range res.Versions {
		name := fmt.Sprint(id)
		if t, ok := cat.Table(id); ok {
			name = cat.QualifiedName(t)
		}
		sources[name] = v
	}
	d := map[string]any{"technique": res.Technique, "reason": res.Reason, "candidates": p.allCandidates(), "source_versions": sources, "changed_rows": p.changed}
	if p.analysis != nil && len(p.analysis.Blockers) > 0 {
		var bs []map[string]string
		for _, b := range p.analysis.Blockers {
			bs = append(bs, map[string]string{"code": b.Code, "object": b.Object, "message": b.Message, "fix": b.Fix})
		}
		d["blockers"] = bs
	}
	if ckpt != nil {
		prev := map[string]int64{}
		for id, v := range ckpt.Sources {
			name := fmt.Sprint(id)
			if t, ok := cat.Table(id); ok {
				name = cat.QualifiedName(t)
			}
			prev[name] = v
		}
		d["checkpoint_versions"] = prev
	}
	return map[string]any{"planning_information": d}
}

// SourceState is one source of a view as EXPLAIN REFRESH shows it.
type SourceState struct {
	Name              string
	Kind              string
	CheckpointVersion int64 // -1: never consumed
	CurrentVersion    int64
	ChangeDataFeed    bool
	RowTracking       bool
}

// Explanation is what the next refresh of a view would do now (R-I8).
type Explanation struct {
	Technique  TechniqueName
	Reason     string
	Sources    []SourceState
	Candidates []Candidate
	Analysis   *Analysis
	// ChangedRows is the number of source rows changed since the
	// checkpoint (net, per row).
	ChangedRows int64
	// Plans are the plans the refresh would run, as EXPLAIN prints them
	// (evalplan.go): the full recompute's, or the change's — for
	// GROUP_AGGREGATE, the change of the aggregate's input.
	Plans []ExplainedPlan
}

// ExplainedPlan is one plan of a refresh, named, as EXPLAIN's lines.
type ExplainedPlan struct {
	Name  string
	Lines []string
}

// Explain plans a refresh of view without running it (EXPLAIN REFRESH).
func Explain(txn *storage.Txn, cat *catalog.Catalog, view uint32, opt Options) (*Explanation, error) {
	v, ok := cat.Table(view)
	if !ok || v.Kind != catalog.KindMaterializedView {
		return nil, pgerror.New(pgerror.UndefinedTable, "materialized view %d does not exist", view)
	}
	in, opt, err := loadInput(context.Background(), txn, cat, v, opt)
	if err != nil {
		return nil, err
	}
	q, versions, ckpt := in.Query, in.Versions, in.Checkpoint
	an := Analyze(cat, v, q, v.DependsOn)
	p, err := planRefresh(context.Background(), in, an, opt, true)
	if err != nil {
		return nil, err
	}
	e := &Explanation{Technique: p.technique, Reason: p.reason, Candidates: p.allCandidates(), Analysis: an, ChangedRows: p.changed}
	switch p.technique {
	case NoOp:
	case FullRecompute:
		if an.groupAgg == nil {
			full, err := in.evalQuery()
			if err != nil {
				return nil, err
			}
			e.Plans = append(e.Plans, ExplainedPlan{Name: "plan", Lines: plan.Explain(full, nil)})
		} else {
			// GROUP_AGGREGATE's states are folded from the input.
			input, err := in.optimized(an.groupAgg.agg.Input)
			if err != nil {
				return nil, err
			}
			e.Plans = append(e.Plans, ExplainedPlan{Name: "plan of the aggregate's input", Lines: plan.Explain(input, nil)})
		}
	default:
		of := "rows"
		if p.technique == GroupAggregate {
			of = "the aggregate's input rows" // folded into the states
		}
		if p.plus != nil {
			e.Plans = append(e.Plans, ExplainedPlan{Name: "plan of " + of + " gained", Lines: plan.Explain(p.plus, nil)})
		}
		if p.minus != nil {
			e.Plans = append(e.Plans, ExplainedPlan{Name: "plan of " + of + " lost", Lines: plan.Explain(p.minus, nil)})
		}
	}
	for id, ver := range versions {
		t, _ := cat.Table(id)
		s := SourceState{Name: cat.QualifiedName(t), Kind: string(t.Kind), CheckpointVersion: -1, CurrentVersion: ver, ChangeDataFeed: t.ChangeDataFeed(), RowTracking: t.RowTracking()}
		if ckpt != nil {
			if cv, ok := ckpt.Sources[id]; ok {
				s.CheckpointVersion = cv
			}
		}
		e.Sources = append(e.Sources, s)
	}
	sort.Slice(e.Sources, func(i, j int) bool { return e.Sources[i].Name < e.Sources[j].Name })
	return e, nil
}

func sameVersions(a, b map[uint32]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// tableNames lists tables by their qualified names.
func tableNames(cat *catalog.Catalog, ids []uint32) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = fmt.Sprint(id)
		if t, ok := cat.Table(id); ok {
			names[i] = cat.QualifiedName(t)
		}
	}
	return strings.Join(names, ", ")
}

func changedSources(cat *catalog.Catalog, before, now map[uint32]int64) string {
	var names []string
	for id, v := range now {
		if w, ok := before[id]; !ok || w != v {
			name := fmt.Sprint(id)
			if t, ok := cat.Table(id); ok {
				name = cat.QualifiedName(t)
			}
			names = append(names, fmt.Sprintf("%s (version %d → %d)", name, before[id], v))
		}
	}
	sort.Strings(names)
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}

// loadInput binds v's query in v's environment and reads its source
// versions and checkpoint at txn's snapshot. The function context is a
// copy of opt's (a refresh never changes its caller's), in that
// environment; opt is returned with it.
func loadInput(ctx context.Context, txn *storage.Txn, cat *catalog.Catalog, v *catalog.Table, opt Options) (*Input, Options, error) {
	opt.Env = envFor(v, opt.Env)
	q, cols, err := bindQuery(cat, v, opt.Env, true)
	if err != nil {
		return nil, opt, err
	}
	versions, err := SourceVersions(txn, cat, v)
	if err != nil {
		return nil, opt, err
	}
	ckpt, err := ReadCheckpoint(txn, v.ID)
	if err != nil {
		return nil, opt, err
	}
	fctx := &funcs.Ctx{Env: opt.Env}
	if opt.Funcs != nil {
		c := *opt.Funcs
		c.Env = opt.Env
		fctx = &c
	}
	// The query runs as the view's owner, whoever started the refresh
	// (PostgreSQL's REFRESH switches to the owner): current_user and what
	// the system views show it are the owner's.
	// An owner dropped since is no one.
	fctx.Catalog = cat
	if name, ok := cat.RoleNameOf(v.Owner); ok {
		fctx.User = name
	} else {
		fctx.User, fctx.RequireRoles = "", true
	}
	var own []uint32
	for id := range versions {
		if txn.WritesTable(storage.TableID(id)) {
			own = append(own, id)
		}
	}
	slices.Sort(own)
	return &Input{Txn: txn, Catalog: cat, View: v, Query: q, Cols: cols, Checkpoint: ckpt, Versions: versions, OwnWrites: own,
		Exec: &exec.Ctx{Context: ctx, Txn: txn, Env: opt.Env, Funcs: fctx, Workers: exec.Workers(exec.DefaultWorkers)}}, opt, nil
}

// BindQuery binds a view's stored query against cat, for analysis: what
// the query reads is not checked against its owner's privileges.
func BindQuery(cat *catalog.Catalog, v *catalog.Table, env *types.Env) (plan.Node, []plan.Column, error) {
	return bindQuery(cat, v, env, false)
}

// bindQuery binds v's query; with checked, v's owner must hold SELECT on
// every relation it names, and each plain view among them its owner
// likewise: what every refresh (and CHECK, EXPLAIN REFRESH) asks, so a
// REVOKE reaches a view at its next refresh (42501, the view unchanged),
// as PostgreSQL's REFRESH MATERIALIZED VIEW checks the owner's rights.
func bindQuery(cat *catalog.Catalog, v *catalog.Table, env *types.Env, checked bool) (plan.Node, []plan.Column, error) {
	st, err := parse.ParseOne(v.Query)
	if err != nil {
		return nil, nil, err
	}
	sel := st.AST.GetSelectStmt()
	if sel == nil {
		return nil, nil, pgerror.New(pgerror.InternalError, "materialized view %s has no SELECT", v.Name)
	}
	var path []string
	if v.Dataset != nil {
		path = v.Dataset.SearchPath
	}
	b := &plan.Binder{Cat: cat, SearchPath: path, Stmt: st, Env: env}
	if checked {
		b.CheckRead = func(t, view *catalog.Table) error {
			if view == nil {
				view = v
			}
			return cat.CheckViewSource(view, t)
		}
		b.CheckSystem = func(r *plan.SystemRelation, view *catalog.Table) error {
			if view == nil {
				view = v
			}
			return r.CheckRead(catalog.IsSystem(view) || cat.IsSuperuserID(view.Owner))
		}
	}
	q, err := b.BindSelect(sel)
	if err != nil {
		if pgerror.Code(err) == pgerror.InsufficientPrivilege {
			// PostgreSQL's words: "permission denied for table t".
			e := *pgerror.Convert(err)
			e.Position = 0
			return nil, nil, &e
		}
		// R-M8: a source changed under the view (e.g. a referenced column
		// was dropped): say which view fails.
		pe := pgerror.Convert(err)
		return nil, nil, &pgerror.Error{Code: pe.Code, Message: fmt.Sprintf("%s \"%s\" can no longer be computed: %s", datasetNoun(v), v.Name, pe.Message), Hint: pe.Hint}
	}
	if len(q.Cols) < len(v.Columns) {
		// R-M8: a column the query reads through * was dropped from a
		// source: its rows no longer fill the view's columns.
		var names []string
		for _, c := range q.Cols {
			names = append(names, c.Name)
		}
		return nil, nil, pgerror.New(pgerror.UndefinedColumn, "%s \"%s\" can no longer be computed: its query now returns %d columns (%s) for its %d columns; a column of a source was dropped",
			datasetNoun(v), v.Name, len(q.Cols), strings.Join(names, ", "), len(v.Columns)).
			WithHint("Define it again with CREATE OR %s, or restore the column.", map[bool]string{true: "REFRESH STREAMING TABLE", false: "REPLACE MATERIALIZED VIEW"}[v.Kind == catalog.KindStreamingTable])
	}
	return q.Root, q.Cols, nil
}

// SourceVersions returns the version, at txn's snapshot, of every table and
// materialized view v reads, through plain views.
func SourceVersions(txn *storage.Txn, cat *catalog.Catalog, v *catalog.Table) (map[uint32]int64, error) {
	out := map[uint32]int64{}
	err := cat.WalkSources(v.DependsOn, func(id uint32, t *catalog.Table, _ bool) error {
		switch {
		case t == nil:
			return pgerror.New(pgerror.UndefinedTable, "a source of %s \"%s\" no longer exists", datasetNoun(v), v.Name)
		case t.Kind == catalog.KindView:
			return nil
		}
		ver, err := txn.TableVersion(storage.TableID(id))
		out[id] = ver
		return err
	})
	return out, err
}

// datasetNoun names v's kind in messages.
func datasetNoun(v *catalog.Table) string {
	if v.Kind == catalog.KindStreamingTable {
		return "streaming table"
	}
	return "materialized view"
}

// commitError explains a refresh's failed commit: a conflict on the view's
// rows or checkpoint is another transaction that refreshed it (CREATE OR
// REFRESH runs its refresh in its own transaction) and committed first.
func commitError(cat *catalog.Catalog, view uint32, err error) error {
	if err == nil || !(errors.Is(err, storage.ErrDuplicateKey) || errors.Is(err, storage.ErrSerialization)) {
		return err
	}
	name := fmt.Sprint(view)
	if v, ok := cat.Table(view); ok {
		name = v.Name
	}
	return pgerror.New(pgerror.SerializationFailure, "could not serialize access: a concurrent refresh of \"%s\" committed first", name).
		WithDetail("This refresh changed nothing.").
		WithHint("The refresh might succeed if retried.")
}
