package exec

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// PlanStats tells the planner (plan.Stats) what is known of the tables at
// txn's snapshot: each table's row count, which storage keeps with every
// commit, and the column statistics ANALYZE stored (catalog.ReadStats),
// read once per table per statement.
func PlanStats(txn *storage.Txn) plan.Stats { return &txnStats{txn: txn} }

type txnStats struct {
	txn    *storage.Txn
	tables map[uint32]*catalog.TableStats
}

func (s *txnStats) TableRows(t *catalog.Table) (float64, bool) {
	n, err := s.txn.RowCount(storage.TableID(t.ID))
	if err != nil {
		return 0, false
	}
	return float64(n), true
}

// analyzed returns t's stored statistics (nil: none or unreadable; the
// planner then uses its defaults).
func (s *txnStats) analyzed(t *catalog.Table) *catalog.TableStats {
	if ts, ok := s.tables[t.ID]; ok {
		return ts
	}
	ts, err := catalog.ReadStats(s.txn, t.ID)
	if err != nil {
		ts = nil
	}
	if s.tables == nil {
		s.tables = map[uint32]*catalog.TableStats{}
	}
	s.tables[t.ID] = ts
	return ts
}

func (s *txnStats) Column(t *catalog.Table, col int) *catalog.ColumnStats {
	return s.analyzed(t).Column(t.Columns[col])
}

func (s *txnStats) ColumnDistinct(t *catalog.Table, col int) (float64, bool) {
	cs := s.Column(t, col)
	if cs == nil || cs.NDistinct == 0 {
		return 0, false
	}
	rows, ok := s.TableRows(t)
	if !ok {
		rows = s.analyzed(t).Rows
	}
	return cs.Distinct(rows), true
}
