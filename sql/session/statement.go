package session

import (
	"context"

	"fmt"
	"github.com/mvserver/mvserver/catalog"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/ddl"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	pgsettings "github.com/mvserver/mvserver/sql/settings"
	"github.com/mvserver/mvserver/sql/types"
)

// txnControl identifies transaction-control statements, which the session
// handles itself.
type txnControl uint8

const (
	notTxnControl txnControl = iota
	txnBegin
	txnCommit
	txnRollback
)

// prepared is a statement bound against a catalog: either a relation to
// stream (node, with cols) or an action that returns a command tag.
type prepared struct {
	st         *parse.Statement
	paramTypes []types.T
	cols       []plan.Column
	node       plan.Node
	rowsTag    string // command tag word for row results: SELECT, SHOW
	action     func(ctx context.Context, params []types.Datum) (string, error)
	copy       *copyPlan // COPY … FROM STDIN / TO STDOUT (copy.go)
	ctl        txnControl
	params     []types.Datum // EXECUTE's arguments (prepare_sql.go); nil: the portal's
}

func classifyTxn(st *parse.Statement) txnControl {
	if st.AST == nil {
		return notTxnControl
	}
	ts := st.AST.GetTransactionStmt()
	if ts == nil {
		return notTxnControl
	}
	switch ts.Kind {
	case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN, pg_query.TransactionStmtKind_TRANS_STMT_START:
		return txnBegin
	case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT:
		return txnCommit
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		return txnRollback
	}
	return notTxnControl
}

func (s *Session) binder(st *parse.Statement, paramTypes []types.T) *plan.Binder {
	// Also a superuser's statement checks the rights of the owners of
	// the views it reads.
	b := &plan.Binder{Cat: s.cat, SearchPath: s.resolvePath(), Stmt: st, Env: s.env, Params: append([]types.T(nil), paramTypes...),
		CheckRead: s.checkRead, CheckSystem: s.checkSystem}
	if s.txn != nil {
		b.Stats = exec.PlanStats(s.txn)
	}
	return b
}

// prepare binds st against s.cat.
func (s *Session) prepare(st *parse.Statement, paramTypes []types.T) (*prepared, error) {
	return s.prepareIn(st, paramTypes, true)
}

