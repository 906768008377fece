package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/notify"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/pgcatalog"
	"github.com/mvserver/mvserver/sql/sequence"
	pgsettings "github.com/mvserver/mvserver/sql/settings"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// Engine creates sessions over one database.
type Engine struct {
	DB       *storage.DB
	Catalog  *catalog.Manager
	Database string
	// Defaults are the feature properties new tables get (R-T5).
	Defaults catalog.Defaults
	Logger   *slog.Logger
	// Clock returns the current time (statement timestamps); nil = time.Now.
	Clock func() time.Time
	// Refresher runs materialized-view refreshes.
	Refresher *refresh.Runner
	// OptimalRefreshOff is the server setting optimal_refresh = off: every
	// refresh of every view is full (R-I7); a session may also SET it.
	OptimalRefreshOff bool
	// Scheduling hooks (set by the server; nil in bare tests).
	// ValidateDataset checks a view's schedule/trigger before commit.
	ValidateDataset func(c *catalog.Catalog, t *catalog.Table) error
	// DatasetsChanged is told, after a commit, which views were created,
	// altered or dropped.
	DatasetsChanged func(ids []uint32)
	// Activity lists the server's sessions (pg_stat_activity); nil: none.
	Activity func() []server.Activity
	// CancelBackend cancels the running statement of the session with that
	// process id (pg_cancel_backend, R-S5); nil: not available.
	CancelBackend func(pid int64) bool
	// TerminateBackend ends the session with that process id
	// (pg_terminate_backend), waiting up to wait for it to end; found:
	// there is one; ended: it is gone (or, with wait 0, signalled). nil:
	// not available.
	TerminateBackend func(pid int64, wait time.Duration) (found, ended bool)
	// Refreshed is told of every successful manual refresh (chains).
	Refreshed func(view uint32, res *refresh.Result)
	// NextRun is the next scheduled time of a view (DESCRIBE EXTENDED).
	NextRun func(view uint32) (time.Time, bool)
	// Notify is the LISTEN/NOTIFY hub (nil: LISTEN is accepted and nothing
	// is ever delivered).
	Notify *notify.Hub
	// RequireRoles is set when clients authenticate: a session's user
	// then has the privileges of its role only. Unset, a user name that
	// is no role acts as a superuser (roles.go).
	RequireRoles bool
	// QueryMemoryLimit is the default memory budget of a statement in
	// bytes (query_memory_limit; 0 = none), TempDir where sorts past it
	// spill ("" = they fail like the other operators).
	QueryMemoryLimit int64
	TempDir          string

	sessions atomic.Int64
	// tempSeq numbers the temporary schemas of sessions without a
	// process id (temp.go).
	tempSeq atomic.Uint32
	// seqs hands out sequence values (nextval).
	seqs sequence.Store
}

func (e *Engine) now() time.Time {
	if e.Clock != nil {
		return e.Clock()
	}
	return time.Now()
}

