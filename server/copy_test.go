package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// COPY through a real client: pgx's CopyFrom and CopyTo (the simple query
// protocol, as libpq and psql use it). The message-level flows, the
// extended protocol included, are in testdata/wire/copy.txt.

func TestCopyFromPgx(t *testing.T) {
	ts := startServer(t, Config{})
	pc := ts.connect(t, pgx.QueryExecModeSimpleProtocol).PgConn()
	ctx := testCtx(t)
	sess := ts.eng.session(pc.PID())

	// Much more than one CopyData and one output buffer: the data streams.
	var data strings.Builder
	const lines = 50000
	for i := range lines {
		fmt.Fprintf(&data, "%d\tvalue %d\n", i, i)
	}
	tag, err := pc.CopyFrom(ctx, strings.NewReader(data.String()), "copy in")
	if err != nil {
		t.Fatal(err)
	}
	if tag.String() != fmt.Sprintf("COPY %d", lines) {
		t.Fatalf("tag %q", tag)
	}
	if got := sess.copiedData(); got != data.String() {
		t.Fatalf("the session read %d bytes, want %d", len(got), data.Len())
	}

	// A bad row fails the COPY; the connection goes on.
	_, err = pc.CopyFrom(ctx, strings.NewReader("1\t2\nbad\n"+strings.Repeat("3\t4\n", 100000)), "copy in")
	wantCode(t, err, pgerror.InvalidTextRepresentation)
	if res := pc.ExecParams(ctx, "select 1", nil, nil, nil, nil).Read(); res.Err != nil {
		t.Fatal(res.Err)
	}

	// The client's reader fails: pgx sends CopyFail, the server answers
	// 57014 with its message.
	boom := errors.New("disk on fire")
	_, err = pc.CopyFrom(ctx, io.MultiReader(strings.NewReader("1\t2\n"), iotestErr{boom}), "copy in")
	pe := wantCode(t, err, pgerror.QueryCanceled)
	if !strings.Contains(pe.Message, "COPY from stdin failed: ") || !strings.Contains(pe.Message, "disk on fire") {
		t.Fatalf("message %q", pe.Message)
	}
	if res := pc.ExecParams(ctx, "select 1", nil, nil, nil, nil).Read(); res.Err != nil {
		t.Fatal(res.Err)
	}
}

type iotestErr struct{ err error }

func (r iotestErr) Read([]byte) (int, error) { return 0, r.err }

func TestCopyToPgx(t *testing.T) {
	ts := startServer(t, Config{})
	pc := ts.connect(t, pgx.QueryExecModeSimpleProtocol).PgConn()
	ctx := testCtx(t)
	var buf bytes.Buffer
	tag, err := pc.CopyTo(ctx, &buf, "copy out 20000")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := 1; i <= 20000; i++ {
		fmt.Fprint(&want, i)
	}
	if tag.String() != "COPY 20000" || buf.String() != want.String() {
		t.Fatalf("tag %q, %d bytes, want %d", tag, buf.Len(), want.Len())
	}
}

// A notification that arrives while COPY FROM STDIN reads the client waits
// for the end of the statement (the reader goroutine serves the COPY, not
// the idle loop) and then goes out before ReadyForQuery.
func TestCopyFromWithNotification(t *testing.T) {
	ts := startServer(t, Config{})
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	pc := conn.PgConn()
	ctx := testCtx(t)
	sess := ts.eng.session(pc.PID())
	r := &postingReader{data: []byte(strings.Repeat("1\t2\n", 1000)), post: func() {
		sess.post(Notification{PID: 7, Channel: "ch", Payload: "during copy"})
	}}
	tag, err := pc.CopyFrom(ctx, r, "copy in")
	if err != nil || tag.String() != "COPY 1000" {
		t.Fatalf("tag %q, %v", tag, err)
	}
	n, err := conn.WaitForNotification(ctx)
	if err != nil || n.Payload != "during copy" {
		t.Fatalf("notification %+v, %v", n, err)
	}
}

// postingReader calls post once, after its first chunk was read.
type postingReader struct {
	data   []byte
	post   func()
	posted bool
}

func (r *postingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1000)], r.data)
	r.data = r.data[n:]
	if !r.posted {
		r.posted = true
		r.post()
	}
	return n, nil
}

// Shutdown while a COPY waits for the client's data: the connection gets
// FATAL 57P01 like an idle one.
func TestCopyFromShutdown(t *testing.T) {
	ts := startServer(t, Config{})
	nc, fe := rawConnect(t, ts.addr)
	fe.Send(&pgproto3.Query{String: "copy in"})
	fe.Send(&pgproto3.CopyData{Data: []byte("1\t2\n")})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	if msg, err := fe.Receive(); err != nil {
		t.Fatal(err)
	} else if _, ok := msg.(*pgproto3.CopyInResponse); !ok {
		t.Fatalf("got %T, want CopyInResponse", msg)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- ts.Shutdown(ctx)
	}()
	msg, err := fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := msg.(*pgproto3.ErrorResponse); !ok || e.Code != pgerror.AdminShutdown || e.Severity != "FATAL" {
		t.Fatalf("got %#v, want FATAL 57P01", msg)
	}
	if err := <-done; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	nc.Close()
}

// rawConnect opens a connection and reads up to the first ReadyForQuery.
func rawConnect(t *testing.T, addr string) (net.Conn, *pgproto3.Frontend) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	fe := pgproto3.NewFrontend(bufio.NewReader(nc), nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "test"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			return nc, fe
		}
	}
}
