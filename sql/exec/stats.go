package exec

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// PlanStats tells the planner (plan.Stats) what storage knows of the
// tables at txn's snapshot: each table's row count, which storage keeps
// with every commit. Distinct counts are not kept yet (ANALYZE would).
func PlanStats(txn *storage.Txn) plan.Stats { return txnStats{txn} }

type txnStats struct{ txn *storage.Txn }

func (s txnStats) TableRows(t *catalog.Table) (float64, bool) {
	n, err := s.txn.RowCount(storage.TableID(t.ID))
	if err != nil {
		return 0, false
	}
	return float64(n), true
}

func (txnStats) ColumnDistinct(*catalog.Table, int) (float64, bool) { return 0, false }
