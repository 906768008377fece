package session_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// TestPortalSuspended executes a portal two rows at a time: PortalSuspended
// after each partial Execute, and at the end CommandComplete "SELECT 1":
// PostgreSQL counts the rows of the Execute that finished the portal.
func TestPortalSuspended(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	c := connect(t, url, pgx.QueryExecModeSimpleProtocol)
	if _, err := c.Exec(ctx, `CREATE TABLE n (i INT PRIMARY KEY); INSERT INTO n VALUES (5),(4),(3),(2),(1)`); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "postgres://tester@"), "/mvserver?sslmode=disable")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	fe := pgproto3.NewFrontend(conn, conn)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersionNumber, Parameters: map[string]string{"user": "tester", "database": "mvserver"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	readUntilReady(t, fe)
	fe.Send(&pgproto3.Parse{Name: "s1", Query: "SELECT i FROM n WHERE i > $1 ORDER BY i"})
	fe.Send(&pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("0")}})
	fe.Send(&pgproto3.Execute{MaxRows: 2})
	fe.Send(&pgproto3.Execute{MaxRows: 2})
	fe.Send(&pgproto3.Execute{MaxRows: 2})
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	got := readUntilReady(t, fe)
	want := "ParseComplete BindComplete DataRow:1 DataRow:2 PortalSuspended DataRow:3 DataRow:4 PortalSuspended DataRow:5 CommandComplete:SELECT 1 ReadyForQuery:I"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func readUntilReady(t *testing.T, fe *pgproto3.Frontend) string {
	t.Helper()
	var out []string
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.DataRow:
			out = append(out, "DataRow:"+string(m.Values[0]))
		case *pgproto3.CommandComplete:
			out = append(out, "CommandComplete:"+string(m.CommandTag))
		case *pgproto3.ErrorResponse:
			out = append(out, "Error:"+m.Code)
		case *pgproto3.ReadyForQuery:
			out = append(out, "ReadyForQuery:"+string(m.TxStatus))
			return strings.Join(out, " ")
		case *pgproto3.ParseComplete:
			out = append(out, "ParseComplete")
		case *pgproto3.BindComplete:
			out = append(out, "BindComplete")
		case *pgproto3.PortalSuspended:
			out = append(out, "PortalSuspended")
		case *pgproto3.AuthenticationOk, *pgproto3.ParameterStatus, *pgproto3.BackendKeyData:
		default:
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(typeName(msg), "*pgproto3."), "pgproto3."))
		}
	}
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
