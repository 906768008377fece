package refresh

// SetChunking sets how many new rows an empty view's computation inserts
// at once and the largest view written as a difference, for tests that
// must cross both limits with few rows; it returns the restore.
func SetChunking(chunk int, diffLimit int64) (restore func()) {
	oldChunk, oldLimit := freshChunk, diffFullLimit
	freshChunk, diffFullLimit = chunk, diffLimit
	return func() { freshChunk, diffFullLimit = oldChunk, oldLimit }
}
