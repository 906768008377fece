//go:build crash

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountTmpfs mounts a tmpfs of size (as mount's size=, e.g. 32m) on a
// fresh directory, unmounted at cleanup. It needs root, as CI runs.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "disk")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("TestFullDisk needs root to mount a small tmpfs (CI runs it as root): mount: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestFullDisk runs the binary on a real 32 MB tmpfs with --disk-reserve 0
// until a commit hits ENOSPC (R-X2), then: SIGTERM stops it cleanly (exit
// 0; it exited 1); a restart on the still full disk listens and serves
// reads of every acknowledged row while writes fail with 53100 (it hung,
// not listening, until space was freed); SIGTERM exits 0 again; with the
// disk grown, a restart is writable.
func TestFullDisk(t *testing.T) {
	mnt := mountTmpfs(t, "32m")
	data := filepath.Join(mnt, "data")
	args := []string{"--disk-reserve", "0"}
	p := startServer(t, data, args)
	c := p.connect(t)
	mustExec(t, c, "CREATE TABLE t (id INT PRIMARY KEY, v TEXT)")
	acked := int64(0)
	var failure error
	for i := 0; i < 100 && failure == nil; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, failure = c.Exec(ctx, fmt.Sprintf("INSERT INTO t SELECT i, repeat('x', 1000) FROM generate_series(%d, %d) AS i", i*2000, i*2000+1999))
		cancel()
		if failure == nil {
			acked += 2000
		}
	}
	if code := pgCode(failure); code != "53100" {
		t.Fatalf("filling a 32 MB disk: %v (SQLSTATE %q), want 53100", failure, code)
	}
	p.signal(syscall.SIGTERM)
	if code := p.waitExit(exitTimeout); code != 0 {
		t.Fatalf("SIGTERM after ENOSPC: exit %d, want 0\n%s", code, p.log.String())
	}

	p = startServer(t, data, args)
	c = p.connect(t)
	var n int64
	if err := c.QueryRow(context.Background(), "SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != acked && n != acked+2000 { // the failed commit: wholly there or absent
		t.Fatalf("read-only start: %d rows, want the %d acknowledged (or 2000 more)", n, acked)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_, err := c.Exec(ctx, "INSERT INTO t VALUES (-1, 'refused')")
	cancel()
	if pgCode(err) != "53100" || !strings.Contains(err.Error(), "read-only") {
		t.Fatalf("a write on the full disk: %v, want 53100 saying the start is read-only", err)
	}
	if !strings.Contains(p.log.String(), "serving reads only") {
		t.Errorf("the log does not say the start is read-only:\n%s", p.log.String())
	}
	p.signal(syscall.SIGTERM)
	if code := p.waitExit(exitTimeout); code != 0 {
		t.Fatalf("SIGTERM of the read-only start: exit %d, want 0\n%s", code, p.log.String())
	}

	if out, err := exec.Command("mount", "-o", "remount,size=160m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("grow the tmpfs: %v: %s", err, out)
	}
	p = startServer(t, data, args)
	c = p.connect(t)
	mustExec(t, c, "INSERT INTO t VALUES (-1, 'after')")
	p.signal(syscall.SIGTERM)
	if code := p.waitExit(exitTimeout); code != 0 {
		t.Fatalf("SIGTERM with room: exit %d\n%s", code, p.log.String())
	}
}
