package main

// These tests build the real mvserver binary once (TestMain) and run it as a
// subprocess on a loopback port, the way a user or a container runs it: flags
// and MVSERVER_* variables, the data-directory lock, SIGTERM/SIGINT shutdown,
// and durability across SIGKILL (TestCrashSIGKILL).
//
// Nothing here sleeps to wait for the server: readiness is the "mvserver
// listening" log line (or, when the log level hides it, the address given)
// followed by a session that opens, polled with a deadline; exits are waited
// for with a deadline too. The seeded random pause before a SIGKILL is the
// only deliberate sleep.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

var (
	crashSeed   = flag.Uint64("crash.seed", 0, "seed for TestCrashSIGKILL (0: a new one each run, printed)")
	crashRounds = flag.Int("crash.rounds", 5, "kill/restart rounds in TestCrashSIGKILL")
)

// binPath is the mvserver binary TestMain built.
var binPath string

// binTags are the build tags the binary is built with (tikv when the
// tests are: tags_tikv_test.go).
var binTags string

// testStore is the storage engine every server of these tests runs on
// (its --store): empty for Pebble, or MVSERVER_TEST_STORE, e.g.
// tikvmock:// with the mock cluster kept in the data directory, so it
// outlives a SIGKILL as Pebble's files do. Read before cleanEnv drops
// MVSERVER_* from the servers' environment.
var testStore = os.Getenv("MVSERVER_TEST_STORE")

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mvserver-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "main_test:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binPath = filepath.Join(dir, "mvserver")
	// go test puts its own GOROOT/bin first on PATH, so this is the same
	// toolchain that built the test.
	goTool, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "main_test: go not found on PATH:", err)
		return 1
	}
	build := []string{"build", "-o", binPath}
	if binTags != "" {
		build = append(build, "-tags", binTags)
	}
	cmd := exec.Command(goTool, append(build, ".")...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "main_test: building mvserver:", err)
		return 1
	}
	return m.Run()
}

// ---------------------------------------------------------------------------
// Running the binary.

const (
	startTimeout = 30 * time.Second // a cold start replays the WAL; generous for slow CI
	exitTimeout  = 15 * time.Second // for exits that must be prompt (lock, signals)
)

var listeningRE = regexp.MustCompile(`msg="mvserver listening" addr=(\S+)`)

// logBuffer collects a server's stderr and reports the address of its
// "mvserver listening" line once.
type logBuffer struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	addr  chan string
	found bool
}

func newLogBuffer() *logBuffer { return &logBuffer{addr: make(chan string, 1)} }

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if !b.found {
		if m := listeningRE.FindSubmatch(b.buf.Bytes()); m != nil {
			b.found = true
			b.addr <- string(m[1])
		}
	}
	return len(p), nil
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is one running (or exited) mvserver process.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	log    *logBuffer
	addr   string // host:port it listens on, once ready
	exited chan struct{}
	state  *os.ProcessState // valid once exited is closed
}

// spawn starts the binary with args and extra environment (KEY=VALUE) and
// does not wait for it to be ready. The process is killed at cleanup if it
// still runs.
func spawn(t testing.TB, args []string, env ...string) *proc {
	t.Helper()
	p := &proc{t: t, log: newLogBuffer(), exited: make(chan struct{})}
	if testStore != "" && hasFlag(args, "data-dir") && !hasFlag(args, "store") {
		args = append([]string{"--store", testStore}, args...)
	}
	p.cmd = exec.Command(binPath, args...)
	if !hasFlag(args, "http") && !hasEnv(env, "MVSERVER_HTTP") {
		// Servers under test run side by side: none takes the console's
		// default port unless the test asks for HTTP.
		env = append(env, "MVSERVER_HTTP=")
	}
	p.cmd.Env = append(cleanEnv(), env...)
	p.cmd.Stdout = p.log
	p.cmd.Stderr = p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start mvserver: %v", err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.state = p.cmd.ProcessState
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("mvserver %v output:\n%s", args, p.log.String())
		}
	})
	return p
}

// cleanEnv is the test's environment without MVSERVER_* (a developer's
// settings must not leak into the server under test) and without PG*
// (pgx would read them).
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MVSERVER_") || strings.HasPrefix(kv, "PG") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// startServer starts mvserver on a fresh port (unless args set --listen or
// env sets MVSERVER_LISTEN) and waits until a client can connect.
func startServer(t testing.TB, dataDir string, args []string, env ...string) *proc {
	t.Helper()
	all := []string{"--data-dir", dataDir}
	if !hasListen(args, env) {
		all = append(all, "--listen", "127.0.0.1:0")
	}
	p := spawn(t, append(all, args...), env...)
	p.waitReady()
	return p
}

// hasFlag reports whether args set --name.
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		for _, dash := range []string{"-", "--"} {
			if a == dash+name || strings.HasPrefix(a, dash+name+"=") {
				return true
			}
		}
	}
	return false
}

// hasEnv reports whether env sets the variable name.
func hasEnv(env []string, name string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, name+"=") {
			return true
		}
	}
	return false
}

func hasListen(args, env []string) bool {
	for _, a := range args {
		if a == "--listen" || a == "-listen" || strings.HasPrefix(a, "--listen=") || strings.HasPrefix(a, "-listen=") {
			return true
		}
	}
	for _, e := range env {
		if strings.HasPrefix(e, "MVSERVER_LISTEN=") {
			return true
		}
	}
	return false
}

// waitReady waits for the listening log line, then polls a connection until
// a session opens, all within startTimeout.
func (p *proc) waitReady() {
	p.t.Helper()
	deadline := time.Now().Add(startTimeout)
	select {
	case addr := <-p.log.addr:
		p.waitConnectable(addr, deadline)
	case <-p.exited:
		p.t.Fatalf("mvserver exited before listening (%v):\n%s", p.state, p.log.String())
	case <-time.After(time.Until(deadline)):
		p.t.Fatalf("mvserver did not log that it listens within %v:\n%s", startTimeout, p.log.String())
	}
}

