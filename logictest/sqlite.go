package logictest

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// SQLite's sqllogictest corpus (https://www.sqlite.org/sqllogictest), the
// files many SQL engines run to prove their answers. Its format differs
// from testdata's: a result is one value a line, long results are given
// as "N values hashing to <md5>", and records are guarded for engines
// with skipif/onlyif. RunSQLiteFile runs such a file on a fresh server
// through the simple protocol and reports every record whose outcome
// differs (sqlite_test.go runs the corpus behind the sqllogictest build
// tag).

// sqliteRecord is one statement or query of a corpus file.
type sqliteRecord struct {
	line      int
	sql       string
	query     bool
	expectErr bool
	types     string
	sort      string // nosort, rowsort, valuesort
	expected  []string
}

// parseSQLite reads a corpus file, keeping the records a PostgreSQL
// engine runs (skipif postgresql and onlyif <another engine> are left out).
func parseSQLite(text string) ([]sqliteRecord, error) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []sqliteRecord
	skip := false
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		f := strings.Fields(l)
		switch f[0] {
		case "skipif":
			skip = skip || len(f) > 1 && f[1] == "postgresql"
			continue
		case "onlyif":
			skip = skip || len(f) > 1 && f[1] != "postgresql"
			continue
		case "hash-threshold":
			continue
		case "halt":
			if !skip {
				return out, nil
			}
			skip = false
			continue
		case "statement", "query":
		default:
			return nil, fmt.Errorf("line %d: unknown record %q", i+1, l)
		}
		rec := sqliteRecord{line: i + 1}
		if f[0] == "statement" {
			rec.expectErr = len(f) > 1 && f[1] == "error"
		} else {
			rec.query = true
			if len(f) > 1 {
				rec.types = f[1]
			}
			rec.sort = "nosort"
			if len(f) > 2 {
				rec.sort = f[2]
			}
		}
		var sql []string
		i++
		for ; i < len(lines) && strings.TrimSpace(lines[i]) != "" && lines[i] != "----"; i++ {
			sql = append(sql, lines[i])
		}
		rec.sql = strings.Join(sql, "\n")
		if i < len(lines) && lines[i] == "----" {
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				rec.expected = append(rec.expected, strings.TrimSpace(lines[i]))
			}
		}
		if !skip {
			out = append(out, rec)
		}
		skip = false
	}
	return out, nil
}

// RunSQLiteFile runs the corpus file at path on a fresh server; each
// statement and query gets timeout.
func RunSQLiteFile(t *testing.T, path string, timeout time.Duration) {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := parseSQLite(string(text))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	cfg := startServer(t, "mvserver")
	conn, err := cfg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	failures := 0
	for _, rec := range recs {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		res := conn.Exec(ctx, rec.sql)
		results, err := res.ReadAll()
		cancel()
		fail := func(format string, args ...any) {
			failures++
			if failures <= 20 {
				t.Errorf("%s:%d: %s\n%s", path, rec.line, fmt.Sprintf(format, args...), rec.sql)
			}
		}
		if err != nil {
			if !rec.expectErr {
				fail("failed: %v", err)
			}
			if conn.IsClosed() {
				t.Fatalf("%s:%d: the connection closed", path, rec.line)
			}
			continue
		}
		if rec.expectErr {
			fail("succeeded, an error was expected")
			continue
		}
		if !rec.query {
			continue
		}
		last := results[len(results)-1]
		got := sqliteValues(last, rec.types)
		switch rec.sort {
		case "rowsort":
			sortRows(got, len(rec.types))
		case "valuesort":
			sort.Strings(got)
		}
		if !sqliteMatch(rec.expected, got) {
			shown := got
			if len(shown) > 20 {
				shown = append(shown[:20:20], "…")
			}
			fail("got %d values %v, want %v", len(got), shown, rec.expected)
		}
	}
	if failures > 20 {
		t.Errorf("%s: %d records failed in all", path, failures)
	}
	t.Logf("%s: %d records, %d failed", path, len(recs), failures)
}

// sqliteValues renders a result one value a string, as the corpus does:
// I as an integer (a fractional value truncated), R with three decimals,
// T as text, NULL as NULL and the empty string as (empty).
func sqliteValues(r *pgconn.Result, types string) []string {
	var out []string
	for _, row := range r.Rows {
		for i, v := range row {
			if v == nil {
				out = append(out, "NULL")
				continue
			}
			s := string(v)
			kind := byte('T')
			if i < len(types) {
				kind = types[i]
			}
			switch kind {
			case 'I':
				if f, err := strconv.ParseFloat(s, 64); err == nil && strings.ContainsAny(s, ".eE") {
					s = strconv.FormatInt(int64(f), 10)
				}
			case 'R':
				if f, err := strconv.ParseFloat(s, 64); err == nil {
					s = fmt.Sprintf("%.3f", f)
				}
			}
			if s == "" {
				s = "(empty)"
			}
			out = append(out, s)
		}
	}
	return out
}

// sortRows sorts the values as rows of width n, comparing rows as the
// corpus's runner does (value by value, as strings).
func sortRows(vals []string, n int) {
	if n <= 0 {
		return
	}
	rows := make([][]string, 0, len(vals)/n)
	for i := 0; i+n <= len(vals); i += n {
		rows = append(rows, vals[i:i+n:i+n])
	}
	sort.SliceStable(rows, func(a, b int) bool {
		for k := 0; k < n; k++ {
			if rows[a][k] != rows[b][k] {
				return rows[a][k] < rows[b][k]
			}
		}
		return false
	})
	flat := make([]string, 0, len(vals))
	for _, r := range rows {
		flat = append(flat, r...)
	}
	copy(vals, flat)
}

// sqliteMatch compares values with the expected lines: the values
// themselves, or "N values hashing to H" (H the md5 of the values, each
// followed by a newline).
func sqliteMatch(expected, got []string) bool {
	if len(expected) == 1 {
		var n int
		var hash string
		if _, err := fmt.Sscanf(expected[0], "%d values hashing to %s", &n, &hash); err == nil {
			h := md5.New()
			for _, v := range got {
				h.Write([]byte(v + "\n"))
			}
			return n == len(got) && hex.EncodeToString(h.Sum(nil)) == hash
		}
	}
	return slices.Equal(expected, got)
}
