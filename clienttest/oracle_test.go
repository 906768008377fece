//go:build clients

package clienttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The oracle: a scratch PostgreSQL 15 cluster. TestMain's first user
// initialises one template cluster; each test copies it and starts its own
// postgres on a fresh port, so no test sees another's writes.

var (
	oracleOnce sync.Once
	oracleDir  string
	oracleErr  error
)

// oracleTemplate is the data directory of the initialised template cluster.
func oracleTemplate(t testing.TB) string {
	t.Helper()
	_, feat := mvserverBinary(t)
	need(t, filepath.Join(*pgBinFlag, "initdb"))
	need(t, filepath.Join(*pgBinFlag, "postgres"))
	oracleOnce.Do(func() {
		var crt, key string
		if feat.tls {
			crt, key = tlsFiles(t)
		}
		oracleDir, oracleErr = makeTemplate(feat, crt, key)
	})
	if oracleErr != nil {
		t.Fatalf("preparing the PostgreSQL oracle: %v", oracleErr)
	}
	return oracleDir
}

// oraclePrelude makes a fresh cluster hold what a fresh mvserver holds, and
// nothing a client would see besides. Each statement says why.
var oraclePrelude = []string{
	// mvserver serves one database: the cluster keeps only that one. The
	// templates and "postgres" would otherwise show in \l and getCatalogs.
	"DROP DATABASE postgres",
	"ALTER DATABASE template1 IS_TEMPLATE false",
	"DROP DATABASE template1",
	"ALTER DATABASE template0 IS_TEMPLATE false",
	"DROP DATABASE template0",
	// mvserver always has its schema "system" (its system views, R-O1); the
	// oracle gets an empty one so that schema lists agree.
	"CREATE SCHEMA system",
}

