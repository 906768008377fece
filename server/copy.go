package server

import (
	"io"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// Copier is implemented by the ResultWriter the wire layer hands to
// Session.SimpleQuery and Portal.Execute: a session runs COPY … FROM STDIN
// and COPY … TO STDOUT through it (R-T2). A writer that does not implement
// it (one that runs SQL for something other than a client connection) has
// no client to copy from or to.
//
// COPY FROM STDIN: CopyIn, then read the returned reader to io.EOF, then
// CommandComplete("COPY n"). COPY TO STDOUT: CopyOut, CopyData per row,
// CopyDone, then CommandComplete("COPY n"). An error ends either at once:
// return it, and the wire layer sends the ErrorResponse (a COPY TO then ends
// without CopyDone, as in PostgreSQL).
type Copier interface {
	// CopyIn sends CopyInResponse with the overall format (0 text, 1
	// binary) and one format per column, and returns the data the client
	// sends. Read returns the bytes of the CopyData messages in order
	// (message boundaries are not kept: a client may cut its data
	// anywhere), then io.EOF at CopyDone. After CopyFail it returns a
	// 57014 error "COPY from stdin failed: …", after a message that has no
	// place in COPY a 08P01 error, and when the connection fails an error;
	// in the last two cases the connection ends once the statement
	// returns (after its error, for the first). Flush and
	// Sync arriving meanwhile are ignored, as PostgreSQL does. The reader
	// is valid until the statement returns; what the session leaves unread
	// is read and dropped by the wire layer.
	CopyIn(format int16, columnFormats []int16) (io.Reader, error)
	// CopyOut sends CopyOutResponse with the overall format and one format
	// per column.
	CopyOut(format int16, columnFormats []int16) error
	// CopyData sends one CopyData message with data (which the caller may
	// reuse at once). PostgreSQL sends one per row.
	CopyData(data []byte) error
	// CopyDone ends the data of a COPY TO.
	CopyDone() error
}

var _ Copier = (*resultWriter)(nil)

func (w *resultWriter) CopyIn(format int16, columnFormats []int16) (io.Reader, error) {
	c := w.c
	// A second COPY in the same message: whatever the first left of its
	// data goes first.
	if err := c.finishCopyIn(nil); err != nil {
		return nil, err
	}
	msg := pgproto3.CopyInResponse{OverallFormat: byte(format), ColumnFormatCodes: formatCodes(columnFormats)}
	if err := w.out.send(&msg); err != nil {
		return nil, err
	}
	// The client sends nothing before it has seen the response.
	if err := w.out.flush(); err != nil {
		return nil, err
	}
	c.copyIn = &copyInStream{c: c}
	return c.copyIn, nil
}

func (w *resultWriter) CopyOut(format int16, columnFormats []int16) error {
	msg := pgproto3.CopyOutResponse{OverallFormat: byte(format), ColumnFormatCodes: formatCodes(columnFormats)}
	return w.out.send(&msg)
}

func (w *resultWriter) CopyData(data []byte) error {
	w.copyData.Data = data
	err := w.out.send(&w.copyData)
	w.copyData.Data = nil // do not keep the session's buffer alive
	return err
}

var copyDone pgproto3.CopyDone

func (w *resultWriter) CopyDone() error { return w.out.send(&copyDone) }

func formatCodes(f []int16) []uint16 {
	out := make([]uint16, len(f))
	for i, v := range f {
		out[i] = uint16(v)
	}
	return out
}

// copyInStream is the reader CopyIn returns. It pulls messages from the
// connection only when the session reads, so nothing is buffered beyond the
// current CopyData message (invariant 5).
type copyInStream struct {
	c       *conn
	pending []byte // the unread rest of the current CopyData (in the read buffer)
	done    bool   // CopyDone, CopyFail, another message or a failed read ended the data
	err     error  // what Read returns once done
	recvErr error  // the read failed: the connection ends
	lost    bool   // a message that has no place in COPY arrived
}

func (s *copyInStream) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		if s.done {
			return 0, s.err
		}
		s.next()
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

// next receives one message of the copy-in data.
func (s *copyInStream) next() {
	msg, err := s.c.receive()
	if err != nil {
		s.done, s.recvErr = true, err
		s.err = pgerror.Wrap(err, pgerror.ConnectionException, "could not receive data from client")
		return
	}
	switch m := msg.(type) {
	case *pgproto3.CopyData:
		// Valid until the next receive, which waits until it was read.
		s.pending = m.Data
	case *pgproto3.CopyDone:
		s.done, s.err = true, io.EOF
	case *pgproto3.CopyFail:
		s.done = true
		s.err = pgerror.New(pgerror.QueryCanceled, "COPY from stdin failed: %s", m.Message)
	case *pgproto3.Flush, *pgproto3.Sync:
		// Sent by clients (libpq among them) that pipeline a Sync behind
		// an Execute without knowing it starts a COPY; PostgreSQL ignores
		// them here.
	default:
		s.done, s.lost = true, true
		s.err = pgerror.New(pgerror.ProtocolViolation, "unexpected message type 0x%02X during COPY from stdin", messageType(msg))
	}
}

// messageType is the type byte of a frontend message.
func messageType(msg pgproto3.FrontendMessage) byte {
	b, err := msg.Encode(nil)
	if err != nil || len(b) == 0 {
		return 0
	}
	return b[0]
}

// finishCopyIn ends the COPY FROM STDIN of the statement that just returned
// stmtErr, if it started one. After success, data the session did not read
// is read and dropped. After an error the client's remaining copy data is
// dropped as it arrives (dispatch ignores CopyData, CopyDone and CopyFail);
// a Sync among it is answered like any Sync, as PostgreSQL does. A failed
// read ends the connection; so does a message out of place, after the
// statement's error, since the client's view of the protocol is lost
// (PostgreSQL's "protocol synchronization was lost").
func (c *conn) finishCopyIn(stmtErr error) error {
	s := c.copyIn
	if s == nil {
		return nil
	}
	c.copyIn = nil
	for stmtErr == nil && !s.done {
		s.pending = nil
		s.next()
	}
	if s.recvErr != nil {
		return c.readError(s.recvErr)
	}
	if s.lost {
		if err := c.statementError(stmtErr); err != nil {
			return err
		}
		return fatalf(pgerror.ProtocolViolation, "terminating connection because protocol synchronization was lost")
	}
	return nil
}

// receive reads the next client message: from the socket, or through the
// reader goroutine for sessions that take notifications (notify.go). After
// a failed read it keeps returning that error.
func (c *conn) receive() (pgproto3.FrontendMessage, error) {
	if c.recvErr != nil {
		return nil, c.recvErr
	}
	var msg pgproto3.FrontendMessage
	var err error
	if c.recvFn != nil {
		msg, err = c.recvFn()
	} else {
		msg, err = c.be.Receive()
	}
	if err != nil {
		c.recvErr = err
	}
	return msg, err
}