// prepareIn binds st; readOnlyCheck fails a write in a READ ONLY
// transaction now (SQL PREPARE defers that to EXECUTE, as PostgreSQL does).
func (s *Session) prepareIn(st *parse.Statement, paramTypes []types.T, readOnlyCheck bool) (*prepared, error) {
	p := &prepared{st: st, paramTypes: paramTypes}
	if c := classifyTxn(st); c != notTxnControl {
		p.ctl = c
		return p, nil
	}
	if readOnlyCheck {
		if err := s.checkReadOnly(st); err != nil {
			return nil, err
		}
	}
	if st.Ext != nil {
		return s.prepareExt(p)
	}
	b := s.binder(st, paramTypes)
	b.Optimize = true // statements run here, not views refresh analyzes
	b.AllowModifyingWith = true
	b.AllowRowLocks = true
	if a, ok := ddl.Statement(st.AST); ok {
		p.action = func(context.Context, []types.Datum) (string, error) { return s.applyDDL(st, a) }
		return p, nil
	}
	switch n := st.AST.Node.(type) {
	case *pg_query.Node_SelectStmt:
		if n.SelectStmt.IntoClause != nil {
			cta := selectInto(n.SelectStmt)
			p.action = func(ctx context.Context, _ []types.Datum) (string, error) { return s.createTableAs(ctx, st, cta) }
			break
		}
		q, err := b.BindSelect(n.SelectStmt)
		if err != nil {
			return nil, err
		}
		p.node, p.cols, p.rowsTag = q.Root, q.Cols, "SELECT"
		if q.With != nil {
			if err := s.requireModifying(q.With); err != nil {
				return nil, err
			}
			s.modifyingSelect(p, q)
		}
	case *pg_query.Node_InsertStmt:
		ins, err := b.BindInsert(n.InsertStmt)
		if err != nil {
			return nil, err
		}
		if err := s.require(ins.Table, catalog.PrivInsert); err != nil {
			return nil, err
		}
		if ins.OnConflict != nil && !ins.OnConflict.DoNothing {
			if err := s.require(ins.Table, catalog.PrivUpdate); err != nil {
				return nil, err
			}
		}
		if err := s.requireModifying(ins.With); err != nil {
			return nil, err
		}
		if ins.Returning != nil {
			if err := s.require(ins.Table, catalog.PrivSelect); err != nil {
				return nil, err
			}
			s.returning(p, ins, ins.Table.ID, ins.Returning, "INSERT 0", ins.With)
			break
		}
		p.action = func(ctx context.Context, params []types.Datum) (string, error) {
			c, err := s.execCtx(ctx, params)
			if err != nil {
				return "", err
			}
			if err := s.runModifying(c, ins.With); err != nil {
				return "", err
			}
			s.txn.CheckUnchanged(catalog.DescriptorKey(ins.Table.ID))
			if ins.OnConflict == nil && ins.With == nil {
				s.allowStaging(ins.Table)
			}
			n, err := exec.ExecInsert(c, ins)
			return fmt.Sprintf("INSERT 0 %d", n), err
		}
	case *pg_query.Node_UpdateStmt:
		up, err := b.BindUpdate(n.UpdateStmt)
		if err != nil {
			return nil, err
		}
		if err := s.require(up.Table, catalog.PrivUpdate); err != nil {
			return nil, err
		}
		if n.UpdateStmt.WhereClause != nil || up.Returning != nil {
			if err := s.require(up.Table, catalog.PrivSelect); err != nil {
				return nil, err
			}
		}
		if err := s.requireModifying(up.With); err != nil {
			return nil, err
		}
		if up.Returning != nil {
			s.returning(p, up, up.Table.ID, up.Returning, "UPDATE", up.With)
			break
		}
		p.action = func(ctx context.Context, params []types.Datum) (string, error) {
			c, err := s.execCtx(ctx, params)
			if err != nil {
				return "", err
			}
			if err := s.runModifying(c, up.With); err != nil {
				return "", err
			}
			s.txn.CheckUnchanged(catalog.DescriptorKey(up.Table.ID))
			n, err := exec.ExecUpdate(c, up)
			return fmt.Sprintf("UPDATE %d", n), err
		}
	case *pg_query.Node_DeleteStmt:
		del, err := b.BindDelete(n.DeleteStmt)
		if err != nil {
			return nil, err
		}
		if err := s.require(del.Table, catalog.PrivDelete); err != nil {
			return nil, err
		}
		if n.DeleteStmt.WhereClause != nil || del.Returning != nil {
			if err := s.require(del.Table, catalog.PrivSelect); err != nil {
				return nil, err
			}
		}
		if err := s.requireModifying(del.With); err != nil {
			return nil, err
		}
		if del.Returning != nil {
			s.returning(p, del, del.Table.ID, del.Returning, "DELETE", del.With)
			break
		}
		p.action = func(ctx context.Context, params []types.Datum) (string, error) {
			c, err := s.execCtx(ctx, params)
			if err != nil {
				return "", err
			}
			if err := s.runModifying(c, del.With); err != nil {
				return "", err
			}
			s.txn.CheckUnchanged(catalog.DescriptorKey(del.Table.ID))
			n, err := exec.ExecDelete(c, del)
			return fmt.Sprintf("DELETE %d", n), err
		}
	case *pg_query.Node_MergeStmt:
		q, check, err := b.BindMerge(n.MergeStmt)
		if err != nil {
			return nil, err
		}
		if err := s.requireModifying(q.With); err != nil {
			return nil, err
		}
		p.action = s.merge(q, check)
	case *pg_query.Node_ConstraintsSetStmt:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) {
			return s.setConstraints(ctx, n.ConstraintsSetStmt)
		}
	case *pg_query.Node_VariableSetStmt:
		p.action = func(context.Context, []types.Datum) (string, error) { return s.execSet(st, n.VariableSetStmt) }
	case *pg_query.Node_VariableShowStmt:
		return s.prepareShow(p, n.VariableShowStmt.Name)
	case *pg_query.Node_CreateStmt:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) {
			return s.createTable(ctx, st, n.CreateStmt)
		}
	case *pg_query.Node_CreateTableAsStmt:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) {
			return s.createTableAs(ctx, st, n.CreateTableAsStmt)
		}
	case *pg_query.Node_IndexStmt:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) {
			return s.createIndex(ctx, st, n.IndexStmt)
		}
	case *pg_query.Node_ViewStmt:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) { return s.createView(st, n.ViewStmt) }
	case *pg_query.Node_CreateSchemaStmt:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) {
			return s.createSchema(st, n.CreateSchemaStmt)
		}
	case *pg_query.Node_DropStmt:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) { return s.drop(st, n.DropStmt) }
	case *pg_query.Node_TruncateStmt:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) { return s.truncate(st, n.TruncateStmt) }
	case *pg_query.Node_AlterTableStmt:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) {
			return s.alterTable(ctx, st, n.AlterTableStmt)
		}
	case *pg_query.Node_DeclareCursorStmt:
		p.action = func(ctx context.Context, params []types.Datum) (string, error) {
			return s.declareCursor(ctx, st, n.DeclareCursorStmt, params)
		}
	case *pg_query.Node_FetchStmt:
		if err := s.prepareFetch(p, n.FetchStmt); err != nil {
			return nil, err
		}
	case *pg_query.Node_ClosePortalStmt:
		p.action = func(context.Context, []types.Datum) (string, error) {
			return s.closeCursor(n.ClosePortalStmt.Portalname)
		}
	case *pg_query.Node_AlterOwnerStmt:
		p.action = func(context.Context, []types.Datum) (string, error) { return s.alterSchemaOwner(n.AlterOwnerStmt) }
	case *pg_query.Node_GrantStmt:
		p.action = func(context.Context, []types.Datum) (string, error) { return s.grant(n.GrantStmt) }
	case *pg_query.Node_GrantRoleStmt:
		p.action = func(context.Context, []types.Datum) (string, error) { return s.grantRole(n.GrantRoleStmt) }
	case *pg_query.Node_VacuumStmt:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) { return s.vacuumPG(ctx, n.VacuumStmt) }
	case *pg_query.Node_ExplainStmt:
		if err := s.prepareExplain(p, st, n.ExplainStmt); err != nil {
			return nil, err
		}
	case *pg_query.Node_CreateSeqStmt:
		p.action = func(context.Context, []types.Datum) (string, error) { return s.createSequence(st, n.CreateSeqStmt) }
	case *pg_query.Node_AlterSeqStmt:
		p.action = func(context.Context, []types.Datum) (string, error) { return s.alterSequence(n.AlterSeqStmt) }
	case *pg_query.Node_RenameStmt:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) { return s.rename(st, n.RenameStmt) }
		if a := s.roleAction(st.AST); a != nil {
			p.action = a // ALTER ROLE … RENAME TO (roles.go)
		}
	case *pg_query.Node_CreateRoleStmt, *pg_query.Node_AlterRoleStmt, *pg_query.Node_DropRoleStmt:
		p.action = s.roleAction(st.AST)
	case *pg_query.Node_ListenStmt:
		p.action = func(context.Context, []types.Datum) (string, error) {
			return s.execListen(n.ListenStmt.Conditionname, false)
		}
	case *pg_query.Node_UnlistenStmt:
		p.action = func(context.Context, []types.Datum) (string, error) {
			return s.execListen(n.UnlistenStmt.Conditionname, true)
		}
	case *pg_query.Node_NotifyStmt:
		p.action = func(context.Context, []types.Datum) (string, error) {
			return "NOTIFY", s.queueNotify(n.NotifyStmt.Conditionname, n.NotifyStmt.Payload)
		}
	case *pg_query.Node_CopyStmt:
		return s.prepareCopy(p, st, n.CopyStmt)
	case *pg_query.Node_LockStmt:
		p.action = func(context.Context, []types.Datum) (string, error) { return s.lockTables(st, n.LockStmt) }
	case *pg_query.Node_DoStmt:
		return s.prepareDo(p, n.DoStmt)
	case *pg_query.Node_PrepareStmt:
		return s.prepareSQL(p, st, n.PrepareStmt)
	case *pg_query.Node_ExecuteStmt:
		return s.executeSQL(st, n.ExecuteStmt)
	case *pg_query.Node_DeallocateStmt:
		name := n.DeallocateStmt.Name
		p.action = func(context.Context, []types.Datum) (string, error) {
			if s.deallocateSQL(name) && name != "" {
				return "DEALLOCATE", nil
			}
			if s.info.Deallocate == nil {
				return "", pgerror.New(pgerror.FeatureNotSupported, "DEALLOCATE is not available on this connection")
			}
			if !s.info.Deallocate(name) {
				return "", pgerror.New(pgerror.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", name)
			}
			if name == "" {
				return "DEALLOCATE ALL", nil
			}
			return "DEALLOCATE", nil
		}
	default:
		return nil, pgerror.New(pgerror.FeatureNotSupported, "%s is not supported yet", statementName(st))
	}
	b.FinishParams()
	p.paramTypes = b.Params
	return p, nil
}

