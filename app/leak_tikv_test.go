//go:build tikv

package app

import "go.uber.org/goleak"

func init() {
	// MVSERVER_TEST_STORE=tikvmock://: the mock cluster's goleveldb drains
	// its memory pool for up to a second after Close, then returns.
	leakOptions = append(leakOptions, goleak.IgnoreTopFunction("github.com/pingcap/goleveldb/leveldb.(*DB).mpoolDrain"))
}
