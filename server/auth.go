package server

import (
	"context"
	"crypto/tls"
	"net"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// Authenticator decides whether the client described by info may log in
// (R-P2). It returns nil to admit it, or an error sent to the client as
// FATAL (28000 for a refused host, 28P01 for a wrong password). The server
// sends AuthenticationOk itself after a nil return.
//
// Password methods (cleartext, MD5, SCRAM-SHA-256) talk to the client
// through ex; NewAuthenticator picks one of them per connection from
// pg_hba.conf-style rules (hba.go). Both run under Config.StartupTimeout.
type Authenticator func(ctx context.Context, info StartupInfo, ex AuthExchange) error

// AuthExchange is the connection as an Authenticator sees it during startup.
type AuthExchange interface {
	// Send writes an authentication request (AuthenticationSASL,
	// AuthenticationMD5Password, …) and flushes it. It also tells the reader
	// how to decode the client's answer: the 'p' message means a password,
	// a SASLInitialResponse or a SASLResponse depending on what was asked.
	Send(msg pgproto3.BackendMessage) error
	// Receive reads the client's next message.
	Receive() (pgproto3.FrontendMessage, error)
	// TLS returns the state of the connection's TLS session, nil when the
	// connection is not encrypted.
	TLS() *tls.ConnectionState
	// ChannelBinding returns the tls-server-end-point channel binding data
	// of a TLS connection (RFC 5929: a hash of the server's certificate),
	// nil without TLS or when the certificate is not known in advance.
	ChannelBinding() []byte
}

// TrustLoopback admits clients connecting over loopback (127.0.0.0/8, ::1) or
// a unix socket without a password and refuses every other address, like a
// pg_hba.conf holding only "local all all trust" and "host all all
// 127.0.0.1/32 trust" / "::1/128 trust" lines. It is the default when no
// authentication is configured.
func TrustLoopback(_ context.Context, info StartupInfo, _ AuthExchange) error {
	if isLoopback(info.RemoteAddr) {
		return nil
	}
	return pgerror.New(pgerror.InvalidAuthorizationSpec,
		`no pg_hba.conf entry for host "%s", user "%s", database "%s"`,
		hostOf(info.RemoteAddr), info.User, info.Database)
}

// isLoopback reports whether addr is a unix socket or a loopback IP. Unknown
// address types are not trusted.
func isLoopback(addr net.Addr) bool {
	switch a := addr.(type) {
	case *net.UnixAddr:
		return true
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.IPAddr:
		return a.IP.IsLoopback()
	}
	return false
}

// hostOf renders addr the way PostgreSQL names a client host: the IP without
// the port, "[local]" for a unix socket.
func hostOf(addr net.Addr) string {
	switch a := addr.(type) {
	case nil:
		return ""
	case *net.UnixAddr:
		return "[local]"
	case *net.TCPAddr:
		return a.IP.String()
	case *net.IPAddr:
		return a.IP.String()
	}
	return addr.String()
}

// authExchange implements AuthExchange on a connection in startup.
type authExchange struct{ c *conn }

func (a authExchange) Send(msg pgproto3.BackendMessage) error {
	var t uint32
	switch msg.(type) {
	case *pgproto3.AuthenticationCleartextPassword:
		t = pgproto3.AuthTypeCleartextPassword
	case *pgproto3.AuthenticationMD5Password:
		t = pgproto3.AuthTypeMD5Password
	case *pgproto3.AuthenticationSASL:
		t = pgproto3.AuthTypeSASL
	case *pgproto3.AuthenticationSASLContinue:
		t = pgproto3.AuthTypeSASLContinue
	case *pgproto3.AuthenticationSASLFinal:
		t = pgproto3.AuthTypeSASLFinal
	case *pgproto3.AuthenticationGSS:
		t = pgproto3.AuthTypeGSS
	case *pgproto3.AuthenticationGSSContinue:
		t = pgproto3.AuthTypeGSSCont
	}
	if t != 0 {
		if err := a.c.be.SetAuthType(t); err != nil {
			return err
		}
	}
	a.c.out.send(msg)
	return a.c.out.flush()
}

func (a authExchange) Receive() (pgproto3.FrontendMessage, error) {
	return a.c.be.Receive()
}

func (a authExchange) TLS() *tls.ConnectionState {
	if tc, ok := a.c.nc.(*tls.Conn); ok {
		st := tc.ConnectionState()
		return &st
	}
	return nil
}

func (a authExchange) ChannelBinding() []byte {
	if _, ok := a.c.nc.(*tls.Conn); !ok {
		return nil
	}
	return tlsServerEndPoint(a.c.srv.cfg.TLS)
}