// waitConnectable polls addr until a session on p's database opens, and
// then records addr as p's address. It fails the test if p exits or the
// deadline passes first.
func (p *proc) waitConnectable(addr string, deadline time.Time) {
	p.t.Helper()
	var lastErr error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		conn, err := pgx.Connect(ctx, connString(addr, databaseOf(p)))
		if err == nil {
			conn.Close(ctx)
			cancel()
			p.addr = addr
			return
		}
		cancel()
		lastErr = err
		// A short pause between attempts, bounded by the deadline and cut
		// short if the process exits.
		select {
		case <-p.exited:
			p.t.Fatalf("mvserver exited while starting (%v):\n%s", p.state, p.log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.t.Fatalf("no session on %s within %v: %v", addr, startTimeout, lastErr)
}

// databaseOf is the database name the process serves, from its flags/env.
func databaseOf(p *proc) string {
	db := "mvserver"
	for _, e := range p.cmd.Env {
		if v, ok := strings.CutPrefix(e, "MVSERVER_DATABASE="); ok {
			db = v
		}
	}
	args := p.cmd.Args[1:]
	for i, a := range args {
		if (a == "--database" || a == "-database") && i+1 < len(args) {
			db = args[i+1]
		} else if v, ok := strings.CutPrefix(a, "--database="); ok {
			db = v
		}
	}
	return db
}

func connString(addr, database string) string {
	return fmt.Sprintf("postgres://mvtest@%s/%s?sslmode=disable&connect_timeout=10", addr, database)
}

// connect opens a pgx connection to p's database, closed at cleanup.
func (p *proc) connect(t testing.TB) *pgx.Conn {
	t.Helper()
	return connectTo(t, p.addr, databaseOf(p), pgx.QueryExecModeCacheStatement)
}

func connectTo(t testing.TB, addr, database string, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(connString(addr, database))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	// A session that just closed (the readiness probe) may hold its slot a
	// moment longer: 53300 is retried until the deadline.
	deadline := time.Now().Add(10 * time.Second)
	var conn *pgx.Conn
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		conn, err = pgx.ConnectConfig(ctx, cfg)
		cancel()
		if err == nil {
			break
		}
		if pgCode(err) != "53300" || time.Now().After(deadline) {
			t.Fatalf("connect to %s/%s: %v", addr, database, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = conn.Close(ctx)
	})
	return conn
}

// waitExit waits up to timeout for the process to exit and returns its exit
// code (-1 when a signal ended it). It fails the test on timeout, after
// killing the process so the test does not hang.
func (p *proc) waitExit(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.state.ExitCode()
	case <-time.After(timeout):
		// SIGQUIT makes the Go runtime print every goroutine's stack
		// before it exits: the log then shows what the exit waited on.
		how := "SIGQUIT, its goroutines are below"
		_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			how = "killed it: SIGQUIT did not end it"
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		p.t.Fatalf("mvserver did not exit within %v (%s):\n%s", timeout, how, p.log.String())
		return 0
	}
}

func (p *proc) signal(sig os.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
}

func mustExec(t testing.TB, conn *pgx.Conn, sql string, args ...any) pgconn.CommandTag {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tag, err := conn.Exec(ctx, sql, args...)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return tag
}

func queryInt(t testing.TB, conn *pgx.Conn, sql string, args ...any) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var n int64
	if err := conn.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// connectErr opens and closes a session and returns why it failed, if it
// did. 53300 is retried for a while: the slot of a session that just
// closed (a readiness probe) may not be free yet.
func connectErr(addr, database string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		conn, err := pgx.Connect(ctx, connString(addr, database))
		if err == nil {
			conn.Close(ctx)
		}
		cancel()
		if pgCode(err) != "53300" || time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pgCode is the SQLSTATE of err, or "" when it is not a server error.
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// ---------------------------------------------------------------------------
// Configuration.

// TestFlags starts the server with every flag, checks each one took effect,
// and checks bad flags end the process with exit code 2.
func TestFlags(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	addr := freeAddr(t)
	p := spawn(t, []string{
		"--listen", addr,
		"--data-dir", dir,
		"--database", "flagdb",
		"--log-level", "error",
		"--max-connections", "2",
		"--table-features", "none",
		"--shutdown-grace", "2s",
	})
	// At error level nothing is logged on a good start: readiness is
	// polling the address.
	p.waitConnectable(addr, time.Now().Add(startTimeout))
	if _, err := os.Stat(filepath.Join(dir, "LOCK")); err != nil {
		t.Fatalf("--data-dir %s holds no store: %v", dir, err)
	}
	conn := p.connect(t)
	mustExec(t, conn, "CREATE TABLE f (a INT)")
	mustExec(t, conn, "INSERT INTO f VALUES (1), (2)")
	if n := queryInt(t, conn, "SELECT count(*) FROM f"); n != 2 {
		t.Fatalf("count = %d, want 2", n)
	}

	// --table-features none: the new table has no change data feed, so
	// table_changes refuses it.
	ctx := context.Background()
	_, err := conn.Exec(ctx, "SELECT * FROM table_changes('f', 0)")
	if err == nil {
		t.Fatal("table_changes on a table created under --table-features none succeeded")
	}

	// --database flagdb: another name is 3D000.
	err = connectErr(p.addr, "mvserver")
	if code := pgCode(err); code != "3D000" {
		t.Fatalf("connect to database mvserver: got %v (SQLSTATE %q), want 3D000", err, code)
	}

	// --max-connections 2: with two sessions open a third is 53300.
	_ = connectTo(t, p.addr, "flagdb", pgx.QueryExecModeCacheStatement)
	_, err = pgx.Connect(ctx, connString(p.addr, "flagdb"))
	if code := pgCode(err); code != "53300" {
		t.Fatalf("third connection with --max-connections 2: got %v (SQLSTATE %q), want 53300", err, code)
	}

	p.signal(syscall.SIGTERM)
	if code := p.waitExit(exitTimeout); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
	// --log-level error: a clean start and stop log nothing.
	if out := p.log.String(); out != "" {
		t.Errorf("--log-level error, yet the server logged:\n%s", out)
	}

	t.Run("bad", func(t *testing.T) {
		for _, args := range [][]string{
			{"--no-such-flag"},
			{"--log-level", "loud"},
			{"--table-features", "timeTravel"},
			{"--max-connections", "many"},
		} {
			p := spawn(t, append([]string{"--data-dir", filepath.Join(t.TempDir(), "d"), "--listen", "127.0.0.1:0"}, args...))
			if code := p.waitExit(exitTimeout); code != 2 {
				t.Errorf("%v: exit code %d, want 2; output:\n%s", args, code, p.log.String())
			}
		}
		p := spawn(t, []string{"--data-dir", filepath.Join(t.TempDir(), "d"), "--listen", "127.0.0.1:0"}, "MVSERVER_MAX_CONNECTIONS=many")
		if code := p.waitExit(exitTimeout); code != 2 {
			t.Errorf("MVSERVER_MAX_CONNECTIONS=many: exit code %d, want 2", code)
		}
	})
}

// TestEnv configures the server through MVSERVER_* only: it listens on
// MVSERVER_LISTEN, stores in MVSERVER_DATA_DIR, serves MVSERVER_DATABASE
// (another name gives FATAL 3D000), honours MVSERVER_MAX_CONNECTIONS and
// MVSERVER_TABLE_FEATURES; a flag overrides its variable.
func TestEnv(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "envdata")
	addr := freeAddr(t)
	p := spawn(t, nil,
		"MVSERVER_LISTEN="+addr,
		"MVSERVER_DATA_DIR="+dir,
		"MVSERVER_DATABASE=envdb",
		"MVSERVER_LOG_LEVEL=warn",
		"MVSERVER_MAX_CONNECTIONS=1",
		"MVSERVER_TABLE_FEATURES=changeDataFeed",
	)
	// At warn level the "listening" info line is not logged, so readiness
	// is polling the address itself.
	p.waitConnectable(addr, time.Now().Add(startTimeout))
	if strings.Contains(p.log.String(), "level=INFO") {
		t.Errorf("MVSERVER_LOG_LEVEL=warn but info lines were logged:\n%s", p.log.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "LOCK")); err != nil {
		t.Errorf("MVSERVER_DATA_DIR=%s holds no store: %v", dir, err)
	}
	ctx := context.Background()
	err := connectErr(addr, "mvserver")
	if code := pgCode(err); code != "3D000" {
		t.Fatalf("connect to database mvserver with MVSERVER_DATABASE=envdb: got %v (SQLSTATE %q), want 3D000", err, code)
	}
	conn := connectTo(t, addr, "envdb", pgx.QueryExecModeCacheStatement)
	mustExec(t, conn, "CREATE TABLE e (a INT)")
	mustExec(t, conn, "INSERT INTO e VALUES (1)")
	// MVSERVER_TABLE_FEATURES=changeDataFeed: the feed is on, row tracking off.
	if n := queryInt(t, conn, "SELECT count(*) FROM table_changes('e', 1)"); n != 1 {
		t.Errorf("table_changes('e', 1) has %d rows, want 1", n)
	}
	if _, err := conn.Exec(ctx, "SELECT _row_id FROM e"); err == nil {
		t.Errorf("_row_id is selectable although MVSERVER_TABLE_FEATURES leaves row tracking off")
	}
	// MVSERVER_MAX_CONNECTIONS=1: a second session is refused.
	_, err = pgx.Connect(ctx, connString(addr, "envdb"))
	if code := pgCode(err); code != "53300" {
		t.Errorf("second connection with MVSERVER_MAX_CONNECTIONS=1: got %v (SQLSTATE %q), want 53300", err, code)
	}
	p.signal(syscall.SIGINT)
	if code := p.waitExit(exitTimeout); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}

	t.Run("flag overrides env", func(t *testing.T) {
		p := startServer(t, filepath.Join(t.TempDir(), "d"), []string{"--database", "flagdb"}, "MVSERVER_DATABASE=envdb")
		if !strings.Contains(p.log.String(), "database=flagdb") {
			t.Fatalf("--database flagdb with MVSERVER_DATABASE=envdb: log says\n%s", p.log.String())
		}
		conn := connectTo(t, p.addr, "flagdb", pgx.QueryExecModeCacheStatement)
		mustExec(t, conn, "SELECT 1")
	})
}

