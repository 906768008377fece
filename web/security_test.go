package web_test

import (
	"html"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mvserver/mvserver/app"
)

// browser is another browser on the same console: its own cookies.
func (e *env) browser() *env {
	jar, _ := cookiejar.New(nil)
	return &env{t: e.t, srv: e.srv, base: e.base, sql: e.sql,
		client: &http.Client{Jar: jar, Timeout: e.client.Timeout, CheckRedirect: e.client.CheckRedirect}}
}

// login posts the login form as a browser would (the form's token first)
// and returns the response.
func (e *env) login(user, password, next string) *http.Response {
	e.t.Helper()
	tok := e.token("/login")
	resp, _ := e.post("/login", url.Values{"csrf_token": {tok}, "user": {user}, "password": {password}, "next": {next}})
	return resp
}

var nextRE = regexp.MustCompile(`name="next" value="([^"]*)"`)

// A login leads back only to a path of the console itself: not to
// another host, however the address is disguised (the reproducer was
// next=/%09/evil.example: a browser drops the tab and goes to
// //evil.example).
func TestLoginRedirectStaysOnConsole(t *testing.T) {
	e := start(t, app.Config{Superuser: "admin", SuperuserPassword: "s3cret"})
	for _, next := range []string{
		"/\t/evil.example", "//evil.example", "/\\evil.example", "/\\/evil.example", "\\\\evil.example",
		"https://evil.example/", "http:evil.example", "javascript:alert(1)", "evil.example",
		"/\n/evil.example", "/\r/evil.example", "/ /evil.example", "/\x00/evil.example", "/\u00a0/evil.example",
		"/%2F/evil.example", "/%5Cevil.example", "/%09/evil.example", "/%0a/evil.example", "/.\\/evil.example", "/%zz",
	} {
		b := e.browser()
		if r := b.login("admin", "s3cret", next); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/" {
			t.Errorf("login with next=%q: %d to %q, want 303 to /", next, r.StatusCode, r.Header.Get("Location"))
		}
		// The form the GET shows carries the checked value.
		m := nextRE.FindStringSubmatch(b.page("/login?next=" + url.QueryEscape(next)))
		if m == nil || html.UnescapeString(m[1]) != "/" {
			t.Errorf("GET /login?next=%q: the form's next is %v, want /", next, m)
		}
	}
	// The reproducer as the browser sent it: the query string undecoded.
	m := nextRE.FindStringSubmatch(e.browser().page("/login?next=/%09/evil.example"))
	if m == nil || m[1] != "/" {
		t.Errorf("GET /login?next=/%%09/evil.example: the form's next is %v, want /", m)
	}
	for _, next := range []string{"/", "/datasets/public/mv", "/datasets/public/mv?type=user_action&level=INFO", "/?q=a%20b"} {
		if r := e.browser().login("admin", "s3cret", next); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != next {
			t.Errorf("login with next=%q: %d to %q, want 303 there", next, r.StatusCode, r.Header.Get("Location"))
		}
	}
}

