package session

import "github.com/mvserver/mvserver/catalog"

// Staged inserts (storage/stage.go): a statement that is all of its
// implicit transaction — INSERT without ON CONFLICT or a data-modifying
// WITH, COPY FROM, CREATE TABLE AS — lets storage write a table's
// inserts past its stage threshold to disk, so that a load of any size
// runs in bounded memory; its commit ingests them at once. No later
// statement of the transaction reads them: a transaction block, or a
// simple-protocol message with several statements, keeps its writes in
// memory. (An extended-protocol pipeline that reads the table before its
// Sync gets 0A000: mapStorageErr.) Nor may the statement itself read
// the table it loads: a table with a foreign key to itself, whose
// end-of-statement check looks its new keys up in that same table, keeps
// its writes in memory.
func (s *Session) allowStaging(t *catalog.Table) {
	if s.txn == nil || s.explicit || s.multi || refersToItself(t) {
		return
	}
	s.txn.AllowStaging()
}

// refersToItself reports whether one of t's foreign keys references t.
func refersToItself(t *catalog.Table) bool {
	for _, fk := range t.ForeignKeys {
		if fk.RefTable == t.ID {
			return true
		}
	}
	return false
}