// freeAddr returns a loopback address no one listened on a moment ago.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// ---------------------------------------------------------------------------
// The data-directory lock.

// TestDataDirInUse: a second server on a data directory that a running
// server holds exits at once with a non-zero code and says the directory is
// in use; the first keeps serving.
func TestDataDirInUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := startServer(t, dir, nil)
	conn := first.connect(t)
	mustExec(t, conn, "CREATE TABLE l (a INT)")

	second := spawn(t, []string{"--data-dir", dir, "--listen", "127.0.0.1:0"})
	code := second.waitExit(exitTimeout)
	if code == 0 {
		t.Fatalf("second server exited with 0:\n%s", second.log.String())
	}
	out := second.log.String()
	if !strings.Contains(out, "data directory") || !strings.Contains(out, "in use") {
		t.Errorf("second server's output does not say the data directory is in use:\n%s", out)
	}
	if strings.Contains(out, "mvserver listening") {
		t.Errorf("second server listened before failing:\n%s", out)
	}
	mustExec(t, conn, "INSERT INTO l VALUES (1)")
	if n := queryInt(t, conn, "SELECT count(*) FROM l"); n != 1 {
		t.Fatalf("first server: count = %d, want 1", n)
	}
}

// TestListenInUse: a server whose address is taken exits at once with a
// non-zero code, names the address, and leaves its data directory unlocked.
func TestListenInUse(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	p := spawn(t, []string{"--data-dir", dir, "--listen", ln.Addr().String()})
	if code := p.waitExit(exitTimeout); code == 0 {
		t.Fatalf("exit code 0 with %s taken", ln.Addr())
	}
	if out := p.log.String(); !strings.Contains(out, ln.Addr().String()) {
		t.Errorf("output does not name the address %s:\n%s", ln.Addr(), out)
	}
	// The failed start released the lock: a server on a free port opens it.
	p2 := startServer(t, dir, nil)
	mustExec(t, p2.connect(t), "SELECT 1")
}

