//go:build clients

package clienttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clientTimeout bounds one run of a client program against one server.
const clientTimeout = 5 * time.Minute

// clientRun is one way to run a client program.
type clientRun struct {
	argv  []string
	dir   string   // working directory (default: testdata/clients)
	env   []string // added to clientEnv
	stdin string
}

// runClient runs the program against tg with stdout and stderr in one stream
// (so errors land between the steps they belong to) and returns what it
// printed. A failed exit is appended as a "# " line: the steps it printed
// still count, and the missing ones fail the comparison.
func runClient(t *testing.T, tg target, r clientRun) string {
	t.Helper()
	home, err := os.MkdirTemp(workRoot, "home-")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.argv[0], r.argv[1:]...)
	cmd.Dir = r.dir
	if cmd.Dir == "" {
		cmd.Dir = testdata()
	}
	cmd.Env = clientEnv(home, tg.conn, r.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Stdin = strings.NewReader(r.stdin)
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start).Round(time.Millisecond)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		fmt.Fprintf(&out, "\n# %s did not finish within %v against %s; killed\n", filepath.Base(r.argv[0]), clientTimeout, tg.name)
	} else if err != nil {
		fmt.Fprintf(&out, "\n# %s against %s: %v\n", filepath.Base(r.argv[0]), tg.name, err)
	}
	t.Logf("%s against %s: %v", filepath.Base(r.argv[0]), tg.name, took)
	name := strings.ReplaceAll(t.Name(), "/", "_") + "." + tg.name + ".txt"
	_ = os.WriteFile(filepath.Join(workRoot, name), out.Bytes(), 0o644)
	return out.String()
}

// step is one named part of a session's output.
type step struct {
	name  string
	lines []string
}

// stepMarker starts a step in every program's output: "=== NAME".
const stepMarker = "=== "

// parseSteps splits output into steps. Lines before the first marker form
// a step of their own (a program that fails to start prints only those).
func parseSteps(out string) []step {
	var steps []step
	cur := step{name: "(before the first step)"}
	for _, line := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if name, ok := strings.CutPrefix(line, stepMarker); ok {
			if cur.name != "(before the first step)" || len(cur.lines) > 0 {
				steps = append(steps, cur)
			}
			cur = step{name: strings.TrimSpace(name)}
			continue
		}
		cur.lines = append(cur.lines, line)
	}
	return append(steps, cur)
}

// compared is what a step compares: its lines without the "# " ones
// (informational: versions, error texts) and without trailing blank lines.
func compared(lines []string) []string {
	var out []string
	for _, l := range lines {
		if strings.HasPrefix(l, "# ") || l == "#" {
			continue
		}
		out = append(out, strings.TrimRight(l, " "))
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// compareSessions compares the two outputs step by step, each step a
// subtest, after normalizing both with norms. It returns mvserver's steps
// as normalized (for golden files).
func compareSessions(t *testing.T, pgOut, mvOut string, norms []normalizer) []step {
	t.Helper()
	pgSteps := normalize(parseSteps(pgOut), norms)
	mvSteps := normalize(parseSteps(mvOut), norms)
	mvByName := map[string]step{}
	for _, s := range mvSteps {
		mvByName[s.name] = s
	}
	pgNames := map[string]bool{}
	failed := 0
	for _, ps := range pgSteps {
		pgNames[ps.name] = true
		if *stepFilter != "" && !strings.Contains(ps.name, *stepFilter) {
			continue
		}
		ms, ok := mvByName[ps.name]
		ok2 := t.Run(ps.name, func(t *testing.T) {
			if !ok {
				t.Errorf("step %q: mvserver's session never reached it. PostgreSQL printed:\n%s\nmvserver's session ended with:\n%s",
					ps.name, indent(ps.lines), indent(lastLines(mvSteps, 8)))
				return
			}
			a, b := compared(ps.lines), compared(ms.lines)
			if !equalLines(a, b) {
				t.Errorf("step %q differs (- postgres, + mvserver):\n%s%s",
					ps.name, indent(strings.Split(lineDiff(a, b), "\n")), infoLines(ps.lines, ms.lines))
			}
		})
		if !ok2 {
			failed++
		}
	}
	for _, ms := range mvSteps {
		if !pgNames[ms.name] {
			t.Errorf("step %q printed by mvserver's session only:\n%s", ms.name, indent(ms.lines))
		}
	}
	t.Logf("%d of %d steps differ", failed, len(pgSteps))
	return mvSteps
}

func normalize(steps []step, norms []normalizer) []step {
	out := make([]step, len(steps))
	for i, s := range steps {
		lines := append([]string(nil), s.lines...)
		for _, n := range norms {
			if n.step == nil || n.step(s.name) {
				lines = n.apply(lines)
			}
		}
		out[i] = step{s.name, lines}
	}
	return out
}

// infoLines shows the "# " lines of both sides (not compared, but they
// often say why a step differs: the error's message, an exit status).
func infoLines(pg, mv []string) string {
	var b strings.Builder
	for _, side := range []struct {
		name  string
		lines []string
	}{{"postgres", pg}, {"mvserver", mv}} {
		for _, l := range side.lines {
			if strings.HasPrefix(l, "# ") {
				fmt.Fprintf(&b, "\n    %s %s", side.name, l)
			}
		}
	}
	return b.String()
}

func lastLines(steps []step, n int) []string {
	var all []string
	for _, s := range steps {
		all = append(all, stepMarker+s.name)
		all = append(all, s.lines...)
	}
	if len(all) > n {
		all = all[len(all)-n:]
	}
	return all
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func indent(lines []string) string {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("    | ")
		b.WriteString(l)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// lineDiff is a line diff of a and b (longest common subsequence): "  "
// for a common line, "- " for a's only, "+ " for b's only, with common
// runs longer than six lines shortened.
func lineDiff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	var same []string
	flush := func() {
		if len(same) > 6 {
			same = append(append(same[:2:2], fmt.Sprintf("  … %d equal lines …", len(same)-4)), same[len(same)-2:]...)
		}
		out = append(out, same...)
		same = nil
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			same = append(same, "  "+a[i])
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			flush()
			out = append(out, "+ "+b[j])
			j++
		default:
			flush()
			out = append(out, "- "+a[i])
			i++
		}
	}
	flush()
	return strings.Join(out, "\n")
}

// checkGolden compares steps (mvserver's normalized output) with
// testdata/clients/golden/NAME, or rewrites it under -update.
func checkGolden(t *testing.T, name string, steps []step) {
	t.Helper()
	var b strings.Builder
	for _, s := range steps {
		b.WriteString(stepMarker + s.name + "\n")
		for _, l := range s.lines {
			b.WriteString(strings.TrimRight(l, " ") + "\n")
		}
	}
	got := b.String()
	path := testdata("golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file: %v (run with -update to write it)", err)
	}
	if string(want) != got {
		t.Errorf("mvserver's output differs from %s (rewrite with -update):\n%s", path,
			lineDiff(strings.Split(string(want), "\n"), strings.Split(got, "\n")))
	}
}
