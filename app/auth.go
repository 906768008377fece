package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/server"
	"github.com/mvserver/mvserver/storage"
)

// DefaultSuperuser is the bootstrap superuser's name when none is given.
const DefaultSuperuser = "mvserver"

// DefaultAuthFailureDelay holds back the answer to a failed password
// authentication on the SQL port (server.AuthConfig.FailureDelay): with
// the delays of one user name queued, guessing its password runs at one
// attempt a second however many connections try.
const DefaultAuthFailureDelay = time.Second

// authSetup is what Config's authentication settings come to.
type authSetup struct {
	superuser string
	// auth is nil without authentication (server.TrustLoopback); set, the
	// engine requires roles.
	auth server.Authenticator
	tls  *tls.Config
}

// setupAuth loads the TLS certificate and the HBA rules, creates the
// bootstrap superuser when it is missing (and sets its password when one
// is given), and builds the Authenticator: none when neither rules nor a
// superuser password are configured, the file's rules with --hba, else
// server.DefaultHBA (SCRAM from loopback only).
func setupAuth(cfg Config, db *storage.DB, cat *catalog.Manager) (authSetup, error) {
	a := authSetup{superuser: cfg.Superuser}
	if a.superuser == "" {
		a.superuser = DefaultSuperuser
	}
	switch {
	case cfg.TLSCert != "" && cfg.TLSKey != "":
		var err error
		if a.tls, err = server.LoadTLSConfig(cfg.TLSCert, cfg.TLSKey); err != nil {
			return a, fmt.Errorf("load TLS certificate: %w", err)
		}
	case cfg.TLSCert != "" || cfg.TLSKey != "":
		return a, errors.New("TLS needs both a certificate and its key (--tls-cert and --tls-key)")
	}
	var hba *server.HBA
	if cfg.HBAFile != "" {
		var err error
		if hba, err = server.LoadHBA(cfg.HBAFile); err != nil {
			return a, fmt.Errorf("load HBA rules: %w", err)
		}
		if r, ok := hba.HostSSL(); ok && a.tls == nil {
			return a, fmt.Errorf("%s:%d: hostssl record cannot match because TLS is not configured (--tls-cert and --tls-key)", r.File, r.Line)
		}
	}
	if err := bootstrapSuperuser(db, cat, a.superuser, cfg.SuperuserPassword); err != nil {
		if !readOnlyStart(db, err) {
			return a, fmt.Errorf("bootstrap superuser %q: %w", a.superuser, err)
		}
		cfg.Logger.Warn("read-only start: the bootstrap superuser is created or given its password at the next writable start", "superuser", a.superuser, "err", err)
	}
	if hba != nil || cfg.SuperuserPassword != "" {
		delay := cfg.AuthFailureDelay
		switch {
		case delay == 0:
			delay = DefaultAuthFailureDelay
		case delay < 0:
			delay = 0
		}
		a.auth = server.NewAuthenticator(server.AuthConfig{HBA: hba, Credentials: roleCredentials(db, cat),
			MockSecret: serverSecret(cfg), FailureDelay: delay})
	}
	return a, nil
}

// bootstrapSuperuser creates the role name as SUPERUSER LOGIN when it does
// not exist, and gives it password when one is given and it has another.
func bootstrapSuperuser(db *storage.DB, cat *catalog.Manager, name, password string) error {
	txn := db.Begin()
	defer txn.Rollback()
	c, err := cat.Snapshot(txn)
	if err != nil {
		return err
	}
	r, ok := c.Role(name)
	switch {
	case !ok:
		nc := c.Clone()
		r = &catalog.Role{ID: nc.AllocID(), Name: name, Superuser: true, Inherit: true, CreateRole: true, CreateDB: true,
			Login: true, ConnLimit: -1}
		if password != "" {
			r.Password = server.NewSCRAMVerifier(password)
		}
		c = nc
	case password != "" && !server.CheckPassword(r.Password, name, password):
		r = r.Clone()
		r.Password = server.NewSCRAMVerifier(password)
		c = c.Clone()
	default:
		return nil
	}
	c.PutRole(r)
	if err := cat.Persist(txn, c, []uint32{r.ID}, nil); err != nil {
		return err
	}
	return txn.Commit()
}

// roleCredentials looks roles up in the latest committed catalog.
func roleCredentials(db *storage.DB, cat *catalog.Manager) server.CredentialsFunc {
	return func(_ context.Context, user string) (server.Credentials, error) {
		txn := db.Begin()
		defer txn.Rollback()
		c, err := cat.Snapshot(txn)
		if err != nil {
			return server.Credentials{}, err
		}
		r, ok := c.Role(user)
		if !ok {
			return server.Credentials{}, nil
		}
		cr := server.Credentials{Exists: true, Login: r.Login, Verifier: r.Password}
		if r.ValidUntil != nil {
			cr.ValidUntil = *r.ValidUntil
		}
		return cr, nil
	}
}

// consolePasswordCheck checks a console login against the role's stored
// verifier: the role must exist, may log in and have an unexpired password.
func consolePasswordCheck(db *storage.DB, cat *catalog.Manager) func(user, password string) bool {
	creds := roleCredentials(db, cat)
	return func(user, password string) bool {
		cr, err := creds(context.Background(), user)
		if err != nil || !cr.Exists || !cr.Login || cr.Verifier == "" {
			return false
		}
		if !cr.ValidUntil.IsZero() && time.Now().After(cr.ValidUntil) {
			return false
		}
		return server.CheckPassword(cr.Verifier, user, password)
	}
}
