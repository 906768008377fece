//go:build invariants

package refresh

// invariants is on: every incremental refresh is compared with a full
// evaluation of the query on the same snapshot, and any difference panics
// (issue "proof" (a); .ci/run runs the suites with -tags invariants).
const invariants = true
