package server

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mvserver/mvserver/pgerror"
)

// fakeEngine is the Engine the wire tests run against. Its sessions
// understand a handful of literal commands, enough to exercise every path of
// the protocol without the SQL layer:
//
//	select 1                    one int4 row
//	select n from generate(N)   N int8 rows, streamed (and resumable by portals)
//	select $1                   echoes its parameter (extended protocol)
//	insert N                    no rows, tag INSERT 0 N
//	begin | commit | rollback   transaction status I/T/E
//	set NAME = VALUE            ParameterStatus NAME VALUE
//	notice                      a NOTICE, then tag DO
//	sleep                       blocks until its context is canceled
//	block                       blocks until the engine's release channel closes
//	flood                       sends rows until a write fails, ignoring its context
//	error                       42601 with the statement's position in the query
//	fatal                       an error with severity FATAL
//	panic                       panics
//	fail sync                   the next Sync returns 40001
//	copy in                     COPY FROM STDIN of two text columns: reads the
//	                            data to its end, tag COPY <lines>; a line
//	                            "bad" fails it (22P02) at once
//	copy out N                  COPY TO STDOUT of N one-column rows
//
// Several statements separated by ';' form one simple query.
type fakeEngine struct {
	mu       sync.Mutex
	sessions map[uint32]*fakeSession
	opened   atomic.Int32
	closed   atomic.Int32
	release  chan struct{}
}

func newFakeEngine() *fakeEngine {
	return &fakeEngine{sessions: make(map[uint32]*fakeSession), release: make(chan struct{})}
}

func (e *fakeEngine) Connect(ctx context.Context, info StartupInfo) (Session, error) {
	if info.Database == "nodb" {
		return nil, pgerror.New(pgerror.InvalidCatalogName, `database "%s" does not exist`, info.Database)
	}
	s := &fakeSession{eng: e, info: info, status: 'I'}
	e.mu.Lock()
	e.sessions[info.ProcessID] = s
	e.mu.Unlock()
	e.opened.Add(1)
	return s, nil
}

func (e *fakeEngine) session(pid uint32) *fakeSession {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.sessions[pid]
}

// waitRunning waits until the session of pid runs a statement whose command
// is cmd (so a cancel or Shutdown cannot race its start).
func (e *fakeEngine) waitRunning(t testing.TB, pid uint32, cmd string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("session %d to run %q", pid, cmd), func() bool {
		s := e.session(pid)
		return s != nil && s.running.Load() == cmd
	})
}

// waitFor polls cond until it holds or the deadline passes. Tests wait on
// conditions, never for a fixed time.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type fakeSession struct {
	eng      *fakeEngine
	info     StartupInfo
	status   byte // I, T, E
	failSync bool
	aborts   int
	running  atomic.Value // string: the command running now, "" when idle
	closed   bool
	notes    fakeNotes
	copyMu   sync.Mutex
	copied   []byte // the data of every COPY FROM STDIN (under copyMu)
}

// copiedData returns what the session's COPYs read so far.
func (s *fakeSession) copiedData() string {
	s.copyMu.Lock()
	defer s.copyMu.Unlock()
	return string(s.copied)
}

func (s *fakeSession) ParameterStatus() []ParamStatus {
	return []ParamStatus{
		{"server_version", "17.0"},
		{"server_encoding", "UTF8"},
		{"client_encoding", "UTF8"},
		{"DateStyle", "ISO, MDY"},
		{"standard_conforming_strings", "on"},
		{"application_name", s.info.ApplicationName},
	}
}

func (s *fakeSession) TxStatus() byte { return s.status }

func (s *fakeSession) Close() {
	if s.closed {
		panic("session closed twice")
	}
	s.closed = true
	s.eng.closed.Add(1)
}

func (s *fakeSession) AbortTransaction(*pgerror.Error) {
	s.aborts++
	if s.status == 'T' {
		s.status = 'E'
	}
}

func (s *fakeSession) Sync(ctx context.Context) error {
	if s.failSync {
		s.failSync = false
		return pgerror.New(pgerror.SerializationFailure, "could not serialize access due to concurrent update")
	}
	return nil
}

