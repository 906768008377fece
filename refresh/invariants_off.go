//go:build !invariants

package refresh

// invariants is off in normal builds (see invariants_on.go).
const invariants = false
