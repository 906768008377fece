package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// Codes of the packets that may open a connection (no type byte).
const (
	sslRequestCode    = 80877103 // 1234.5679
	gssEncRequestCode = 80877104 // 1234.5680
	cancelRequestCode = 80877102 // 1234.5678
	// maxStartupPacket is PostgreSQL's MAX_STARTUP_PACKET_LENGTH: the startup
	// packet is read before authentication, so it is kept small.
	maxStartupPacket = 10000
	// maxNegotiations: one SSLRequest and one GSSENCRequest, as libpq may send.
	maxNegotiations = 2
)

// startup runs steps 2–5 of doc.go and leaves the connection ready for
// queries, or returns why it must end.
func (c *conn) startup() error {
	var deadline time.Time
	if t := c.srv.cfg.StartupTimeout; t > 0 {
		deadline = time.Now().Add(t)
	}
	// Only reads get the deadline: what startup writes is small enough for
	// the socket buffer, and a FATAL for a late client must still go out.
	c.setReadDeadline(deadline)

	params, err := c.readStartup()
	if err != nil {
		return err
	}
	c.be = pgproto3.NewBackend(c.nc, c.nc)
	c.be.SetMaxBodyLen(c.srv.cfg.MaxMessageSize)

	user := params["user"]
	if user == "" {
		return fatalf(pgerror.InvalidAuthorizationSpec, "no PostgreSQL user name specified in startup packet")
	}
	database := params["database"]
	if database == "" {
		database = user
	}
	info := StartupInfo{
		User:            user,
		Database:        database,
		ApplicationName: params["application_name"],
		Params:          params,
		RemoteAddr:      c.nc.RemoteAddr(),
		ProcessID:       c.pid,
		Deallocate:      c.deallocate,
	}

	ctx := c.ctx
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	if err := c.srv.cfg.Authenticator(ctx, info, authExchange{c}); err != nil {
		return c.startupError(err)
	}
	if err := c.srv.acquireSlot(user); err != nil {
		return err
	}
	c.hasSlot = true
	if err := c.be.SetAuthType(pgproto3.AuthTypeOk); err != nil {
		return err
	}
	if err := c.out.send(&authOK); err != nil {
		return errQuietClose
	}

	sess, err := c.srv.eng.Connect(ctx, info)
	if err != nil {
		return c.startupError(err)
	}
	c.sess = sess
	c.mu.Lock()
	c.info, c.started = info, time.Now()
	c.mu.Unlock()
	for _, p := range sess.ParameterStatus() {
		if err := c.out.parameterStatus(p.Name, p.Value); err != nil {
			return errQuietClose
		}
	}
	rand.Read(c.secret[:])
	c.srv.registerCancel(c)
	if err := c.out.send(&pgproto3.BackendKeyData{ProcessID: c.pid, SecretKey: c.secret[:]}); err != nil {
		return errQuietClose
	}
	c.setReadDeadline(time.Time{})
	return c.ioErr(c.out.readyForQuery('I'))
}

