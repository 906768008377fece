package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"sync"
	"time"
)

// Session is one browser's console session, named by its cookie.
//
// A browser gets a cookie on its first page, and the CSRF token of its
// forms is an HMAC of that cookie (invariant 1), which needs nothing kept
// on the server. The server keeps an entry only for a session a login
// stored a user in (invariant 6): anonymous visits, however many, create
// none, so they cannot push a logged-in session out of the bounded store.
type Session struct {
	ID string

	mu       sync.Mutex
	user     string // "" for an anonymous session
	lastSeen time.Time
}

// User is the user a login stored in the session ("" before a login).
func (s *Session) User() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.user
}

const (
	sessionCookie = "mvserver_console"
	csrfField     = "csrf_token"
	sessionIdle   = 12 * time.Hour
	// maxSessions bounds the logged-in sessions kept. When it is reached,
	// the oldest session of the user holding the most goes: a user who
	// logs in over and over pushes out its own sessions before anyone
	// else's.
	maxSessions = 1000
	// sessionIDLen is the length of a cookie value: 32 random bytes in
	// unpadded base64url.
	sessionIDLen = 43
)

// sessions holds the logged-in console sessions and signs every session's
// CSRF token with a secret made at process start (invariant 1): a restart
// voids every token, and a page from before it gets a clear 403.
type sessions struct {
	secret []byte
	now    func() time.Time
	max    int

	mu   sync.Mutex
	byID map[string]*Session // logged-in sessions only
}

func newSessions(now func() time.Time) (*sessions, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	return &sessions{secret: secret, now: now, max: maxSessions, byID: map[string]*Session{}}, nil
}

// lookup returns the request's session: its logged-in entry when the
// cookie names a fresh one, else an anonymous session named by the cookie
// and kept nowhere; nil when the request has no well-formed cookie.
func (st *sessions) lookup(r *http.Request) *Session {
	c, err := r.Cookie(sessionCookie)
	if err != nil || !wellFormedID(c.Value) {
		return nil
	}
	now := st.now()
	st.mu.Lock()
	s := st.byID[c.Value]
	if s != nil {
		s.mu.Lock()
		fresh := now.Sub(s.lastSeen) < sessionIdle
		if fresh {
			s.lastSeen = now
		}
		s.mu.Unlock()
		if !fresh {
			delete(st.byID, s.ID)
			s = nil
		}
	}
	st.mu.Unlock()
	if s != nil {
		return s
	}
	return &Session{ID: c.Value, lastSeen: now}
}

// ensure is lookup, setting a new cookie on w (an anonymous session, kept
// nowhere) when the request has none.
func (st *sessions) ensure(w http.ResponseWriter, r *http.Request) *Session {
	if s := st.lookup(r); s != nil {
		return s
	}
	s := &Session{ID: newSessionID(), lastSeen: st.now()}
	setSessionCookie(w, s.ID)
	return s
}

// login starts a new logged-in session for user and sets its cookie on w:
// the cookie a visitor had before is not carried over (session fixation).
func (st *sessions) login(w http.ResponseWriter, user string) *Session {
	now := st.now()
	s := &Session{ID: newSessionID(), user: user, lastSeen: now}
	st.mu.Lock()
	st.makeRoomLocked(now)
	st.byID[s.ID] = s
	st.mu.Unlock()
	setSessionCookie(w, s.ID)
	return s
}

// makeRoomLocked drops idle sessions and, when the store is still full,
// the oldest session of the user that holds the most.
func (st *sessions) makeRoomLocked(now time.Time) {
	if len(st.byID) < st.max {
		return
	}
	count := map[string]int{}
	for id, s := range st.byID {
		s.mu.Lock()
		seen, user := s.lastSeen, s.user
		s.mu.Unlock()
		if now.Sub(seen) >= sessionIdle {
			delete(st.byID, id)
			continue
		}
		count[user]++
	}
	if len(st.byID) < st.max {
		return
	}
	var top string
	for u, n := range count {
		if n > count[top] || n == count[top] && u < top {
			top = u
		}
	}
	var oldest *Session
	var oldestSeen time.Time
	for _, s := range st.byID {
		s.mu.Lock()
		seen, user := s.lastSeen, s.user
		s.mu.Unlock()
		if user == top && (oldest == nil || seen.Before(oldestSeen)) {
			oldest, oldestSeen = s, seen
		}
	}
	if oldest != nil {
		delete(st.byID, oldest.ID)
	}
}

// stored is how many logged-in sessions are kept (tests).
func (st *sessions) stored() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.byID)
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

// drop forgets a logged-in session (logout, or a login replacing it).
func (st *sessions) drop(s *Session) {
	if s == nil {
		return
	}
	st.mu.Lock()
	if st.byID[s.ID] == s {
		delete(st.byID, s.ID)
	}
	st.mu.Unlock()
}

func newSessionID() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// wellFormedID reports whether v can be a cookie this console set.
func wellFormedID(v string) bool {
	if len(v) != sessionIDLen {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

func setSessionCookie(w http.ResponseWriter, id string) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
}
