package parse

import "testing"

func TestDataChange(t *testing.T) {
	for sql, want := range map[string]bool{
		"INSERT INTO t VALUES (1)": true, "UPDATE t SET a = 1": true, "DELETE FROM t": true,
		"MERGE INTO t USING s ON t.a = s.a WHEN MATCHED THEN DELETE": true,
		"CREATE TYPE e AS ENUM ('a')":                                false, "SELECT 1": false, "not sql at all": false,
	} {
		if got := DataChange(sql); got != want {
			t.Errorf("DataChange(%q) = %v, want %v", sql, got, want)
		}
	}
}
