package server

import (
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// resultWriter is the ResultWriter a Session writes statement results to. It
// lives inside its conn, so handing it out allocates nothing. It is also the
// session's Copier (copy.go).
type resultWriter struct {
	c   *conn
	out *output
	// extended is set while a portal executes: the description was sent by
	// Describe, so a RowDescription here would be a second one that clients
	// do not expect. It is dropped rather than sent.
	extended bool

	copyData pgproto3.CopyData // reused by CopyData
}

var _ ResultWriter = (*resultWriter)(nil)

func (w *resultWriter) RowDescription(cols []Column) error {
	if w.extended {
		return nil
	}
	return w.out.rowDescription(cols, false)
}

func (w *resultWriter) DataRow(values [][]byte) error { return w.out.dataRowMsg(values) }

func (w *resultWriter) CommandComplete(tag string) error { return w.out.commandComplete(tag) }

func (w *resultWriter) EmptyQuery() error { return w.out.send(&emptyQueryResponse) }

func (w *resultWriter) Notice(n *pgerror.Error) error { return w.out.notice(n) }

func (w *resultWriter) ParameterStatus(name, value string) error {
	return w.out.parameterStatus(name, value)
}
