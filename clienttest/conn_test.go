//go:build clients

package clienttest

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// The one place that says how every client connects: which user, which
// database, whether with a password and whether over TLS. Both servers are
// set up from the same values, and each client program reads them from the
// libpq variables env() sets (the ODBC program writes them into its DSN).
const (
	clientUser     = "app"
	clientPassword = "apppass"
	clientDatabase = "clients"
)

// connSettings is where and how a client reaches one server.
type connSettings struct {
	Host     string
	Port     int
	Database string
	User     string
	Password string // empty: the server trusts loopback clients
	// SSLMode is libpq's sslmode: "prefer" (libpq's default: ask, accept a
	// refusal) unless a session runs over TLS ("require").
	SSLMode string
}

// env is the settings as libpq's environment variables, which psql,
// pgbench, psycopg2 and the suite's own programs (JDBC, node-postgres,
// ODBC) all read.
func (c connSettings) env() []string {
	env := []string{
		"PGHOST=" + c.Host,
		"PGPORT=" + strconv.Itoa(c.Port),
		"PGDATABASE=" + c.Database,
		"PGUSER=" + c.User,
		"PGSSLMODE=" + c.SSLMode,
		"PGCONNECT_TIMEOUT=10",
	}
	if c.Password != "" {
		env = append(env, "PGPASSWORD="+c.Password)
	}
	return env
}

// url is the settings as a connection URL for pgx (the harness's own
// sessions: readiness, loading the schema).
func (c connSettings) url() string {
	u := url.URL{
		Scheme: "postgres",
		Host:   net.JoinHostPort(c.Host, strconv.Itoa(c.Port)),
		Path:   "/" + c.Database,
	}
	if c.Password != "" {
		u.User = url.UserPassword(c.User, c.Password)
	} else {
		u.User = url.User(c.User)
	}
	mode := c.SSLMode
	if mode == "" {
		mode = "prefer"
	}
	u.RawQuery = "sslmode=" + mode + "&connect_timeout=10"
	return u.String()
}

// clientEnv is the environment every client program runs in: the test's
// own without a developer's PG*/MVSERVER_* settings, a private HOME (no
// ~/.psqlrc, ~/.pgpass), UTC and a UTF-8 locale, then the connection.
func clientEnv(home string, c connSettings, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "PG"), strings.HasPrefix(k, "MVSERVER_"), strings.HasPrefix(k, "ODBC"),
			k == "HOME", k == "TZ", k == "LANG", strings.HasPrefix(k, "LC_"), k == "NODE_OPTIONS", k == "JAVA_TOOL_OPTIONS",
			k == "PYTHONPATH", k == "PYTHONHOME":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "TZ=UTC", "PGTZ=UTC", "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
	env = append(env, c.env()...)
	return append(env, extra...)
}

// freePort asks the kernel for a loopback port that is free now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (c connSettings) String() string {
	return fmt.Sprintf("%s@%s:%d/%s sslmode=%s password=%v", c.User, c.Host, c.Port, c.Database, c.SSLMode, c.Password != "")
}