// statementName names a statement kind for error messages.
func statementName(st *parse.Statement) string {
	name := fmt.Sprintf("%T", st.AST.Node)
	name = strings.TrimPrefix(name, "*pg_query.Node_")
	name = strings.TrimSuffix(name, "Stmt")
	var words []string
	start := 0
	for i := 1; i <= len(name); i++ {
		if i == len(name) || (name[i] >= 'A' && name[i] <= 'Z' && !(name[i-1] >= 'A' && name[i-1] <= 'Z')) {
			words = append(words, strings.ToUpper(name[start:i]))
			start = i
		}
	}
	return "the statement " + strings.Join(words, " ")
}

func (s *Session) execCtx(ctx context.Context, params []types.Datum) (*exec.Ctx, error) {
	if s.txn == nil {
		return nil, pgerror.New(pgerror.InternalError, "no transaction")
	}
	fc := s.funcCtx()
	fc.Notify = s.queueNotify
	w, set := s.vals["max_parallel_workers_per_gather"]
	workers := exec.Workers(pgsettings.IntOf("max_parallel_workers_per_gather", w, set))
	return &exec.Ctx{Context: ctx, Txn: s.txn, Env: s.env, Funcs: fc, Params: params, Mem: s.budget(), Workers: workers,
		Constraints: s.constraintsFor(func() *plan.Binder { return s.binder(nil, nil) })}, nil
}

