package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// COPY's option checks give PostgreSQL 15's SQLSTATE, message and position
// for the same statement (each expectation was taken from it).
func TestCopyOptionErrors(t *testing.T) {
	c := connect(t, startServer(t), pgx.QueryExecModeSimpleProtocol)
	mustExec(t, c, `CREATE TABLE t1 (a INT PRIMARY KEY, b TEXT NOT NULL, c INT DEFAULT 7, d TEXT)`)
	for _, tc := range []struct {
		sql, code, msg string
		pos            int32
	}{
		{`copy t1 from stdin (format xml)`, "22023", `COPY format "xml" not recognized`, 21},
		{`copy t1 from stdin (delimiter 'ab')`, "0A000", "COPY delimiter must be a single one-byte character", 0},
		{`copy t1 from stdin (format csv, quote 'ab')`, "0A000", "COPY quote must be a single one-byte character", 0},
		{`copy t1 from stdin (force_quote (a))`, "0A000", "COPY force quote available only in CSV mode", 0},
		{`copy t1 from stdin (format csv, force_quote (a))`, "0A000", "COPY force quote only available using COPY TO", 0},
		{`copy t1 to stdout (force_null (a))`, "0A000", "COPY force null available only in CSV mode", 0},
		{`copy t1 to stdout (format csv, force_not_null (a))`, "0A000", "COPY force not null only available using COPY FROM", 0},
		{`copy t1 from stdin (delimiter ',', delimiter ';')`, "42601", "conflicting or redundant options", 36},
		{`copy t1 from stdin (escape 'x')`, "0A000", "COPY escape available only in CSV mode", 0},
		{`copy t1 from stdin (format csv, delimiter ',', quote ',')`, "22023", "COPY delimiter and quote must be different", 0},
		{`copy t1 from stdin (null E'\n')`, "22023", "COPY null representation cannot use newline or carriage return", 0},
		{`copy t1 from stdin (delimiter E'\\')`, "22023", `COPY delimiter cannot be "\"`, 0},
		{`copy t1 from stdin (delimiter '.')`, "22023", `COPY delimiter cannot be "."`, 0},
		{`copy t1 from stdin (encoding 'nope')`, "22023", `argument to option "encoding" must be a valid encoding name`, 21},
		{`copy t1 from stdin (encoding 'latin1')`, "0A000", `COPY encoding "latin1" is not supported; mvserver speaks UTF8 only`, 0},
		{`copy t1 from stdin (bogus 1)`, "42601", `option "bogus" not recognized`, 21},
		{`copy t1 from stdin (format csv, header 'maybe')`, "42601", `header requires a Boolean value or "match"`, 0},
		{`copy t1 to stdout (header match)`, "0A000", `cannot use "match" with HEADER in COPY TO`, 0},
		{`copy t1 from stdin (freeze 2)`, "42601", "freeze requires a Boolean value", 0},
		{`copy t1 from stdin (format csv, null ',')`, "0A000", "COPY delimiter must not appear in the NULL specification", 0},
		{`copy t1 from stdin (format csv, null '"')`, "0A000", "CSV quote character must not appear in the NULL specification", 0},
		{`copy t1 from stdin (delimiter)`, "42601", "delimiter requires a parameter", 0},
		{`copy t1 to stdout (format csv, force_quote a)`, "22023", `argument to option "force_quote" must be a list of column names`, 32},
		{`copy t1 from stdin (format 'CSV')`, "22023", `COPY format "CSV" not recognized`, 21},
		{`copy t1 (a) from stdin (format csv, force_not_null (b))`, "42P10", `FORCE_NOT_NULL column "b" not referenced by COPY`, 0},
		{`copy t1 from stdin (format csv, force_null (zz))`, "42703", `column "zz" of relation "t1" does not exist`, 0},
		{`copy t1 from stdin (format binary, delimiter ',')`, "42601", "cannot specify DELIMITER in BINARY mode", 0},
	} {
		_, err := c.PgConn().CopyFrom(context.Background(), strings.NewReader(""), tc.sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != tc.code || pe.Message != tc.msg || pe.Position != tc.pos {
			t.Errorf("%s: got %v (position %d), want %s %q at %d", tc.sql, err, errPosition(err), tc.code, tc.msg, tc.pos)
		}
	}
	// Accepted spellings: FORMAT in either case of keyword, the old syntax,
	// FREEZE, ENCODING UTF8 under any of PostgreSQL's names.
	for _, sql := range []string{
		`copy t1 from stdin (FORMAT CSV)`,
		`COPY t1 FROM STDIN WITH CSV HEADER DELIMITER ',' NULL AS '' FORCE NOT NULL b QUOTE '"' ESCAPE '"'`,
		`copy t1 from stdin (freeze, encoding 'UTF-8')`,
		`copy t1 from stdin with (freeze on, encoding 'unicode', header false)`,
	} {
		if _, err := c.PgConn().CopyFrom(context.Background(), strings.NewReader(""), sql); err != nil {
			t.Errorf("%s: %v", sql, err)
		}
	}
}

func errPosition(err error) int32 {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Position
	}
	return -1
}
