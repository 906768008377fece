package server

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// scramSalt is the salt the server shows user in its first SCRAM message.
func scramSalt(t *testing.T, addr, user string) string {
	t.Helper()
	c := dialRaw(t, addr)
	c.fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": user}})
	c.flush()
	c.readUntil("AuthenticationSASL")
	c.fe.Send(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abc")})
	c.flush()
	_, msgs := c.readUntil("AuthenticationSASLContinue")
	_, s, _ := strings.Cut(string(msgs[len(msgs)-1].(*pgproto3.AuthenticationSASLContinue).Data), ",s=")
	return s
}

// An unknown role's salt comes from the server's persisted secret and the
// name: a restart (a new authenticator with the same secret) shows the
// same salt, as it would a real role's, so asking before and after a
// restart does not tell an unknown name from a known one.
func TestAuthMockSaltSurvivesRestart(t *testing.T) {
	h, _ := ParseHBA("x", strings.NewReader("host all all 127.0.0.1/32 scram-sha-256"))
	secret := []byte("a secret kept in the data directory")
	salts := func(secret []byte) (string, string) {
		ts := startServer(t, Config{Authenticator: NewAuthenticator(AuthConfig{HBA: h, Credentials: testCredentials, MockSecret: secret})})
		defer ts.shutdown(t)
		return scramSalt(t, ts.addr, "nobody"), scramSalt(t, ts.addr, "alice")
	}
	before, real := salts(secret)
	after, realAfter := salts(append([]byte(nil), secret...))
	if before != after || real != realAfter {
		t.Fatalf("salts changed across a restart: nobody %q then %q, alice %q then %q", before, after, real, realAfter)
	}
	if other, _ := salts([]byte("another server's secret")); other == before {
		t.Fatalf("another secret gives the same mock salt %q", other)
	}
	if before == real {
		t.Fatalf("the mock salt is alice's real one")
	}
}

// sleeps records the failure delays an authenticator asked for.
type sleeps struct {
	mu  sync.Mutex
	got []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) {
	s.mu.Lock()
	s.got = append(s.got, d)
	s.mu.Unlock()
}

func (s *sleeps) list() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.got...)
}

// A failed password authentication waits FailureDelay before its FATAL
// 28P01 (PostgreSQL's auth_delay); a right password, and a refusal that
// is not about a password, do not wait.
func TestAuthFailureDelay(t *testing.T) {
	h, _ := ParseHBA("x", strings.NewReader("host all all 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.2/32 reject"))
	rec := &sleeps{}
	ts := startServer(t, Config{Authenticator: NewAuthenticator(AuthConfig{HBA: h, Credentials: testCredentials,
		FailureDelay: 700 * time.Millisecond, Sleep: rec.sleep})})
	wantLogin(t, ts.url("alice", "pencil", "disable"))
	if got := rec.list(); len(got) != 0 {
		t.Fatalf("a right password waited %v", got)
	}
	wantRefused(t, ts.url("alice", "wrong", "disable"), pgerror.InvalidPassword, `password authentication failed for user "alice"`)
	wantRefused(t, ts.url("nobody", "x", "disable"), pgerror.InvalidPassword, `password authentication failed for user "nobody"`)
	if got := rec.list(); len(got) != 2 || got[0] <= 0 || got[1] <= 0 {
		t.Fatalf("two failed logins waited %v, want two delays", got)
	}
	wantRefused(t, ts.url("nolog", "pw", "disable"), pgerror.InvalidAuthorizationSpec, `role "nolog" is not permitted to log in`)
	if got := rec.list(); len(got) != 2 {
		t.Fatalf("a refusal after a right password waited: %v", got)
	}
}

// Failures for one name queue: each answer waits delay after the
// previous one's, however many connections guess at once; another name
// does not wait in that queue, and the queue drains with time.
func TestFailureDelayQueuesPerName(t *testing.T) {
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := &sleeps{}
	f := newFailureDelay(time.Second, func() time.Time { return now }, rec.sleep)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		f.wait(ctx, "admin") // three concurrent guesses: none has slept yet
	}
	f.wait(ctx, "alice")
	want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, time.Second}
	if got := rec.list(); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Fatalf("delays %v, want %v", got, want)
	}
	now = now.Add(time.Minute)
	f.wait(ctx, "admin")
	if got := rec.list(); got[len(got)-1] != time.Second {
		t.Fatalf("a failure a minute later waited %v, want 1s", got[len(got)-1])
	}
	// Endless names do not grow the table past its bound.
	for i := 0; i < maxDelayedNames+100; i++ {
		f.wait(ctx, strings.Repeat("x", i%50)+string(rune('a'+i%26))+time.Duration(i).String())
	}
	if len(f.next) > maxDelayedNames {
		t.Fatalf("%d names remembered", len(f.next))
	}
}