func (s *Session) prepareShow(p *prepared, name string) (*prepared, error) {
	if strings.EqualFold(name, "all") {
		cols := []plan.Column{{Name: "name", T: types.Text}, {Name: "setting", T: types.Text}, {Name: "description", T: types.Text}}
		var rows [][]types.Datum
		for _, st := range sortedSettings() {
			if st.hidden {
				continue
			}
			rows = append(rows, []types.Datum{types.NewText(st.name), types.NewText(s.get(st)), types.NewText(st.desc)})
		}
		p.node, p.cols, p.rowsTag = plan.ValuesOf(cols, rows), cols, "SHOW"
		return p, nil
	}
	if strings.EqualFold(name, "transaction_isolation") || strings.EqualFold(name, "transaction isolation level") {
		name = "transaction_isolation"
	}
	if strings.EqualFold(name, "timezone") || strings.EqualFold(name, "time zone") {
		name = "TimeZone"
	}
	st, err := lookupSetting(name)
	if err != nil {
		return nil, err
	}
	cols := []plan.Column{{Name: strings.ToLower(st.name), T: types.Text}}
	if st.name == "TimeZone" || st.name == "DateStyle" || st.name == "IntervalStyle" {
		cols[0].Name = st.name
	}
	p.node, p.cols, p.rowsTag = plan.ValuesOf(cols, [][]types.Datum{{types.NewText(s.get(st))}}), cols, "SHOW"
	return p, nil
}

