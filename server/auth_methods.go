package server

import (
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// Credentials are what authentication knows of a role.
type Credentials struct {
	// Exists says a role of that name exists; Login that it may log in.
	Exists, Login bool
	// Verifier is the stored password: "SCRAM-SHA-256$…", "md5…", or ""
	// when the role has none (or does not exist).
	Verifier string
	// ValidUntil is when the password expires; zero means never.
	ValidUntil time.Time
}

// CredentialsFunc looks up the credentials of the role named user. A role
// that does not exist has zero Credentials and no error.
type CredentialsFunc func(ctx context.Context, user string) (Credentials, error)

// AuthConfig configures NewAuthenticator.
type AuthConfig struct {
	// HBA holds the rules; nil means DefaultHBA.
	HBA *HBA
	// Credentials looks up stored passwords. Nil: no role has one.
	Credentials CredentialsFunc
	// Now tells time for VALID UNTIL and the failure delay; nil means
	// time.Now.
	Now func() time.Time
	// MockSecret is the server's secret that the salt shown for an
	// unknown role (or one without a SCRAM verifier) is derived from, with
	// the role's name; a secret kept across restarts (PostgreSQL's mock
	// authentication nonce) keeps that salt the same across restarts, as
	// a real verifier's is, so a client cannot tell unknown names from
	// known ones by asking twice. Nil: a random secret for this process.
	MockSecret []byte
	// FailureDelay holds back the answer to a failed password
	// authentication (auth_delay.go): per user name the delays queue. 0:
	// none.
	FailureDelay time.Duration
	// Sleep waits for the failure delay (tests record it); nil sleeps.
	Sleep func(ctx context.Context, d time.Duration)
}

// NewAuthenticator returns an Authenticator that follows cfg.HBA: the first
// rule matching the connection's type (local, host, hostssl, hostnossl),
// database, user and address decides its method. As in PostgreSQL:
//
//   - no rule matches: FATAL 28000 "no pg_hba.conf entry …";
//   - reject: FATAL 28000 "pg_hba.conf rejects connection …";
//   - trust: admitted without a password;
//   - scram-sha-256: a SCRAM exchange, which needs a SCRAM verifier;
//   - md5: an MD5 exchange when the stored password is an MD5 hash, else
//     SCRAM (a SCRAM verifier cannot answer an MD5 challenge);
//   - password: the password in clear, checked against either form.
//
// A wrong password, an unknown role, a role without a password and an
// expired one all get FATAL 28P01 "password authentication failed for user
// …", after the exchange has run to its end, so a client cannot tell them
// apart. With a Credentials function, a client admitted by trust or by its
// password must also name a role that exists (else FATAL 28000 "role … does
// not exist") and may log in (28000 "role … is not permitted to log in"),
// the checks PostgreSQL makes right after authentication.
func NewAuthenticator(cfg AuthConfig) Authenticator {
	a := &authenticator{cfg: cfg}
	if a.cfg.HBA == nil {
		a.cfg.HBA = DefaultHBA()
	}
	if a.cfg.Now == nil {
		a.cfg.Now = time.Now
	}
	if a.cfg.MockSecret != nil {
		h := hmac.New(sha256.New, a.cfg.MockSecret)
		h.Write([]byte("mvserver SCRAM mock salt"))
		copy(a.mockKey[:], h.Sum(nil))
	} else {
		rand.Read(a.mockKey[:])
	}
	a.delay = newFailureDelay(cfg.FailureDelay, a.cfg.Now, cfg.Sleep)
	return a.authenticate
}

type authenticator struct {
	cfg AuthConfig
	// mockKey makes the salt shown for a role without a SCRAM verifier a
	// stable function of its name, as a real verifier's salt is: for as
	// long as AuthConfig.MockSecret stays the same (else for the process).
	mockKey [32]byte
	delay   *failureDelay
}

func (a *authenticator) authenticate(ctx context.Context, info StartupInfo, ex AuthExchange) error {
	encrypted := ex.TLS() != nil
	rule := a.cfg.HBA.Match(info, encrypted)
	if rule == nil {
		return pgerror.New(pgerror.InvalidAuthorizationSpec,
			`no pg_hba.conf entry for host "%s", user "%s", database "%s", %s`,
			hostOf(info.RemoteAddr), info.User, info.Database, encryptionName(encrypted))
	}
	if rule.Method == MethodReject {
		return pgerror.New(pgerror.InvalidAuthorizationSpec,
			`pg_hba.conf rejects connection for host "%s", user "%s", database "%s", %s`,
			hostOf(info.RemoteAddr), info.User, info.Database, encryptionName(encrypted))
	}
	if a.cfg.Credentials == nil {
		err := a.method(rule.Method, info.User, Credentials{}, ex)
		a.failed(ctx, info.User, err)
		return err
	}
	cred, err := a.cfg.Credentials(ctx, info.User)
	if err != nil {
		return err
	}
	if err := a.method(rule.Method, info.User, cred, ex); err != nil {
		a.failed(ctx, info.User, err)
		return err
	}
	if !cred.Exists {
		return pgerror.New(pgerror.InvalidAuthorizationSpec, `role "%s" does not exist`, info.User)
	}
	if !cred.Login {
		return pgerror.New(pgerror.InvalidAuthorizationSpec, `role "%s" is not permitted to log in`, info.User)
	}
	return nil
}

// method runs a method other than reject for user with the stored cred.
func (a *authenticator) method(m Method, user string, cred Credentials, ex AuthExchange) error {
	if m == MethodTrust {
		return nil
	}
	verifier := cred.Verifier
	if !cred.ValidUntil.IsZero() && !a.cfg.Now().Before(cred.ValidUntil) {
		verifier = "" // expired: as if there were no password
	}
	switch m {
	case MethodPassword:
		return a.cleartext(ex, user, verifier)
	case MethodMD5:
		if IsMD5Verifier(verifier) {
			return md5Exchange(ex, user, verifier)
		}
	}
	x := &scramExchange{ex: ex, user: user, mockSalt: a.mockSalt(user), binding: ex.ChannelBinding()}
	if s, ok := parseSCRAMVerifier(verifier); ok {
		x.secret = &s
	}
	return x.run()
}

// failed holds back a failed password authentication's answer (28P01).
func (a *authenticator) failed(ctx context.Context, user string, err error) {
	if err != nil && pgerror.Code(err) == pgerror.InvalidPassword {
		a.delay.wait(ctx, user)
	}
}

func encryptionName(tls bool) string {
	if tls {
		return "SSL encryption"
	}
	return "no encryption"
}

func (a *authenticator) mockSalt(user string) []byte {
	h := hmac.New(sha256.New, a.mockKey[:])
	h.Write([]byte(user))
	return h.Sum(nil)[:scramSaltLen]
}

// cleartext asks for the password in clear (method password) and checks
// it against a SCRAM verifier or an MD5 hash.
func (a *authenticator) cleartext(ex AuthExchange, user, verifier string) error {
	pw, err := receivePassword(ex, &pgproto3.AuthenticationCleartextPassword{})
	if err != nil {
		return err
	}
	if pw == "" {
		return passwordFailed(user) // PostgreSQL: "empty password returned by client"
	}
	if !CheckPassword(verifier, user, pw) {
		if verifier == "" {
			// Spend what a real check costs: the answer's delay must not
			// tell whether the role exists.
			s := scramSecret{salt: a.mockSalt(user), iterations: SCRAMIterations}
			s.checkPassword(pw)
		}
		return passwordFailed(user)
	}
	return nil
}

// md5Exchange sends AuthenticationMD5Password with a random salt; the
// client answers "md5" + hex(md5(hex(md5(password ‖ user)) ‖ salt)), which
// the stored hash md5 + hex(md5(password ‖ user)) lets us compute.
func md5Exchange(ex AuthExchange, user, stored string) error {
	var salt [4]byte
	rand.Read(salt[:])
	got, err := receivePassword(ex, &pgproto3.AuthenticationMD5Password{Salt: salt})
	if err != nil {
		return err
	}
	want := md5Salted(strings.TrimPrefix(stored, "md5"), salt[:])
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return passwordFailed(user)
	}
	return nil
}

