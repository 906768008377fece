package logictest

import (
	"crypto/md5"
	"encoding/hex"
	"slices"
	"testing"
)

// The corpus format: guards, sort modes, hashed results.
func TestParseSQLite(t *testing.T) {
	recs, err := parseSQLite(`hash-threshold 8

statement ok
CREATE TABLE t1(a INTEGER)

skipif postgresql
query I nosort
SELECT 1
----
1

onlyif mysql
statement ok
SELECT 2

skipif mysql
query II rowsort label-1
SELECT a, a
  FROM t1
----
1
2

statement error
SELECT nope
`)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3: %+v", len(recs), recs)
	}
	q := recs[1]
	if !q.query || q.types != "II" || q.sort != "rowsort" || q.sql != "SELECT a, a\n  FROM t1" || len(q.expected) != 2 {
		t.Errorf("query record %+v", q)
	}
	if !recs[2].expectErr {
		t.Errorf("statement error record %+v", recs[2])
	}
}

func TestSQLiteMatch(t *testing.T) {
	h := md5.Sum([]byte("1\nb\n"))
	hashed := "2 values hashing to " + hex.EncodeToString(h[:])
	for _, c := range []struct {
		expected, got []string
		ok            bool
	}{
		{[]string{"1", "b"}, []string{"1", "b"}, true},
		{[]string{"1", "b"}, []string{"b", "1"}, false},
		{[]string{hashed}, []string{"1", "b"}, true},
		{[]string{hashed}, []string{"1", "c"}, false},
	} {
		if got := sqliteMatch(c.expected, c.got); got != c.ok {
			t.Errorf("sqliteMatch(%v, %v) = %v", c.expected, c.got, got)
		}
	}
	vals := []string{"b", "2", "a", "9", "a", "1"}
	sortRows(vals, 2)
	if want := []string{"a", "1", "a", "9", "b", "2"}; !slices.Equal(vals, want) {
		t.Errorf("sortRows: %v, want %v", vals, want)
	}
}