// Anonymous visits leave nothing on the server: the reproducer's 1005
// GET /login (and as many GET / sent to the login form) no longer push
// the admin's session out of the store.
func TestAnonymousVisitsKeepSessions(t *testing.T) {
	e := start(t, app.Config{Superuser: "admin", SuperuserPassword: "s3cret"})
	if r := e.login("admin", "s3cret", "/"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("login: %d", r.StatusCode)
	}
	e.page("/")
	for i := 0; i < 1005; i++ {
		// A new browser each time: no cookie, as a script sends them.
		stranger := &env{t: t, base: e.base, client: &http.Client{CheckRedirect: e.client.CheckRedirect}}
		if code, _ := stranger.get("/login"); code != http.StatusOK {
			t.Fatalf("anonymous GET /login: %d", code)
		}
		if code, _ := stranger.get("/"); code != http.StatusSeeOther {
			t.Fatalf("anonymous GET /: %d", code)
		}
	}
	if code, body := e.get("/"); code != http.StatusOK || !strings.Contains(body, "admin · database") {
		t.Fatalf("the admin's session after 1005 anonymous visits: %d (want 200, still logged in)", code)
	}
	// Its forms still work: the CSRF token of the session is accepted.
	resp, _ := e.post("/logout", url.Values{"csrf_token": {e.token("/")}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Fatalf("logout after the anonymous visits: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// Failed logins lock the user name they tried, not the address: the
// reproducer's 10 wrong passwords from 127.0.0.1 lock that name out, and
// the admin logs in from the same address at once.
func TestLoginLockoutPerUserName(t *testing.T) {
	e := start(t, app.Config{Superuser: "admin", SuperuserPassword: "s3cret"})
	e.exec("CREATE ROLE alice LOGIN PASSWORD 'wonder'")
	attacker := e.browser()
	for i := 0; i < 10; i++ {
		if r := attacker.login("alice", "guess", "/"); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d, want 401", i+1, r.StatusCode)
		}
	}
	// alice is locked out, even with her password: guessing stopped.
	if r := attacker.login("alice", "wonder", "/"); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("alice after 10 failures: %d, want 429", r.StatusCode)
	}
	tok := e.token("/login")
	_, body := e.post("/login", url.Values{"csrf_token": {tok}, "user": {"alice"}, "password": {"wonder"}, "next": {"/"}})
	if !strings.Contains(body, "Too many failed logins for this user name") {
		t.Errorf("the refusal does not say why:\n%s", body)
	}
	// Everyone else logs in from the same address.
	if r := e.login("admin", "s3cret", "/"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("admin after alice's lockout: %d, want 303", r.StatusCode)
	}
	e.page("/")
	// A name that does not exist is locked the same way (the answer does
	// not tell names that exist from others).
	for i := 0; i < 10; i++ {
		attacker.login("nobody", "guess", "/")
	}
	if r := attacker.login("nobody", "guess", "/"); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("an unknown name after 10 failures: %d, want 429", r.StatusCode)
	}
}

// The console answers only loopback peers, with a login as without: the
// connection's address decides, not the Host header the client chose
// (the reproducer served the login form and the pages behind it to other
// machines when --http listened on 0.0.0.0).
func TestPasswordLoginLoopbackPeersOnly(t *testing.T) {
	e := start(t, app.Config{Superuser: "admin", SuperuserPassword: "s3cret"})
	h := e.srv.ConsoleHandler()
	for _, rq := range []struct{ method, path, body string }{
		{"GET", "/login", ""}, {"GET", "/", ""}, {"GET", "/datasets/public/x", ""}, {"GET", "/metrics", ""},
		{"POST", "/login", "user=admin&password=s3cret&csrf_token=x"},
	} {
		for _, host := range []string{"127.0.0.1:8433", "localhost", "[::1]:8433"} {
			r := httptest.NewRequest(rq.method, "http://"+host+rq.path, strings.NewReader(rq.body))
			r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			r.RemoteAddr = "192.0.2.10:50000" // a documentation address: no traffic is sent
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "192.0.2.10 is not one") {
				t.Errorf("%s %s (Host %s) from 192.0.2.10: %d %q", rq.method, rq.path, host, w.Code, w.Body.String())
			}
		}
	}
	// A loopback peer gets the form.
	if code, _ := e.get("/login"); code != http.StatusOK {
		t.Fatalf("GET /login from loopback: %d", code)
	}
}

