package web

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Principal is who a console request acts as: the user its SQL runs as.
type Principal struct {
	User string
}

// Authenticator decides who a request is (invariant 4). It sees the
// request and its console session (nil when the request carries no session
// cookie); a logged-in session has the user its login checked
// (Session.User), and an Authenticator that wants a login returns an
// *AuthError with LoginURL set to send the browser there.
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
