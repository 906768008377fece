package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// FuzzMessages feeds arbitrary bytes to a started connection. Whatever
// arrives, the connection must end without a panic in the wire layer (the
// recover in serve would hide one, so the log is checked) and without
// holding Shutdown.
func FuzzMessages(f *testing.F) {
	seed := func(msgs ...pgproto3.FrontendMessage) []byte {
		var b []byte
		for _, m := range msgs {
			var err error
			if b, err = m.Encode(b); err != nil {
				f.Fatal(err)
			}
		}
		return b
	}
	f.Add(seed(&pgproto3.Query{String: "select 1; select n from generate(3)"}))
	f.Add(seed(&pgproto3.Parse{Name: "s", Query: "select $1"}, &pgproto3.Describe{ObjectType: 'S', Name: "s"},
		&pgproto3.Bind{PreparedStatement: "s", Parameters: [][]byte{[]byte("x")}}, &pgproto3.Execute{MaxRows: 1},
		&pgproto3.Close{ObjectType: 'P'}, &pgproto3.Sync{}))
	f.Add(seed(&pgproto3.Parse{Query: "error"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Flush{}, &pgproto3.Sync{}))
	f.Add(seed(&pgproto3.Parse{Query: "select n from generate(9)"}, &pgproto3.Bind{DestinationPortal: "p", ResultFormatCodes: []int16{1}},
		&pgproto3.Execute{Portal: "p", MaxRows: 2}, &pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{}))
	f.Add(seed(&pgproto3.Describe{ObjectType: 'X'}, &pgproto3.Close{ObjectType: 'X'}, &pgproto3.Sync{}, &pgproto3.Terminate{}))
	f.Add(seed(&pgproto3.Query{String: "copy in"}, &pgproto3.CopyData{Data: []byte("1\t2\nbad\n")}, &pgproto3.CopyDone{},
		&pgproto3.Query{String: "copy in; copy out 2"}, &pgproto3.Sync{}, &pgproto3.CopyData{Data: []byte("3")}, &pgproto3.CopyFail{Message: "x"}))
	f.Add(seed(&pgproto3.Parse{Query: "copy in"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{},
		&pgproto3.CopyData{Data: []byte("bad\n")}, &pgproto3.Sync{}, &pgproto3.CopyDone{}, &pgproto3.Sync{}))
	f.Add([]byte("Q\x00\x00\x00\x04"))
	f.Add([]byte("B\x00\x00\x00\x0a\x00\x00\xff\xff\x00\x00"))

	f.Fuzz(func(t *testing.T, data []byte) {
		logs := &panicLog{}
		s := New(Config{
			Logger:        slog.New(logs),
			Authenticator: func(context.Context, StartupInfo, AuthExchange) error { return nil },
		}, newFakeEngine())
		client, server := net.Pipe()
		c := s.register(server)
		go c.serve()
		go io.Copy(io.Discard, client)

		start, _ := (&pgproto3.StartupMessage{
			ProtocolVersion: pgproto3.ProtocolVersion30,
			Parameters:      map[string]string{"user": "fuzz"},
		}).Encode(nil)
		client.Write(append(start, data...))
		client.Close()
		// Statements that block (sleep) are canceled by a forced Shutdown.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		s.Shutdown(ctx)
		if p := logs.unexpected(); p != "" {
			t.Fatalf("wire layer panicked: %s", p)
		}
	})
}

// panicLog records panics logged by the server other than the fake
// session's deliberate one.
type panicLog struct {
	mu     sync.Mutex
	panics []string
}

func (h *panicLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *panicLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *panicLog) WithGroup(string) slog.Handler            { return h }
func (h *panicLog) Handle(_ context.Context, r slog.Record) error {
	if !strings.HasPrefix(r.Message, "panic") {
		return nil
	}
	var text strings.Builder
	r.Attrs(func(a slog.Attr) bool {
		text.WriteString(a.String() + " ")
		return true
	})
	if !strings.Contains(text.String(), "panic=fake panic") {
		h.mu.Lock()
		h.panics = append(h.panics, text.String())
		h.mu.Unlock()
	}
	return nil
}

func (h *panicLog) unexpected() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(h.panics, "\n")
}
