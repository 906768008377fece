package storage

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	noPK := TableInfo{ID: 3, ChangeDataFeed: true}
	createTable(t, db, tA)
	createTable(t, db, noPK)
	var lastID int64
	update(t, db, func(tx *Txn) error {
		mustInsert(t, tx, tA, "a", "1")
		for i := 0; i < 5; i++ {
			lastID = mustInsert(t, tx, noPK, "", fmt.Sprint(i))
		}
		return tx.PutMeta(k("schema/x"), k("desc"))
	})
	update(t, db, func(tx *Txn) error { return tx.Update(tA, k("a"), k("a"), k("2")) })
	// Row ids handed out by a rolled-back txn may be skipped, never reused.
	tx := db.Begin()
	mustInsert(t, tx, noPK, "", "rolled back")
	tx.Rollback()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx = db.Begin()
	if got := scanAll(t, tx, tA.ID, nil, nil); len(got) != 1 || got[0] != "a=2" {
		t.Fatalf("rows after reopen: %v", got)
	}
	if v, _ := tx.TableVersion(tA.ID); v != 2 {
		t.Fatalf("version after reopen %d", v)
	}
	if h, _ := tx.History(tA.ID); len(h) != 3 || h[0].Operation != "UPDATE" {
		t.Fatalf("history after reopen %+v", h)
	}
	if got, err := changes(t, tx, tA.ID, 0, -1); err != nil || len(got) != 3 {
		t.Fatalf("changes after reopen %v %v", got, err)
	}
	if v, ok, _ := tx.GetMeta(k("schema/x")); !ok || string(v) != "desc" {
		t.Fatal("meta after reopen")
	}
	tx.Rollback()
	var id int64
	update(t, db, func(tx *Txn) error {
		id = mustInsert(t, tx, noPK, "", "after")
		return tx.Update(tA, k("a"), k("a"), k("3"))
	})
	if id <= lastID {
		t.Fatalf("row id %d reused after reopen (last committed %d)", id, lastID)
	}
	tx = db.Begin()
	defer tx.Rollback()
	if v, _ := tx.TableVersion(tA.ID); v != 3 {
		t.Fatalf("version continues at %d, want 3", v)
	}
	h, _ := tx.History(tA.ID)
	if !h[0].Timestamp.After(h[1].Timestamp) {
		t.Fatal("timestamps after reopen not increasing")
	}
}

func TestOpenLockedInProcess(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	_, err = Open(Options{Dir: dir})
	checkLocked(t, err, dir, time.Since(start))
}

func checkLocked(t *testing.T, err error, dir string, took time.Duration) {
	t.Helper()
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	if want := "data directory " + dir + " is in use by another mvserver process"; !strings.Contains(err.Error(), want) {
		t.Fatalf("message %q lacks %q", err, want)
	}
	t.Logf("second Open failed after %v: %v", took, err)
}

// TestOpenLockedOtherProcess holds the directory in a child process (the real
// fcntl lock path) and checks that Open fails at once.
func TestOpenLockedOtherProcess(t *testing.T) {
	if os.Getenv("MVSERVER_STORAGE_HELPER") != "" {
		t.Skip("helper process")
	}
	dir := t.TempDir()
	cmd, out := startHelper(t, "lock", dir)
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := out.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper: %q %v", line, err)
	}
	start := time.Now()
	db, err := Open(Options{Dir: dir})
	if err == nil {
		_ = db.Close()
	}
	checkLocked(t, err, dir, time.Since(start))
}

func startHelper(t *testing.T, mode, dir string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStorageHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "MVSERVER_STORAGE_HELPER="+mode, "MVSERVER_STORAGE_DIR="+dir)
	cmd.Stderr = os.Stderr
	// The child holds its DB until its stdin closes (or it is killed).
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewReader(stdout)
}

const crashWriters = 4

