package server

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// The extended query protocol: Parse makes a prepared statement, Bind a
// portal from it, Describe reports their shapes, Execute runs a portal
// (possibly a few rows at a time), Close drops either, Sync ends the batch.
// The unnamed statement and portal ("") are replaced by the next Parse or
// Bind; named ones must be closed first. After an error every message but
// Sync and Terminate is discarded until Sync, so the client can pipeline a
// batch without waiting for each answer.

func (c *conn) handleParse(m *pgproto3.Parse) error {
	if c.ignoreTillSync {
		return nil
	}
	if m.Name == "" {
		// Dropped before parsing, as in PostgreSQL: a failed Parse leaves
		// no unnamed statement behind.
		c.closeStatement("")
	} else if _, ok := c.stmts[m.Name]; ok {
		return c.wireError(pgerror.New(pgerror.DuplicatePreparedStatement,
			`prepared statement "%s" already exists`, m.Name))
	}
	c.noteQuery(m.Query)
	ctx := c.beginStatement()
	ps, err := c.sess.Prepare(ctx, m.Query, m.ParameterOIDs)
	c.endStatement()
	if err != nil {
		return c.extendedError(err)
	}
	if c.stmts == nil {
		c.stmts = make(map[string]PreparedStatement)
	}
	c.stmts[m.Name] = ps
	return c.sent(c.out.send(&parseComplete))
}

func (c *conn) handleBind(m *pgproto3.Bind) error {
	if c.ignoreTillSync {
		return nil
	}
	ps, ok := c.stmts[m.PreparedStatement]
	if !ok {
		return c.wireError(noStatement(m.PreparedStatement))
	}
	if m.DestinationPortal == "" {
		c.closePortal("")
	} else if _, ok := c.portals[m.DestinationPortal]; ok {
		return c.wireError(pgerror.New(pgerror.DuplicateCursor,
			`cursor "%s" already exists`, m.DestinationPortal))
	}
	if err := checkBind(m, ps); err != nil {
		return c.wireError(err)
	}
	// The values point into the read buffer, which the next message
	// overwrites; the session may keep them in the portal.
	params := copyParams(m.Parameters)

	ctx := c.beginStatement()
	p, err := c.sess.Bind(ctx, ps, params, m.ParameterFormatCodes, m.ResultFormatCodes)
	c.endStatement()
	if err != nil {
		return c.extendedError(bindParamContext(err, m.DestinationPortal))
	}
	if c.portals == nil {
		c.portals = make(map[string]Portal)
	}
	c.portals[m.DestinationPortal] = p
	return c.sent(c.out.send(&bindComplete))
}

// checkBind applies PostgreSQL's checks on the shape of a Bind message, so a
// Session always gets one value per parameter and valid format lists.
func checkBind(m *pgproto3.Bind, ps PreparedStatement) *pgerror.Error {
	nparams := len(m.Parameters)
	if nf := len(m.ParameterFormatCodes); nf > 1 && nf != nparams {
		return pgerror.New(pgerror.ProtocolViolation,
			"bind message has %d parameter formats but %d parameters", nf, nparams)
	}
	if want := len(ps.ParamOIDs()); nparams != want {
		return pgerror.New(pgerror.ProtocolViolation,
			`bind message supplies %d parameters, but prepared statement "%s" requires %d`,
			nparams, m.PreparedStatement, want)
	}
	if nf, ncols := len(m.ResultFormatCodes), len(ps.Columns()); nf > 1 && nf != ncols {
		return pgerror.New(pgerror.ProtocolViolation,
			"bind message has %d result formats but query has %d columns", nf, ncols)
	}
	for _, codes := range [2][]int16{m.ParameterFormatCodes, m.ResultFormatCodes} {
		for _, f := range codes {
			if f != 0 && f != 1 {
				return pgerror.New(pgerror.InvalidParameterValue, "unsupported format code: %d", f)
			}
		}
	}
	return nil
}

// copyParams moves the parameter values into one new buffer, in place in
// params (a slice the decoder allocated for this message). NULL stays nil;
// an empty value stays non-nil.
func copyParams(params [][]byte) [][]byte {
	n := 0
	for _, p := range params {
		n += len(p)
	}
	buf := make([]byte, 0, n)
	for i, p := range params {
		if p == nil {
			continue
		}
		start := len(buf)
		buf = append(buf, p...)
		params[i] = buf[start:len(buf):len(buf)]
	}
	return params
}

func (c *conn) handleDescribe(m *pgproto3.Describe) error {
	if c.ignoreTillSync {
		return nil
	}
	switch m.ObjectType {
	case 'S':
		ps, ok := c.stmts[m.Name]
		if !ok {
			return c.wireError(noStatement(m.Name))
		}
		c.out.paramDesc.ParameterOIDs = ps.ParamOIDs()
		err := c.out.send(&c.out.paramDesc)
		c.out.paramDesc.ParameterOIDs = nil
		if err != nil {
			return c.sent(err)
		}
		// Result formats are chosen at Bind: a statement's columns are
		// described as text.
		return c.describeRows(ps.Columns(), true)
	case 'P':
		p, ok := c.portals[m.Name]
		if !ok {
			return c.wireError(noPortal(m.Name))
		}
		return c.describeRows(p.Columns(), false)
	default:
		return c.wireError(pgerror.New(pgerror.ProtocolViolation,
			"invalid DESCRIBE message subtype %d", m.ObjectType))
	}
}