// readStartup reads packets until a StartupMessage, answering SSLRequest
// with 'S' and a TLS handshake when TLS is configured, and with 'N'
// otherwise, GSSENCRequest with 'N', and serving a CancelRequest (which
// ends the connection; it may come over TLS too). It returns the startup
// parameters.
func (c *conn) readStartup() (map[string]string, error) {
	for negotiations := 0; ; negotiations++ {
		body, err := c.readStartupPacket()
		if err != nil {
			return nil, err
		}
		code := binary.BigEndian.Uint32(body)
		switch code {
		case sslRequestCode, gssEncRequestCode:
			if negotiations >= maxNegotiations || len(body) != 4 {
				return nil, fatalf(pgerror.ProtocolViolation, "invalid startup packet layout")
			}
			if code == sslRequestCode && c.srv.cfg.TLS != nil {
				if _, encrypted := c.nc.(*tls.Conn); encrypted {
					return nil, fatalf(pgerror.ProtocolViolation, "SSL negotiation while already encrypted")
				}
				if err := c.startTLS(); err != nil {
					return nil, err
				}
				continue
			}
			// No TLS (none configured), no GSS encryption: libpq and pgx go
			// on in plain text on this socket (or give up, if they require
			// encryption).
			c.out.buf = append(c.out.buf, 'N')
			if err := c.out.flush(); err != nil {
				return nil, errQuietClose
			}
			continue
		case cancelRequestCode:
			c.handleCancelRequest(body)
			return nil, errQuietClose
		}

		major, minor := code>>16, code&0xffff
		if major != 3 {
			return nil, fatalf(pgerror.FeatureNotSupported,
				"unsupported frontend protocol %d.%d: server supports 3.0 to 3.0", major, minor)
		}
		params, unrecognized, err := parseStartupParams(body[4:])
		if err != nil {
			return nil, err
		}
		if minor > 0 || len(unrecognized) > 0 {
			// A newer 3.x client (3.2 since PostgreSQL 18) or protocol
			// extensions we lack: answer as PostgreSQL does and speak 3.0.
			err := c.out.send(&pgproto3.NegotiateProtocolVersion{
				NewestMinorProtocol: 0,
				UnrecognizedOptions: unrecognized,
			})
			if err != nil {
				return nil, errQuietClose
			}
		}
		return params, nil
	}
}

// readStartupPacket reads one length-prefixed packet straight from the
// socket, byte-exact, so nothing the client sent after it is consumed before
// the Backend's reader takes over.
func (c *conn) readStartupPacket() ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(c.nc, hdr[:]); err != nil {
		return nil, c.startupReadError(err)
	}
	n := int(int32(binary.BigEndian.Uint32(hdr[:])))
	if n < 8 || n > maxStartupPacket {
		return nil, fatalf(pgerror.ProtocolViolation, "invalid length of startup packet")
	}
	body := make([]byte, n-4)
	if _, err := io.ReadFull(c.nc, body); err != nil {
		return nil, c.startupReadError(err)
	}
	return body, nil
}

// startupReadError: a client that sends nothing, or not all of its startup
// packet, before the deadline is dropped without a word (PostgreSQL does the
// same); Shutdown interrupting the read is reported.
func (c *conn) startupReadError(err error) error {
	if c.isDraining() && errors.Is(err, os.ErrDeadlineExceeded) {
		return errAdminShutdown
	}
	return errQuietClose
}

// startupError turns an error of the Authenticator or Engine.Connect into the
// FATAL that ends the connection.
func (c *conn) startupError(err error) error {
	if c.isDraining() && (errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.Canceled)) {
		// Shutdown interrupted a read or canceled Engine.Connect.
		return errAdminShutdown
	}
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return fatalf(pgerror.QueryCanceled, "canceling authentication due to timeout")
	}
	if isIOError(err) {
		return errQuietClose
	}
	return &fatalError{pgerror.Convert(err)}
}

// parseStartupParams decodes the name/value pairs of a StartupMessage body
// (after the version): NUL-terminated strings ending with an empty name.
// Options for protocol extensions ("_pq_." names) are returned apart: none
// is supported, so the client is told in NegotiateProtocolVersion.
func parseStartupParams(b []byte) (params map[string]string, unrecognized []string, err error) {
	params = make(map[string]string)
	for len(b) > 0 && b[0] != 0 {
		name, rest, ok := bytes.Cut(b, []byte{0})
		if !ok {
			break
		}
		value, rest, ok := bytes.Cut(rest, []byte{0})
		if !ok {
			break
		}
		if n := string(name); strings.HasPrefix(n, "_pq_.") {
			unrecognized = append(unrecognized, n)
		} else {
			params[n] = string(value)
		}
		b = rest
	}
	if len(b) != 1 {
		return nil, nil, fatalf(pgerror.ProtocolViolation,
			"invalid startup packet layout: expected terminator as last byte")
	}
	return params, unrecognized, nil
}
