package refresh

import (
	"math"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/storage"
)

// indexKeyCost is what reading one value of column col of t through a
// secondary index costs, in scanned rows: indexRowsPerKey, or more when
// ANALYZE's statistics say a value matches many rows (each an index
// entry and a row lookup: about two scanned rows). rows is t's row count.
func indexKeyCost(txn *storage.Txn, t *catalog.Table, col catalog.Column, rows int64) int64 {
	cost := int64(indexRowsPerKey)
	ts, err := catalog.ReadStats(txn, t.ID)
	if err != nil || ts == nil {
		return cost
	}
	cs := ts.Column(col)
	if cs == nil {
		return cost
	}
	ndv := cs.Distinct(float64(rows))
	if ndv < 1 {
		return cost
	}
	perValue := float64(rows) * (1 - cs.NullFrac) / ndv
	return max(cost, int64(math.Ceil(2*perValue)))
}