// ---------------------------------------------------------------------------
// Signals.

// TestShutdownSignal: SIGTERM and SIGINT end the server with exit code 0 and
// "stopped" logged; what was committed before is there after a restart,
// including the latest table version and change feed.
func TestShutdownSignal(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p := startServer(t, dir, nil)
			conn := p.connect(t)
			mustExec(t, conn, "CREATE TABLE s (k INT PRIMARY KEY, v TEXT)")
			mustExec(t, conn, "INSERT INTO s VALUES (1, 'one'), (2, 'two')")
			mustExec(t, conn, "BEGIN")
			mustExec(t, conn, "INSERT INTO s VALUES (3, 'three')")
			mustExec(t, conn, "UPDATE s SET v = 'uno' WHERE k = 1")
			mustExec(t, conn, "COMMIT")
			conn.Close(context.Background())

			p.signal(sig)
			if code := p.waitExit(exitTimeout); code != 0 {
				t.Fatalf("exit code %d after %v, want 0:\n%s", code, sig, p.log.String())
			}
			assertStopped(t, p)

			p2 := startServer(t, dir, nil)
			conn2 := p2.connect(t)
			got := collectStrings(t, conn2, "SELECT k::text || '=' || v FROM s ORDER BY k")
			if want := "1=uno 2=two 3=three"; got != want {
				t.Fatalf("after restart: %q, want %q", got, want)
			}
			// Versions: 0 CREATE TABLE, 1 the INSERT, 2 the transaction.
			hist := readHistory(t, conn2, "s")
			if len(hist) != 3 || hist[0].version != 2 {
				t.Fatalf("DESCRIBE HISTORY s after restart: %+v, want versions 2, 1, 0", hist)
			}
			if n := queryInt(t, conn2, "SELECT count(*) FROM table_changes('s', 1)"); n != 5 {
				// 2 inserts; then 1 insert + update pre/post image.
				t.Fatalf("table_changes('s', 1) after restart has %d rows, want 5", n)
			}
		})
	}
}

func assertStopped(t testing.TB, p *proc) {
	t.Helper()
	out := p.log.String()
	if !strings.Contains(out, `msg=stopped`) {
		t.Errorf(`no "stopped" in the log:\n%s`, out)
	}
}

func collectStrings(t testing.TB, conn *pgx.Conn, sql string) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	vals, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return strings.Join(vals, " ")
}

