package web_test

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/app"
	"github.com/mvserver/mvserver/catalog"
)

// env is a real in-process server with its console on a loopback port,
// a SQL client and a browser-like HTTP client (cookies, no redirects
// followed, so tests see each 303).
type env struct {
	t      *testing.T
	srv    *app.Server
	base   string
	sql    *pgx.Conn
	client *http.Client
}

func start(t *testing.T, cfg app.Config) *env {
	t.Helper()
	cfg.Logger, cfg.InMemory, cfg.Listen, cfg.Database, cfg.MaxConnections, cfg.TableDefaults = slog.New(slog.DiscardHandler), true, "127.0.0.1:0", "mvserver", 20, catalog.AllOn
	cfg.HTTP = "127.0.0.1:0"
	if cfg.ConsoleActionWait == 0 {
		cfg.ConsoleActionWait = 30 * time.Second
	}
	srv, err := app.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Shutdown(5 * time.Second) })
	who := "t"
	if cfg.SuperuserPassword != "" {
		who = url.UserPassword(cfg.Superuser, cfg.SuperuserPassword).String()
	}
	c, err := pgx.Connect(context.Background(), "postgres://"+who+"@"+srv.Addr().String()+"/mvserver?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &env{t: t, srv: srv, base: "http://" + srv.HTTPAddr().String(), sql: c, client: client}
}

func (e *env) exec(q string) {
	e.t.Helper()
	if _, err := e.sql.Exec(context.Background(), q); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
}

func (e *env) queryString(q string) string {
	e.t.Helper()
	var s string
	if err := e.sql.QueryRow(context.Background(), q).Scan(&s); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return s
}

func (e *env) queryInt(q string) int64 {
	e.t.Helper()
	var n int64
	if err := e.sql.QueryRow(context.Background(), q).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return n
}

// get fetches a path and returns its status and body.
func (e *env) get(path string) (int, string) {
	e.t.Helper()
	resp, err := e.client.Get(e.base + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// page fetches a page that must answer 200.
func (e *env) page(path string) string {
	e.t.Helper()
	code, body := e.get(path)
	if code != http.StatusOK {
		e.t.Fatalf("GET %s: %d\n%s", path, code, body)
	}
	return body
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// token is the CSRF token a page carries.
func (e *env) token(path string) string {
	e.t.Helper()
	m := csrfRE.FindStringSubmatch(e.page(path))
	if m == nil {
		e.t.Fatalf("no CSRF token on %s", path)
	}
	return html.UnescapeString(m[1])
}

// post submits a form and returns the response (body read and closed).
func (e *env) post(path string, form url.Values) (*http.Response, string) {
	e.t.Helper()
	resp, err := e.client.PostForm(e.base+path, form)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// act presses a dataset's button as a browser would: with the page's
// token; it returns where the 303 leads.
func (e *env) act(dataset, action string) string {
	e.t.Helper()
	resp, body := e.post(dataset+"/"+action, url.Values{"csrf_token": {e.token(dataset)}, "return": {"dataset"}})
	if resp.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("POST %s/%s: %d\n%s", dataset, action, resp.StatusCode, body)
	}
	return resp.Header.Get("Location")
}

// waitPage polls a page until cond holds on its body, within a deadline.
func (e *env) waitPage(path string, what string, cond func(string) bool) string {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var body string
	for time.Now().Before(deadline) {
		body = e.page(path)
		if cond(body) {
			return body
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("%s: %s did not happen within the deadline; last page:\n%s", path, what, body)
	return ""
}

var barRE = regexp.MustCompile(`<rect class="bar [a-z]+"[^>]*data-run="([0-9a-f]+)" data-status="([A-Z_]+)"`)

// bars are the (run id, status) of the history chart's bars.
func bars(body string) [][2]string {
	var out [][2]string
	for _, m := range barRE.FindAllStringSubmatch(body, -1) {
		out = append(out, [2]string{m[1], m[2]})
	}
	return out
}

// section is the part of a page from the element with the given id to the
// end of its section.
func section(body, id string) string {
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		return ""
	}
	j := strings.Index(body[i:], "</section>")
	if j < 0 {
		return body[i:]
	}
	return body[i : i+j]
}