// execSet runs SET / RESET.
func (s *Session) execSet(st *parse.Statement, v *pg_query.VariableSetStmt) (string, error) {
	name := v.Name
	switch v.Kind {
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		for _, x := range sortedSettings() {
			// PostgreSQL's RESET ALL leaves the transaction's isolation.
			if !x.readOnly && x.name != "session_authorization" && x.name != "transaction_isolation" {
				if err := s.store(x, x.def, false, false); err != nil {
					return "", err
				}
			}
		}
		return "RESET", nil
	case pg_query.VariableSetKind_VAR_SET_MULTI:
		// SET TRANSACTION … / SET SESSION CHARACTERISTICS AS TRANSACTION …:
		// the isolation level and READ ONLY / READ WRITE apply to this
		// transaction or to the session's next ones.
		if strings.EqualFold(v.Name, "TRANSACTION") {
			if !s.explicit {
				s.notices = append(s.notices, &pgerror.Error{Severity: pgerror.SeverityWarning, Code: pgerror.NoActiveSQLTransaction, Message: "SET TRANSACTION can only be used in transaction blocks"})
			}
			if err := s.transactionModes(v.Args); err != nil {
				return "", err
			}
		} else {
			for _, a := range v.Args {
				d := a.GetDefElem()
				if d == nil {
					continue
				}
				var err error
				switch d.Defname {
				case "transaction_read_only":
					err = s.set(settings["default_transaction_read_only"], pgsettings.OnOff(constInt(d.Arg) != 0))
				case "transaction_isolation":
					err = s.set(settings["default_transaction_isolation"], constString(d.Arg))
				}
				if err != nil {
					return "", err
				}
			}
		}
		return "SET", nil
	}
	switch strings.ToLower(name) {
	case "timezone", "time zone":
		name = "TimeZone"
	case "transaction_isolation":
	}
	local := v.IsLocal
	if local && !s.explicit {
		s.setLocalOutsideBlock()
		return "SET", nil
	}
	tag := "SET"
	if v.Kind == pg_query.VariableSetKind_VAR_RESET {
		tag = "RESET"
	}
	if isIdentitySetting(name) {
		val := ""
		if v.Kind == pg_query.VariableSetKind_VAR_SET_VALUE && len(v.Args) == 1 {
			val = v.Args[0].GetAConst().GetSval().GetSval()
		}
		return tag, s.setIdentity(name, val, local)
	}
	setting, err := lookupSetting(name)
	if err != nil {
		return "", err
	}
	if setting.readOnly {
		return "", setting.changeError()
	}
	if v.Kind == pg_query.VariableSetKind_VAR_RESET || v.Kind == pg_query.VariableSetKind_VAR_SET_DEFAULT {
		if err := s.setTo(setting, setting.def, local); err != nil {
			return "", err
		}
		if v.Kind == pg_query.VariableSetKind_VAR_RESET {
			return "RESET", nil
		}
		return "SET", nil
	}
	var parts []string
	for _, a := range v.Args {
		switch x := a.Node.(type) {
		case *pg_query.Node_AConst:
			switch c := x.AConst.Val.(type) {
			case *pg_query.A_Const_Sval:
				parts = append(parts, c.Sval.Sval)
			case *pg_query.A_Const_Ival:
				parts = append(parts, fmt.Sprint(c.Ival.Ival))
			case *pg_query.A_Const_Fval:
				parts = append(parts, c.Fval.Fval)
			case *pg_query.A_Const_Boolval:
				parts = append(parts, fmt.Sprint(c.Boolval.Boolval))
			}
		case *pg_query.Node_TypeCast:
			// SET TIME ZONE INTERVAL '+02:00' HOUR TO MINUTE
			if c := x.TypeCast.Arg.GetAConst(); c != nil {
				if sv, ok := c.Val.(*pg_query.A_Const_Sval); ok {
					parts = append(parts, sv.Sval.Sval)
				}
			}
		default:
			return "", pgerror.New(pgerror.SyntaxError, "unsupported SET value")
		}
	}
	val := strings.Join(parts, ", ")
	if strings.EqualFold(setting.name, "search_path") {
		// keep each element as written (quoted when needed)
		var q []string
		for _, p := range parts {
			if p != strings.ToLower(p) || strings.ContainsAny(p, " ,") {
				q = append(q, `"`+p+`"`)
			} else {
				q = append(q, p)
			}
		}
		val = strings.Join(q, ", ")
	}
	if err := s.setTo(setting, val, local); err != nil {
		return "", err
	}
	return "SET", nil
}

// returning makes a DML statement with a RETURNING list a row statement:
// it writes when it runs and returns the list's rows, tagged as the DML
// (INSERT 0 n, UPDATE n, DELETE n).
func (s *Session) returning(p *prepared, stmt any, table uint32, ret *plan.Returning, tag string, with *plan.ModifyingWith) {
	p.cols, p.rowsTag = ret.Columns(), tag
	p.node = &plan.Rows{Cols: p.cols, Gen: genDeferred, Arg: deferredRows(func(c *exec.Ctx) ([]exec.Row, error) {
		if err := s.runModifying(c, with); err != nil {
			return nil, err
		}
		s.txn.CheckUnchanged(catalog.DescriptorKey(table))
		return exec.ExecReturning(c, stmt)
	})}
}

