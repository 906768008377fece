package stats

import (
	"math/rand"
	"testing"
)

// BenchmarkComputeColumn: one column's statistics from a full sample
// (30000 rows, 1000 distinct values).
func BenchmarkComputeColumn(b *testing.B) {
	rng := rand.New(rand.NewSource(1))
	v := make([]int, rowsPerTarget*DefaultTarget)
	for i := range v {
		v[i] = rng.Intn(1000)
	}
	vals := ints(v...)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		computeColumn(intCol, vals, 1e6, DefaultTarget)
	}
}
