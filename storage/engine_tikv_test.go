//go:build tikv

package storage

import (
	"time"

	"go.uber.org/goleak"
)

func init() {
	// The mock cluster's goleveldb drains its memory pool for up to a
	// second after Close, then returns.
	leakOptions = append(leakOptions, goleak.IgnoreTopFunction("github.com/pingcap/goleveldb/leveldb.(*DB).mpoolDrain"))
}

func (e *tikvEngine) settle() { e.dead.idle() }

// idle waits until nothing is queued or being deleted.
func (r *deadReclaimer) idle() {
	for {
		r.mu.Lock()
		busy := r.running
		r.mu.Unlock()
		if !busy {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
