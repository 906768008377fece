package session

// Staged inserts (storage/stage.go): a statement that is all of its
// implicit transaction — INSERT without ON CONFLICT or a data-modifying
// WITH, COPY FROM, CREATE TABLE AS — lets storage write a table's
// inserts past its stage threshold to disk, so that a load of any size
// runs in bounded memory; its commit ingests them at once. No later
// statement of the transaction reads them: a transaction block, or a
// simple-protocol message with several statements, keeps its writes in
// memory. (An extended-protocol pipeline that reads the table before its
// Sync gets 0A000: mapStorageErr.)
func (s *Session) allowStaging() {
	if s.txn == nil || s.explicit || s.multi {
		return
	}
	s.txn.AllowStaging()
}