// TestShutdownWithBusyClients: at SIGTERM one client is streaming a huge
// SELECT, one is computing a long aggregate, and one sits in an open
// transaction with uncommitted rows. None of them keeps the server from
// exiting with 0 soon after --shutdown-grace; the uncommitted rows are gone
// after a restart and the committed ones are there.
func TestShutdownWithBusyClients(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const grace = time.Second
	p := startServer(t, dir, []string{"--shutdown-grace", grace.String()})
	setup := p.connect(t)
	mustExec(t, setup, "CREATE TABLE small (x INT)")
	mustExec(t, setup, "INSERT INTO small VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)")
	mustExec(t, setup, "CREATE TABLE big (x INT)")
	// 1000 rows; big × big × big is 10⁹ rows, far more than the test lasts.
	mustExec(t, setup, "INSERT INTO big SELECT a.x * 100 + b.x * 10 + c.x FROM small a, small b, small c")
	mustExec(t, setup, "CREATE TABLE kept (a INT)")
	mustExec(t, setup, "INSERT INTO kept VALUES (1)")

	// Client 1 streams rows; the first row proves its statement is running.
	streamer := p.connect(t)
	streaming := make(chan struct{})
	streamErr := make(chan error, 1)
	go func() {
		rows, err := streamer.Query(context.Background(), "SELECT a.x, b.x, c.x FROM big a, big b, big c")
		if err != nil {
			streamErr <- err
			return
		}
		first := true
		for rows.Next() {
			if first {
				close(streaming)
				first = false
			}
		}
		rows.Close()
		streamErr <- rows.Err()
	}()

	// Client 2 runs a statement that computes for a long time and sends
	// nothing until it ends. It is the second statement of one simple Query
	// whose first statement returns enough rows (10⁴, past the server's
	// output buffer) to reach the client: once they arrive the server is
	// executing the Query message, and the aggregate follows at once.
	aggregator := connectTo(t, p.addr, databaseOf(p), pgx.QueryExecModeSimpleProtocol)
	aggregating := make(chan struct{})
	aggErr := make(chan error, 1)
	go func() {
		mrr := aggregator.PgConn().Exec(context.Background(),
			"SELECT a.x, b.x FROM big a, small b; SELECT count(*) FROM big a, big b, big c WHERE a.x + b.x + c.x < 0")
		first := true
		for mrr.NextResult() {
			rr := mrr.ResultReader()
			for rr.NextRow() {
				if first {
					close(aggregating)
					first = false
				}
			}
			if _, err := rr.Close(); err != nil {
				break
			}
		}
		aggErr <- mrr.Close()
	}()

	// Client 3 is idle in a transaction with an uncommitted row.
	idle := p.connect(t)
	mustExec(t, idle, "BEGIN")
	mustExec(t, idle, "INSERT INTO kept VALUES (2)")

	for name, ch := range map[string]chan struct{}{"streaming SELECT": streaming, "aggregate": aggregating} {
		select {
		case <-ch:
		case err := <-streamErr:
			t.Fatalf("streaming SELECT ended before SIGTERM: %v", err)
		case err := <-aggErr:
			t.Fatalf("aggregate ended before SIGTERM: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatalf("%s did not start within 30s", name)
		}
	}

	p.signal(syscall.SIGTERM)
	// The grace is 1s; everything after it is the server canceling
	// statements and closing Pebble, which takes far less than exitTimeout.
	if code := p.waitExit(grace + exitTimeout); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
	assertStopped(t, p)

	for name, ch := range map[string]chan error{"streaming SELECT": streamErr, "aggregate": aggErr} {
		select {
		case err := <-ch:
			t.Logf("%s ended with: %v", name, err)
			if err == nil {
				t.Errorf("%s completed although the server shut down during it", name)
			} else if code := pgCode(err); code != "" && code != "57P01" && code != "57014" {
				t.Errorf("%s: got SQLSTATE %s (%v), want 57P01 or 57014 or a closed connection", name, code, err)
			}
		case <-time.After(exitTimeout):
			t.Errorf("%s: the client saw no end after the server exited", name)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), exitTimeout)
	defer cancel()
	if _, err := idle.Exec(ctx, "COMMIT"); err == nil {
		t.Errorf("COMMIT after the server stopped succeeded")
	}

	p2 := startServer(t, dir, nil)
	conn := p2.connect(t)
	if got := collectStrings(t, conn, "SELECT a::text FROM kept ORDER BY a"); got != "1" {
		t.Errorf("kept after restart = %q, want %q (the open transaction's row must be gone)", got, "1")
	}
	if n := queryInt(t, conn, "SELECT count(*) FROM big"); n != 1000 {
		t.Errorf("big after restart has %d rows, want 1000", n)
	}
}

// ---------------------------------------------------------------------------
// Crash safety.

// txnKind is the shape of one transaction of the crash workload. Every
// transaction writes rows (txn=id, client, seq 0..n-1, v) under its own id,
// so after a crash its rows can be told apart and checked all-or-nothing.
type txnKind int

const (
	kindSingle   txnKind = iota // autocommit INSERT of one row, v=0
	kindMulti                   // autocommit INSERT of n rows, v=0
	kindExplicit                // BEGIN; INSERT n rows; UPDATE them to v=1; counter+1; COMMIT
	kindRollback                // BEGIN; INSERT n rows; ROLLBACK: never visible
)

func (k txnKind) String() string {
	return [...]string{"single", "multi", "explicit", "rollback"}[k]
}

// crashTxn is one transaction a client attempted.
type crashTxn struct {
	id     int64
	client int
	kind   txnKind
	n      int
	round  int
	acked  bool // COMMIT (or the autocommit INSERT, or ROLLBACK) returned success
}

func (x *crashTxn) wantV() int64 {
	if x.kind == kindExplicit {
		return 1
	}
	return 0
}

// crashState is what the test knows across kill/restart rounds.
type crashState struct {
	txns map[int64]*crashTxn
	// present is each finished transaction's outcome as first seen after a
	// restart; later restarts must agree.
	present map[int64]bool
}

const crashClients = 4

// counterID is the txn id of the row that counts client c's explicit
// transactions: every explicit transaction also updates a row it did not
// insert, so atomicity covers updates of old rows too.
func counterID(c int) int64 { return -1 - int64(c) }

// TestCrashSIGKILL: clients commit in a loop (autocommit single- and
// multi-row INSERTs, explicit transactions with UPDATEs, rollbacks) on
// several protocols, the server is killed with SIGKILL at a seeded random
// moment and restarted on the same data directory, for -crash.rounds rounds.
// After each restart every acknowledged commit is there, nothing else is,
// each transaction is all-or-nothing, an outcome once seen never changes,
// and DESCRIBE HISTORY, _row_commit_version and table_changes('t', 1) agree
// with the rows (one version per commit, each insert once in the feed).
//
// Run it repeatedly with: go test ./cmd/mvserver -run CrashSIGKILL -count=20
// Reproduce a seed with -crash.seed=N.
func TestCrashSIGKILL(t *testing.T) {
	seed := *crashSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (reproduce: go test ./cmd/mvserver -run CrashSIGKILL -crash.seed=%d)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x6d767365))
	dir := t.TempDir()
	st := &crashState{txns: map[int64]*crashTxn{}, present: map[int64]bool{}}

	p := startServer(t, dir, nil)
	setup := p.connect(t)
	mustExec(t, setup, "CREATE TABLE t (txn BIGINT NOT NULL, client INT NOT NULL, seq INT NOT NULL, v BIGINT NOT NULL, PRIMARY KEY (txn, seq))")
	var counters []string
	for c := range crashClients {
		counters = append(counters, fmt.Sprintf("(%d, %d, 0, 0)", counterID(c), c))
	}
	mustExec(t, setup, "INSERT INTO t VALUES "+strings.Join(counters, ", "))
	setup.Close(context.Background())

	for round := 1; round <= *crashRounds; round++ {
		start := time.Now()
		crashRound(t, p, round, rng, st)
		if t.Failed() {
			return
		}
		killed := time.Now()
		p = startServer(t, dir, nil)
		restarted := time.Now()
		conn := p.connect(t)
		verifyCrash(t, conn, st, round)
		conn.Close(context.Background())
		if t.Failed() {
			return
		}
		t.Logf("round %d took: workload %v, restart %v, verify %v", round,
			killed.Sub(start).Round(time.Millisecond), restarted.Sub(killed).Round(time.Millisecond), time.Since(restarted).Round(time.Millisecond))
	}
	p.signal(syscall.SIGTERM)
	if code := p.waitExit(exitTimeout); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
}

