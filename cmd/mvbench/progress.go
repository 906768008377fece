package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// progress shows the running phase on stderr: a bar with rows done for
// loads, the elapsed time for single long statements. It redraws one line
// in place on a terminal and stays silent otherwise (logs, tests).
type progress struct {
	out io.Writer
	on  bool
}

func newProgress(out io.Writer, quiet bool) *progress {
	on := false
	if f, ok := out.(*os.File); ok && !quiet {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progress{out: out, on: on}
}

// task is one phase being shown.
type task struct {
	p     *progress
	label string
	total int64
	done  atomic.Int64
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
}

// start shows label; total > 0 draws a bar that add advances.
func (p *progress) start(label string, total int64) *task {
	t := &task{p: p, label: label, total: total, start: time.Now(), stop: make(chan struct{})}
	if !p.on {
		return t
	}
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			t.draw()
			select {
			case <-t.stop:
				fmt.Fprint(p.out, "\r\033[K")
				return
			case <-tick.C:
			}
		}
	}()
	return t
}

func (t *task) add(n int64) { t.done.Add(n) }

func (t *task) draw() {
	el := time.Since(t.start).Seconds()
	if t.total <= 0 {
		fmt.Fprintf(t.p.out, "\r\033[K%s … %.1fs", t.label, el)
		return
	}
	done := t.done.Load()
	const width = 30
	frac := min(float64(done)/float64(t.total), 1)
	bar := make([]byte, width)
	for i := range bar {
		if float64(i) < frac*width {
			bar[i] = '#'
		} else {
			bar[i] = '.'
		}
	}
	fmt.Fprintf(t.p.out, "\r\033[K%s [%s] %3.0f%% %d/%d rows %.1fs", t.label, bar, frac*100, done, t.total, el)
}

// end stops showing the task.
func (t *task) end() {
	if t.p.on {
		close(t.stop)
		t.wg.Wait()
	}
}