// command is one parsed fake statement.
type command struct {
	kind  string // select1, generate, echo, insert, begin, …
	n     int64
	name  string // set: parameter name
	value string // set: value
	pos   int32  // 1-based position of the statement in the query text
}

func parseCommand(text string, pos int32) (command, error) {
	f := strings.Fields(strings.ToLower(text))
	c := command{pos: pos}
	switch {
	case len(f) == 2 && f[0] == "select" && f[1] == "1":
		c.kind = "select1"
	case len(f) == 2 && f[0] == "select" && f[1] == "$1":
		c.kind = "echo"
	case len(f) == 4 && f[0] == "select" && f[1] == "n" && f[2] == "from" &&
		strings.HasPrefix(f[3], "generate(") && strings.HasSuffix(f[3], ")"):
		n, err := strconv.ParseInt(f[3][len("generate("):len(f[3])-1], 10, 64)
		if err != nil {
			return c, pgerror.New(pgerror.InvalidTextRepresentation, "bad row count").WithPosition(pos)
		}
		c.kind, c.n = "generate", n
	case len(f) == 2 && f[0] == "insert":
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return c, pgerror.New(pgerror.InvalidTextRepresentation, "bad row count").WithPosition(pos)
		}
		c.kind, c.n = "insert", n
	case len(f) == 4 && f[0] == "set" && f[2] == "=":
		c.kind, c.name, c.value = "set", f[1], f[3]
	case len(f) == 2 && f[0] == "fail" && f[1] == "sync":
		c.kind = "failsync"
	case len(f) == 2 && f[0] == "copy" && f[1] == "in":
		c.kind = "copyin"
	case len(f) == 3 && f[0] == "copy" && f[1] == "out":
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return c, pgerror.New(pgerror.InvalidTextRepresentation, "bad row count").WithPosition(pos)
		}
		c.kind, c.n = "copyout", n
	case len(f) == 1:
		switch f[0] {
		case "begin", "commit", "rollback", "notice", "sleep", "block", "flood", "fatal", "panic":
			c.kind = f[0]
		case "error":
			return c, pgerror.New(pgerror.SyntaxError, `syntax error at or near "error"`).WithPosition(pos)
		}
	}
	if c.kind == "" {
		return c, pgerror.New(pgerror.SyntaxError, "unknown fake command").WithPosition(pos)
	}
	return c, nil
}

// columns is the command's result description (text formats), nil for none.
func (c command) columns(paramOID uint32) []Column {
	switch c.kind {
	case "select1":
		return []Column{{Name: "?column?", TypeOID: 23, TypeSize: 4, TypeModifier: -1}}
	case "generate":
		return []Column{{Name: "n", TypeOID: 20, TypeSize: 8, TypeModifier: -1}}
	case "echo":
		return []Column{{Name: "?column?", TypeOID: paramOID, TypeSize: -1, TypeModifier: -1}}
	}
	return nil
}

// splitStatements splits on ';' and returns each non-blank statement with
// its 1-based position in text.
func splitStatements(text string) (stmts []string, pos []int32) {
	start := 0
	for i := 0; i <= len(text); i++ {
		if i < len(text) && text[i] != ';' {
			continue
		}
		part := text[start:i]
		if trimmed := strings.TrimSpace(part); trimmed != "" {
			lead := len(part) - len(strings.TrimLeft(part, " \t\r\n"))
			stmts = append(stmts, trimmed)
			pos = append(pos, int32(start+lead+1))
		}
		start = i + 1
	}
	return stmts, pos
}

func (s *fakeSession) SimpleQuery(ctx context.Context, sql string, w ResultWriter) error {
	stmts, pos := splitStatements(sql)
	if len(stmts) == 0 {
		return w.EmptyQuery()
	}
	for i, text := range stmts {
		c, err := parseCommand(text, pos[i])
		if err != nil {
			s.fail()
			return err
		}
		if s.status == 'E' && c.kind != "rollback" && c.kind != "commit" {
			return pgerror.New(pgerror.InFailedSQLTransaction,
				"current transaction is aborted, commands ignored until end of transaction block")
		}
		cols := c.columns(25)
		if cols != nil {
			if err := w.RowDescription(cols); err != nil {
				return err
			}
		}
		p := &fakePortal{s: s, cmd: c, cols: cols}
		if _, err := p.Execute(ctx, 0, w); err != nil {
			return err
		}
	}
	return nil
}

