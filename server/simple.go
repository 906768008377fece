package server

// handleQuery serves a simple Query message: the session runs every
// statement in it, results stream through the writer, the first error ends
// the message, and ReadyForQuery follows in every case.
func (c *conn) handleQuery(sql string) error {
	if c.ignoreTillSync {
		// PostgreSQL discards a Query sent between a failed extended
		// message and its Sync like any other message.
		return nil
	}
	// Like PostgreSQL's exec_simple_query: the unnamed statement is dropped
	// and the query runs in the unnamed portal, replacing the old one.
	c.closeStatement("")
	c.closePortal("")

	c.rw.extended = false
	c.noteQuery(sql)
	ctx := c.beginStatement()
	err := c.sess.SimpleQuery(ctx, sql, &c.rw)
	c.endStatement()
	if err := c.finishCopyIn(err); err != nil {
		return err
	}
	if err := c.statementError(err); err != nil {
		return err
	}
	return c.readyForQuery()
}