// A role sees the pages and overview lines of the datasets it may read
// (owner, superuser, SELECT) and nothing of the others: not their page,
// not their refresh errors, not a link to them.
func TestDatasetPagesFollowPrivileges(t *testing.T) {
	e := start(t, app.Config{Superuser: "admin", SuperuserPassword: "s3cret"})
	for _, q := range []string{
		"CREATE ROLE alice LOGIN PASSWORD 'wonder'",
		"CREATE ROLE bob LOGIN CREATEDB PASSWORD 'builder'",
		"CREATE TABLE src (k INT PRIMARY KEY, v TEXT)",
		"INSERT INTO src VALUES (1, 'one')",
		"CREATE MATERIALIZED VIEW shared AS SELECT k, v FROM src",
		"CREATE MATERIALIZED VIEW secret AS SELECT k, v FROM shared",
		"CREATE MATERIALIZED VIEW fragile AS SELECT k, 10 / (k + 1) AS x FROM src",
		"CREATE STREAMING TABLE feed AS SELECT k FROM STREAM(src)",
		"GRANT SELECT ON shared TO alice",
		"GRANT SELECT ON src TO bob",
		"GRANT CREATE ON SCHEMA public TO bob", // PostgreSQL 15: PUBLIC has no CREATE on public
	} {
		e.exec(q)
	}
	// fragile's refresh fails: its page and line carry the error.
	e.exec("INSERT INTO src VALUES (-1, 'boom')")
	if _, err := e.sql.Exec(t.Context(), "REFRESH MATERIALIZED VIEW fragile"); err == nil {
		t.Fatal("refreshing fragile over k = -1 succeeded")
	}
	alice := e.browser()
	if r := alice.login("alice", "wonder", "/"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("alice's login: %d", r.StatusCode)
	}
	over := alice.page("/")
	if !strings.Contains(over, `data-name="public.shared"`) {
		t.Errorf("alice's overview lacks shared, which she may read")
	}
	for _, hidden := range []string{"secret", "fragile", "feed"} {
		if strings.Contains(over, `data-name="public.`+hidden+`"`) {
			t.Errorf("alice's overview lists %s", hidden)
		}
		code, body := alice.get("/datasets/public/" + hidden)
		if code != http.StatusNotFound || !strings.Contains(body, "There is no materialized view or streaming table public."+hidden) {
			t.Errorf("alice's GET of %s's page: %d, want 404 as for a dataset that does not exist", hidden, code)
		}
	}
	if code, _ := alice.get("/datasets/public/no_such_view"); code != http.StatusNotFound {
		t.Errorf("a dataset that does not exist: %d", code)
	}
	// shared's lineage shows that a view reads it, but neither its name
	// nor a link to it: alice may not read secret (before, it named it).
	// Its source src, which shared's definition names, keeps its name.
	lin := section(alice.page("/datasets/public/shared"), "lineage")
	if strings.Contains(lin, "secret") || !strings.Contains(lin, `data-node="(no privilege)"`) || !strings.Contains(lin, `data-node="public.src"`) {
		t.Errorf("shared's lineage for alice names secret or hides what it should show:\n%s", lin)
	}

	if over := alice.page("/?status=FAILED"); strings.Contains(over, "division by zero") || strings.Contains(over, "fragile") {
		t.Errorf("alice's overview shows fragile's failure:\n%s", over)
	}
	// The admin's console refresh of fragile fails; its outcome, shown
	// live at /?action=ID and on the page, is not alice's to read even
	// with the action's id (before, any role saw it in full).
	admin := e.browser()
	admin.login("admin", "s3cret", "/")
	resp, _ := admin.post("/datasets/public/fragile/refresh", url.Values{"csrf_token": {admin.token("/datasets/public/fragile")}, "return": {"overview"}})
	loc := resp.Header.Get("Location")
	if !strings.Contains(loc, "action=") {
		t.Fatalf("the admin's refresh of fragile: %d %q", resp.StatusCode, loc)
	}
	id := loc[strings.Index(loc, "action=")+len("action="):]
	if i := strings.IndexByte(id, '#'); i >= 0 {
		id = id[:i]
	}
	admin.waitPage("/?action="+id, "the admin's refresh ends", func(b string) bool { return strings.Contains(b, "division by zero") })
	if body := alice.page("/?action=" + id); strings.Contains(body, "division by zero") || strings.Contains(body, "fragile") {
		t.Errorf("alice sees the admin's action on fragile:\n%s", body)
	}

	// bob owns what he creates and sees it; granted SELECT on fragile, he
	// sees its page and its refresh error.
	bobSQL, err := pgx.Connect(t.Context(), "postgres://bob:builder@"+e.srv.Addr().String()+"/mvserver?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer bobSQL.Close(t.Context())
	if _, err := bobSQL.Exec(t.Context(), "CREATE MATERIALIZED VIEW bobs AS SELECT count(*) AS n FROM src"); err != nil {
		t.Fatal(err)
	}
	e.exec("GRANT SELECT ON fragile TO bob")
	bob := e.browser()
	if r := bob.login("bob", "builder", "/"); r.StatusCode != http.StatusSeeOther {
		t.Fatalf("bob's login: %d", r.StatusCode)
	}
	over = bob.page("/")
	if !strings.Contains(over, `data-name="public.bobs"`) || !strings.Contains(over, `data-name="public.fragile"`) || strings.Contains(over, `data-name="public.shared"`) {
		t.Errorf("bob's overview: want bobs and fragile only")
	}
	bob.page("/datasets/public/bobs")
	if body := bob.page("/datasets/public/fragile"); !strings.Contains(body, "division by zero") {
		t.Errorf("bob, granted SELECT on fragile, does not see its refresh error")
	}
	if code, _ := alice.get("/datasets/public/bobs"); code != http.StatusNotFound {
		t.Errorf("alice's GET of bob's view: %d, want 404", code)
	}
	// The admin sees every dataset.
	over = admin.page("/")
	for _, name := range []string{"shared", "secret", "fragile", "feed"} {
		if !strings.Contains(over, `data-name="public.`+name+`"`) {
			t.Errorf("the admin's overview lacks %s", name)
		}
	}
}
