package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// testCert is a self-signed certificate for 127.0.0.1, ::1 and localhost.
type testCert struct {
	cfg      *tls.Config // the server's
	certFile string      // PEM, for clients' sslrootcert
	keyFile  string
	der      []byte
}

func newTestCert(t testing.TB) testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mvserver test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		DNSNames:              []string{"localhost"},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tc := testCert{certFile: filepath.Join(dir, "server.crt"), keyFile: filepath.Join(dir, "server.key"), der: der}
	if err := os.WriteFile(tc.certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tc.keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	if tc.cfg, err = LoadTLSConfig(tc.certFile, tc.keyFile); err != nil {
		t.Fatal(err)
	}
	return tc
}

// dialTLS opens a raw connection, asks for TLS and completes the handshake.
func dialTLS(t testing.TB, addr string) *rawConn {
	t.Helper()
	c := dialRaw(t, addr)
	if b := sslRequest(t, c.nc); b != 'S' {
		t.Fatalf("SSLRequest answered %q", b)
	}
	tc := tls.Client(c.nc, &tls.Config{InsecureSkipVerify: true})
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	c.nc.SetDeadline(time.Time{})
	c.nc, c.fe = tc, pgproto3.NewFrontend(tc, tc)
	return c
}

// sslRequest sends an SSLRequest on nc and returns the one-byte answer.
func sslRequest(t testing.TB, nc net.Conn) byte {
	t.Helper()
	req := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), sslRequestCode)
	if _, err := nc.Write(req); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b [1]byte
	if _, err := io.ReadFull(nc, b[:]); err != nil {
		t.Fatal(err)
	}
	nc.SetReadDeadline(time.Time{})
	return b[0]
}

// With TLS configured an SSLRequest gets 'S' and the session runs over
// TLS; the certificate verifies for 127.0.0.1. Without TLS it stays 'N'.
func TestTLSSession(t *testing.T) {
	cert := newTestCert(t)
	ts := startServer(t, Config{TLS: cert.cfg})
	ctx := testCtx(t)
	conn, err := pgx.Connect(ctx, ts.url("test", "", "verify-full&sslrootcert="+cert.certFile))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, ok := conn.PgConn().Conn().(*tls.Conn); !ok {
		t.Fatalf("connection is %T, want *tls.Conn", conn.PgConn().Conn())
	}
	var one int32
	if err := conn.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1: %d %v", one, err)
	}

	// A plain client is still served.
	plain, err := pgx.Connect(ctx, ts.connString(""))
	if err != nil {
		t.Fatal(err)
	}
	plain.Close(ctx)

	// GSSENCRequest is still 'N' on a TLS-capable server.
	c := dialRaw(t, ts.addr)
	req := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), gssEncRequestCode)
	c.nc.Write(req)
	var b [1]byte
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(c.nc, b[:]); err != nil || b[0] != 'N' {
		t.Fatalf("GSSENCRequest: %q %v", b[0], err)
	}

	// Without TLS the answer is 'N', and sslmode=require gives up.
	ts2 := startServer(t, Config{})
	if b := sslRequest(t, dialRaw(t, ts2.addr).nc); b != 'N' {
		t.Fatalf("SSLRequest without TLS answered %q", b)
	}
	if _, err := pgx.Connect(ctx, ts2.url("test", "", "require")); err == nil {
		t.Fatal("sslmode=require connected to a server without TLS")
	}
}

