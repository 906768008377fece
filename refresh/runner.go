package refresh

import (
	"context"
	"fmt"
	"sort"
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

	mu    sync.Mutex
	locks map[uint32]*sync.Mutex
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

// Options of one refresh.
type Options struct {
	// Full forces a full recompute (REFRESH … FULL).
	Full bool
	// OptimalRefreshOff is the setting optimal_refresh = off: every refresh
	// is full, also when nothing changed (R-I7).
	OptimalRefreshOff bool
	Env               *types.Env
	Funcs             *funcs.Ctx
}

// Result is what a refresh did.
type Result struct {
	Technique string
	Reason    string
	Stats     Stats
	Versions  map[uint32]int64
}

// Refresh runs one refresh of view in its own transaction and commits it.
func (r *Runner) Refresh(ctx context.Context, view uint32, opt Options) (*Result, error) {
	unlock := r.lock(view)
	defer unlock()
	txn := r.DB.Begin()
	defer txn.Rollback()
	cat, err := r.Catalog.Snapshot(txn)
	if err != nil {
		return nil, err
	}
	res, err := r.RefreshIn(ctx, txn, cat, view, opt)
	if err != nil {
		return nil, err
	}
	if err := txn.Commit(); err != nil {
		return nil, err
	}
	return res, nil
}

// RefreshIn runs a refresh inside txn (CREATE's first population uses the
// CREATE's transaction); the caller commits. cat is txn's catalog.
func (r *Runner) RefreshIn(ctx context.Context, txn *storage.Txn, cat *catalog.Catalog, view uint32, opt Options) (*Result, error) {
	start := r.now()
	v, ok := cat.Table(view)
	if !ok || v.Kind != catalog.KindMaterializedView {
		return nil, pgerror.New(pgerror.UndefinedTable, "materialized view %d does not exist", view)
	}
	q, cols, err := BindQuery(cat, v, opt.Env)
	if err != nil {
		return nil, err
	}
	_ = cols
	versions, err := SourceVersions(txn, cat, v)
	if err != nil {
		return nil, err
	}
	ckpt, err := ReadCheckpoint(txn, view)
	if err != nil {
		return nil, err
	}
	fctx := opt.Funcs
	if fctx == nil {
		fctx = &funcs.Ctx{Env: opt.Env}
	}
	fctx.StatementTime = start
	in := &Input{Txn: txn, Catalog: cat, View: v, Query: q, Cols: cols, Checkpoint: ckpt, Versions: versions,
		Exec: &exec.Ctx{Context: ctx, Txn: txn, Env: opt.Env, Funcs: fctx}}
	res := &Result{Versions: versions}
	switch {
	case opt.Full:
		res.Technique, res.Reason = FullRecompute, "a full refresh was requested"
	case opt.OptimalRefreshOff:
		res.Technique, res.Reason = FullRecompute, "optimal_refresh is off"
	case ckpt == nil:
		res.Technique, res.Reason = FullRecompute, "the view has not been computed yet"
	case ckpt.Definition != v.Query:
		res.Technique, res.Reason = FullRecompute, "the definition changed"
	case sameVersions(ckpt.Sources, versions):
		res.Technique, res.Reason = NoOp, "no source has changed since the last refresh"
	default:
		res.Technique, res.Reason = FullRecompute, "sources changed: "+changedSources(cat, ckpt.Sources, versions)+"; incremental techniques are not available yet"
	}
	if res.Technique == FullRecompute {
		if res.Stats, err = (fullRecompute{}).Run(ctx, in); err != nil {
			return nil, err
		}
		txn.SetOperation(storage.TableInfo{ID: storage.TableID(v.ID), ChangeDataFeed: v.ChangeDataFeed()}, "REFRESH",
			map[string]string{"technique": res.Technique})
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := putJSON(txn, checkpointKey(view), &Checkpoint{Sources: versions, At: start, Definition: v.Query}); err != nil {
		return nil, err
	}
	run := &LastRun{Technique: res.Technique, Status: "COMPLETED", Start: start, End: r.now(), RowsWritten: res.Stats.RowsWritten, Reason: res.Reason}
	if err := putJSON(txn, lastRunKey(view), run); err != nil {
		return nil, err
	}
	return res, nil
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

// BindQuery binds a view's stored query against cat.
func BindQuery(cat *catalog.Catalog, v *catalog.Table, env *types.Env) (plan.Node, []plan.Column, error) {
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
	q, err := b.BindSelect(sel)
	if err != nil {
		// R-M8: a source changed under the view (e.g. a referenced column
		// was dropped): say which view fails.
		pe := pgerror.Convert(err)
		return nil, nil, &pgerror.Error{Code: pe.Code, Message: fmt.Sprintf("materialized view \"%s\" can no longer be computed: %s", v.Name, pe.Message), Hint: pe.Hint}
	}
	return q.Root, q.Cols, nil
}

// SourceVersions returns the version, at txn's snapshot, of every table and
// materialized view v reads, through plain views.
func SourceVersions(txn *storage.Txn, cat *catalog.Catalog, v *catalog.Table) (map[uint32]int64, error) {
	out := map[uint32]int64{}
	seen := map[uint32]bool{}
	var walk func(ids []uint32) error
	walk = func(ids []uint32) error {
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			t, ok := cat.Table(id)
			if !ok {
				return pgerror.New(pgerror.UndefinedTable, "a source of materialized view \"%s\" no longer exists", v.Name)
			}
			if t.Kind == catalog.KindView {
				if err := walk(t.DependsOn); err != nil {
					return err
				}
				continue
			}
			ver, err := txn.TableVersion(storage.TableID(id))
			if err != nil {
				return err
			}
			out[id] = ver
		}
		return nil
	}
	return out, walk(v.DependsOn)
}