func md5Salted(hexHash string, salt []byte) string {
	sum := md5.Sum(append([]byte(hexHash), salt...))
	return "md5" + hex.EncodeToString(sum[:])
}

// receivePassword sends req and reads the PasswordMessage answering it.
func receivePassword(ex AuthExchange, req pgproto3.BackendMessage) (string, error) {
	if err := ex.Send(req); err != nil {
		return "", err
	}
	msg, err := ex.Receive()
	if err != nil {
		return "", err
	}
	pw, ok := msg.(*pgproto3.PasswordMessage)
	if !ok {
		return "", unexpectedAuthMessage("password response", msg)
	}
	return pw.Password, nil
}

// MD5Verifier is what PostgreSQL stores for password with
// password_encryption = md5: "md5" + hex(md5(password ‖ user)).
func MD5Verifier(password, user string) string {
	sum := md5.Sum([]byte(password + user))
	return "md5" + hex.EncodeToString(sum[:])
}

// IsMD5Verifier reports whether v has the form of an MD5 hash as
// PostgreSQL stores it: "md5" and 32 lower-case hex digits.
func IsMD5Verifier(v string) bool {
	if len(v) != 35 || !strings.HasPrefix(v, "md5") {
		return false
	}
	for _, c := range v[3:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// CheckPassword reports whether password is the one verifier was made from
// (a SCRAM verifier, or an MD5 hash salted with user). No verifier matches
// nothing.
func CheckPassword(verifier, user, password string) bool {
	if s, ok := parseSCRAMVerifier(verifier); ok {
		return s.checkPassword(password)
	}
	if IsMD5Verifier(verifier) {
		return subtle.ConstantTimeCompare([]byte(MD5Verifier(password, user)), []byte(verifier)) == 1
	}
	return false
}

func passwordFailed(user string) error {
	return pgerror.New(pgerror.InvalidPassword, `password authentication failed for user "%s"`, user)
}

func unexpectedAuthMessage(want string, got pgproto3.FrontendMessage) error {
	name := strings.TrimPrefix(fmt.Sprintf("%T", got), "*pgproto3.")
	return pgerror.New(pgerror.ProtocolViolation, "expected %s, got %s", want, name)
}
