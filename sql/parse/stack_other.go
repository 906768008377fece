//go:build !linux

package parse

// threadStackBytes is the C stack pg_query runs on. Off Linux it is not
// read from the system; 2 MB is below the default thread stack of the
// platforms Go's cgo supports, so the limits it gives are safe there.
func threadStackBytes() int64 { return 2 << 20 }
