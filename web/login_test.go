package web_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/mvserver/mvserver/app"
)

// With authentication configured the console asks for a role's name and
// password, acts as that role, and gives it exactly its privileges: no
// REFRESH privilege, a disabled button and a 403 for a forged POST.
func TestPasswordLogin(t *testing.T) {
	e := start(t, app.Config{Superuser: "admin", SuperuserPassword: "s3cret"})
	e.exec("CREATE ROLE alice LOGIN PASSWORD 'wonder'")
	e.exec("CREATE TABLE src (k INT PRIMARY KEY, v INT)")
	e.exec("CREATE MATERIALIZED VIEW mv AS SELECT count(*) AS n FROM src")
	e.exec("GRANT SELECT ON mv TO alice")

	// Not logged in: pages lead to the login form; a POST is refused.
	code, _ := e.get("/")
	if code != http.StatusSeeOther {
		t.Fatalf("GET / before login: %d, want 303 to /login", code)
	}
	resp, _ := e.post("/datasets/public/mv/refresh", url.Values{"csrf_token": {"x"}})
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("POST before login: %d, want 401", resp.StatusCode)
	}
	login := func(user, pw string) *http.Response {
		tok := e.token("/login?next=%2Fdatasets%2Fpublic%2Fmv")
		resp, _ := e.post("/login", url.Values{"csrf_token": {tok}, "user": {user}, "password": {pw}, "next": {"/datasets/public/mv"}})
		return resp
	}
	if r := login("alice", "wrong"); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("wrong password: %d, want 401", r.StatusCode)
	}
	if r := login("nobody", "wonder"); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unknown role: %d, want 401", r.StatusCode)
	}
	if r := login("alice", "wonder"); r.StatusCode != http.StatusSeeOther || r.Header.Get("Location") != "/datasets/public/mv" {
		t.Fatalf("login: %d to %q, want 303 to the page asked for", r.StatusCode, r.Header.Get("Location"))
	}
	page := e.page("/datasets/public/mv")
	if !strings.Contains(page, "alice · database") || !strings.Contains(page, `action="/logout"`) {
		t.Fatalf("the page does not show alice logged in")
	}
	if !strings.Contains(page, `disabled title="alice lacks the MAINTAIN (REFRESH) privilege`) {
		t.Fatalf("Refresh is not disabled for alice")
	}
	resp, body := e.post("/datasets/public/mv/refresh", url.Values{"csrf_token": {e.token("/datasets/public/mv")}, "return": {"dataset"}})
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(body, "Nothing was done") {
		t.Fatalf("refresh without the privilege: %d, want 403\n%s", resp.StatusCode, body)
	}
	runs := e.queryInt("SELECT count(*) FROM refresh_history() WHERE view_name = 'mv'")

	e.exec("GRANT REFRESH ON mv TO alice")
	page = e.page("/datasets/public/mv")
	if strings.Contains(page, "lacks the MAINTAIN") {
		t.Fatalf("Refresh still disabled after GRANT REFRESH")
	}
	e.act("/datasets/public/mv", "refresh")
	e.waitPage("/datasets/public/mv", "the refresh alice ran", func(string) bool {
		return e.queryInt("SELECT count(*) FROM refresh_history() WHERE view_name = 'mv'") > runs
	})

	// Logging out ends the session: back to the login form.
	resp, _ = e.post("/logout", url.Values{"csrf_token": {e.token("/datasets/public/mv")}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login" {
		t.Fatalf("logout: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if code, _ := e.get("/"); code != http.StatusSeeOther {
		t.Fatalf("GET / after logout: %d, want 303", code)
	}
}