// crashRound runs the workload on p until a random number of commits were
// acknowledged, waits a random few milliseconds, SIGKILLs p and records
// what each client attempted and which were acknowledged.
func crashRound(t *testing.T, p *proc, round int, rng *rand.Rand, st *crashState) {
	target := int64(20 + rng.IntN(1500))
	jitter := time.Duration(rng.IntN(20_000)) * time.Microsecond
	modes := []pgx.QueryExecMode{
		pgx.QueryExecModeCacheStatement,
		pgx.QueryExecModeSimpleProtocol,
		pgx.QueryExecModeExec,
		pgx.QueryExecModeDescribeExec,
	}
	conns := make([]*pgx.Conn, crashClients)
	for c := range conns {
		conns[c] = connectTo(t, p.addr, "mvserver", modes[c%len(modes)])
	}

	var killed atomic.Bool
	var acks atomic.Int64
	reached := make(chan struct{})
	logs := make([][]*crashTxn, crashClients)
	var wg sync.WaitGroup
	for c := range crashClients {
		crng := rand.New(rand.NewPCG(rng.Uint64(), uint64(c)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				x := &crashTxn{id: int64(round)*10_000_000 + int64(c)*1_000_000 + int64(i), client: c, round: round, n: 1}
				// One transaction in 25 is large (a batch of tens to
				// hundreds of rows), the rest are small.
				size := func(small int) int {
					if crng.IntN(25) == 0 {
						return 20 + crng.IntN(280)
					}
					return 1 + crng.IntN(small)
				}
				switch r := crng.IntN(100); {
				case r < 30:
					x.kind = kindSingle
				case r < 55:
					x.kind, x.n = kindMulti, 1+size(5)
				case r < 90:
					x.kind, x.n = kindExplicit, min(size(5), 40)
				default:
					x.kind, x.n = kindRollback, size(3)
				}
				logs[c] = append(logs[c], x)
				if err := runCrashTxn(conns[c], x); err != nil {
					if !killed.Load() {
						t.Errorf("client %d: %s txn %d before the kill: %v", c, x.kind, x.id, err)
					}
					return
				}
				x.acked = true
				if acks.Add(1) == target {
					close(reached)
				}
			}
		}()
	}
	clientsDone := make(chan struct{})
	go func() { wg.Wait(); close(clientsDone) }()
	select {
	case <-reached:
	case <-clientsDone: // every client failed; the errors are reported
	case <-time.After(60 * time.Second):
		t.Errorf("round %d: only %d of %d commits acknowledged within 60s", round, acks.Load(), target)
	}
	time.Sleep(jitter) // part of the seeded random kill moment, not a wait for readiness
	killed.Store(true)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL: %v", err)
	}
	if code := p.waitExit(exitTimeout); code != -1 {
		t.Errorf("exit code %d after SIGKILL, want -1 (killed)", code)
	}
	select {
	case <-clientsDone:
	case <-time.After(exitTimeout):
		t.Fatalf("clients still running %v after the server was killed", exitTimeout)
	}
	var attempted, acked int
	for c := range logs {
		for _, x := range logs[c] {
			st.txns[x.id] = x
			attempted++
			if x.acked {
				acked++
			}
		}
	}
	t.Logf("round %d: killed after %d acknowledged commits (+%v); %d transactions attempted, %d acknowledged",
		round, target, jitter, attempted, acked)
}

// runCrashTxn runs x on conn; nil means the server acknowledged it.
func runCrashTxn(conn *pgx.Conn, x *crashTxn) error {
	ctx := context.Background()
	exec := func(want int64, sql string, args ...any) error {
		tag, err := conn.Exec(ctx, sql, args...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != want {
			return fmt.Errorf("%s: %d rows affected, want %d", sql, tag.RowsAffected(), want)
		}
		return nil
	}
	insert := func() error {
		var vals []string
		for i := range x.n {
			vals = append(vals, fmt.Sprintf("($1, $2, %d, 0)", i))
		}
		return exec(int64(x.n), "INSERT INTO t (txn, client, seq, v) VALUES "+strings.Join(vals, ", "), x.id, x.client)
	}
	switch x.kind {
	case kindSingle, kindMulti:
		return insert()
	}
	if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
		return err
	}
	if err := insert(); err != nil {
		return err
	}
	end := "ROLLBACK"
	if x.kind == kindExplicit {
		// Point updates by the whole primary key: the planner has no
		// prefix range scan yet, and a scan per UPDATE would make the
		// workload slow down as the table grows.
		for seq := range x.n {
			if err := exec(1, "UPDATE t SET v = 1 WHERE txn = $1 AND seq = $2", x.id, seq); err != nil {
				return err
			}
		}
		if err := exec(1, "UPDATE t SET v = v + 1 WHERE txn = $1 AND seq = 0", counterID(x.client)); err != nil {
			return err
		}
		end = "COMMIT"
	}
	tag, err := conn.Exec(ctx, end)
	if err != nil {
		return err
	}
	if tag.String() != end {
		return fmt.Errorf("%s answered %q", end, tag.String())
	}
	return nil
}

type crashRow struct {
	txn           int64
	client, seq   int64
	v             int64
	commitVersion int64 // _row_commit_version
	changeVersion int64 // _commit_version of its insert in the change feed
	insertsInFeed int
	insertedWithV int64
}

