package app

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine is still running
// after them (servers, sessions, refreshes and Pebble all stop).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leakOptions...) }

// leakOptions are goroutines known to end on their own after the test
// that started them (leak_tikv_test.go adds the TiKV mock's).
var leakOptions []goleak.Option
