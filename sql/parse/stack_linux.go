//go:build linux

package parse

import "syscall"

// glibcDefaultStack is the thread stack glibc gives a pthread when
// RLIMIT_STACK is unlimited (ARCH_STACK_DEFAULT_SIZE): measured, a deep
// statement overflows at the same depth under `ulimit -s unlimited` as
// under `ulimit -s 2048`.
const glibcDefaultStack = 2 << 20

// threadStackBytes is the C stack pg_query runs on. cgo runs C on the
// calling thread's own stack, and every thread but the first is a pthread
// the Go runtime creates with glibc's default attributes, whose stack size
// glibc takes from RLIMIT_STACK once, at process start.
func threadStackBytes() int64 {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_STACK, &rl); err != nil {
		return glibcDefaultStack
	}
	if rl.Cur == ^uint64(0) || rl.Cur == 0 {
		return glibcDefaultStack
	}
	return int64(min(rl.Cur, 1<<40))
}
