package server

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/mvserver/mvserver/pgerror"
)

// RFC 7677 section 3: user "user", password "pencil".
func TestSCRAMRFC7677Vector(t *testing.T) {
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	s := deriveSCRAM("pencil", salt, 4096)
	const (
		clientFirstBare = "n=user,r=rOprNGfwEbeRWgbNEkqO"
		serverFirst     = "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
		clientFinal     = "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
		serverFinal     = "v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="
	)
	first, err := parseClientFirst("n,,"+clientFirstBare, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if first.gs2Header != "n,," || first.bare != clientFirstBare || first.nonce != "rOprNGfwEbeRWgbNEkqO" {
		t.Fatalf("client-first parsed as %+v", first)
	}
	final, err := parseClientFinal(clientFinal)
	if err != nil {
		t.Fatal(err)
	}
	if string(final.channelBinding) != "n,," || !strings.HasSuffix(serverFirst, ",s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096") ||
		!strings.HasPrefix(serverFirst, "r="+final.nonce+",") {
		t.Fatalf("client-final parsed as %+v", final)
	}
	authMessage := clientFirstBare + "," + serverFirst + "," + final.withoutProof
	if !s.verifyProof(authMessage, final.proof) {
		t.Fatal("the RFC's proof does not verify")
	}
	bad := append([]byte(nil), final.proof...)
	bad[0] ^= 1
	if s.verifyProof(authMessage, bad) {
		t.Fatal("a changed proof verifies")
	}
	if got := "v=" + base64.StdEncoding.EncodeToString(hmacSHA256(s.serverKey, []byte(authMessage))); got != serverFinal {
		t.Fatalf("server signature %s, want %s", got, serverFinal)
	}
}

// Verifiers PostgreSQL 15 stored (CREATE ROLE alice PASSWORD 'pencil';
// SET password_encryption = 'md5'; CREATE ROLE bob PASSWORD 'secret').
const (
	pgSCRAMAlice = "SCRAM-SHA-256$4096:aHdbuerPjhAPtCfl+jIlRA==$ePeHkq+EJC0iTU7l17nuKjwV3GNfBGuRfbpppZRp17U=:vGzSrIL7tawxsYSIpkHybDVJL30+qR1adjQhTUvYzPk="
	pgMD5Bob     = "md521f3163f8f86fa10bdefbfbd502a8f06"
)

func TestPostgresVerifiers(t *testing.T) {
	s, ok := parseSCRAMVerifier(pgSCRAMAlice)
	if !ok {
		t.Fatal("PostgreSQL's verifier does not parse")
	}
	if got := scramVerifier("pencil", s.salt, s.iterations); got != pgSCRAMAlice {
		t.Fatalf("verifier\n %s\nwant\n %s", got, pgSCRAMAlice)
	}
	if !CheckPassword(pgSCRAMAlice, "alice", "pencil") || CheckPassword(pgSCRAMAlice, "alice", "Pencil") {
		t.Fatal("CheckPassword against the SCRAM verifier")
	}
	if got := MD5Verifier("secret", "bob"); got != pgMD5Bob {
		t.Fatalf("md5 %s, want %s", got, pgMD5Bob)
	}
	if !CheckPassword(pgMD5Bob, "bob", "secret") || CheckPassword(pgMD5Bob, "bobby", "secret") {
		t.Fatal("CheckPassword against the MD5 hash")
	}
	if CheckPassword("", "bob", "") {
		t.Fatal("no verifier matched the empty password")
	}
}

func TestNewSCRAMVerifier(t *testing.T) {
	a, b := NewSCRAMVerifier("pw"), NewSCRAMVerifier("pw")
	if a == b {
		t.Fatal("two verifiers share a salt")
	}
	if !IsSCRAMVerifier(a) || !CheckPassword(a, "", "pw") || CheckPassword(a, "", "pw ") {
		t.Fatalf("verifier %s", a)
	}
	for _, v := range []string{"", "md5", "SCRAM-SHA-256$", "SCRAM-SHA-256$4096:c2FsdA==$abc:def",
		"SCRAM-SHA-256$x:c2FsdA==$" + strings.Repeat("A", 43) + "=:" + strings.Repeat("A", 43) + "=",
		strings.Replace(pgSCRAMAlice, "4096", "0", 1), pgSCRAMAlice + "x"} {
		if IsSCRAMVerifier(v) {
			t.Errorf("%q taken for a SCRAM verifier", v)
		}
	}
	for v, want := range map[string]bool{pgMD5Bob: true, "md5" + strings.Repeat("A", 32): false, pgMD5Bob + "0": false, "md4" + pgMD5Bob[3:]: false} {
		if IsMD5Verifier(v) != want {
			t.Errorf("IsMD5Verifier(%q) = %v", v, !want)
		}
	}
}

// SASLprep leaves ASCII alone and maps the rest as libpq does: non-ASCII
// spaces to spaces, soft hyphens dropped; a prohibited character keeps the
// password raw. (NFKC is left out: see saslPrep.)
func TestSASLPrep(t *testing.T) {
	for in, want := range map[string]string{
		"pencil":             "pencil",
		"a\x01b":             "a\x01b",
		"I\u00ADX":           "IX",
		"a\u00A0b":           "a b",
		"x\u0007\u00E9":      "x\u0007\u00E9",
		"\xff\xfe":           "\xff\xfe",
		"\u00AD":             "\u00AD",
		"priv\uE000":         "priv\uE000",
		"caf\u00E9 ünï":      "caf\u00E9 ünï",
		"\u200Bspaced\u3000": " spaced ",
	} {
		if got := saslPrep(in); got != want {
			t.Errorf("saslPrep(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseClientFirst(t *testing.T) {
	for _, tc := range []struct {
		msg           string
		plus, offered bool
		code          string // "" = ok
		header        string
	}{
		{msg: "n,,n=,r=abc", header: "n,,"},
		{msg: "n,,n=*,r=abc", header: "n,,"},
		{msg: "y,,n=,r=abc", header: "y,,"},
		{msg: "y,,n=,r=abc", offered: true, code: pgerror.ProtocolViolation},
		{msg: "p=tls-server-end-point,,n=,r=abc", plus: true, offered: true, header: "p=tls-server-end-point,,"},
		{msg: "p=tls-unique,,n=,r=abc", plus: true, offered: true, code: pgerror.ProtocolViolation},
		{msg: "p=tls-server-end-point,,n=,r=abc", code: pgerror.ProtocolViolation},
		{msg: "n,,n=,r=abc", plus: true, offered: true, code: pgerror.ProtocolViolation},
		{msg: "n,a=bob,n=,r=abc", code: pgerror.FeatureNotSupported},
		{msg: "n,,n=,r=abc,m=ext", code: pgerror.FeatureNotSupported},
		{msg: "", code: pgerror.ProtocolViolation},
		{msg: "x,,n=,r=abc", code: pgerror.ProtocolViolation},
		{msg: "n,,r=abc", code: pgerror.ProtocolViolation},
		{msg: "n,,n=,r=", code: pgerror.ProtocolViolation},
		{msg: "n,,n=,r=a b", code: pgerror.ProtocolViolation},
		{msg: "n,,n=", code: pgerror.ProtocolViolation},
		{msg: "nn,,n=,r=abc", code: pgerror.ProtocolViolation},
	} {
		cf, err := parseClientFirst(tc.msg, tc.plus, tc.offered)
		if got := pgerror.Code(err); err != nil && got != tc.code || err == nil && tc.code != "" {
			t.Errorf("%q plus=%v offered=%v: %v, want %q", tc.msg, tc.plus, tc.offered, err, tc.code)
			continue
		}
		if err == nil && cf.gs2Header != tc.header {
			t.Errorf("%q: header %q, want %q", tc.msg, cf.gs2Header, tc.header)
		}
	}
}

func TestParseClientFinal(t *testing.T) {
	for _, bad := range []string{"", "c=biws,r=abc", "c=biws,r=abc,p=!!", "r=abc,p=AAAA", "c=!!,r=abc,p=AAAA", "c=biws,p=AAAA"} {
		if _, err := parseClientFinal(bad); pgerror.Code(err) != pgerror.ProtocolViolation {
			t.Errorf("%q: %v, want 08P01", bad, err)
		}
	}
	f, err := parseClientFinal("c=biws,r=abc,x=ext,p=AAAA")
	if err != nil || f.nonce != "abc" || f.withoutProof != "c=biws,r=abc,x=ext" || len(f.proof) != 3 {
		t.Fatalf("%+v %v", f, err)
	}
}
