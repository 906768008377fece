package storage

// TableSize estimates the bytes tbl's rows take on disk; with changes, also
// its change data feed, version history and secondary indexes
// (pg_table_size and pg_total_relation_size). Rows still only in the memtable count nothing
// until a flush, as Pebble estimates from sstables.
func (db *DB) TableSize(tbl TableID, changes bool) (int64, error) {
	prefixes := []byte{prefixRows}
	if changes {
		prefixes = append(prefixes, prefixCDF, prefixHistory, prefixState, prefixIndex)
	}
	rows := TableID(db.table(tbl).rowsID.Load()) // the latest key space (generation.go)
	var total uint64
	for _, p := range prefixes {
		id := tbl
		if p == prefixRows || p == prefixIndex {
			id = rows
		}
		start, end := tableSpan(p, id)
		n, err := db.spanSize(start, end)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return int64(total), nil
}

// spanSize estimates the bytes of [start, end): Pebble's estimate from its
// sstables, or on another engine the keys' and values' bytes counted.
func (db *DB) spanSize(start, end []byte) (uint64, error) {
	if db.pdb != nil {
		return db.pdb.EstimateDiskUsage(start, end)
	}
	it, err := db.eng.newIter(start, end)
	if err != nil {
		return 0, err
	}
	var n uint64
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			_ = it.Close()
			return 0, err
		}
		n += uint64(len(it.Key()) + len(v))
	}
	return n, it.Close()
}
