package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Principal is who a console request acts as: the user its SQL runs as.
type Principal struct {
	User string
}

// Authenticator decides who a request is (invariant 4). It sees the
// request and its console session (nil for a POST that carries no known
// session cookie, which the CSRF check then refuses); a login page plugs
// in by storing the
// user it checked in the session (Session.SetUser) and returning it here,
// or returning an *AuthError with LoginURL set to send the browser there.
type Authenticator interface {
	Authenticate(r *http.Request, s *Session) (Principal, error)
}

// AuthError refuses a request.
type AuthError struct {
	Status  int // http.StatusForbidden or http.StatusUnauthorized
	Message string
	// LoginURL, when set, is where a browser is sent to log in.
	LoginURL string
}

func (e *AuthError) Error() string { return e.Message }

// DefaultUser is the user the console acts as while no login exists.
const DefaultUser = "mvserver"

// LoopbackOnly admits loopback clients as User and refuses every other
// address with 403, as the SQL port refuses non-loopback clients with
// SQLSTATE 28000 until password authentication exists (R-P2).
type LoopbackOnly struct {
	User string
}

// Authenticate implements Authenticator.
func (a LoopbackOnly) Authenticate(r *http.Request, _ *Session) (Principal, error) {
	if !loopbackRemote(r.RemoteAddr) {
		return Principal{}, &AuthError{Status: http.StatusForbidden, Message: fmt.Sprintf(
			"The mvserver console answers only clients on this machine (loopback addresses); %s is not one. "+
				"Without authentication configured (--hba or --superuser-password) it trusts only this machine: reach it through an SSH tunnel to 127.0.0.1.", hostOnly(r.RemoteAddr))}
	}
	user := a.User
	if user == "" {
		user = DefaultUser
	}
	return Principal{User: user}, nil
}

func hostOnly(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// loopbackRemote reports whether a request's RemoteAddr is a loopback IP.
func loopbackRemote(addr string) bool {
	ip := net.ParseIP(hostOnly(addr))
	return ip != nil && ip.IsLoopback()
}

// loopbackHost reports whether a Host header names this machine through
// loopback (localhost, 127.0.0.0/8, ::1). Another name reaching a loopback
// listener is a page of another site that re-pointed its name at this
// machine (DNS rebinding): it must not read the console.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Session is one browser's console session, named by its cookie.
type Session struct {
	ID       string
	mu       sync.Mutex
	user     string
	lastSeen time.Time
}

// User is the user a login stored in the session ("" before a login).
func (s *Session) User() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.user
}

// SetUser records the user a login page checked.
func (s *Session) SetUser(u string) {
	s.mu.Lock()
	s.user = u
	s.mu.Unlock()
}

const (
	sessionCookie = "mvserver_console"
	csrfField     = "csrf_token"
	sessionIdle   = 12 * time.Hour
	maxSessions   = 1000
)

// sessions holds the console sessions and signs their CSRF tokens with a
// secret made at process start (invariant 1): a restart voids every
// token, and a page from before it gets a clear 403.
type sessions struct {
	secret []byte
	now    func() time.Time

	mu   sync.Mutex
	byID map[string]*Session
}

func newSessions(now func() time.Time) (*sessions, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	return &sessions{secret: secret, now: now, byID: map[string]*Session{}}, nil
}

// get returns the request's session, creating one (and setting its cookie
// on w) when the request has none or an unknown one.
func (st *sessions) get(w http.ResponseWriter, r *http.Request) *Session {
	now := st.now()
	if c, err := r.Cookie(sessionCookie); err == nil {
		st.mu.Lock()
		s := st.byID[c.Value]
		st.mu.Unlock()
		if s != nil {
			s.mu.Lock()
			fresh := now.Sub(s.lastSeen) < sessionIdle
			if fresh {
				s.lastSeen = now
			}
			s.mu.Unlock()
			if fresh {
				return s
			}
		}
	}
	return st.create(w, now)
}

// create starts a new session and sets its cookie on w.
func (st *sessions) create(w http.ResponseWriter, now time.Time) *Session {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	s := &Session{ID: base64.RawURLEncoding.EncodeToString(b), lastSeen: now}
	st.mu.Lock()
	st.expireLocked(now)
	st.byID[s.ID] = s
	st.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: s.ID, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	return s
}

// peek returns the request's known session without creating one.
func (st *sessions) peek(r *http.Request) *Session {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.byID[c.Value]
}

// expireLocked drops idle sessions, and the oldest when there are too many.
func (st *sessions) expireLocked(now time.Time) {
	var oldest *Session
	var oldestSeen time.Time
	for id, s := range st.byID {
		s.mu.Lock()
		seen := s.lastSeen
		s.mu.Unlock()
		if now.Sub(seen) >= sessionIdle {
			delete(st.byID, id)
			continue
		}
		if oldest == nil || seen.Before(oldestSeen) {
			oldest, oldestSeen = s, seen
		}
	}
	if len(st.byID) >= maxSessions && oldest != nil {
		delete(st.byID, oldest.ID)
	}
}

// token is the CSRF token of a session.
func (st *sessions) token(s *Session) string {
	mac := hmac.New(sha256.New, st.secret)
	mac.Write([]byte("csrf\x00"))
	mac.Write([]byte(s.ID))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// checkToken reports whether tok is the CSRF token of s.
func (st *sessions) checkToken(s *Session, tok string) bool {
	if s == nil || tok == "" {
		return false
	}
	return hmac.Equal([]byte(tok), []byte(st.token(s)))
}

// drop forgets a session (logout, or a login replacing it).
func (st *sessions) drop(s *Session) {
	if s == nil {
		return
	}
	st.mu.Lock()
	delete(st.byID, s.ID)
	st.mu.Unlock()
}
