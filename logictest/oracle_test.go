//go:build oraclerewrite

package logictest

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

var (
	oracleFiles  = flag.String("oracle-files", "", "comma-separated testdata files (without .slt) whose expectations TestOracleRewrite takes from PostgreSQL")
	oraclePrefix = flag.String("oracle-db-prefix", "oracle_", "prefix of the database each file runs in (on a shared PostgreSQL, one's own prefix)")
)

// TestOracleRewrite takes the expected results of the files named by
// -oracle-files from a real PostgreSQL at PGORACLE_DSN (a superuser), each
// file run in a fresh database through the simple protocol: results,
// column types and errors (code and message) are written into the file.
// Review the diff; then run the files against mvserver as usual. Files
// written this way say so in their header.
//
//	PGORACLE_DSN=postgres://postgres@127.0.0.1:55499/postgres go test -tags oraclerewrite ./logictest -run TestOracleRewrite -args -oracle-files func_math
func TestOracleRewrite(t *testing.T) {
	dsn := os.Getenv("PGORACLE_DSN")
	if dsn == "" || *oracleFiles == "" {
		t.Fatal("set PGORACLE_DSN and -oracle-files")
	}
	for _, name := range strings.Split(*oracleFiles, ",") {
		path := filepath.Join(testdataDir, name+".slt")
		f := parseForRun(t, path)
		db := *oraclePrefix + strings.NewReplacer("/", "_", "-", "_").Replace(name)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		admin, err := pgconn.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db} {
			if _, err := admin.Exec(ctx, q).ReadAll(); err != nil {
				t.Fatal(err)
			}
		}
		admin.Close(ctx)
		cancel()
		cfg := Config{Protocol: Simple, Rewrite: true, Oracle: true, Connect: func(ctx context.Context) (*pgconn.PgConn, error) {
			c, err := pgconn.ParseConfig(dsn)
			if err != nil {
				return nil, err
			}
			c.Database = db
			return pgconn.ConnectConfig(ctx, c)
		}}
		text := f.Run(t, cfg)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
