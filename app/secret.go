package app

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// serverSecretFile holds the server's secret in the data directory: 32
// random bytes made at the first start. SCRAM's mock salts for unknown
// roles derive from it (server.AuthConfig.MockSecret), so they stay the
// same across restarts, as PostgreSQL's mock authentication nonce in
// pg_control does.
const serverSecretFile = "server_secret"

const serverSecretLen = 32

// serverSecret reads the data directory's secret, making it when it is
// missing. An in-memory server, or one that cannot write the file (a full
// disk at the first start of a data directory from before the secret),
// gets a secret for this process only, with a warning: mock salts then
// change at the next start.
func serverSecret(cfg Config) []byte {
	if cfg.InMemory {
		return randomSecret()
	}
	path := filepath.Join(cfg.DataDir, serverSecretFile)
	b, err := os.ReadFile(path)
	if err == nil && len(b) == serverSecretLen {
		return b
	}
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		cfg.Logger.Warn("the server secret is unreadable or damaged; making a new one", "file", path, "err", err)
	}
	s := randomSecret()
	if err := writeFileAtomic(path, s); err != nil {
		cfg.Logger.Warn("cannot keep the server secret: SCRAM's mock salts for unknown roles will change at the next start", "file", path, "err", err)
	}
	return s
}

func randomSecret() []byte {
	b := make([]byte, serverSecretLen)
	_, _ = rand.Read(b)
	return b
}

// writeFileAtomic writes b to path through a synced temporary file and a
// rename, so a crash leaves the old file or the new one, never a part.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