// Connect implements server.Engine.
func (e *Engine) Connect(ctx context.Context, info server.StartupInfo) (server.Session, error) {
	if info.Database != e.Database && !maintenanceDatabase(info.Database) {
		return nil, pgerror.New(pgerror.InvalidCatalogName, "database \"%s\" does not exist", info.Database)
	}
	s := &Session{eng: e, info: info, vals: map[string]string{}}
	s.env = &types.Env{Loc: time.UTC, Names: sessionNames{s}}
	s.vals["session_authorization"] = info.User
	if super, err := e.loginIsSuperuser(info.User); err != nil {
		return nil, err
	} else if !super {
		s.vals["is_superuser"] = "off"
	}
	s.vals["application_name"] = info.ApplicationName
	// Startup parameters are settings too (client_encoding, DateStyle, TimeZone, options …).
	for k, v := range info.Params {
		switch strings.ToLower(k) {
		case "user", "database", "replication", "options", "application_name":
			continue
		}
		if st, err := lookupSetting(k); err == nil && !st.readOnly {
			if err := s.set(st, v); err != nil {
				return nil, pgerror.New(pgerror.InvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", k, v)
			}
		}
	}
	if opts := info.Params["options"]; opts != "" {
		if err := s.applyOptions(opts); err != nil {
			return nil, err
		}
	}
	if e.Notify != nil {
		s.sub = e.Notify.Subscribe()
	}
	e.sessions.Add(1)
	return s, nil
}

// applyOptions handles "-c name=value" startup options.
func (s *Session) applyOptions(opts string) error {
	f := strings.Fields(opts)
	for i := 0; i < len(f); i++ {
		kv := f[i]
		if kv == "-c" && i+1 < len(f) {
			i++
			kv = f[i]
		} else if strings.HasPrefix(kv, "-c") {
			kv = kv[2:]
		} else if strings.HasPrefix(kv, "--") {
			kv = kv[2:]
		} else {
			continue
		}
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		st, err := lookupSetting(strings.ReplaceAll(name, "-", "_"))
		if err != nil {
			return err
		}
		if err := s.set(st, val); err != nil {
			return err
		}
	}
	return nil
}

// Session is one connection's state.
type Session struct {
	sqlPrepared map[string]*sqlPrepared // PREPARE's statements (prepare_sql.go)
	// deferredFK holds the transaction's deferred foreign-key checks, run
	// at commit (sql/exec/foreign_key.go).
	deferredFK *exec.DeferredChecks
	eng        *Engine
	info       server.StartupInfo
	vals       map[string]string // lower-case setting name → value (unset = default)
	env        *types.Env
	// tempName is the session's temporary schema (temp.go), tempUsed set
	// once the session created a temporary object, tempOnCommit once one
	// had an ON COMMIT action.
	tempName     string
	tempUsed     bool
	tempOnCommit bool
	// ddl says what the transaction's DDL changed (temp.go), lone that
	// the running simple-protocol message holds one statement, multi that
	// it holds more (staging.go).
	ddl   ddlScope
	lone  bool
	multi bool

	// Transaction state.
	txn      *storage.Txn
	cat      *catalog.Catalog // the catalog this transaction sees (with its own DDL)
	txnStart time.Time
	explicit bool // inside BEGIN … COMMIT
	readOnly bool // the transaction is READ ONLY: writes fail with 25006
	// isolation is the transaction's isolation level (isolation.go), fixed
	// once a statement took the snapshot (snapshotTaken).
	isolation     string
	snapshotTaken bool
	cursors       map[string]*cursor
	// seqLast is each sequence's last nextval in this session (currval),
	// lastSeq the sequence of the latest one (lastval).
	seqLast map[uint32]int64
	lastSeq uint32
	failed  bool // explicit transaction failed: only ROLLBACK/COMMIT allowed
	extErr  bool // a statement of the current extended-protocol batch failed

	// savedVals and savedEnv are the settings at transaction start: a
	// rollback restores them (SET is transactional in PostgreSQL).
	savedVals map[string]string
	savedEnv  *types.Env
	// locals are the transaction's SET LOCAL values (identity.go), over
	// vals until it ends.
	locals map[string]string

	// datasets are the views this transaction created, altered or dropped;
	// the scheduler hears of them after the commit.
	datasets []uint32
	// streamRefreshes names the streaming tables this transaction
	// refreshed (CREATE OR REFRESH): a commit conflict is then another
	// refresh of them that committed first.
	streamRefreshes []string
	// createRuns are the first populations this transaction ran (CREATE):
	// announced to the runner's listeners once it commits (R-S7).
	createRuns []createRun

	// LISTEN/UNLISTEN and NOTIFY of the open transaction (notify.go).
	listenOps []listenOp
	notifies  []notify.Notification
	sub       *notify.Subscriber // nil without a hub

	pending []server.ParamStatus // reported settings changed by the current statement
	notices []*pgerror.Error     // notices raised by the current statement
}

// ParameterStatus implements server.Session.
func (s *Session) ParameterStatus() []server.ParamStatus {
	var out []server.ParamStatus
	for _, st := range sortedSettings() {
		if st.reported {
			out = append(out, server.ParamStatus{Name: st.name, Value: s.get(st)})
		}
	}
	return out
}

// TxStatus implements server.Session.
func (s *Session) TxStatus() byte {
	switch {
	case s.failed:
		return 'E'
	case s.explicit:
		return 'T'
	}
	return 'I'
}

// Close implements server.Session.
func (s *Session) Close() {
	s.rollback()
	s.dropOwnTemp()
	if s.sub != nil {
		s.sub.Close()
	}
	s.eng.sessions.Add(-1)
}

func (s *Session) get(st *setting) string {
	switch st.name {
	case "transaction_read_only":
		return pgsettings.OnOff(s.readOnly)
	case "transaction_isolation":
		return s.transactionIsolation()
	}
	if v, ok := s.locals[strings.ToLower(st.name)]; ok {
		return v
	}
	if v, ok := s.vals[strings.ToLower(st.name)]; ok {
		return v
	}
	if st.serverDefault != nil {
		return st.serverDefault(s.eng)
	}
	return st.def
}

func (s *Session) set(st *setting, v string) error { return s.setTo(st, v, false) }

// setTo sets st to v for the session, or (local: SET LOCAL) until the
// transaction ends.
func (s *Session) setTo(st *setting, v string, local bool) error {
	return s.store(st, v, local, true)
}

// store is setTo; authorize false skips the setting's permission check
// (RESET ALL returns even a superuser-only setting to its default).
func (s *Session) store(st *setting, v string, local, authorize bool) error {
	if st.name == "transaction_isolation" {
		return s.setIsolation(v)
	}
	if st.serverDefault != nil && v == "" && !local { // RESET: back to the server's value
		delete(s.vals, strings.ToLower(st.name))
		delete(s.locals, strings.ToLower(st.name))
		return nil
	}
	if st.authorize != nil && authorize {
		if err := st.authorize(s, v); err != nil {
			return err
		}
	}
	if st.check != nil {
		nv, err := st.check(v)
		if err != nil {
			return err
		}
		v = nv
	}
	if strings.EqualFold(st.name, "TimeZone") {
		loc, _, err := LoadZone(v)
		if err != nil {
			return err
		}
		s.env = &types.Env{Loc: loc, Names: sessionNames{s}}
	}
	if st.serverDefault != nil && v == "" {
		v = st.serverDefault(s.eng)
	}
	s.putSetting(st.name, v, local)
	return nil
}

func (s *Session) setting(name string) string {
	st, err := lookupSetting(name)
	if err != nil {
		return ""
	}
	return s.get(st)
}

// searchPath returns the schemas unqualified names are looked up in.
func (s *Session) searchPath() []string {
	var out []string
	for _, p := range strings.Split(s.setting("search_path"), ",") {
		p = strings.TrimSpace(p)
		if p == "" || p == `"$user"` || p == "$user" {
			continue
		}
		if strings.HasPrefix(p, `"`) && strings.HasSuffix(p, `"`) && len(p) >= 2 {
			p = p[1 : len(p)-1]
		}
		out = append(out, p)
	}
	return out
}

// ensureTxn starts a transaction if none is open.
func (s *Session) ensureTxn() error { return s.beginTxn("", nil) }

// beginTxn starts a transaction of isolation level (""
// default_transaction_isolation) and READ ONLY mode (nil
// default_transaction_read_only) if none is open.
func (s *Session) beginTxn(level string, ro *bool) error {
	if s.txn != nil {
		return nil
	}
	if level == "" {
		level = s.setting("default_transaction_isolation")
	}
	readOnly := s.setting("default_transaction_read_only") == "on"
	if ro != nil {
		readOnly = *ro
	}
	txn := s.beginStorage(level, readOnly)
	cat, err := s.eng.Catalog.Snapshot(txn)
	if err != nil {
		txn.Rollback()
		return err
	}
	s.txn, s.cat, s.txnStart = txn, cat, s.eng.now()
	s.deferredFK = &exec.DeferredChecks{}
	s.isolation, s.snapshotTaken = level, false
	s.ddl = ddlNone
	s.readOnly = readOnly
	s.savedVals = make(map[string]string, len(s.vals))
	for k, v := range s.vals {
		s.savedVals[k] = v
	}
	s.savedEnv = s.env
	return nil
}

func (s *Session) commit() error {
	if s.txn == nil {
		return nil
	}
	if err := s.endCursors(true); err != nil {
		s.rollback()
		return err
	}
	if err := s.onCommitTemp(); err != nil {
		s.rollback()
		return err
	}
	if s.deferredFK.Pending() {
		// INITIALLY DEFERRED foreign keys are checked now (23503 rolls
		// the transaction back, as in PostgreSQL).
		ec, err := s.execCtx(context.Background(), nil)
		if err == nil {
			err = exec.CheckDeferred(ec, s.deferredFK)
		}
		if err != nil {
			s.cat.FillErrorSchema(err)
			s.rollback()
			return err
		}
	}
	s.deferredFK = nil
	txn, cat := s.txn, s.cat
	s.txn, s.cat, s.readOnly = nil, nil, false
	ds := s.datasets
	s.datasets = nil
	streams := s.streamRefreshes
	s.streamRefreshes = nil
	runs := s.createRuns
	s.createRuns = nil
	if err := txn.Commit(); err != nil {
		s.restoreSettings()
		s.endLocals()
		s.forgetNotify()
		if len(streams) > 0 && (errors.Is(err, storage.ErrDuplicateKey) || errors.Is(err, storage.ErrSerialization)) &&
			!errors.Is(err, storage.ErrReadDependency) {
			// The refresh in this transaction appended rows another
			// refresh of the table appended and committed first (both
			// read the same checkpoint): nothing is committed twice.
			return pgerror.New(pgerror.SerializationFailure, "could not serialize access: a concurrent refresh of streaming table \"%s\" committed first", strings.Join(streams, ", ")).
				WithDetail("This transaction changed nothing.").
				WithHint("The transaction might succeed if retried.")
		}
		// A unique key a concurrent transaction committed first: 23505
		// naming the constraint, as PostgreSQL reports it.
		if cat != nil {
			err = exec.UniqueViolation(cat, err)
		}
		return mapStorageErr(err)
	}
	s.savedVals = nil
	s.endLocals()
	s.afterCommit()
	for _, r := range runs {
		if !r.manual {
			s.eng.Refresher.Announce(r.cat, r.view, r.res, "CREATE")
			continue
		}
		s.eng.Refresher.Announce(r.cat, r.view, r.res, "MANUAL")
		if s.eng.Refreshed != nil {
			s.eng.Refreshed(r.view, r.res)
		}
	}
	if len(ds) > 0 && s.eng.DatasetsChanged != nil {
		s.eng.DatasetsChanged(ds)
	}
	return nil
}

// restoreSettings undoes the SETs of a transaction that did not commit and
// reports the reported settings that change back.
func (s *Session) restoreSettings() {
	if s.savedVals == nil {
		return
	}
	for _, st := range sortedSettings() {
		k := strings.ToLower(st.name)
		old, hadOld := s.savedVals[k]
		cur, hasCur := s.vals[k]
		if old == cur && hadOld == hasCur {
			continue
		}
		if hadOld {
			s.vals[k] = old
		} else {
			delete(s.vals, k)
		}
		if st.reported {
			s.pending = append(s.pending, server.ParamStatus{Name: st.name, Value: s.get(st)})
		}
	}
	s.env = s.savedEnv
	s.savedVals = nil
}

func (s *Session) rollback() {
	_ = s.endCursors(false)
	if s.txn != nil {
		s.txn.Rollback()
		s.txn, s.cat, s.readOnly = nil, nil, false
		s.datasets = nil
		s.streamRefreshes = nil
		s.createRuns = nil
		s.restoreSettings()
		s.endLocals()
		s.forgetNotify()
	}
}

// mapStorageErr gives storage errors their SQLSTATEs.
func mapStorageErr(err error) error {
	var pe *pgerror.Error
	if errors.As(err, &pe) {
		return err
	}
	if e := storageFaultErr(err); e != nil {
		return e
	}
	switch {
	case errors.Is(err, storage.ErrReadDependency):
		return readDependencyErr()
	case errors.Is(err, storage.ErrStagedRead):
		return pgerror.New(pgerror.FeatureNotSupported, "a statement cannot read or change a table that an earlier statement of the same implicit transaction loaded in bulk").
			WithHint("Send a Sync between the statements, or run them in a transaction block (BEGIN … COMMIT).")
	case errors.Is(err, storage.ErrSerialization):
		return pgerror.New(pgerror.SerializationFailure, "could not serialize access due to concurrent update").
			WithHint("The transaction might succeed if retried.")
	case errors.Is(err, storage.ErrDuplicateKey):
		return pgerror.New(pgerror.UniqueViolation, "duplicate key value violates unique constraint").
			WithDetail("A concurrent transaction inserted a row with the same primary key.")
	case errors.Is(err, storage.ErrNotFound), errors.Is(err, storage.ErrTxnDone), errors.Is(err, storage.ErrIndexMismatch):
		return pgerror.Wrap(err, pgerror.InternalError, "")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return pgerror.Wrap(err, pgerror.IOError, "storage error")
}

// storageFaultErr gives a full disk 53100 and a failed write-ahead log
// 58030 (storage/faults.go); nil for other errors.
func storageFaultErr(err error) error {
	var wf *storage.WriteFailedError
	var df *storage.DiskFullError
	switch {
	case errors.As(err, &wf):
		code := pgerror.IOError
		if errors.As(err, &df) {
			code = pgerror.DiskFull
		}
		e := pgerror.Wrap(err, code, fmt.Sprintf("could not write to the write-ahead log: %v", wf.Cause))
		if wf.First {
			e.Detail = "Whether this commit is durable is unknown: after a restart it is either wholly there or wholly absent. The server accepts no more writes until it is restarted; reads go on."
		} else {
			e.Detail = "An earlier write to the write-ahead log failed. Nothing was written; the server accepts no writes until it is restarted, reads go on."
		}
		e.Hint = "Fix the disk, then restart mvserver: the restart replays the log and keeps every acknowledged commit."
		return e
	case errors.As(err, &df) && df.Need != 0:
		e := pgerror.Wrap(err, pgerror.DiskFull, "could not write to the data directory: no space left on device")
		e.Detail = fmt.Sprintf("The server started read-only: the disk holding the data directory had %d MB free, less than the %d MB replaying the write-ahead log needs. Nothing was written; reads go on.",
			df.Free>>20, df.Need>>20)
		e.Hint = "Free space on that disk, then restart mvserver: writes need a restart."
		return e
	case errors.As(err, &df):
		e := pgerror.Wrap(err, pgerror.DiskFull, "could not write to the data directory: no space left on device")
		e.Detail = fmt.Sprintf("The disk holding the data directory has %d MB free, and commits leave %d MB free for the server's own work. Nothing was written.",
			df.Free>>20, df.Reserve>>20)
		e.Hint = "Free space on that disk (or lower --disk-reserve), then retry; reads go on meanwhile."
		return e
	}
	return nil
}

func (s *Session) funcCtx() *funcs.Ctx {
	return &funcs.Ctx{Env: s.env, StatementTime: s.txnStart, StatementStart: s.eng.now(), Database: s.eng.Database, User: s.currentUser(), SessionUser: s.identity().Session, BackendPID: int64(s.info.ProcessID),
		CancelBackend: s.cancelBackend, TerminateBackend: s.terminateBackend, Activity: s.activityRows,
		Catalog: s.cat, SearchPath: s.resolvePath(), Settings: s.settingsList, Sequences: seqOps{s}, SetSetting: s.setConfig,
		RequireRoles: s.eng.RequireRoles,
		RelationSize: func(id uint32, total bool) (int64, error) {
			return s.eng.DB.TableSize(storage.TableID(id), total)
		}}
}

// sessionNames reads and prints the OID alias types (regclass, …) against
// the session's current catalog and search path.
type sessionNames struct{ s *Session }

func (n sessionNames) view() pgcatalog.Names {
	return pgcatalog.Names{V: pgcatalog.ViewFor(n.s.funcCtx())}
}

func (n sessionNames) OIDName(k types.Kind, oid uint32) (string, bool) {
	if n.s.cat == nil {
		return "", false
	}
	return n.view().OIDName(k, oid)
}

func (n sessionNames) NameOID(k types.Kind, name string) (uint32, error) {
	if n.s.cat == nil {
		return 0, types.ErrUndefinedObject(k, name)
	}
	return n.view().NameOID(k, name)
}

// setConfig is set_config(name, value, false): SET name = value.
func (s *Session) setConfig(name, value string) (string, error) {
	st, err := lookupSetting(name)
	if err != nil {
		return "", err
	}
	if st.readOnly {
		return "", st.changeError()
	}
	if err := s.set(st, value); err != nil {
		return "", err
	}
	return s.get(st), nil
}

// settingsList is pg_settings: every parameter with the session's value.
func (s *Session) settingsList() []funcs.Setting {
	out := make([]funcs.Setting, 0, len(settings))
	for _, st := range settings {
		v := s.get(st)
		row := funcs.Setting{Name: st.name, Value: v, Desc: st.desc, ReadOnly: st.readOnly, Hidden: st.hidden, Setting: v, Default: st.def}
		if p := st.pg; p != nil {
			row.VarType, row.Unit, row.Context, row.Category = p.VarType, p.Unit, p.Context, p.Category
			row.EnumVals, row.Min, row.Max = p.EnumVals, p.Min, p.Max
			row.Setting, row.Default = p.SettingOf(row.Value), p.SettingOf(row.Default)
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// statementContext applies statement_timeout (R-S4).
func (s *Session) statementContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d, err := ParseDuration(s.setting("statement_timeout"))
	if err != nil || d <= 0 {
		// No timeout: the server's statement context already ends with
		// the statement (and on cancel); another layer costs a context
		// and its registration with the parent on every Execute.
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// flushParams reports changed settings to the client.
// complete ends a statement as PostgreSQL does: its notices, its command
// tag, then the settings it changed.
func (s *Session) complete(w server.ResultWriter, tag string) error {
	if err := s.flushNotices(w); err != nil {
		return err
	}
	if err := w.CommandComplete(tag); err != nil {
		return err
	}
	return s.flushParams(w)
}

// flushNotices sends the notices raised so far.
func (s *Session) flushNotices(w server.ResultWriter) error {
	for _, n := range s.notices {
		if err := w.Notice(n); err != nil {
			return err
		}
	}
	s.notices = s.notices[:0]
	return nil
}

func (s *Session) flushParams(w server.ResultWriter) error {
	for _, p := range s.pending {
		if err := w.ParameterStatus(p.Name, p.Value); err != nil {
			return err
		}
	}
	s.pending = s.pending[:0]
	return s.flushNotices(w)
}

// IdleInTransactionTimeout implements server.IdleTimeouter: the session's
// idle_in_transaction_session_timeout (0: none).
func (s *Session) IdleInTransactionTimeout() time.Duration {
	d, err := ParseDuration(s.setting("idle_in_transaction_session_timeout"))
	if err != nil || d < 0 {
		return 0
	}
	return d
}