// TestStorageHelperProcess is the child of the lock and crash tests.
func TestStorageHelperProcess(t *testing.T) {
	mode, dir := os.Getenv("MVSERVER_STORAGE_HELPER"), os.Getenv("MVSERVER_STORAGE_DIR")
	if mode == "" {
		t.Skip("only run as a helper process")
	}
	db, err := Open(Options{Dir: dir})
	if err != nil {
		fmt.Println("open failed:", err)
		os.Exit(2)
	}
	switch mode {
	case "lock":
		fmt.Println("locked")
		_, _ = io.Copy(io.Discard, os.Stdin) // hold until killed
	case "crash":
		// Writers commit forever; after each Commit returns, the child
		// reports it. The parent kills it with SIGKILL at some point.
		tbl := TableInfo{ID: 1, ChangeDataFeed: true}
		tx := db.Begin()
		if err := tx.CreateTable(tbl, "CREATE TABLE", nil); err != nil {
			panic(err)
		}
		if err := tx.Commit(); err != nil {
			panic(err)
		}
		var mu sync.Mutex
		for w := 0; w < crashWriters; w++ {
			go func() {
				for i := 0; ; i++ {
					tx := db.Begin()
					if _, err := tx.Insert(tbl, []byte(fmt.Sprintf("w%d-%06d", w, i)), make([]byte, 100)); err != nil {
						panic(err)
					}
					if err := tx.PutMeta([]byte(fmt.Sprintf("last-%d", w)), []byte(strconv.Itoa(i))); err != nil {
						panic(err)
					}
					if err := tx.Commit(); err != nil {
						panic(err)
					}
					mu.Lock()
					fmt.Printf("committed %d %d\n", w, i)
					mu.Unlock()
				}
			}()
		}
		select {}
	case "crash-index":
		// Writers insert, move and delete rows of an indexed table; the
		// parent kills the process and checks the entries.
		ix := colorIndex(false)
		tbl := TableInfo{ID: 2, Indexes: []IndexInfo{ix}}
		tx := db.Begin()
		if err := tx.CreateTable(tbl, "CREATE TABLE", nil); err != nil {
			panic(err)
		}
		if err := tx.BuildIndex(tbl, ix); err != nil {
			panic(err)
		}
		if err := tx.Commit(); err != nil {
			panic(err)
		}
		var mu sync.Mutex
		for w := 0; w < crashWriters; w++ {
			go func() {
				colors := []string{"red", "blue", "~"}
				for i := 0; ; i++ {
					tx := db.Begin()
					for j := 0; j < 10; j++ {
						key := []byte(fmt.Sprintf("w%d-%03d", w, (i*7+j*13)%50))
						val := []byte(fmt.Sprintf("%s:%d", colors[(i+j)%3], i))
						var err error
						switch (i + j) % 4 {
						case 0, 1:
							_, err = tx.Insert(tbl, key, val)
						case 2:
							err = tx.Update(tbl, key, []byte(fmt.Sprintf("w%d-%03d", w, (i+j)%50)), val)
						case 3:
							err = tx.Delete(tbl, key)
						}
						if err != nil && !errors.Is(err, ErrDuplicateKey) && !errors.Is(err, ErrNotFound) {
							panic(err)
						}
					}
					if err := tx.Commit(); err != nil {
						panic(err)
					}
					mu.Lock()
					fmt.Printf("committed %d %d\n", w, i)
					mu.Unlock()
				}
			}()
		}
		select {}
	}
}

// TestCrashIndexConsistent kills a process committing writes to an
// indexed table with SIGKILL and checks that the entries on disk are
// exactly what the rows call for: rows and entries are one commit.
func TestCrashIndexConsistent(t *testing.T) {
	if os.Getenv("MVSERVER_STORAGE_HELPER") != "" {
		t.Skip("helper process")
	}
	if testing.Short() {
		t.Skip("subprocess test")
	}
	dir := t.TempDir()
	cmd, out := startHelper(t, "crash-index", dir)
	for n := 0; n < 200; n++ {
		if _, err := out.ReadString('\n'); err != nil {
			t.Fatalf("helper output: %v", err)
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	db, err := Open(Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx := db.Begin()
	defer tx.Rollback()
	if rows := scanAll(t, tx, 2, nil, nil); len(rows) == 0 {
		t.Fatal("no rows survived")
	}
	if err := tx.VerifyIndex(2, colorIndex(false)); err != nil {
		t.Fatal(err)
	}
}

// TestCrashRecovery kills a committing process with SIGKILL and checks that
// every commit whose Commit returned is there and no commit is partial.
func TestCrashRecovery(t *testing.T) {
	if os.Getenv("MVSERVER_STORAGE_HELPER") != "" {
		t.Skip("helper process")
	}
	if testing.Short() {
		t.Skip("subprocess test")
	}
	for round := 0; round < 2; round++ {
		dir := t.TempDir()
		cmd, out := startHelper(t, "crash", dir)
		acked := make([]int, crashWriters)
		for i := range acked {
			acked[i] = -1
		}
		n := 0
		for n < 100+round*150 {
			line, err := out.ReadString('\n')
			if err != nil {
				t.Fatalf("helper output: %v", err)
			}
			var w, i int
			if _, err := fmt.Sscanf(line, "committed %d %d", &w, &i); err != nil {
				t.Fatalf("helper said %q", line)
			}
			acked[w] = i
			n++
		}
		_ = cmd.Process.Kill() // SIGKILL while writers are committing
		_ = cmd.Wait()

		db, err := Open(Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		tx := db.Begin()
		total := 0
		for w := 0; w < crashWriters; w++ {
			v, ok, err := tx.GetMeta([]byte(fmt.Sprintf("last-%d", w)))
			if err != nil {
				t.Fatal(err)
			}
			last := -1
			if ok {
				last, _ = strconv.Atoi(string(v))
			}
			if last < acked[w] {
				t.Fatalf("writer %d: commit %d returned but durable state ends at %d", w, acked[w], last)
			}
			// Atomicity: rows are exactly 0..last (row and meta key were one commit).
			rows := scanAll(t, tx, 1, []byte(fmt.Sprintf("w%d-", w)), []byte(fmt.Sprintf("w%d.", w)))
			if len(rows) != last+1 {
				t.Fatalf("writer %d: %d rows but last commit %d", w, len(rows), last)
			}
			total += last + 1
		}
		v, _ := tx.TableVersion(1)
		if int(v) != total {
			t.Fatalf("version %d after %d commits", v, total)
		}
		tx.Rollback()
		t.Logf("round %d: %d commits acknowledged, %d durable", round, n, total)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