// transactionModes applies BEGIN's and SET TRANSACTION's modes to the
// current transaction: the isolation level (isolation.go) and READ ONLY /
// READ WRITE. DEFERRABLE changes nothing: a serializable transaction that
// only reads never fails.
func (s *Session) transactionModes(opts []*pg_query.Node) error {
	for _, o := range opts {
		d := o.GetDefElem()
		if d == nil {
			continue
		}
		switch d.Defname {
		case "transaction_read_only":
			if err := s.setReadOnly(constInt(d.Arg) != 0); err != nil {
				return err
			}
		case "transaction_isolation":
			if err := s.setIsolation(constString(d.Arg)); err != nil {
				return err
			}
		}
	}
	return nil
}

// constString reads a string constant of a transaction mode.
func constString(n *pg_query.Node) string {
	return n.GetAConst().GetSval().GetSval()
}

// constInt reads an integer or boolean constant of a transaction mode.
func constInt(n *pg_query.Node) int64 {
	c := n.GetAConst()
	if c == nil {
		return 0
	}
	if b := c.GetBoolval(); b != nil && b.Boolval {
		return 1
	}
	return int64(c.GetIval().GetIval())
}

// checkReadOnly fails a statement that writes in a READ ONLY transaction
// (25006), as PostgreSQL does.
func (s *Session) checkReadOnly(st *parse.Statement) error {
	if !s.readOnly || st.AST == nil {
		if s.readOnly && st.Ext != nil && !readOnlyExt(st.Text) {
			return pgerror.New(pgerror.ReadOnlySQLTransaction, "cannot execute %s in a read-only transaction", commandWords(st.Text))
		}
		return nil
	}
	if sel := st.AST.GetSelectStmt(); sel != nil {
		if sel.IntoClause != nil {
			return pgerror.New(pgerror.ReadOnlySQLTransaction, "cannot execute SELECT INTO in a read-only transaction")
		}
		if plan.HasModifyingWith(sel.WithClause) {
			// PostgreSQL names the statement, not the WITH query.
			return pgerror.New(pgerror.ReadOnlySQLTransaction, "cannot execute SELECT in a read-only transaction")
		}
		if len(sel.LockingClause) > 0 {
			return pgerror.New(pgerror.ReadOnlySQLTransaction, "cannot execute SELECT %s in a read-only transaction", plan.LockingClauseStrength(sel.LockingClause))
		}
	}
	switch n := st.AST.Node.(type) {
	case *pg_query.Node_SelectStmt, *pg_query.Node_VariableSetStmt, *pg_query.Node_VariableShowStmt,
		*pg_query.Node_TransactionStmt, *pg_query.Node_DeclareCursorStmt, *pg_query.Node_FetchStmt,
		*pg_query.Node_ClosePortalStmt, *pg_query.Node_ListenStmt, *pg_query.Node_UnlistenStmt,
		*pg_query.Node_NotifyStmt, *pg_query.Node_DeallocateStmt, *pg_query.Node_LockStmt,
		*pg_query.Node_PrepareStmt, *pg_query.Node_ExecuteStmt:
		return nil
	case *pg_query.Node_ExplainStmt:
		return nil
	case *pg_query.Node_CopyStmt:
		if !n.CopyStmt.IsFrom {
			return nil
		}
	}
	words := commandWords(st.Text)
	// A statement PREPAREd by SQL shares the PREPARE's text: name the
	// write itself.
	switch st.AST.Node.(type) {
	case *pg_query.Node_InsertStmt:
		words = "INSERT"
	case *pg_query.Node_UpdateStmt:
		words = "UPDATE"
	case *pg_query.Node_DeleteStmt:
		words = "DELETE"
	case *pg_query.Node_MergeStmt:
		words = "MERGE"
	}
	return pgerror.New(pgerror.ReadOnlySQLTransaction, "cannot execute %s in a read-only transaction", words)
}

// readOnlyExt reports whether an mvserver statement only reads.
func readOnlyExt(text string) bool {
	switch strings.ToUpper(strings.Fields(text + " x")[0]) {
	case "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "CHECK":
		return true
	}
	return false
}

// commandWords is the command a statement's text starts with, as
// PostgreSQL names it in messages (INSERT, CREATE TABLE, …).
func commandWords(text string) string {
	f := strings.Fields(strings.ToUpper(text))
	if len(f) == 0 {
		return "this statement"
	}
	switch f[0] {
	case "CREATE", "DROP", "ALTER", "REFRESH", "COMMENT":
		if len(f) > 1 {
			if f[1] == "MATERIALIZED" && len(f) > 2 {
				return f[0] + " " + f[1] + " " + f[2]
			}
			return f[0] + " " + f[1]
		}
	}
	return f[0]
}
