package server

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/wire/*.txt")

// TestWire runs the wire golden files (STYLE.md, "Wire golden tests"), in the
// spirit of CockroachDB's pgtest. A file is a list of blocks:
//
//	command [key=value | flag]...
//	input lines
//	----
//	expected output lines
//
// separated by blank lines; '#' lines between blocks are comments. Frontend
// and backend messages are pgproto3's JSON, one message per line. Output drops
// zero-valued fields, the ErrorResponse fields that are PostgreSQL internals
// (File, Line, Routine, SeverityUnlocalized) and the BackendKeyData key, so
// the same file reads the same against a real PostgreSQL. CopyData is
// written {"Type":"CopyData","Text":"…"} both ways. Commands:
//
//	server maxconns=N maxmsg=N       restart the server with that config
//	connect [conn=a] [user=U] [database=D] [version=V] [opt=NAME:VALUE]
//	                                 open a connection and print its startup
//	send [conn=a] [nowait]           send the messages; then read until one
//	                                 ReadyForQuery per Query/Sync sent, or EOF
//	raw [conn=a] [nowait]            send hex bytes; then read until
//	                                 ReadyForQuery or EOF
//	until [conn=a]                   read until the listed message types were
//	                                 seen in order (default ReadyForQuery)
//	cancel conn=a [running=CMD]      once a's session runs CMD (default sleep),
//	                                 send a CancelRequest with a's key
//	close [conn=a]                   close the client socket
//
// EOF is printed when the server closed the connection. Run with -rewrite to
// regenerate the expectations.
func TestWire(t *testing.T) {
	files, err := filepath.Glob("testdata/wire/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no wire test files")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			t.Parallel()
			runWireFile(t, f)
		})
	}
}

type wireBlock struct {
	line      int // 1-based line of the command
	cmd       string
	args      map[string]string
	input     []string
	want      []string
	wantStart int // line index (0-based) of the first expected line
	wantEnd   int // line index after the last expected line
}

func parseWireFile(t *testing.T, lines []string) []wireBlock {
	var blocks []wireBlock
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			i++
			continue
		}
		b := wireBlock{line: i + 1, args: map[string]string{}}
		fields := strings.Fields(l)
		b.cmd = fields[0]
		for _, f := range fields[1:] {
			k, v, _ := strings.Cut(f, "=")
			b.args[k] = v
		}
		i++
		for ; i < len(lines) && lines[i] != "----"; i++ {
			b.input = append(b.input, lines[i])
		}
		if i == len(lines) {
			t.Fatalf("line %d: block without ----", b.line)
		}
		i++
		b.wantStart = i
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
			b.want = append(b.want, lines[i])
		}
		b.wantEnd = i
		blocks = append(blocks, b)
	}
	return blocks
}

func runWireFile(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	blocks := parseWireFile(t, lines)
	r := &wireRunner{t: t, conns: map[string]*wireConn{}}
	r.ts = startServer(t, Config{})
	defer r.closeAll()

	got := make([][]string, len(blocks))
	for i, b := range blocks {
		got[i] = r.run(b)
		if !*rewrite && strings.Join(got[i], "\n") != strings.Join(b.want, "\n") {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", path, b.line, b.cmd,
				strings.Join(got[i], "\n"), strings.Join(b.want, "\n"))
		}
	}
	if *rewrite {
		for i := len(blocks) - 1; i >= 0; i-- {
			b := blocks[i]
			lines = append(lines[:b.wantStart], append(append([]string{}, got[i]...), lines[b.wantEnd:]...)...)
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type wireConn struct {
	nc  net.Conn
	fe  *pgproto3.Frontend
	pid uint32
	key []byte
}

type wireRunner struct {
	t     *testing.T
	ts    *testServer
	conns map[string]*wireConn
}

func (r *wireRunner) closeAll() {
	for name, c := range r.conns {
		c.nc.Close()
		delete(r.conns, name)
	}
}

func (r *wireRunner) fatalf(b wireBlock, format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("line %d: %s", b.line, fmt.Sprintf(format, args...))
}

func (r *wireRunner) conn(b wireBlock) *wireConn {
	name := b.args["conn"]
	c, ok := r.conns[name]
	if !ok {
		r.fatalf(b, "no connection %q", name)
	}
	return c
}

func (r *wireRunner) run(b wireBlock) []string {
	switch b.cmd {
	case "server":
		r.closeAll()
		r.ts.shutdown(r.t)
		var cfg Config
		cfg.MaxConnections = r.intArg(b, "maxconns")
		cfg.MaxMessageSize = r.intArg(b, "maxmsg")
		r.ts = startServer(r.t, cfg)
		return nil
	case "connect":
		return r.connect(b)
	case "send":
		c := r.conn(b)
		rfq := 0
		for _, l := range b.input {
			msg, err := decodeFrontend(l)
			if err != nil {
				r.fatalf(b, "%v", err)
			}
			switch msg.(type) {
			case *pgproto3.Query, *pgproto3.Sync, *pgproto3.FunctionCall:
				rfq++
			}
			c.fe.Send(msg)
		}
		if err := c.fe.Flush(); err != nil {
			r.fatalf(b, "send: %v", err)
		}
		if _, ok := b.args["nowait"]; ok || rfq == 0 {
			return nil
		}
		return r.receive(b, c, repeat("ReadyForQuery", rfq))
	case "raw":
		c := r.conn(b)
		bs, err := hex.DecodeString(strings.Join(strings.Fields(strings.Join(b.input, " ")), ""))
		if err != nil {
			r.fatalf(b, "hex: %v", err)
		}
		if _, err := c.nc.Write(bs); err != nil {
			r.fatalf(b, "raw: %v", err)
		}
		if _, ok := b.args["nowait"]; ok {
			return nil
		}
		return r.receive(b, c, []string{"ReadyForQuery"})
	case "until":
		types := b.input
		if len(types) == 0 {
			types = []string{"ReadyForQuery"}
		}
		return r.receive(b, r.conn(b), types)
	case "cancel":
		c := r.conn(b)
		cmd := b.args["running"]
		if cmd == "" {
			cmd = "sleep"
		}
		r.ts.eng.waitRunning(r.t, c.pid, cmd)
		cancelRequest(r.t, r.ts.addr, c.pid, c.key)
		return nil
	case "close":
		c := r.conn(b)
		c.nc.Close()
		delete(r.conns, b.args["conn"])
		return nil
	}
	r.fatalf(b, "unknown command %q", b.cmd)
	return nil
}

func (r *wireRunner) intArg(b wireBlock, key string) int {
	v, ok := b.args[key]
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		r.fatalf(b, "%s: %v", key, err)
	}
	return n
}

func (r *wireRunner) connect(b wireBlock) []string {
	name := b.args["conn"]
	if old, ok := r.conns[name]; ok {
		old.nc.Close()
	}
	nc, err := net.Dial("tcp", r.ts.addr)
	if err != nil {
		r.fatalf(b, "dial: %v", err)
	}
	c := &wireConn{nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
	r.conns[name] = c
	params := map[string]string{"user": "test", "database": "test"}
	for _, k := range []string{"user", "database"} {
		if v, ok := b.args[k]; ok {
			if v == "" {
				delete(params, k)
			} else {
				params[k] = v
			}
		}
	}
	if opt, ok := b.args["opt"]; ok {
		k, v, _ := strings.Cut(opt, ":")
		params[k] = v
	}
	version := uint32(pgproto3.ProtocolVersion30)
	if v, ok := b.args["version"]; ok {
		major, minor, _ := strings.Cut(v, ".")
		ma, _ := strconv.Atoi(major)
		mi, _ := strconv.Atoi(minor)
		version = uint32(ma<<16 | mi)
	}
	c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: version, Parameters: params})
	if err := c.fe.Flush(); err != nil {
		r.fatalf(b, "startup: %v", err)
	}
	return r.receive(b, c, []string{"ReadyForQuery"})
}

// receive reads until each of types was seen in order, or EOF, and returns
// the messages as output lines.
func (r *wireRunner) receive(b wireBlock, c *wireConn, types []string) []string {
	var out []string
	for len(types) > 0 {
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		msg, err := c.fe.Receive()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
				return append(out, "EOF")
			}
			r.fatalf(b, "receive: %v (so far: %s)", err, strings.Join(out, "\n"))
		}
		if k, ok := msg.(*pgproto3.BackendKeyData); ok {
			c.pid, c.key = k.ProcessID, append([]byte(nil), k.SecretKey...)
		}
		line, err := formatBackend(msg)
		if err != nil {
			r.fatalf(b, "format %T: %v", msg, err)
		}
		out = append(out, line)
		if typeName(msg) == types[0] {
			types = types[1:]
		}
	}
	return out
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func typeName(msg pgproto3.BackendMessage) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", msg), "*pgproto3.")
}

// cancelRequest sends a CancelRequest and waits until the server closed the
// socket, which it does after acting on it.
func cancelRequest(t testing.TB, addr string, pid uint32, key []byte) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	buf, err := (&pgproto3.CancelRequest{ProcessID: pid, SecretKey: key}).Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := nc.Write(buf); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := nc.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("cancel request: read %d bytes, %v; want EOF", n, err)
	}
}

// decodeFrontend parses one JSON frontend message.
func decodeFrontend(line string) (pgproto3.FrontendMessage, error) {
	var head struct{ Type string }
	if err := json.Unmarshal([]byte(line), &head); err != nil {
		return nil, fmt.Errorf("%q: %v", line, err)
	}
	var msg pgproto3.FrontendMessage
	switch head.Type {
	case "Query":
		msg = &pgproto3.Query{}
	case "Parse":
		msg = &pgproto3.Parse{}
	case "Bind":
		msg = &pgproto3.Bind{}
	case "Describe":
		msg = &pgproto3.Describe{}
	case "Execute":
		msg = &pgproto3.Execute{}
	case "Close":
		msg = &pgproto3.Close{}
	case "Sync":
		msg = &pgproto3.Sync{}
	case "Flush":
		msg = &pgproto3.Flush{}
	case "Terminate":
		msg = &pgproto3.Terminate{}
	case "FunctionCall":
		msg = &pgproto3.FunctionCall{}
	case "CopyData":
		// {"Text":"…"} is the readable spelling of the hex "Data".
		var text struct{ Text *string }
		if err := json.Unmarshal([]byte(line), &text); err == nil && text.Text != nil {
			return &pgproto3.CopyData{Data: []byte(*text.Text)}, nil
		}
		msg = &pgproto3.CopyData{}
	case "CopyDone":
		msg = &pgproto3.CopyDone{}
	case "CopyFail":
		msg = &pgproto3.CopyFail{}
	case "PasswordMessage":
		msg = &pgproto3.PasswordMessage{}
	default:
		return nil, fmt.Errorf("unknown frontend message type %q", head.Type)
	}
	if err := json.Unmarshal([]byte(line), msg); err != nil {
		return nil, fmt.Errorf("%q: %v", line, err)
	}
	return msg, nil
}

// formatBackend renders a backend message as compact JSON without
// zero-valued fields and without the fields a real PostgreSQL would answer
// differently for reasons of no interest (source locations, keys).
func formatBackend(msg pgproto3.BackendMessage) (string, error) {
	var v any = msg
	switch m := msg.(type) {
	case *pgproto3.BackendKeyData:
		return `{"Type":"BackendKeyData"}`, nil
	case *pgproto3.CopyData:
		// As text rather than pgproto3's hex, like the input side.
		raw, err := json.Marshal(struct{ Type, Text string }{"CopyData", string(m.Data)})
		return string(raw), err
	case *pgproto3.NoticeResponse:
		// NoticeResponse has no JSON methods of its own: render it as an
		// ErrorResponse under its own name.
		raw, err := json.Marshal((*pgproto3.ErrorResponse)(m))
		if err != nil {
			return "", err
		}
		v = json.RawMessage(bytes.Replace(raw, []byte(`"Type":"ErrorResponse"`), []byte(`"Type":"NoticeResponse"`), 1))
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := compactJSON(&buf, json.RawMessage(raw), true); err != nil {
		return "", err
	}
	return buf.String(), nil
}

var droppedFields = map[string]bool{"File": true, "Line": true, "Routine": true, "SeverityUnlocalized": true}

// compactJSON writes v keeping key order, dropping object members whose
// value is zero ("", 0, false, null, [], {}); array elements are kept.
func compactJSON(w *bytes.Buffer, v json.RawMessage, top bool) error {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) > 0 && v[0] == '{':
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.Token() // {
		w.WriteByte('{')
		first := true
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return err
			}
			key := tok.(string)
			var val json.RawMessage
			if err := dec.Decode(&val); err != nil {
				return err
			}
			if isZeroJSON(val) || (top && droppedFields[key]) {
				continue
			}
			if !first {
				w.WriteByte(',')
			}
			first = false
			k, _ := json.Marshal(key)
			w.Write(k)
			w.WriteByte(':')
			if err := compactJSON(w, val, false); err != nil {
				return err
			}
		}
		w.WriteByte('}')
		return nil
	case len(v) > 0 && v[0] == '[':
		var elems []json.RawMessage
		if err := json.Unmarshal(v, &elems); err != nil {
			return err
		}
		w.WriteByte('[')
		for i, e := range elems {
			if i > 0 {
				w.WriteByte(',')
			}
			if err := compactJSON(w, e, false); err != nil {
				return err
			}
		}
		w.WriteByte(']')
		return nil
	}
	return json.Compact(w, v)
}

func isZeroJSON(v json.RawMessage) bool {
	switch string(bytes.TrimSpace(v)) {
	case `""`, `0`, `false`, `null`, `[]`, `{}`:
		return true
	}
	return false
}