// fail applies PostgreSQL's rule: an error in a transaction block fails it.
func (s *fakeSession) fail() {
	if s.status == 'T' {
		s.status = 'E'
	}
}

type fakeStatement struct {
	cmd       command
	paramOIDs []uint32
}

func (p *fakeStatement) ParamOIDs() []uint32 { return p.paramOIDs }
func (p *fakeStatement) Columns() []Column {
	var oid uint32
	if len(p.paramOIDs) > 0 {
		oid = p.paramOIDs[0]
	}
	return p.cmd.columns(oid)
}
func (p *fakeStatement) Close() {}

func (s *fakeSession) Prepare(ctx context.Context, sql string, paramOIDs []uint32) (PreparedStatement, error) {
	stmts, pos := splitStatements(sql)
	if len(stmts) > 1 {
		return nil, pgerror.New(pgerror.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	if len(stmts) == 0 {
		return &fakeStatement{cmd: command{kind: "empty"}}, nil
	}
	c, err := parseCommand(stmts[0], pos[0])
	if err != nil {
		s.fail()
		return nil, err
	}
	ps := &fakeStatement{cmd: c}
	if c.kind == "echo" {
		oid := uint32(25)
		if len(paramOIDs) > 0 && paramOIDs[0] != 0 {
			oid = paramOIDs[0]
		}
		ps.paramOIDs = []uint32{oid}
	}
	return ps, nil
}

func (s *fakeSession) Bind(ctx context.Context, ps PreparedStatement, params [][]byte, paramFormats, resultFormats []int16) (Portal, error) {
	st := ps.(*fakeStatement)
	cols := st.Columns()
	for i := range cols {
		switch {
		case len(resultFormats) == 1:
			cols[i].Format = resultFormats[0]
		case len(resultFormats) > 1:
			cols[i].Format = resultFormats[i]
		}
	}
	return &fakePortal{s: s, cmd: st.cmd, cols: cols, params: params}, nil
}

type fakePortal struct {
	s      *fakeSession
	cmd    command
	cols   []Column
	params [][]byte
	next   int64 // generate: rows sent so far
	done   bool

	row [1][]byte // reused DataRow values
	num []byte    // reused value bytes
}

func (p *fakePortal) Columns() []Column { return p.cols }
func (p *fakePortal) Close()            {}

func (p *fakePortal) Execute(ctx context.Context, maxRows int, w ResultWriter) (bool, error) {
	s := p.s
	if s.status == 'E' && p.cmd.kind != "rollback" && p.cmd.kind != "commit" {
		return false, pgerror.New(pgerror.InFailedSQLTransaction,
			"current transaction is aborted, commands ignored until end of transaction block")
	}
	if p.done {
		return false, w.CommandComplete("SELECT 0")
	}
	s.running.Store(p.cmd.kind)
	defer s.running.Store("")
	switch p.cmd.kind {
	case "empty":
		return false, w.EmptyQuery()
	case "select1":
		if err := w.DataRow([][]byte{p.int(1, 4)}); err != nil {
			return false, err
		}
		p.done = true
		return false, w.CommandComplete("SELECT 1")
	case "echo":
		if err := w.DataRow([][]byte{p.params[0]}); err != nil {
			return false, err
		}
		p.done = true
		return false, w.CommandComplete("SELECT 1")
	case "generate":
		sent := int64(0)
		for {
			// Like PostgreSQL, suspend once the limit is reached without
			// looking ahead for more rows.
			if maxRows > 0 && sent == int64(maxRows) {
				return true, nil
			}
			if p.next == p.cmd.n {
				break
			}
			if p.next%1024 == 0 && ctx.Err() != nil {
				s.fail()
				return false, fmt.Errorf("generate: %w", ctx.Err())
			}
			p.next++
			sent++
			p.row[0] = p.int(p.next, 8)
			if err := w.DataRow(p.row[:]); err != nil {
				return false, err
			}
		}
		p.done = true
		return false, w.CommandComplete("SELECT " + strconv.FormatInt(sent, 10))
	case "insert":
		return false, w.CommandComplete("INSERT 0 " + strconv.FormatInt(p.cmd.n, 10))
	case "begin":
		if s.status == 'I' {
			s.status = 'T'
		}
		return false, w.CommandComplete("BEGIN")
	case "commit":
		tag := "COMMIT"
		if s.status == 'E' {
			tag = "ROLLBACK"
		}
		s.status = 'I'
		return false, w.CommandComplete(tag)
	case "rollback":
		s.status = 'I'
		return false, w.CommandComplete("ROLLBACK")
	case "set":
		if err := w.ParameterStatus(p.cmd.name, p.cmd.value); err != nil {
			return false, err
		}
		return false, w.CommandComplete("SET")
	case "notice":
		if err := w.Notice(pgerror.Notice("this is a notice")); err != nil {
			return false, err
		}
		return false, w.CommandComplete("DO")
	case "sleep":
		<-ctx.Done()
		s.fail()
		return false, fmt.Errorf("sleep: %w", ctx.Err())
	case "block":
		select {
		case <-s.eng.release:
			return false, w.CommandComplete("BLOCK")
		case <-ctx.Done():
			s.fail()
			return false, fmt.Errorf("block: %w", ctx.Err())
		}
	case "flood":
		for i := int64(0); ; i++ {
			p.row[0] = strconv.AppendInt(p.num[:0], i, 10)
			if err := w.DataRow(p.row[:]); err != nil {
				return false, err
			}
		}
	case "fatal":
		e := pgerror.New(pgerror.AdminShutdown, "fake fatal error")
		e.Severity = pgerror.SeverityFatal
		return false, e
	case "panic":
		panic("fake panic")
	case "failsync":
		s.failSync = true
		return false, w.CommandComplete("FAIL")
	case "copyin":
		return false, p.copyIn(w)
	case "copyout":
		cp := w.(Copier)
		if err := cp.CopyOut(0, []int16{0}); err != nil {
			return false, err
		}
		for i := int64(1); i <= p.cmd.n; i++ {
			if err := cp.CopyData(strconv.AppendInt(p.num[:0], i, 10)); err != nil {
				return false, err
			}
		}
		if err := cp.CopyDone(); err != nil {
			return false, err
		}
		p.done = true
		return false, w.CommandComplete("COPY " + strconv.FormatInt(p.cmd.n, 10))
	}
	return false, fmt.Errorf("fake: unhandled command %q", p.cmd.kind)
}

// copyIn reads COPY data line by line; the session keeps what it read.
func (p *fakePortal) copyIn(w ResultWriter) error {
	cp, ok := w.(Copier)
	if !ok {
		return pgerror.New(pgerror.FeatureNotSupported, "COPY needs a client")
	}
	r, err := cp.CopyIn(0, []int16{0, 0})
	if err != nil {
		return err
	}
	br := bufio.NewReader(r)
	var n int64
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			if strings.TrimSuffix(line, "\n") == "bad" {
				p.s.fail()
				return pgerror.New(pgerror.InvalidTextRepresentation, `invalid input syntax for type integer: "bad"`)
			}
			p.s.copyMu.Lock()
			p.s.copied = append(p.s.copied, line...)
			p.s.copyMu.Unlock()
			n++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			p.s.fail()
			return err
		}
	}
	p.done = true
	return w.CommandComplete("COPY " + strconv.FormatInt(n, 10))
}

// int encodes v in the first column's format without allocating once warm.
func (p *fakePortal) int(v int64, size int) []byte {
	p.num = p.num[:0]
	if len(p.cols) > 0 && p.cols[0].Format == 1 {
		if size == 4 {
			p.num = binary.BigEndian.AppendUint32(p.num, uint32(v))
		} else {
			p.num = binary.BigEndian.AppendUint64(p.num, uint64(v))
		}
		return p.num
	}
	p.num = strconv.AppendInt(p.num, v, 10)
	return p.num
}
