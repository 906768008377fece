package refresh

import "sync/atomic"

// SetChunking sets how many new rows an empty view's computation inserts
// at once and the largest view written as a difference, for tests that
// must cross both limits with few rows; it returns the restore.
func SetChunking(chunk int, diffLimit int64) (restore func()) {
	oldChunk, oldLimit := freshChunk, diffFullLimit
	freshChunk, diffFullLimit = chunk, diffLimit
	return func() { freshChunk, diffFullLimit = oldChunk, oldLimit }
}

// SetStateQuery turns GROUP_AGGREGATE's state query (groupagg_full.go) on
// or off and counts its runs in *runs; it returns the restore.
func SetStateQuery(on bool, runs *atomic.Int64) (restore func()) {
	oldOff, oldHook := stateQueryOff, onStateQuery
	stateQueryOff = !on
	onStateQuery = func() { runs.Add(1) }
	return func() { stateQueryOff, onStateQuery = oldOff, oldHook }
}

// CountInnerFolds counts in *runs the changes folded into inner aggregate
// states (inner_state.go); it returns the restore.
func CountInnerFolds(runs *atomic.Int64) (restore func()) {
	old := onInnerFold
	onInnerFold = func() { runs.Add(1) }
	return func() { onInnerFold = old }
}
