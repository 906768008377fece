package server

import (
	"context"
	"net"
	"testing"

	"github.com/mvserver/mvserver/pgerror"
)

func TestIsLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 5432}, true},
		{&net.TCPAddr{IP: net.ParseIP("127.255.0.9")}, true},
		{&net.TCPAddr{IP: net.ParseIP("::1")}, true},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1")}, true},
		{&net.UnixAddr{Name: "/tmp/.s.PGSQL.5432", Net: "unix"}, true},
		{&net.IPAddr{IP: net.ParseIP("127.0.0.1")}, true},
		{&net.TCPAddr{IP: net.ParseIP("10.0.0.1")}, false},
		{&net.TCPAddr{IP: net.ParseIP("128.0.0.1")}, false},
		{&net.TCPAddr{IP: net.ParseIP("::2")}, false},
		{&net.TCPAddr{IP: net.ParseIP("0.0.0.0")}, false},
		{&net.TCPAddr{}, false},
		{nil, false},
		{pipeAddr{}, false}, // unknown address types are not trusted
	} {
		if got := isLoopback(tc.addr); got != tc.want {
			t.Errorf("isLoopback(%v) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

func TestTrustLoopback(t *testing.T) {
	ctx := context.Background()
	ok := StartupInfo{User: "u", Database: "d", RemoteAddr: &net.TCPAddr{IP: net.ParseIP("::1"), Port: 1}}
	if err := TrustLoopback(ctx, ok, nil); err != nil {
		t.Fatal(err)
	}
	far := StartupInfo{User: "u", Database: "d", RemoteAddr: &net.TCPAddr{IP: net.ParseIP("2001:db8::7"), Port: 1}}
	err := TrustLoopback(ctx, far, nil)
	if pgerror.Code(err) != pgerror.InvalidAuthorizationSpec ||
		err.Error() != `no pg_hba.conf entry for host "2001:db8::7", user "u", database "d"` {
		t.Fatalf("got %v", err)
	}
}
