//go:build pgoracle

package logictest

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// The oracle run: logic-test files whose expectations are PostgreSQL's
// answers run against a real PostgreSQL 15 as well, each in a fresh
// database, through both protocols:
//
//	go test -tags pgoracle ./logictest -run TestOracle \
//	    -pg 'postgres://postgres@127.0.0.1:5432/postgres' -pgfiles index,unique
var (
	pgDSN   = flag.String("pg", "", "DSN of a PostgreSQL server (the oracle) the -pgfiles run against")
	pgFiles = flag.String("pgfiles", "index,unique", "comma-separated testdata/*.slt files (without .slt) whose answers are PostgreSQL's")
)

func TestOracle(t *testing.T) {
	if *pgDSN == "" {
		t.Fatal("-pg is required: the DSN of the PostgreSQL to check the files against")
	}
	ctx := context.Background()
	admin, err := pgconn.Connect(ctx, *pgDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	for _, name := range strings.Split(*pgFiles, ",") {
		for _, proto := range []Protocol{Simple, Extended} {
			t.Run(name+"/"+proto.String(), func(t *testing.T) {
				db := fmt.Sprintf("logictest_%s_%s", strings.ReplaceAll(name, "/", "_"), proto)
				exec := func(sql string) {
					if _, err := admin.Exec(ctx, sql).ReadAll(); err != nil {
						t.Fatalf("%s: %v", sql, err)
					}
				}
				exec("DROP DATABASE IF EXISTS " + db)
				exec("CREATE DATABASE " + db)
				defer exec("DROP DATABASE " + db)
				cfg, err := pgconn.ParseConfig(*pgDSN)
				if err != nil {
					t.Fatal(err)
				}
				cfg.Database = db
				f := parseForRun(t, filepath.Join(testdataDir, name+".slt"))
				f.Run(t, Config{Protocol: proto, Connect: func(ctx context.Context) (*pgconn.PgConn, error) {
					return pgconn.ConnectConfig(ctx, cfg)
				}})
			})
		}
	}
}
