package main

import (
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

var consoleRE = regexp.MustCompile(`msg="mvserver console listening" url=(\S+)`)

// consoleURL is the console's URL from the server's log.
func consoleURL(t *testing.T, p *proc) string {
	t.Helper()
	m := consoleRE.FindStringSubmatch(p.log.String())
	if m == nil {
		t.Fatalf("no console line in the log:\n%s", p.log.String())
	}
	return m[1]
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestHTTP: --http and MVSERVER_HTTP choose the console's address (the
// flag overriding the variable); /healthz and /metrics answer there.
func TestHTTP(t *testing.T) {
	t.Parallel()
	p := startServer(t, filepath.Join(t.TempDir(), "d"), []string{"--http", "127.0.0.1:0"}, "MVSERVER_HTTP=127.0.0.1:1")
	base := consoleURL(t, p)
	if code, body := get(t, base+"healthz"); code != 200 || strings.TrimSpace(body) != "ok" {
		t.Fatalf("/healthz: %d %q", code, body)
	}
	conn := p.connect(t)
	mustExec(t, conn, "SELECT 1")
	if code, body := get(t, base+"metrics"); code != 200 || !strings.Contains(body, "mvserver_queries_total") {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	p.signal(syscall.SIGTERM)
	if code := p.waitExit(exitTimeout); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	t.Run("env", func(t *testing.T) {
		p := startServer(t, filepath.Join(t.TempDir(), "d"), nil, "MVSERVER_HTTP=127.0.0.1:0")
		if code, _ := get(t, consoleURL(t, p)+"readyz"); code != 200 {
			t.Fatalf("/readyz: %d", code)
		}
	})
	t.Run("empty disables", func(t *testing.T) {
		p := startServer(t, filepath.Join(t.TempDir(), "d"), []string{"--http", ""})
		if consoleRE.MatchString(p.log.String()) {
			t.Fatalf("--http '' still serves HTTP:\n%s", p.log.String())
		}
	})
	t.Run("taken address fails", func(t *testing.T) {
		other := startServer(t, filepath.Join(t.TempDir(), "d"), []string{"--http", "127.0.0.1:0"})
		taken := strings.TrimSuffix(strings.TrimPrefix(consoleURL(t, other), "http://"), "/")
		q := spawn(t, []string{"--data-dir", filepath.Join(t.TempDir(), "d"), "--listen", "127.0.0.1:0", "--http", taken})
		if code := q.waitExit(exitTimeout); code != 1 {
			t.Fatalf("--http on a taken address: exit code %d, want 1\n%s", code, q.log.String())
		}
		if !strings.Contains(q.log.String(), "--http") {
			t.Fatalf("the error does not name --http:\n%s", q.log.String())
		}
	})
}