// verifyCrash checks the table after the restart that followed round.
func verifyCrash(t *testing.T, conn *pgx.Conn, st *crashState, round int) {
	var problems []string
	fail := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	defer func() {
		if len(problems) == 0 {
			return
		}
		if len(problems) > 30 {
			problems = append(problems[:30], fmt.Sprintf("… and %d more", len(problems)-30))
		}
		t.Errorf("after round %d:\n  %s", round, strings.Join(problems, "\n  "))
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	// 1. The rows: all-or-nothing per transaction, acknowledged ones present.
	rows, err := conn.Query(ctx, "SELECT txn, client, seq, v, _row_commit_version FROM t")
	if err != nil {
		t.Fatalf("read t: %v", err)
	}
	byTxn := map[int64][]*crashRow{}
	byKey := map[[2]int64]*crashRow{}
	counters := map[int64]*crashRow{}
	for rows.Next() {
		r := &crashRow{}
		if err := rows.Scan(&r.txn, &r.client, &r.seq, &r.v, &r.commitVersion); err != nil {
			t.Fatalf("scan t: %v", err)
		}
		key := [2]int64{r.txn, r.seq}
		if byKey[key] != nil {
			fail("row (txn %d, seq %d) appears twice", r.txn, r.seq)
		}
		byKey[key] = r
		if r.txn < 0 {
			c := -1 - r.txn
			if c >= crashClients || r.client != c || r.seq != 0 {
				fail("unexpected counter row %+v", *r)
			}
			counters[c] = r
			continue
		}
		if st.txns[r.txn] == nil {
			fail("row %+v belongs to no transaction any client attempted", *r)
		}
		byTxn[r.txn] = append(byTxn[r.txn], r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read t: %v", err)
	}

	versionTxn := map[int64]*crashTxn{} // commit version → its transaction
	explicitOf := make([]int64, crashClients)
	lastExplicitVersion := make([]int64, crashClients)
	stats := map[string]int{}
	for id, x := range st.txns {
		rs := byTxn[id]
		present := len(rs) > 0
		switch {
		case x.kind == kindRollback && present:
			fail("rolled-back txn %d (round %d) is visible", id, x.round)
		case x.acked && x.kind != kindRollback && !present:
			fail("acknowledged %s txn %d (round %d, %d rows) is lost", x.kind, id, x.round, x.n)
		}
		if prev, ok := st.present[id]; ok && prev != present {
			fail("txn %d (round %d) was present=%v after an earlier restart, now present=%v", id, x.round, prev, present)
		}
		st.present[id] = present
		switch {
		case x.acked:
			stats["acked"]++
		case present:
			stats["unacked present"]++
		default:
			stats["unacked absent"]++
		}
		if !present {
			continue
		}
		if len(rs) != x.n {
			fail("txn %d (%s, round %d, acked=%v) has %d of its %d rows: partial commit", id, x.kind, x.round, x.acked, len(rs), x.n)
		}
		seen := map[int64]bool{}
		for _, r := range rs {
			if r.seq < 0 || r.seq >= int64(x.n) || seen[r.seq] {
				fail("txn %d has a bad or repeated seq %d", id, r.seq)
			}
			seen[r.seq] = true
			if r.client != int64(x.client) || r.v != x.wantV() {
				fail("txn %d row %+v: want client %d v %d (partial transaction?)", id, *r, x.client, x.wantV())
			}
			if r.commitVersion != rs[0].commitVersion {
				fail("txn %d's rows have _row_commit_version %d and %d: one commit, two versions", id, rs[0].commitVersion, r.commitVersion)
			}
		}
		v := rs[0].commitVersion
		if other := versionTxn[v]; other != nil {
			fail("txns %d and %d both have commit version %d", other.id, id, v)
		}
		versionTxn[v] = x
		if x.kind == kindExplicit {
			explicitOf[x.client]++
			lastExplicitVersion[x.client] = max(lastExplicitVersion[x.client], v)
		}
	}
	for c := range crashClients {
		r := counters[int64(c)]
		if r == nil {
			fail("counter row of client %d is missing", c)
			continue
		}
		if r.v != explicitOf[c] {
			fail("counter of client %d is %d but %d of its explicit transactions are present", c, r.v, explicitOf[c])
		}
		wantVersion := max(int64(1), lastExplicitVersion[c])
		if r.commitVersion != wantVersion {
			fail("counter of client %d has _row_commit_version %d, want %d (its last explicit commit)", c, r.commitVersion, wantVersion)
		}
	}

	// 2. DESCRIBE HISTORY: versions 0..V newest first; 0 created the
	// table, 1 the counters, each later one is exactly one present
	// transaction with its metrics.
	hist := readHistory(t, conn, "t")
	if len(hist) < 2 {
		t.Fatalf("DESCRIBE HISTORY t has %d versions", len(hist))
	}
	top := hist[0].version
	for i, h := range hist {
		if h.version != top-int64(i) {
			fail("DESCRIBE HISTORY t: entry %d is version %d, want %d (newest first, no gaps)", i, h.version, top-int64(i))
			break
		}
	}
	if int64(len(versionTxn)) != top-1 {
		fail("DESCRIBE HISTORY t has versions up to %d but %d transactions are present (want %d)", top, len(versionTxn), top-1)
	}
	for _, h := range hist {
		switch h.version {
		case 0:
			if h.op != "CREATE TABLE" {
				fail("version 0 is %q, want CREATE TABLE", h.op)
			}
			continue
		case 1:
			if h.op != "WRITE" || h.metrics["numInsertedRows"] != fmt.Sprint(crashClients) {
				fail("version 1 is %s %v, want WRITE of %d rows", h.op, h.metrics, crashClients)
			}
			continue
		}
		x := versionTxn[h.version]
		if x == nil {
			fail("version %d (%s %v) matches no row's _row_commit_version", h.version, h.op, h.metrics)
			continue
		}
		wantUpdated := 0
		if x.kind == kindExplicit {
			wantUpdated = 1 // the counter; its own rows count as inserted
		} else if h.op != "WRITE" {
			fail("version %d (INSERT of txn %d) has operation %q, want WRITE", h.version, x.id, h.op)
		}
		if h.metrics["numInsertedRows"] != fmt.Sprint(x.n) || h.metrics["numUpdatedRows"] != fmt.Sprint(wantUpdated) || h.metrics["numDeletedRows"] != "0" {
			fail("version %d (%s txn %d, %d rows) has metrics %v", h.version, x.kind, x.id, x.n, h.metrics)
		}
	}
	for v := range versionTxn {
		if v < 2 || v > top {
			fail("_row_commit_version %d of txn %d is not a version in DESCRIBE HISTORY (2..%d)", v, versionTxn[v].id, top)
		}
	}

	// 3. The change feed from version 1: each present row inserted exactly
	// once, at its commit version, with the values it was committed with;
	// counters updated once per explicit transaction of their client.
	feed, err := conn.Query(ctx, "SELECT txn, client, seq, v, _change_type, _commit_version FROM table_changes('t', 1)")
	if err != nil {
		t.Fatalf("read table_changes('t', 1): %v", err)
	}
	type counterChange struct{ version, pre, post int64 }
	counterChanges := make([]map[int64]*counterChange, crashClients)
	for c := range counterChanges {
		counterChanges[c] = map[int64]*counterChange{}
	}
	feedVersions := map[int64]bool{}
	for feed.Next() {
		var txn, client, seq, v, version int64
		var typ string
		if err := feed.Scan(&txn, &client, &seq, &v, &typ, &version); err != nil {
			t.Fatalf("scan table_changes: %v", err)
		}
		feedVersions[version] = true
		r := byKey[[2]int64{txn, seq}]
		switch typ {
		case "insert":
			if r == nil {
				fail("change feed inserts (txn %d, seq %d) at version %d, which is not in the table", txn, seq, version)
				continue
			}
			r.insertsInFeed++
			r.changeVersion, r.insertedWithV = version, v
		case "update_preimage", "update_postimage":
			if txn >= 0 || r == nil {
				fail("change feed has %s of (txn %d, seq %d) at version %d; only counters are updated after commit", typ, txn, seq, version)
				continue
			}
			cc := counterChanges[client][version]
			if cc == nil {
				cc = &counterChange{version: version, pre: -1, post: -1}
				counterChanges[client][version] = cc
			}
			if typ == "update_preimage" {
				cc.pre = v
			} else {
				cc.post = v
			}
		default:
			fail("change feed has a %q change of (txn %d, seq %d) at version %d", typ, txn, seq, version)
		}
	}
	if err := feed.Err(); err != nil {
		t.Fatalf("read table_changes('t', 1): %v", err)
	}
	for key, r := range byKey {
		wantVersion, wantV := r.commitVersion, r.v
		if r.txn < 0 {
			wantVersion, wantV = 1, 0
		}
		switch {
		case r.insertsInFeed != 1:
			fail("row (txn %d, seq %d) is inserted %d times in the change feed, want once", key[0], key[1], r.insertsInFeed)
		case r.changeVersion != wantVersion || r.insertedWithV != wantV:
			fail("row (txn %d, seq %d) is inserted at version %d with v=%d in the change feed, want version %d v=%d",
				key[0], key[1], r.changeVersion, r.insertedWithV, wantVersion, wantV)
		}
	}
	for c := range crashClients {
		var ccs []*counterChange
		for _, cc := range counterChanges[c] {
			ccs = append(ccs, cc)
		}
		sort.Slice(ccs, func(i, j int) bool { return ccs[i].version < ccs[j].version })
		if int64(len(ccs)) != explicitOf[c] {
			fail("change feed updates client %d's counter %d times, want %d", c, len(ccs), explicitOf[c])
		}
		for i, cc := range ccs {
			x := versionTxn[cc.version]
			if cc.pre != int64(i) || cc.post != int64(i+1) {
				fail("client %d's counter update %d at version %d goes %d → %d, want %d → %d", c, i, cc.version, cc.pre, cc.post, i, i+1)
			}
			if x == nil || x.kind != kindExplicit || x.client != c {
				fail("client %d's counter changes at version %d, which is not one of its explicit transactions", c, cc.version)
			}
		}
	}
	for v := int64(1); v <= top; v++ {
		if !feedVersions[v] {
			fail("version %d has no change in table_changes('t', 1)", v)
		}
	}
	for v := range feedVersions {
		if v < 1 || v > top {
			fail("table_changes('t', 1) has changes at version %d, outside 1..%d", v, top)
		}
	}
	t.Logf("after round %d: %d rows, %d versions; %v", round, len(byKey), top+1, stats)
}

type histEntry struct {
	version int64
	ts      time.Time
	op      string
	params  string
	metrics map[string]string
}

// readHistory returns DESCRIBE HISTORY table as the server lists it.
func readHistory(t testing.TB, conn *pgx.Conn, table string) []histEntry {
	t.Helper()
	rows, err := conn.Query(context.Background(), "DESCRIBE HISTORY "+table)
	if err != nil {
		t.Fatalf("DESCRIBE HISTORY %s: %v", table, err)
	}
	defer rows.Close()
	var hist []histEntry
	for rows.Next() {
		var h histEntry
		var metrics string
		if err := rows.Scan(&h.version, &h.ts, &h.op, &h.params, &metrics); err != nil {
			t.Fatalf("DESCRIBE HISTORY %s: %v", table, err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(metrics), &m); err != nil {
			t.Fatalf("DESCRIBE HISTORY %s: version %d operationMetrics %q: %v", table, h.version, metrics, err)
		}
		h.metrics = map[string]string{}
		for k, v := range m {
			h.metrics[k] = fmt.Sprint(v)
		}
		hist = append(hist, h)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("DESCRIBE HISTORY %s: %v", table, err)
	}
	return hist
}
