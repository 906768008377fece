//go:build clients

package clienttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

const (
	startTimeout = 60 * time.Second // a cold start on a busy 2-core CI machine
	stopTimeout  = 30 * time.Second
)

// target is one server a client session runs against.
type target struct {
	name string // "postgres" or "mvserver"
	conn connSettings
	log  *syncBuffer // mvserver's output (nil for PostgreSQL)
}

// sessionOpts are a test's choices about its sessions.
type sessionOpts struct {
	// tls asks for TLS (sslmode=require) when the mvserver binary offers
	// it. Otherwise the session has libpq's default, sslmode=prefer, which
	// encrypts when the server offers TLS.
	tls bool
}

// startTargets starts a fresh PostgreSQL oracle and a fresh mvserver, loads
// testdata/clients/schema.sql into both and returns them in that order.
// Both are stopped when the test ends.
func startTargets(t *testing.T, opts sessionOpts) []target {
	t.Helper()
	bin, feat := mvserverBinary(t)
	tmpl := oracleTemplate(t)
	dir, err := os.MkdirTemp(workRoot, strings.ReplaceAll(t.Name(), "/", "_")+"-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := connSettings{Host: "127.0.0.1", Database: clientDatabase, User: clientUser, SSLMode: "prefer"}
	if feat.password {
		base.Password = clientPassword
	}
	if opts.tls && feat.tls {
		base.SSLMode = "require"
	}

	pgConn := base
	startPostgres(t, tmpl, filepath.Join(dir, "pgdata"), &pgConn)
	mvConn := base
	mvLog := startMvserver(t, bin, feat, filepath.Join(dir, "mvdata"), &mvConn)
	t.Logf("postgres: %s; mvserver: %s", pgConn, mvConn)

	targets := []target{{"postgres", pgConn, nil}, {"mvserver", mvConn, mvLog}}
	if feat.password {
		// Authentication is really on: a wrong password is refused alike.
		for _, tg := range targets {
			bad := tg.conn
			bad.Password = "wrong-" + bad.Password
			err := execAll(bad, nil)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "28P01" {
				t.Fatalf("%s accepted or refused a wrong password oddly (want SQLSTATE 28P01): %v", tg.name, err)
			}
		}
	}
	stmts, err := readStatements(testdata("schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range targets {
		if err := execAll(tg.conn, stmts); err != nil {
			t.Fatalf("loading testdata/clients/schema.sql into %s: %v", tg.name, err)
		}
	}
	return targets
}

// readStatements splits a SQL file into statements: "--" comment lines are
// dropped and a statement ends with ";" at the end of a line.
func readStatements(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var stmts []string
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		if strings.HasSuffix(strings.TrimSpace(line), ";") {
			stmts = append(stmts, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		stmts = append(stmts, s)
	}
	return stmts, nil
}

// execAll runs statements one by one in one session (simple protocol).
func execAll(c connSettings, stmts []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := pgx.ParseConfig(c.url())
	if err != nil {
		return err
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s\n  -> %w", s, err)
		}
	}
	return nil
}

// waitConnectable polls until a session opens on c, the process exits or
// the deadline passes.
func waitConnectable(c connSettings, exited <-chan struct{}, deadline time.Time) error {
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		conn, err := pgx.Connect(ctx, c.url())
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		last = err
		select {
		case <-exited:
			return fmt.Errorf("the server exited while starting: %v", last)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("no session within %v: %v", startTimeout, last)
}

// ---------------------------------------------------------------------------
// mvserver

var listeningRE = regexp.MustCompile(`msg="mvserver listening" addr=127\.0\.0\.1:(\d+)`)

// startMvserver starts the binary on a fresh data directory and a port the
// kernel picks, and fills c.Port. With password support the bootstrap
// superuser is the client user with the client password (SCRAM-SHA-256
// from loopback); with TLS support it gets the suite's certificate.
// It returns the server's output (its log) as it grows.
func startMvserver(t *testing.T, bin string, feat features, dataDir string, c *connSettings) *syncBuffer {
	t.Helper()
	args := []string{"--listen", "127.0.0.1:0", "--data-dir", dataDir, "--http", "", "--database", c.Database}
	if mvStore != "" {
		args = append(args, "--store", mvStore)
	}
	env := cleanServerEnv()
	if feat.password {
		args = append(args, "--superuser", c.User)
		// The variable, not the flag: flags show in ps.
		env = append(env, "MVSERVER_SUPERUSER_PASSWORD="+c.Password)
	}
	if feat.tls {
		crt, key := tlsFiles(t)
		args = append(args, "--tls-cert", crt, "--tls-key", key)
	}
	log := &syncBuffer{}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = log, log
	// Should the test binary die (a go test timeout), mvserver stops too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	exited := make(chan struct{})
	if err := cmd.Start(); err != nil {
		t.Fatalf("start mvserver: %v", err)
	}
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		// SIGTERM is mvserver's graceful shutdown; kill only if it hangs.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(stopTimeout):
			t.Errorf("mvserver did not stop within %v of SIGTERM; killing pid %d", stopTimeout, cmd.Process.Pid)
			_ = cmd.Process.Kill()
			<-exited
		}
		// Its log matters when a test failed and the server said more than
		// that it started and stopped.
		if l := log.String(); t.Failed() && (strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") || strings.Contains(l, "panic")) {
			t.Logf("mvserver log (last lines):\n%s", tail(l, 40))
		}
	})
	deadline := time.Now().Add(startTimeout)
	for {
		if m := listeningRE.FindStringSubmatch(log.String()); m != nil {
			fmt.Sscan(m[1], &c.Port)
			break
		}
		select {
		case <-exited:
			t.Fatalf("mvserver exited before listening:\n%s", log.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("mvserver did not log that it listens within %v:\n%s", startTimeout, log.String())
		}
	}
	if err := waitConnectable(*c, exited, deadline); err != nil {
		t.Fatalf("mvserver: %v\n%s", err, log.String())
	}
	return log
}

// cleanServerEnv is the environment without a developer's MVSERVER_* and
// PG* settings.
func cleanServerEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MVSERVER_") || strings.HasPrefix(kv, "PG") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// ---------------------------------------------------------------------------
// Logs

// syncBuffer is a bytes.Buffer safe for a process's writes and the test's
// reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
