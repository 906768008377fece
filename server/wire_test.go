package server

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/mvserver/mvserver/internal/wiretest"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/wire/*.txt")

// TestWire runs the wire golden files (STYLE.md, "Wire golden tests"), in the
// spirit of CockroachDB's pgtest. A file is a list of blocks:
//
//	command [key=value | flag]...
//	input lines
//	----
//	expected output lines
//
// separated by blank lines; '#' lines between blocks are comments. Frontend
// and backend messages are pgproto3's JSON, one message per line. Output drops
// zero-valued fields, the ErrorResponse fields that are PostgreSQL internals
// (File, Line, Routine, SeverityUnlocalized) and the BackendKeyData key, so
// the same file reads the same against a real PostgreSQL. CopyData is
// written {"Type":"CopyData","Text":"…"} both ways. Commands:
//
//	server maxconns=N maxmsg=N       restart the server with that config
//	connect [conn=a] [user=U] [database=D] [version=V] [opt=NAME:VALUE]
//	                                 open a connection and print its startup
//	send [conn=a] [nowait]           send the messages; then read until one
//	                                 ReadyForQuery per Query/Sync sent, or EOF
//	raw [conn=a] [nowait]            send hex bytes; then read until
//	                                 ReadyForQuery or EOF
//	until [conn=a]                   read until the listed message types were
//	                                 seen in order (default ReadyForQuery)
//	cancel conn=a [running=CMD]      once a's session runs CMD (default sleep),
//	                                 send a CancelRequest with a's key
//	close [conn=a]                   close the client socket
//
// EOF is printed when the server closed the connection. Run with -rewrite to
// regenerate the expectations.
func TestWire(t *testing.T) {
	files, err := filepath.Glob("testdata/wire/*.txt")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no wire test files")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			t.Parallel()
			runWireFile(t, f)
		})
	}
}

func runWireFile(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	blocks := wiretest.ParseFile(t, lines)
	ts := startServer(t, Config{})
	r := &wiretest.Runner{T: t, Addr: ts.addr}
	r.Restart = func(maxConns, maxMsg int) string {
		ts.shutdown(t)
		ts = startServer(t, Config{MaxConnections: maxConns, MaxMessageSize: maxMsg})
		return ts.addr
	}
	r.WaitRunning = func(pid uint32, cmd string) { ts.eng.waitRunning(t, pid, cmd) }
	defer r.CloseAll()
	got := r.RunAll(path, blocks, !*rewrite)
	if *rewrite {
		for i := len(blocks) - 1; i >= 0; i-- {
			lines = blocks[i].Splice(lines, got[i])
		}
		if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// cancelRequest and typeName are the runner's, for the other tests.
func cancelRequest(t testing.TB, addr string, pid uint32, key []byte) {
	wiretest.CancelRequest(t, addr, pid, key)
}

func typeName(msg pgproto3.BackendMessage) string { return wiretest.TypeName(msg) }