// makeTemplate runs initdb (as the postgres user when we are root: initdb
// and postgres refuse to run as root), configures the cluster for loopback
// only, and applies oraclePrelude.
func makeTemplate(feat features, crt, key string) (string, error) {
	dir := filepath.Join(workRoot, "pgtemplate")
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	if err := chownPostgres(dir); err != nil {
		return "", err
	}
	// The bootstrap superuser is the client user, as mvserver's is.
	initdb := exec.Command(filepath.Join(*pgBinFlag, "initdb"), "-D", dir, "-U", clientUser,
		"-E", "UTF8", "--locale=C.UTF-8", "--auth=trust", "--no-sync")
	initdb.Env = append(cleanServerEnv(), "TZ=UTC", "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
	if err := asPostgres(initdb); err != nil {
		return "", err
	}
	if out, err := initdb.CombinedOutput(); err != nil {
		return "", fmt.Errorf("initdb: %v\n%s", err, out)
	}
	conf := []string{
		"listen_addresses = '127.0.0.1'",
		"unix_socket_directories = ''", // TCP only, like mvserver
		"timezone = 'UTC'",             // mvserver's default TimeZone
		"log_timezone = 'UTC'",
		"max_connections = 30",
		"shared_buffers = 32MB",
		// A scratch cluster: durability is not under test.
		"fsync = off",
		"synchronous_commit = off",
		"full_page_writes = off",
	}
	if feat.tls {
		for _, f := range []struct{ src, dst string }{{crt, "server.crt"}, {key, "server.key"}} {
			b, err := os.ReadFile(f.src)
			if err != nil {
				return "", err
			}
			p := filepath.Join(dir, f.dst)
			if err := os.WriteFile(p, b, 0o600); err != nil {
				return "", err
			}
			if err := chownPostgres(p); err != nil {
				return "", err
			}
		}
		conf = append(conf, "ssl = on", "ssl_cert_file = 'server.crt'", "ssl_key_file = 'server.key'")
	} else {
		conf = append(conf, "ssl = off")
	}
	if err := appendFile(filepath.Join(dir, "postgresql.conf"), strings.Join(conf, "\n")+"\n"); err != nil {
		return "", err
	}
	if err := writeHBA(dir, "trust"); err != nil {
		return "", err
	}

	port, err := freePort()
	if err != nil {
		return "", err
	}
	p, err := runPostgres(dir, port)
	if err != nil {
		return "", err
	}
	setup := connSettings{Host: "127.0.0.1", Port: port, Database: "postgres", User: clientUser, SSLMode: "disable"}
	err = waitConnectable(setup, p.exited, time.Now().Add(startTimeout))
	if err == nil {
		err = execAll(setup, []string{"CREATE DATABASE " + clientDatabase})
	}
	if err == nil {
		setup.Database = clientDatabase
		prelude := oraclePrelude
		if feat.password {
			prelude = append(prelude[:len(prelude):len(prelude)],
				fmt.Sprintf("ALTER ROLE %s PASSWORD '%s'", clientUser, clientPassword)) // SCRAM-SHA-256, the default
		}
		err = execAll(setup, prelude)
	}
	if stopErr := p.stop(); err == nil {
		err = stopErr
	}
	if err != nil {
		return "", fmt.Errorf("%v\n%s", err, p.log.String())
	}
	method := "trust"
	if feat.password {
		method = "scram-sha-256"
	}
	return dir, writeHBA(dir, method)
}

// writeHBA lets loopback TCP clients in with method (nothing else: the
// cluster has no Unix socket).
func writeHBA(dir, method string) error {
	p := filepath.Join(dir, "pg_hba.conf")
	if err := os.WriteFile(p, []byte("host all all 127.0.0.1/32 "+method+"\n"), 0o600); err != nil {
		return err
	}
	return chownPostgres(p)
}

// startPostgres copies the template into dataDir, starts postgres on a
// fresh port, fills c.Port and stops the server when the test ends.
func startPostgres(t *testing.T, template, dataDir string, c *connSettings) {
	t.Helper()
	// cp -a keeps the owner (postgres) and modes.
	if out, err := exec.Command("cp", "-a", template, dataDir).CombinedOutput(); err != nil {
		t.Fatalf("copy the oracle's template cluster: %v\n%s", err, out)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	p, err := runPostgres(dataDir, port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.stop(); err != nil {
			t.Errorf("%v\n%s", err, tail(p.log.String(), 20))
		}
	})
	c.Port = port
	if err := waitConnectable(*c, p.exited, time.Now().Add(startTimeout)); err != nil {
		t.Fatalf("postgres: %v\n%s", err, p.log.String())
	}
}

// pgProc is a running postmaster, our own child.
type pgProc struct {
	cmd    *exec.Cmd
	log    *syncBuffer
	exited chan struct{}
}

func runPostgres(dataDir string, port int) (*pgProc, error) {
	p := &pgProc{log: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(*pgBinFlag, "postgres"), "-D", dataDir, "-p", strconv.Itoa(port))
	p.cmd.Env = append(cleanServerEnv(), "TZ=UTC", "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := asPostgres(p.cmd); err != nil {
		return nil, err
	}
	// Should the test binary die (a go test timeout), the postmaster shuts
	// down at once instead of outliving it.
	if p.cmd.SysProcAttr == nil {
		p.cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	p.cmd.SysProcAttr.Pdeathsig = syscall.SIGQUIT
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %v", err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	return p, nil
}

// stop asks for a fast shutdown (SIGINT: roll back sessions, checkpoint,
// exit), then an immediate one (SIGQUIT), each with a deadline.
func (p *pgProc) stop() error {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGQUIT} {
		_ = p.cmd.Process.Signal(sig)
		select {
		case <-p.exited:
			return nil
		case <-time.After(stopTimeout):
		}
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
	return fmt.Errorf("postgres (pid %d) ignored SIGINT and SIGQUIT; killed", p.cmd.Process.Pid)
}

// asPostgres makes cmd run as the postgres user when we are root — what
// `runuser -u postgres --` does, but keeping the process our own child, so
// that the test holds the postmaster's pid and stops exactly it.
func asPostgres(cmd *exec.Cmd) error {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, gid, err := postgresIDs()
	if err != nil {
		return err
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	cmd.Dir = workRoot // a directory the postgres user may enter
	return nil
}

// chownPostgres gives path to the postgres user when we are root.
func chownPostgres(path string) error {
	if os.Geteuid() != 0 {
		return nil
	}
	uid, gid, err := postgresIDs()
	if err != nil {
		return err
	}
	return os.Lchown(path, int(uid), int(gid))
}

func postgresIDs() (uint32, uint32, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return 0, 0, fmt.Errorf("running as root, the oracle needs the postgres user (install postgresql-15): %v", err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("postgres user ids %q/%q", u.Uid, u.Gid)
	}
	return uint32(uid), uint32(gid), nil
}

func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ---------------------------------------------------------------------------
// TLS

var (
	tlsOnce        sync.Once
	tlsCrt, tlsKey string
	tlsErr         error
)

// tlsFiles is a self-signed certificate for 127.0.0.1 and its key, made
// once; both servers use the same pair. Clients use sslmode=require, which
// encrypts without verifying, so no client needs the certificate.
func tlsFiles(t testing.TB) (crt, key string) {
	t.Helper()
	tlsOnce.Do(func() { tlsCrt, tlsKey, tlsErr = makeCert(filepath.Join(workRoot, "tls")) })
	if tlsErr != nil {
		t.Fatalf("making the TLS certificate: %v", tlsErr)
	}
	return tlsCrt, tlsKey
}

func makeCert(dir string) (string, string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		return "", "", err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return "", "", err
	}
	crt, key := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	if err := os.WriteFile(crt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", err
	}
	return crt, key, nil
}
