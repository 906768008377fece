package app

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCopyWakesTriggers: the commit of a COPY FROM STDIN wakes a TRIGGER
// ON UPDATE view like an INSERT's does (R-T2, R-S3): its rows reach the
// view through the commit pipeline.
func TestCopyWakesTriggers(t *testing.T) {
	c := startTest(t, Config{TriggerMinInterval: 10 * time.Millisecond})
	mustExec(t, c, `CREATE TABLE src (id INT PRIMARY KEY, v INT)`)
	mustExec(t, c, `CREATE MATERIALIZED VIEW total TRIGGER ON UPDATE AS SELECT count(*) AS n, sum(v) AS s FROM src`)
	tag, err := c.PgConn().CopyFrom(context.Background(), strings.NewReader("1\t10\n2\t20\n3\t30\n"), `COPY src FROM STDIN`)
	if err != nil || tag.String() != "COPY 3" {
		t.Fatalf("COPY: %q, %v", tag, err)
	}
	waitCount(t, c, `SELECT n FROM total`, 3)
	waitCount(t, c, `SELECT s FROM total`, 60)
}
