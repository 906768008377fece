package logictest

// SCRATCH: not for commit. Runs files against a local PostgreSQL 15.

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestPGCheck(t *testing.T) {
	files := os.Getenv("PGCHECK")
	if files == "" {
		return
	}
	for _, path := range strings.Split(files, ",") {
		t.Run(path, func(t *testing.T) {
			f, err := ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			admin, err := pgconn.Connect(ctx, "host=/tmp port=55432 user=postgres dbname=postgres")
			if err != nil {
				t.Fatal(err)
			}
			db := "mvserver"
			admin.Exec(ctx, "DROP DATABASE IF EXISTS mvserver WITH (FORCE)").ReadAll()
			if _, err := admin.Exec(ctx, "CREATE DATABASE "+db).ReadAll(); err != nil {
				t.Fatal(err)
			}
			defer func() {
				admin.Exec(ctx, "DROP DATABASE "+db+" WITH (FORCE)").ReadAll()
				admin.Close(ctx)
			}()
			f.Run(t, Config{Protocol: Simple, Connect: func(ctx context.Context) (*pgconn.PgConn, error) {
				return pgconn.Connect(ctx, "host=/tmp port=55432 user=postgres dbname="+db)
			}})
		})
	}
}
