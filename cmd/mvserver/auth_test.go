package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// writeTestCert writes a self-signed certificate for 127.0.0.1 and its key
// into dir and returns their paths.
func writeTestCert(t testing.TB, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mvserver test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true, IsCA: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// authURL is a connection URL with a password and sslmode (plus whatever
// parameters follow it).
func authURL(addr, user, password, sslmode string) string {
	u := &url.URL{Scheme: "postgres", User: url.UserPassword(user, password), Host: addr, Path: "/mvserver",
		RawQuery: "connect_timeout=10&sslmode=" + sslmode}
	return u.String()
}

// startAuthed starts the binary, which needs a password, and waits until
// user/password can open a session over TLS.
func startAuthed(t *testing.T, args []string, env []string, user, password string) *proc {
	t.Helper()
	p := spawn(t, append([]string{"--listen", "127.0.0.1:0"}, args...), env...)
	deadline := time.Now().Add(startTimeout)
	var addr string
	select {
	case addr = <-p.log.addr:
	case <-p.exited:
		t.Fatalf("mvserver exited before listening (%v):\n%s", p.state, p.log.String())
	case <-time.After(startTimeout):
		t.Fatalf("mvserver did not log that it listens:\n%s", p.log.String())
	}
	for {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		c, err := pgx.Connect(ctx, authURL(addr, user, password, "require"))
		cancel()
		if err == nil {
			c.Close(context.Background())
			p.addr = addr
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("no session: %v\n%s", err, p.log.String())
		}
		select {
		case <-p.exited:
			t.Fatalf("mvserver exited while starting (%v):\n%s", p.state, p.log.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func authErr(addr, user, password, sslmode string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, authURL(addr, user, password, sslmode))
	if err == nil {
		c.Close(ctx)
	}
	return err
}

// The flags and variables of authentication and TLS on the real binary:
// the bootstrap superuser from MVSERVER_SUPERUSER(_PASSWORD), rules from
// --hba (hostssl only, so plain clients are refused), the certificate
// from --tls-cert/--tls-key; a role created over SQL logs in after a
// restart.
func TestAuthFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cert, key := writeTestCert(t, dir)
	hba := filepath.Join(dir, "pg_hba.conf")
	if err := os.WriteFile(hba, []byte("hostssl all all 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 reject\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	args := []string{"--data-dir", data, "--hba", hba, "--tls-cert", cert, "--tls-key", key}
	env := []string{"MVSERVER_SUPERUSER=boss", "MVSERVER_SUPERUSER_PASSWORD=s3cret"}
	p := startAuthed(t, args, env, "boss", "s3cret")

	c := connectWith(t, authURL(p.addr, "boss", "s3cret", "verify-full&sslrootcert="+url.QueryEscape(cert)))
	mustExec(t, c, "CREATE ROLE app LOGIN PASSWORD 'apppw'")
	if err := authErr(p.addr, "app", "apppw", "require&channel_binding=require"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ user, pw, sslmode, code string }{
		{"app", "nope", "require", "28P01"},
		{"nobody", "x", "require", "28P01"},
		{"boss", "s3cret", "disable", "28000"},
	} {
		if err := authErr(p.addr, tc.user, tc.pw, tc.sslmode); pgCode(err) != tc.code {
			t.Errorf("%s/%s sslmode=%s: %v, want %s", tc.user, tc.pw, tc.sslmode, err, tc.code)
		}
	}
	c.Close(context.Background())
	p.signal(os.Interrupt)
	if code := p.waitExit(exitTimeout); code != 0 {
		t.Fatalf("exit %d", code)
	}

	// Same flags as flags and a new superuser password: the role persists,
	// the password follows the configuration.
	p = startAuthed(t, append(args, "--superuser", "boss", "--superuser-password", "n3w"), nil, "app", "apppw")
	if err := authErr(p.addr, "boss", "s3cret", "require"); pgCode(err) != "28P01" {
		t.Fatalf("old superuser password: %v", err)
	}
	if err := authErr(p.addr, "boss", "n3w", "require"); err != nil {
		t.Fatal(err)
	}
}

// Bad authentication settings end the process with a message naming the
// problem (and file:line for rules).
func TestAuthFlagErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hba := filepath.Join(dir, "hba.conf")
	if err := os.WriteFile(hba, []byte("local all all trust\nhost all all 10.0.0.0/8 peer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--hba", hba}, hba + `:2: authentication method "peer" is not supported`},
		{[]string{"--tls-key", hba}, "needs both a certificate and its key"},
	} {
		p := spawn(t, append([]string{"--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0"}, tc.args...))
		if code := p.waitExit(exitTimeout); code != 1 {
			t.Errorf("%v: exit %d, want 1", tc.args, code)
		}
		if out := p.log.String(); !strings.Contains(out, tc.want) {
			t.Errorf("%v: output %q, want %q", tc.args, out, tc.want)
		}
	}
}

// connectWith opens a pgx connection, closed at cleanup.
func connectWith(t *testing.T, connString string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, connString)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
