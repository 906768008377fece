package server

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/mvserver/mvserver/pgerror"
)

// SCRAM-SHA-256 (RFC 5802, RFC 7677) as PostgreSQL speaks it: the user
// name comes from the StartupMessage (clients send "n=" empty or "*"), no
// authorization identity, and SCRAM-SHA-256-PLUS with tls-server-end-point
// channel binding (RFC 5929) over TLS.
const (
	scramMechanism     = "SCRAM-SHA-256"
	scramPlusMechanism = "SCRAM-SHA-256-PLUS"
	scramBindingType   = "tls-server-end-point"
	// SCRAMIterations and the salt length are PostgreSQL's defaults
	// (scram_iterations, SCRAM_DEFAULT_SALT_LEN).
	SCRAMIterations = 4096
	scramSaltLen    = 16
	// scramNonceLen is PostgreSQL's SCRAM_RAW_NONCE_LEN: the random bytes
	// the server adds to the client's nonce.
	scramNonceLen = 18
)

// scramSecret is a stored SCRAM-SHA-256 verifier, parsed.
type scramSecret struct {
	iterations           int
	salt                 []byte
	storedKey, serverKey []byte
}

// NewSCRAMVerifier returns what PostgreSQL stores for password:
// SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>, the three
// values in base64, with a fresh random salt.
func NewSCRAMVerifier(password string) string {
	salt := make([]byte, scramSaltLen)
	rand.Read(salt)
	return scramVerifier(password, salt, SCRAMIterations)
}

func scramVerifier(password string, salt []byte, iterations int) string {
	s := deriveSCRAM(password, salt, iterations)
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("SCRAM-SHA-256$%d:%s$%s:%s", iterations, b64(salt), b64(s.storedKey), b64(s.serverKey))
}

// deriveSCRAM computes the keys of RFC 5802 section 3 from a password.
func deriveSCRAM(password string, salt []byte, iterations int) scramSecret {
	salted, err := pbkdf2.Key(sha256.New, saslPrep(password), salt, iterations, sha256.Size)
	if err != nil {
		// Only FIPS 140-3 mode refuses (a salt under 16 bytes or a key
		// under 112 bits); neither is ours to choose for stored verifiers.
		panic(fmt.Sprintf("pbkdf2: %v", err))
	}
	clientKey := hmacSHA256(salted, []byte("Client Key"))
	stored := sha256.Sum256(clientKey)
	return scramSecret{
		iterations: iterations,
		salt:       salt,
		storedKey:  stored[:],
		serverKey:  hmacSHA256(salted, []byte("Server Key")),
	}
}

func hmacSHA256(key, msg []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(msg)
	return h.Sum(nil)
}

// parseSCRAMVerifier parses a stored verifier; ok is false for anything
// else (an MD5 hash, no password, a malformed string).
func parseSCRAMVerifier(v string) (s scramSecret, ok bool) {
	rest, found := strings.CutPrefix(v, "SCRAM-SHA-256$")
	if !found {
		return s, false
	}
	iterSalt, keys, found := strings.Cut(rest, "$")
	if !found {
		return s, false
	}
	iter, salt, found := strings.Cut(iterSalt, ":")
	if !found {
		return s, false
	}
	stored, server, found := strings.Cut(keys, ":")
	if !found {
		return s, false
	}
	n, err := strconv.Atoi(iter)
	if err != nil || n <= 0 {
		return s, false
	}
	dec := base64.StdEncoding.DecodeString
	s.iterations = n
	if s.salt, err = dec(salt); err != nil || len(s.salt) == 0 {
		return s, false
	}
	if s.storedKey, err = dec(stored); err != nil || len(s.storedKey) != sha256.Size {
		return s, false
	}
	if s.serverKey, err = dec(server); err != nil || len(s.serverKey) != sha256.Size {
		return s, false
	}
	return s, true
}

// IsSCRAMVerifier reports whether v is a well-formed SCRAM-SHA-256
// verifier (CREATE ROLE … PASSWORD stores such a string as it is).
func IsSCRAMVerifier(v string) bool {
	_, ok := parseSCRAMVerifier(v)
	return ok
}

