//go:build tikv

package storage

import "go.uber.org/goleak"

func init() {
	// The mock cluster's goleveldb drains its memory pool for up to a
	// second after Close, then returns.
	leakOptions = append(leakOptions, goleak.IgnoreTopFunction("github.com/pingcap/goleveldb/leveldb.(*DB).mpoolDrain"))
}

func (e *tikvEngine) settle() { e.dead.idle() }