// A failed handshake ends that connection only; a second SSLRequest inside
// TLS is a protocol violation.
func TestTLSHandshakeFailure(t *testing.T) {
	cert := newTestCert(t)
	ts := startServer(t, Config{TLS: cert.cfg})

	c := dialRaw(t, ts.addr)
	if b := sslRequest(t, c.nc); b != 'S' {
		t.Fatalf("answer %q", b)
	}
	// Plain-text startup where a ClientHello belongs.
	buf, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "test"}}).Encode(nil)
	c.nc.Write(buf)
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(c.nc); err != nil {
		t.Fatalf("want the server to close: %v", err)
	}

	// A client that goes away mid-handshake.
	c = dialRaw(t, ts.addr)
	sslRequest(t, c.nc)
	c.nc.Close()

	// TLS 1.1 is refused.
	c = dialRaw(t, ts.addr)
	sslRequest(t, c.nc)
	old := tls.Client(c.nc, &tls.Config{InsecureSkipVerify: true, MaxVersion: tls.VersionTLS11})
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := old.Handshake(); err == nil {
		t.Fatal("a TLS 1.1 handshake succeeded")
	}

	c = dialTLS(t, ts.addr)
	req := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), sslRequestCode)
	c.nc.Write(req)
	c.wantFatal(pgerror.ProtocolViolation)

	// The server is unharmed.
	conn := ts.connect(t, pgx.QueryExecModeSimpleProtocol)
	if _, err := conn.Exec(testCtx(t), "select 1"); err != nil {
		t.Fatal(err)
	}
}

// pgx sends its CancelRequest for a TLS session over a TLS connection of its
// own (as libpq 17 does): the server negotiates TLS and then serves it.
func TestCancelRequestOverTLS(t *testing.T) {
	cert := newTestCert(t)
	ts := startServer(t, Config{TLS: cert.cfg})
	ctx := testCtx(t)
	conn, err := pgx.Connect(ctx, ts.url("test", "", "require"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, "sleep")
		errc <- err
	}()
	ts.eng.waitRunning(t, conn.PgConn().PID(), "sleep")
	if err := conn.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	wantCode(t, <-errc, pgerror.QueryCanceled)

	// And a plain cancel for a TLS session works too (libpq before 17).
	go func() {
		_, err := conn.Exec(ctx, "sleep")
		errc <- err
	}()
	ts.eng.waitRunning(t, conn.PgConn().PID(), "sleep")
	cancelRequest(t, ts.addr, conn.PgConn().PID(), conn.PgConn().SecretKey())
	wantCode(t, <-errc, pgerror.QueryCanceled)
}

// The channel binding data is the certificate's SHA-256 for an ECDSA-SHA256
// signature, as pgx and libpq compute it; nothing for several certificates.
func TestTLSServerEndPoint(t *testing.T) {
	cert := newTestCert(t)
	want := sha256.Sum256(cert.der)
	if got := tlsServerEndPoint(cert.cfg); string(got) != string(want[:]) {
		t.Fatalf("end point %x, want %x", got, want)
	}
	two := cert.cfg.Clone()
	two.Certificates = append(two.Certificates, two.Certificates[0])
	if tlsServerEndPoint(two) != nil || tlsServerEndPoint(nil) != nil {
		t.Fatal("end point for an ambiguous configuration")
	}
	noLeaf := cert.cfg.Clone()
	noLeaf.Certificates = []tls.Certificate{{Certificate: noLeaf.Certificates[0].Certificate, PrivateKey: noLeaf.Certificates[0].PrivateKey}}
	if got := tlsServerEndPoint(noLeaf); string(got) != string(want[:]) {
		t.Fatal("end point without Leaf")
	}
	if _, err := LoadTLSConfig(cert.certFile, cert.certFile); err == nil {
		t.Fatal("a certificate as key loaded")
	}
}

// Shutdown does not wait for a client stuck in the TLS handshake: the
// pending read is interrupted and the connection closed without a word.
func TestShutdownDuringTLSHandshake(t *testing.T) {
	cert := newTestCert(t)
	ts := startServer(t, Config{TLS: cert.cfg})
	c := dialRaw(t, ts.addr)
	if b := sslRequest(t, c.nc); b != 'S' {
		t.Fatalf("answer %q", b)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ts.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v (the handshake held it)", err)
	}
	c.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := io.ReadAll(c.nc); err != nil || len(b) != 0 {
		t.Fatalf("after shutdown: %q %v, want a silent close", b, err)
	}
}