// checkPassword reports whether password matches the verifier.
func (s scramSecret) checkPassword(password string) bool {
	d := deriveSCRAM(password, s.salt, s.iterations)
	return subtle.ConstantTimeCompare(d.storedKey, s.storedKey)&subtle.ConstantTimeCompare(d.serverKey, s.serverKey) == 1
}

// scramExchange is one server-side SCRAM conversation.
type scramExchange struct {
	ex   AuthExchange
	user string
	// secret is nil for a mock exchange: the role does not exist or has no
	// SCRAM verifier. The conversation then runs to its end with a salt
	// derived from the user name and fails like a wrong password, so a
	// client learns nothing about which roles exist.
	secret   *scramSecret
	mockSalt []byte
	// binding is the tls-server-end-point data of a TLS connection, nil
	// without TLS (or when it is unknown): SCRAM-SHA-256-PLUS is offered
	// only with it.
	binding []byte
}

// run sends AuthenticationSASL and carries the conversation to
// AuthenticationSASLFinal. A nil result means the client proved it knows
// the password.
func (x *scramExchange) run() error {
	mechs := []string{scramMechanism}
	if x.binding != nil {
		mechs = []string{scramPlusMechanism, scramMechanism}
	}
	if err := x.ex.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: mechs}); err != nil {
		return err
	}
	msg, err := x.ex.Receive()
	if err != nil {
		return err
	}
	init, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok {
		return unexpectedAuthMessage("SASL response", msg)
	}
	if init.AuthMechanism != scramMechanism && (init.AuthMechanism != scramPlusMechanism || x.binding == nil) {
		return pgerror.New(pgerror.ProtocolViolation, "client selected an invalid SASL authentication mechanism")
	}
	first, err := parseClientFirst(string(init.Data), init.AuthMechanism == scramPlusMechanism, x.binding != nil)
	if err != nil {
		return err
	}

	secret := x.secret
	if secret == nil {
		secret = &scramSecret{iterations: SCRAMIterations, salt: x.mockSalt}
	}
	raw := make([]byte, scramNonceLen)
	rand.Read(raw)
	nonce := first.nonce + base64.StdEncoding.EncodeToString(raw)
	serverFirst := fmt.Sprintf("r=%s,s=%s,i=%d", nonce, base64.StdEncoding.EncodeToString(secret.salt), secret.iterations)
	if err := x.ex.Send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)}); err != nil {
		return err
	}

	msg, err = x.ex.Receive()
	if err != nil {
		return err
	}
	resp, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return unexpectedAuthMessage("SASL response", msg)
	}
	final, err := parseClientFinal(string(resp.Data))
	if err != nil {
		return err
	}
	cbind := []byte(first.gs2Header)
	if first.cbFlag == 'p' {
		cbind = append(cbind, x.binding...)
	}
	if !bytes.Equal(final.channelBinding, cbind) {
		return scramError("SCRAM channel binding check failed.")
	}
	if final.nonce != nonce {
		return scramError("Nonce does not match.")
	}
	authMessage := first.bare + "," + serverFirst + "," + final.withoutProof
	if x.secret == nil || !x.secret.verifyProof(authMessage, final.proof) {
		return passwordFailed(x.user)
	}
	sig := hmacSHA256(x.secret.serverKey, []byte(authMessage))
	return x.ex.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(sig))})
}

// verifyProof checks a ClientProof: ClientKey = ClientProof XOR
// HMAC(StoredKey, AuthMessage) must hash to StoredKey.
func (s *scramSecret) verifyProof(authMessage string, proof []byte) bool {
	if len(proof) != sha256.Size {
		return false
	}
	sig := hmacSHA256(s.storedKey, []byte(authMessage))
	clientKey := make([]byte, sha256.Size)
	for i := range clientKey {
		clientKey[i] = proof[i] ^ sig[i]
	}
	h := sha256.Sum256(clientKey)
	return subtle.ConstantTimeCompare(h[:], s.storedKey) == 1
}

// clientFirst is a parsed client-first-message.
type clientFirst struct {
	gs2Header string // "n,," / "y,," / "p=tls-server-end-point,,"
	cbFlag    byte   // 'n', 'y' or 'p'
	bare      string // client-first-message-bare, part of AuthMessage
	nonce     string
}

