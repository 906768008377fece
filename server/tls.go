package server

import (
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"hash"
)

// LoadTLSConfig reads a PEM certificate (chain) and its key and returns the
// server's TLS configuration: TLS 1.2 at least, as PostgreSQL's default
// ssl_min_protocol_version.
func LoadTLSConfig(certFile, keyFile string) (*tls.Config, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// startTLS answers an SSLRequest with 'S' and runs the TLS handshake on the
// socket; afterwards the connection reads and writes through TLS. The
// startup read deadline bounds the handshake, and Shutdown interrupts it as
// it does any startup read. A failed handshake ends this connection only,
// without a word: a plain-text FATAL would be noise inside a handshake.
func (c *conn) startTLS() error {
	c.out.buf = append(c.out.buf, 'S')
	if err := c.out.flush(); err != nil {
		return errQuietClose
	}
	tc := tls.Server(c.nc, c.srv.cfg.TLS)
	if err := tc.HandshakeContext(c.ctx); err != nil {
		c.log.Debug("TLS handshake failed", "err", err)
		return errQuietClose
	}
	c.mu.Lock()
	c.nc = tc
	c.mu.Unlock()
	c.out.w = tc
	return nil
}

// tlsServerEndPoint is the tls-server-end-point channel binding data of
// cfg's certificate (RFC 5929 section 4.1): its hash with the algorithm of
// its signature, SHA-256 for MD5 and SHA-1. It is nil when cfg may present
// more than one certificate (the one a handshake chose is not known) or when
// the binding is undefined for the signature algorithm (Ed25519): then
// SCRAM-SHA-256-PLUS is not offered. (tls.LoadX509KeyPair fills Leaf, so
// this is one hash of the certificate per SCRAM exchange.)
func tlsServerEndPoint(cfg *tls.Config) []byte {
	if cfg == nil || len(cfg.Certificates) != 1 || cfg.GetCertificate != nil || cfg.GetConfigForClient != nil ||
		len(cfg.Certificates[0].Certificate) == 0 {
		return nil
	}
	leaf := cfg.Certificates[0].Leaf
	if leaf == nil {
		var err error
		if leaf, err = x509.ParseCertificate(cfg.Certificates[0].Certificate[0]); err != nil {
			return nil
		}
	}
	var h hash.Hash
	switch leaf.SignatureAlgorithm {
	case x509.MD5WithRSA, x509.SHA1WithRSA, x509.ECDSAWithSHA1,
		x509.SHA256WithRSA, x509.SHA256WithRSAPSS, x509.ECDSAWithSHA256:
		h = sha256.New()
	case x509.SHA384WithRSA, x509.SHA384WithRSAPSS, x509.ECDSAWithSHA384:
		h = sha512.New384()
	case x509.SHA512WithRSA, x509.SHA512WithRSAPSS, x509.ECDSAWithSHA512:
		h = sha512.New()
	default:
		return nil
	}
	h.Write(leaf.Raw)
	return h.Sum(nil)
}
