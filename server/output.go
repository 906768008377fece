package server

import (
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

const (
	// flushThreshold is where buffered output goes to the socket mid-result:
	// large enough for few syscalls, small enough that a huge result never
	// sits in memory.
	flushThreshold = 64 << 10
	// maxRetainedBuf: after one huge message the buffer is dropped rather
	// than kept for the life of the connection.
	maxRetainedBuf = 1 << 20
	initialBufSize = 8 << 10
)

// output encodes backend messages into one buffer and writes it to the
// socket. Messages are encoded with pgproto3's Encode into reused structs
// (flyweights), so a DataRow costs no allocation once the buffer has grown.
//
// A write error is sticky: the client is gone, every later call returns it,
// and the connection ends when control returns to its loop.
type output struct {
	w   io.Writer
	buf []byte
	err error

	scratch []byte // backing bytes for names and tags of the message being built

	dataRow   pgproto3.DataRow
	rowDesc   pgproto3.RowDescription
	cmdDone   pgproto3.CommandComplete
	errResp   pgproto3.ErrorResponse
	paramStat pgproto3.ParameterStatus
	paramDesc pgproto3.ParameterDescription
	rfq       pgproto3.ReadyForQuery
}

// send encodes msg into the buffer and writes the buffer out once it passes
// flushThreshold. An encoding error (a row of more than 65535 values, a
// message over 1 GiB) fails the statement, not the connection: the buffer is
// left as it was before msg.
func (o *output) send(msg pgproto3.BackendMessage) error {
	if o.err != nil {
		return o.err
	}
	nb, err := msg.Encode(o.buf)
	if err != nil {
		return pgerror.Wrap(err, pgerror.ProgramLimitExceeded, "cannot encode result")
	}
	o.buf = nb
	if len(o.buf) >= flushThreshold {
		return o.flush()
	}
	return nil
}

// flush writes everything buffered to the socket.
func (o *output) flush() error {
	if o.err != nil {
		return o.err
	}
	if len(o.buf) == 0 {
		return nil
	}
	_, err := o.w.Write(o.buf)
	if cap(o.buf) > maxRetainedBuf {
		o.buf = make([]byte, 0, initialBufSize)
	} else {
		o.buf = o.buf[:0]
	}
	if err != nil {
		o.err = err
	}
	return err
}

func (o *output) dataRowMsg(values [][]byte) error {
	if o.err != nil {
		return o.err
	}
	o.dataRow.Values = values
	nb, err := o.dataRow.Encode(o.buf)
	o.dataRow.Values = nil // do not keep the session's row alive
	if err != nil {
		return pgerror.Wrap(err, pgerror.ProgramLimitExceeded, "cannot encode row")
	}
	o.buf = nb
	if len(o.buf) >= flushThreshold {
		return o.flush()
	}
	return nil
}

// rowDescription sends cols; with forceText every format is 0 (Describe of a
// statement, whose result formats are not known before Bind).
func (o *output) rowDescription(cols []Column, forceText bool) error {
	o.scratch = o.scratch[:0]
	fields := o.rowDesc.Fields[:0]
	for _, col := range cols {
		start := len(o.scratch)
		o.scratch = append(o.scratch, col.Name...)
		f := pgproto3.FieldDescription{
			Name:                 o.scratch[start:len(o.scratch):len(o.scratch)],
			TableOID:             col.TableOID,
			TableAttributeNumber: uint16(col.AttrNum),
			DataTypeOID:          col.TypeOID,
			DataTypeSize:         col.TypeSize,
			TypeModifier:         col.TypeModifier,
			Format:               col.Format,
		}
		if forceText {
			f.Format = 0
		}
		fields = append(fields, f)
	}
	o.rowDesc.Fields = fields
	return o.send(&o.rowDesc)
}

func (o *output) commandComplete(tag string) error {
	o.scratch = append(o.scratch[:0], tag...)
	o.cmdDone.CommandTag = o.scratch
	return o.send(&o.cmdDone)
}

func (o *output) parameterStatus(name, value string) error {
	o.paramStat.Name, o.paramStat.Value = name, value
	return o.send(&o.paramStat)
}

func (o *output) readyForQuery(status byte) error {
	o.rfq.TxStatus = status
	if err := o.send(&o.rfq); err != nil {
		return err
	}
	return o.flush()
}

// errorResponse sends e with severity as given (ERROR or FATAL) unless e sets
// its own, and flushes: like PostgreSQL, an error reaches the client at once
// even in the middle of an extended-protocol batch.
func (o *output) errorResponse(e *pgerror.Error, severity string) error {
	o.fillError(e, severity, pgerror.InternalError)
	if err := o.send(&o.errResp); err != nil {
		return err
	}
	return o.flush()
}

// notice sends e as a NoticeResponse and flushes, so a long statement's
// progress notices are seen while it runs.
func (o *output) notice(e *pgerror.Error) error {
	o.fillError(e, pgerror.SeverityNotice, pgerror.SuccessfulCompletion)
	if err := o.send((*pgproto3.NoticeResponse)(&o.errResp)); err != nil {
		return err
	}
	return o.flush()
}

// fillError fills the reused ErrorResponse; severity and code apply when e
// leaves them empty.
func (o *output) fillError(e *pgerror.Error, severity, code string) {
	if e.Severity != "" {
		severity = e.Severity
	}
	if e.Code != "" {
		code = e.Code
	}
	o.errResp = pgproto3.ErrorResponse{
		Severity:            severity,
		SeverityUnlocalized: severity,
		Code:                code,
		Message:             e.Message,
		Detail:              e.Detail,
		Hint:                e.Hint,
		Position:            e.Position,
		Where:               e.Where,
		SchemaName:          e.Schema,
		TableName:           e.Table,
		ColumnName:          e.Column,
		ConstraintName:      e.Constraint,
	}
}
