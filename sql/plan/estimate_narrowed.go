package plan

import "math"

// narrowedRows estimates a scan an incremental refresh narrowed to the
// values In holds of its key's first column (Scan.Narrowed): the table's
// rows per distinct value of that column, for each value.
func (e *Estimator) narrowedRows(s *Scan) float64 {
	rows := e.tableRows(s.Table)
	keys := s.KeyColumns()
	if len(keys) == 0 || keys[0] < 0 {
		return rows
	}
	ndv := 0.0
	if e.Stats != nil {
		ndv, _ = e.Stats.ColumnDistinct(s.Table, keys[0])
	}
	if ndv <= 0 && uniqueColumn(s.Table, keys[0]) {
		ndv = rows
	}
	if ndv <= 0 {
		ndv = math.Min(defaultNDV, rows)
	}
	return rows * math.Min(1, float64(len(s.In))/math.Max(1, ndv))
}