// describeRows sends RowDescription, or NoData for a statement that returns
// no rows (nil columns; an empty non-nil list is a zero-column row set).
func (c *conn) describeRows(cols []Column, forceText bool) error {
	if cols == nil {
		return c.sent(c.out.send(&noData))
	}
	return c.sent(c.out.rowDescription(cols, forceText))
}

func (c *conn) handleExecute(m *pgproto3.Execute) error {
	if c.ignoreTillSync {
		return nil
	}
	p, ok := c.portals[m.Portal]
	if !ok {
		return c.wireError(noPortal(m.Portal))
	}
	// PostgreSQL reads the limit as a signed int32; zero or negative means
	// all rows.
	maxRows := max(int(int32(m.MaxRows)), 0)

	c.rw.extended = true
	ctx := c.beginStatement()
	suspended, err := p.Execute(ctx, maxRows, &c.rw)
	c.endStatement()
	if err := c.finishCopyIn(err); err != nil {
		return err
	}
	if err != nil {
		return c.extendedError(err)
	}
	if c.out.err != nil {
		return errQuietClose
	}
	if suspended {
		return c.sent(c.out.send(&portalSuspended))
	}
	return nil
}

func (c *conn) handleClose(m *pgproto3.Close) error {
	if c.ignoreTillSync {
		return nil
	}
	// Closing something that does not exist is not an error.
	switch m.ObjectType {
	case 'S':
		c.closeStatement(m.Name)
	case 'P':
		c.closePortal(m.Name)
	default:
		return c.wireError(pgerror.New(pgerror.ProtocolViolation,
			"invalid CLOSE message subtype %d", m.ObjectType))
	}
	return c.sent(c.out.send(&closeComplete))
}

// handleSync ends the batch: the session commits or rolls back an implicit
// transaction, and ReadyForQuery follows even when that fails.
func (c *conn) handleSync() error {
	c.ignoreTillSync = false
	ctx := c.beginStatement()
	err := c.sess.Sync(ctx)
	c.endStatement()
	if err := c.statementError(err); err != nil {
		return err
	}
	return c.readyForQuery()
}

// extendedError reports a failed extended-protocol message and starts
// discarding until Sync.
func (c *conn) extendedError(err error) error {
	if err := c.statementError(err); err != nil {
		return err
	}
	c.ignoreTillSync = true
	return nil
}

// wireError reports an error the wire layer found itself (unknown statement
// or portal, a malformed Bind). The session did not see it, but PostgreSQL
// aborts the transaction on every ERROR, so a session that wants that
// semantics is told.
func (c *conn) wireError(e *pgerror.Error) error {
	if a, ok := c.sess.(Aborter); ok {
		a.AbortTransaction(e)
	}
	return c.extendedError(e)
}

// sent handles the result of sending a message: a dead socket ends the
// connection, an encoding error fails the message like any other error.
func (c *conn) sent(err error) error {
	if err == nil {
		return nil
	}
	if c.out.err != nil {
		return errQuietClose
	}
	return c.extendedError(err)
}

func noStatement(name string) *pgerror.Error {
	if name == "" {
		return pgerror.New(pgerror.InvalidSQLStatementName, "unnamed prepared statement does not exist")
	}
	return pgerror.New(pgerror.InvalidSQLStatementName, `prepared statement "%s" does not exist`, name)
}

func noPortal(name string) *pgerror.Error {
	return pgerror.New(pgerror.InvalidCursorName, `portal "%s" does not exist`, name)
}

func (c *conn) closeStatement(name string) {
	if ps, ok := c.stmts[name]; ok {
		delete(c.stmts, name)
		ps.Close()
	}
}

// deallocate is SQL DEALLOCATE: name's statement, or all named ones.
func (c *conn) deallocate(name string) bool {
	if name == "" {
		for n := range c.stmts {
			if n != "" {
				c.closeStatement(n)
			}
		}
		return true
	}
	if _, ok := c.stmts[name]; !ok {
		return false
	}
	c.closeStatement(name)
	return true
}

func (c *conn) closePortal(name string) {
	if p, ok := c.portals[name]; ok {
		delete(c.portals, name)
		p.Close()
	}
}

func (c *conn) closePortals() {
	for name, p := range c.portals {
		delete(c.portals, name)
		p.Close()
	}
}

// BindParamError is what a Session's Bind returns for a parameter value it
// cannot read (N is 1-based): the server adds PostgreSQL's context line
// naming the portal and the parameter (the value itself is not shown, as
// with log_parameter_max_length_on_error = 0).
type BindParamError struct {
	N   int
	Err error
}

func (e *BindParamError) Error() string { return e.Err.Error() }
func (e *BindParamError) Unwrap() error { return e.Err }

// bindParamContext turns a BindParamError into its error with the context
// line set.
func bindParamContext(err error, portal string) error {
	var bp *BindParamError
	if !errors.As(err, &bp) {
		return err
	}
	var pe *pgerror.Error
	if errors.As(bp.Err, &pe) && pe.Where == "" {
		name := "unnamed portal"
		if portal != "" {
			name = fmt.Sprintf("portal \"%s\"", portal)
		}
		pe.Where = fmt.Sprintf("%s parameter $%d = '...'", name, bp.N)
	}
	return bp.Err
}
