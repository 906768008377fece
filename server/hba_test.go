package server

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseHBAGood(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string // the rule, printed by ruleString
	}{
		{"local all all trust", "local [all] [all] <nil> trust"},
		{"host all all 127.0.0.1/32 scram-sha-256", "host [all] [all] 127.0.0.1/32 scram-sha-256"},
		{"hostssl mvserver alice,bob 10.0.0.0/8 md5", "hostssl [mvserver] [alice bob] 10.0.0.0/8 md5"},
		{"hostnossl db1, db2 all ::1/128 password # trailing comment", "hostnossl [db1 db2] [all] ::1/128 password"},
		{"host all all all reject", "host [all] [all] <nil> reject"},
		{"host all all 192.168.1.7 255.255.255.0 md5", "host [all] [all] 192.168.1.0/24 md5"},
		{"host all all fe80::1 ffff:ffff:ffff:ffff:: trust", "host [all] [all] fe80::/64 trust"},
		{"\thost\tsameuser\tall\t10.1.0.0/16\ttrust", "host [sameuser] [all] 10.1.0.0/16 trust"},
		{`host "all","my db" "Alice" 0.0.0.0/0 scram-sha-256`, `host ["all" my db] [Alice] 0.0.0.0/0 scram-sha-256`},
		{"host all all 10.0.0.0/8 trust\r", "host [all] [all] 10.0.0.0/8 trust"},
		{"hostnogssenc replication all all trust", "hostnogssenc [replication] [all] <nil> trust"},
	} {
		h, err := ParseHBA("f", strings.NewReader("# header\n\n   \n"+tc.line+"\n"))
		if err != nil {
			t.Errorf("%q: %v", tc.line, err)
			continue
		}
		if len(h.Rules) != 1 {
			t.Errorf("%q: %d rules", tc.line, len(h.Rules))
			continue
		}
		r := h.Rules[0]
		if got := ruleString(r); got != tc.want {
			t.Errorf("%q: got %s, want %s", tc.line, got, tc.want)
		}
		if r.File != "f" || r.Line != 4 {
			t.Errorf("%q: at %s:%d", tc.line, r.File, r.Line)
		}
	}
}

func ruleString(r HBARule) string {
	addr := "<nil>"
	if r.Addr != nil {
		addr = r.Addr.String()
	}
	return strings.Join([]string{string(r.Type), "[" + strings.Join(r.Databases, " ") + "]",
		"[" + strings.Join(r.Users, " ") + "]", addr, string(r.Method)}, " ")
}

// Every line the server cannot honour is refused with file:line and why.
func TestParseHBABad(t *testing.T) {
	for _, tc := range []struct{ line, want string }{
		{"hosts all all all trust", `invalid connection type "hosts"`},
		{"local all", "end-of-line before role specification"},
		{"local", "end-of-line before database specification"},
		{"local all all", "end-of-line before authentication method"},
		{"host all all", "end-of-line before IP address specification"},
		{"host all all 10.0.0.0/8", "end-of-line before authentication method"},
		{"host all all example.com trust", `invalid IP address "example.com" (host names are not supported`},
		{"host all all samehost trust", `"samehost" is not supported`},
		{"host all all samenet trust", `"samenet" is not supported`},
		{"host all all 10.0.0.0/33 trust", `invalid IP address "10.0.0.0/33"`},
		{"host all all 10.0.0.1 trust", `invalid IP mask "trust"`},
		{"host all all 10.0.0.1", "end-of-line before netmask specification"},
		{"host all all 10.0.0.1 255.0.255.0 trust", "not a prefix"},
		{"host all all 10.0.0.1 ffff:: trust", "IP address and mask do not match"},
		{"host all all ::1 255.0.0.0 trust", "IP address and mask do not match"},
		{"local all all peer", `authentication method "peer" is not supported`},
		{"local all all ldap", `authentication method "ldap" is not supported`},
		{"local all all scram", `invalid authentication method "scram"`},
		{"local all all md5 clientcert=verify-full", `authentication option "clientcert=verify-full" is not supported`},
		{"local all +admins trust", `group membership "+admins" is not supported`},
		{"local samerole all trust", `"samerole" is not supported`},
		{"local @dbs all trust", `file inclusion "@dbs" is not supported`},
		{"local all /^a trust", `regular expression "/^a" is not supported`},
		{"local all all trust,", "list ends with a comma"},
		{"local all a, trust", "end-of-line before authentication method"}, // a comma continues the list
		{`local "all all trust`, "unterminated quoted string"},
		{"local,host all all trust", "multiple values specified for connection type"},
		{"local all all trust,md5", "multiple values specified for authentication method"},
		{"host all all 10.0.0.0/8,::1/128 trust", "multiple values specified for IP address"},
	} {
		_, err := ParseHBA("conf/hba", strings.NewReader("local all all trust\n"+tc.line+"\n"))
		if err == nil {
			t.Errorf("%q: parsed", tc.line)
			continue
		}
		if !strings.HasPrefix(err.Error(), "conf/hba:2: ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want conf/hba:2: …%s…", tc.line, err, tc.want)
		}
	}
}

