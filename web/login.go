package web

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// PasswordLogin is the console's Authenticator when SQL clients
// authenticate (R-P2, invariant 4): a browser logs in with a role's name
// and password, checked by Check against the role's stored verifier, and
// its session acts as that role — its SQL runs with that role's
// privileges. Requests without a logged-in session are sent to /login.
type PasswordLogin struct {
	// Check reports whether password is user's (a role that may log in).
	Check func(user, password string) bool

	once     sync.Once
	throttle *loginThrottle
}

// Authenticate implements Authenticator.
func (a *PasswordLogin) Authenticate(r *http.Request, s *Session) (Principal, error) {
	if s != nil {
		if u := s.User(); u != "" {
			return Principal{User: u}, nil
		}
	}
	return Principal{}, &AuthError{Status: http.StatusUnauthorized, Message: "Log in to use the console.",
		LoginURL: "/login?next=" + url.QueryEscape(r.URL.RequestURI())}
}

func (a *PasswordLogin) limits() *loginThrottle {
	a.once.Do(func() { a.throttle = newLoginThrottle() })
	return a.throttle
}

// loginPage is the data of the login form.
type loginPage struct {
	layout
	Next    string
	Message string
	Name    string
}

// safeNext keeps a post-login redirect on the console itself: a path of
// this origin ("/…", not "//host" or "/\\host", which browsers read as
// another host), with no control characters or white space (a browser
// drops a tab or newline, so "/\t/evil.example" would become
// "//evil.example"), also in the percent-decoded path, and no scheme or
// host as net/url reads it. Anything else leads to the overview.
func safeNext(next string) string {
	if !sameOriginPath(next) {
		return "/"
	}
	return next
}

func sameOriginPath(next string) bool {
	if len(next) == 0 || next[0] != '/' || len(next) > 1 && (next[1] == '/' || next[1] == '\\') || strings.ContainsRune(next, '\\') || hasControlOrSpace(next) {
		return false
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return false
	}
	// The path once decoded: "/%2F/host" or "/%09/host" must not become
	// another host's address in whatever reads it next. (The query may
	// hold an encoded space: a filter such as ?q=a%20b.)
	p := u.Path
	return strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "//") && !strings.ContainsRune(p, '\\') && !hasControlOrSpace(p)
}

// hasControlOrSpace reports a control character, white space or invalid
// UTF-8 in s.
func hasControlOrSpace(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) || r == utf8.RuneError }) >= 0
}

// login serves GET and POST /login (only when the console uses
// PasswordLogin) and POST /logout.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	pl, ok := c.auth.(*PasswordLogin)
	if !ok {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	// An anonymous session: a cookie for the form's CSRF token, kept
	// nowhere on the server (invariant 6).
	s := c.sess.ensure(w, r)
	page := &loginPage{layout: layout{Title: "Log in", Database: c.be.Database, CSRF: c.sess.token(s), Nav: "login"},
		Next: safeNext(r.URL.Query().Get("next"))}
	if r.Method == http.MethodGet {
		c.render(w, http.StatusOK, "login", page)
		return
	}
	if err := r.ParseForm(); err != nil {
		refuse(w, http.StatusBadRequest, "bad form: "+err.Error())
		return
	}
	page.Next = safeNext(r.PostForm.Get("next"))
	if !c.sess.checkToken(c.sess.lookup(r), r.PostForm.Get(csrfField)) {
		page.Message = "The form's security token is missing or expired. Try again."
		c.render(w, http.StatusForbidden, "login", page)
		return
	}
	user, password := r.PostForm.Get("user"), r.PostForm.Get("password")
	page.Name = user
	host, now, limits := hostOnly(r.RemoteAddr), c.now(), pl.limits()
	if no := limits.allow(user, host, now); no != nil {
		c.log.Info("console login refused", "user", user, "remote", host, "reason", no.msg)
		page.Message = no.msg
		c.render(w, http.StatusTooManyRequests, "login", page)
		return
	}
	if user == "" || !pl.Check(user, password) {
		limits.failed(user, host, now)
		c.log.Info("console login failed", "user", user, "remote", host)
		page.Message = "Wrong user name or password."
		c.render(w, http.StatusUnauthorized, "login", page)
		return
	}
	limits.succeeded(user)
	c.sess.drop(s)
	c.sess.login(w, user)
	c.log.Info("console login", "user", user, "remote", host)
	http.Redirect(w, r, page.Next, http.StatusSeeOther)
}

// logout ends the request's console session.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	s := c.sess.lookup(r)
	if err := r.ParseForm(); err != nil || !c.sess.checkToken(s, r.PostForm.Get(csrfField)) {
		refuse(w, http.StatusForbidden, "The form's security token is missing or expired; nothing was done.")
		return
	}
	c.sess.drop(s)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
