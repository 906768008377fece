package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mvserver/mvserver/catalog"
)

// repeatReader is n bytes of b, then the tail.
type repeatReader struct {
	b    byte
	n    int64
	tail string
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		if r.tail == "" {
			return 0, io.EOF
		}
		n := copy(p, r.tail)
		r.tail = r.tail[n:]
		return n, nil
	}
	n := int(min(int64(len(p)), r.n))
	for i := range n {
		p[i] = r.b
	}
	r.n -= int64(n)
	return n, nil
}

// The reproducers that need a client's own data or a statement too long
// for a logic test (testdata/memory.slt has the rest), under a 16MB
// query_memory_limit: a COPY line larger than the budget fails with 53200
// as it arrives, in text and binary; the comma join of 1000 copies of a
// two-row table fails at the budget rather than growing without end;
// and the connection and the server go on.
func TestMemoryBudgetCopyAndCrossJoin(t *testing.T) {
	srv, c := startAndConnect(t, Config{Logger: slog.New(slog.DiscardHandler), InMemory: true, Listen: "127.0.0.1:0", Database: "mvserver",
		MaxConnections: 10, TableDefaults: catalog.AllOn})
	t.Cleanup(func() { srv.Shutdown(2 * time.Second) })
	ctx := context.Background()
	defer c.Close(ctx)
	mustExec(t, c, `SET query_memory_limit = '16MB'`)
	mustExec(t, c, `CREATE TABLE lines (s TEXT)`)

	oom := func(what string, err error) {
		t.Helper()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "53200" || !strings.Contains(pe.Detail, "COPY line") {
			t.Fatalf("%s: %v, want 53200 naming the COPY line", what, err)
		}
	}
	// A 40MB line (buffered as read and decoded, it needs more than 16MB
	// long before its end).
	_, err := c.PgConn().CopyFrom(ctx, &repeatReader{b: 'a', n: 40 << 20, tail: "\n"}, `COPY lines FROM STDIN`)
	oom("COPY text", err)
	_, err = c.PgConn().CopyFrom(ctx, &repeatReader{b: 'a', n: 40 << 20, tail: "\n"}, `COPY lines FROM STDIN (FORMAT csv)`)
	oom("COPY csv", err)
	// Binary: one 40MB field (pgx sends it in binary COPY).
	big := strings.Repeat("b", 40<<20)
	_, err = c.CopyFrom(ctx, pgx.Identifier{"lines"}, []string{"s"}, pgx.CopyFromRows([][]any{{big}}))
	oom("COPY binary", err)
	// Lines that fit go in, on the same connection.
	line := strings.Repeat("c", 1<<20) + "\n"
	if _, err := c.PgConn().CopyFrom(ctx, strings.NewReader(line+line), `COPY lines FROM STDIN`); err != nil {
		t.Fatalf("COPY of two 1MB lines: %v", err)
	}
	if n := count(t, c, `SELECT count(*) FROM lines WHERE length(s) = 1048576`); n != 2 {
		t.Fatalf("%d lines of 1MB", n)
	}

	mustExec(t, c, `CREATE TABLE two (a INT)`)
	mustExec(t, c, `INSERT INTO two VALUES (1), (2)`)
	var q bytes.Buffer
	q.WriteString(`SELECT count(*) FROM two t1`)
	for i := 2; i <= 1000; i++ {
		fmt.Fprintf(&q, `, two t%d`, i)
	}
	pe := wantCode(t, c, q.String(), "53200")
	if !strings.HasPrefix(pe.Detail, "The nested loop join ") {
		t.Errorf("cross join: detail %q", pe.Detail)
	}
	if n := count(t, c, `SELECT count(*) FROM two a, two b, two c`); n != 8 {
		t.Fatalf("a small cross join after: %d rows", n)
	}
}