func TestLoadHBA(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pg_hba.conf")
	if err := os.WriteFile(path, []byte("local all all trust\nhost all all 10.0.0.0/8 peer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadHBA(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":2: ") {
		t.Fatalf("got %v", err)
	}
	if _, err := LoadHBA(path + ".missing"); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestHBAMatch(t *testing.T) {
	h, err := ParseHBA("f", strings.NewReader(`
local   all       all                 trust
hostssl all       admin 10.0.0.0/8    scram-sha-256
host    all       admin all           reject
hostnossl sameuser all  10.0.0.0/8    md5
host    sales     alice,bob 10.0.0.0/8  password
host    "all"     all   10.0.0.0/8    trust
host    all       all   ::1/128       scram-sha-256
host    all       all   127.0.0.1/32  md5
`))
	if err != nil {
		t.Fatal(err)
	}
	tcp := func(ip string) net.Addr { return &net.TCPAddr{IP: net.ParseIP(ip), Port: 5000} }
	for _, tc := range []struct {
		addr     net.Addr
		db, user string
		tls      bool
		line     int // 0 = no match
	}{
		{&net.UnixAddr{Name: "/tmp/s", Net: "unix"}, "x", "y", false, 2},
		{tcp("10.1.2.3"), "d", "admin", true, 3},
		{tcp("10.1.2.3"), "d", "admin", false, 4},
		{tcp("192.0.2.1"), "d", "admin", true, 4},
		{tcp("10.1.2.3"), "carol", "carol", false, 5},
		{tcp("10.1.2.3"), "carol", "carol", true, 0}, // hostnossl skips TLS; nothing else matches
		{tcp("10.1.2.3"), "sales", "bob", true, 6},
		{tcp("10.1.2.3"), "sales", "eve", true, 0},
		{tcp("10.1.2.3"), "all", "eve", false, 7}, // a quoted keyword is a name
		{tcp("::1"), "d", "u", false, 8},
		{tcp("127.0.0.1"), "d", "u", true, 9},
		{tcp("::ffff:127.0.0.1"), "d", "u", false, 9},
		{tcp("127.0.0.2"), "d", "u", false, 0},
		{pipeAddr{}, "d", "u", false, 0},
	} {
		r := h.Match(StartupInfo{RemoteAddr: tc.addr, Database: tc.db, User: tc.user}, tc.tls)
		got := 0
		if r != nil {
			got = r.Line
		}
		if got != tc.line {
			t.Errorf("%v %s/%s tls=%v: line %d, want %d", tc.addr, tc.db, tc.user, tc.tls, got, tc.line)
		}
	}
	if r, ok := h.HostSSL(); !ok || r.Line != 3 {
		t.Fatalf("HostSSL: %v %v", r, ok)
	}
	if _, ok := DefaultHBA().HostSSL(); ok {
		t.Fatal("the default rules have a hostssl line")
	}
}