// parseClientFirst parses gs2-header client-first-message-bare. plus says
// the client chose SCRAM-SHA-256-PLUS, offered whether the server listed it.
func parseClientFirst(s string, plus, offered bool) (clientFirst, error) {
	var cf clientFirst
	if s == "" {
		return cf, scramError("The message is empty.")
	}
	orig := s
	cf.cbFlag = s[0]
	switch {
	case strings.HasPrefix(s, "p="):
		typ, _, _ := strings.Cut(s[2:], ",")
		if !plus {
			return cf, pgerror.New(pgerror.ProtocolViolation, "malformed SCRAM message").
				WithDetail("The client selected SCRAM-SHA-256 without channel binding, but the SCRAM message includes channel binding data.")
		}
		if typ != scramBindingType {
			return cf, pgerror.New(pgerror.ProtocolViolation, "unsupported SCRAM channel-binding type \"%s\"", typ)
		}
		s = s[len("p=")+len(typ):]
	case strings.HasPrefix(s, "y"), strings.HasPrefix(s, "n"):
		if plus {
			return cf, pgerror.New(pgerror.ProtocolViolation, "channel binding is required, but client does not support it")
		}
		if cf.cbFlag == 'y' && offered {
			// The client supports channel binding and believes we do not:
			// someone in between removed SCRAM-SHA-256-PLUS from our list.
			return cf, pgerror.New(pgerror.ProtocolViolation, "SCRAM channel binding negotiation error").
				WithDetail("The client supports SCRAM channel binding but thinks the server does not.  However, this server does support channel binding.")
		}
		s = s[1:]
	default:
		return cf, scramError("Unexpected channel-binding flag \"%c\".", s[0])
	}
	if !strings.HasPrefix(s, ",") {
		return cf, scramError("Comma expected, but found \"%s\".", s)
	}
	s = s[1:]
	if strings.HasPrefix(s, "a=") {
		return cf, pgerror.New(pgerror.FeatureNotSupported, "client uses authorization identity, but it is not supported")
	}
	if !strings.HasPrefix(s, ",") {
		return cf, scramError("Unexpected attribute in client-first-message.")
	}
	bare := s[1:]
	cf.gs2Header, cf.bare = orig[:len(orig)-len(bare)], bare
	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") {
		return cf, scramError("Expected attribute \"n\" in client-first-message.")
	}
	if !strings.HasPrefix(attrs[1], "r=") || len(attrs[1]) == 2 {
		return cf, scramError("Expected attribute \"r\" in client-first-message.")
	}
	cf.nonce = attrs[1][2:]
	for _, c := range cf.nonce {
		if c < 0x21 || c > 0x7E {
			return cf, scramError("Could not parse SCRAM nonce.")
		}
	}
	for _, ext := range attrs[2:] {
		if strings.HasPrefix(ext, "m=") {
			return cf, pgerror.New(pgerror.FeatureNotSupported, "client requires an unsupported SCRAM extension")
		}
	}
	return cf, nil
}

// clientFinal is a parsed client-final-message.
type clientFinal struct {
	channelBinding []byte // decoded "c="
	nonce          string
	proof          []byte
	withoutProof   string // client-final-message-without-proof, part of AuthMessage
}

func parseClientFinal(s string) (clientFinal, error) {
	var cf clientFinal
	i := strings.LastIndex(s, ",p=")
	if i < 0 {
		return cf, scramError("Could not find proof in client-final-message.")
	}
	cf.withoutProof = s[:i]
	proof, err := base64.StdEncoding.DecodeString(s[i+len(",p="):])
	if err != nil {
		return cf, scramError("Malformed proof in client-final-message.")
	}
	cf.proof = proof
	attrs := strings.Split(cf.withoutProof, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "c=") {
		return cf, scramError("Expected attribute \"c\" in client-final-message.")
	}
	if cf.channelBinding, err = base64.StdEncoding.DecodeString(attrs[0][2:]); err != nil {
		return cf, scramError("Malformed channel binding in client-final-message.")
	}
	if !strings.HasPrefix(attrs[1], "r=") {
		return cf, scramError("Expected attribute \"r\" in client-final-message.")
	}
	cf.nonce = attrs[1][2:]
	return cf, nil
}

func scramError(detail string, args ...any) error {
	return pgerror.New(pgerror.ProtocolViolation, "malformed SCRAM message").WithDetail(detail, args...)
}
