package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// PasswordLogin is the console's Authenticator when SQL clients
// authenticate (R-P2, invariant 4): a browser logs in with a role's name
// and password, checked by Check against the role's stored verifier, and
// its session acts as that role — its SQL runs with that role's
// privileges. Requests without a logged-in session are sent to /login.
type PasswordLogin struct {
	// Check reports whether password is user's (a role that may log in).
	Check func(user, password string) bool

	mu       sync.Mutex
	failures map[string][]time.Time // by remote host: recent failed logins
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

// loginFailures bounds password guessing: at most this many failed logins
// per client host in loginWindow.
const (
	loginFailures = 10
	loginWindow   = 5 * time.Minute
)

// allow reports whether host may try another password now.
func (a *PasswordLogin) allow(host string, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	var recent []time.Time
	for _, t := range a.failures[host] {
		if now.Sub(t) < loginWindow {
			recent = append(recent, t)
		}
	}
	if a.failures == nil {
		a.failures = map[string][]time.Time{}
	}
	a.failures[host] = recent
	return len(recent) < loginFailures
}

func (a *PasswordLogin) failed(host string, now time.Time) {
	a.mu.Lock()
	a.failures[host] = append(a.failures[host], now)
	a.mu.Unlock()
}

// loginPage is the data of the login form.
type loginPage struct {
	layout
	Next    string
	Message string
	Name    string
}

// safeNext keeps a post-login redirect on the console itself.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

// login serves GET and POST /login (only when the console uses
// PasswordLogin) and POST /logout.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	pl, ok := c.auth.(*PasswordLogin)
	if !ok {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s := c.sess.get(w, r)
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
	if !c.sess.checkToken(c.sess.peek(r), r.PostForm.Get(csrfField)) {
		page.Message = "The form's security token is missing or expired. Try again."
		c.render(w, http.StatusForbidden, "login", page)
		return
	}
	user, password := r.PostForm.Get("user"), r.PostForm.Get("password")
	page.Name = user
	host, now := hostOnly(r.RemoteAddr), c.now()
	if !pl.allow(host, now) {
		page.Message = fmt.Sprintf("Too many failed logins from %s; wait a few minutes.", host)
		c.render(w, http.StatusTooManyRequests, "login", page)
		return
	}
	if user == "" || !pl.Check(user, password) {
		pl.failed(host, now)
		c.log.Info("console login failed", "user", user, "remote", host)
		page.Message = "Wrong user name or password."
		c.render(w, http.StatusUnauthorized, "login", page)
		return
	}
	// A new session for the logged-in user: the cookie a visitor had
	// before logging in is not carried over (session fixation).
	c.sess.drop(s)
	c.sess.create(w, now).SetUser(user)
	c.log.Info("console login", "user", user, "remote", host)
	http.Redirect(w, r, page.Next, http.StatusSeeOther)
}

// logout ends the request's console session.
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	s := c.sess.peek(r)
	if err := r.ParseForm(); err != nil || !c.sess.checkToken(s, r.PostForm.Get(csrfField)) {
		refuse(w, http.StatusForbidden, "The form's security token is missing or expired; nothing was done.")
		return
	}
	c.sess.drop(s)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}
