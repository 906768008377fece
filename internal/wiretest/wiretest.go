// Package wiretest runs wire golden files: scripted frontend messages and
// the backend messages a server answers with, as pgproto3's JSON, one
// message per line (STYLE.md, "Wire golden tests"; the format is described
// in server/wire_test.go). The server package runs them against its fake
// engine; the client suite runs the files under testdata/wire/pg against
// PostgreSQL 15 and mvserver and requires the same answers from both.
package wiretest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Block is one command of a wire file: its input lines and expected output.
type Block struct {
	line      int // 1-based line of the command
	cmd       string
	args      map[string]string
	input     []string
	want      []string
	wantStart int // line index (0-based) of the first expected line
	wantEnd   int // line index after the last expected line
}

// ParseFile splits a wire file into its blocks.
func ParseFile(t *testing.T, lines []string) []Block {
	var blocks []Block
	for i := 0; i < len(lines); {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			i++
			continue
		}
		b := Block{line: i + 1, args: map[string]string{}}
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

type conn struct {
	nc  net.Conn
	fe  *pgproto3.Frontend
	pid uint32
	key []byte
}

type Runner struct {
	T *testing.T
	// Addr is the server's address; Restart, when set, restarts it with
	// MaxConnections and MaxMessageSize (the "server" command) and returns
	// the new address.
	Addr    string
	Restart func(maxConns, maxMsg int) string
	// WaitRunning returns once connection pid's session runs cmd (cancel).
	WaitRunning func(pid uint32, cmd string)
	// Real is set for a real server (PostgreSQL or mvserver): startup
	// ParameterStatus messages, whose set and values are each server's
	// own, are left out of the output.
	Real bool
	// Dial, when set, opens a connection already past startup and
	// authentication (the connect command's arguments are then ignored).
	Dial  func() (net.Conn, *pgproto3.Frontend, uint32, []byte, error)
	conns map[string]*conn
}

// runAll runs every block and returns each one's output; with check set,
// an output that differs from the block's expectation is an error.
func (r *Runner) RunAll(path string, blocks []Block, check bool) [][]string {
	got := make([][]string, len(blocks))
	for i, b := range blocks {
		got[i] = r.Run(b)
		if check && strings.Join(got[i], "\n") != strings.Join(b.want, "\n") {
			r.T.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", path, b.line, b.cmd,
				strings.Join(got[i], "\n"), strings.Join(b.want, "\n"))
		}
	}
	return got
}

func (r *Runner) CloseAll() {
	for name, c := range r.conns {
		c.nc.Close()
		delete(r.conns, name)
	}
}

func (r *Runner) fatalf(b Block, format string, args ...any) {
	r.T.Helper()
	r.T.Fatalf("line %d: %s", b.line, fmt.Sprintf(format, args...))
}

func (r *Runner) conn(b Block) *conn {
	name := b.args["conn"]
	if r.conns == nil {
		r.conns = map[string]*conn{}
	}
	c, ok := r.conns[name]
	if !ok {
		r.fatalf(b, "no connection %q", name)
	}
	return c
}

func (r *Runner) Run(b Block) []string {
	switch b.cmd {
	case "server":
		if r.Restart == nil {
			r.fatalf(b, "server: this server cannot be restarted")
		}
		r.CloseAll()
		r.Addr = r.Restart(r.intArg(b, "maxconns"), r.intArg(b, "maxmsg"))
		return nil
	case "connect":
		return r.connect(b)
	case "send":
		c := r.conn(b)
		rfq := 0
		for _, l := range b.input {
			msg, err := DecodeFrontend(l)
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
		r.WaitRunning(c.pid, cmd)
		CancelRequest(r.T, r.Addr, c.pid, c.key)
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

func (r *Runner) intArg(b Block, key string) int {
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

func (r *Runner) connect(b Block) []string {
	name := b.args["conn"]
	if r.conns == nil {
		r.conns = map[string]*conn{}
	}
	if old, ok := r.conns[name]; ok {
		old.nc.Close()
	}
	if r.Dial != nil {
		nc, fe, pid, key, err := r.Dial()
		if err != nil {
			r.fatalf(b, "connect: %v", err)
		}
		r.conns[name] = &conn{nc: nc, fe: fe, pid: pid, key: key}
		// The client did the startup and authentication: show what
		// PostgreSQL's own startup ends with, the same for every server.
		return []string{`{"Type":"AuthenticationOK"}`, `{"Type":"BackendKeyData"}`, `{"Type":"ReadyForQuery","TxStatus":"I"}`}
	}
	nc, err := net.Dial("tcp", r.Addr)
	if err != nil {
		r.fatalf(b, "dial: %v", err)
	}
	c := &conn{nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
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
func (r *Runner) receive(b Block, c *conn, types []string) []string {
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
		line, err := FormatBackend(msg)
		if err != nil {
			r.fatalf(b, "format %T: %v", msg, err)
		}
		if r.Real {
			// A relation's OID is each server's own.
			line = tableOID.ReplaceAllString(line, `"TableOID":"*"`)
		}
		if _, ps := msg.(*pgproto3.ParameterStatus); !ps || !r.Real || b.cmd != "connect" {
			out = append(out, line)
		}
		if TypeName(msg) == types[0] {
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

func TypeName(msg pgproto3.BackendMessage) string {
	return strings.TrimPrefix(fmt.Sprintf("%T", msg), "*pgproto3.")
}

// CancelRequest sends a CancelRequest and waits until the server closed the
// socket, which it does after acting on it.
func CancelRequest(t testing.TB, addr string, pid uint32, key []byte) {
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

// DecodeFrontend parses one JSON frontend message.
func DecodeFrontend(line string) (pgproto3.FrontendMessage, error) {
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

// FormatBackend renders a backend message as compact JSON without
// zero-valued fields and without the fields a real PostgreSQL would answer
// differently for reasons of no interest (source locations, keys).
func FormatBackend(msg pgproto3.BackendMessage) (string, error) {
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

// Splice returns the file's lines with b's expected output replaced by got
// (-rewrite).
func (b Block) Splice(lines, got []string) []string {
	return append(lines[:b.wantStart], append(append([]string{}, got...), lines[b.wantEnd:]...)...)
}

// Line is the 1-based line of the block's command.
func (b Block) Line() int { return b.line }

var tableOID = regexp.MustCompile(`"TableOID":[0-9]+`)
