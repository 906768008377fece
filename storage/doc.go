// Package storage is mvserver's ordered key-value engine: one embedded Pebble
// instance behind a narrow transactional interface. It owns
//
//   - Delta-like source tables (SPEC §1): rows by table id and key, table
//     versions (R-T4), row ids and row commit versions (R-T6), the change data
//     feed (R-T7) and its retention (R-T9), table history;
//   - secondary indexes (R-T10): their entries, maintained by every row
//     write in the same commit, unique ones checked (index.go);
//   - the generic meta key space the catalog (and refresh state) persists in;
//   - snapshot-isolation and serializable transactions and the commit
//     pipeline (group commit, first-committer-wins validation, read-set
//     validation of serializable transactions, commit notifications);
//   - the order-preserving key encoding the SQL layer composes keys with
//     (keyenc.go).
//
// Storage knows tables by TableID and rows as opaque bytes. It imports no
// sql/, catalog/, server/ — no mvserver package at all — and Pebble types
// never leave it: the DB runs on an engine (engine.go), Pebble by default,
// TiKV with Options.Store = "tikv://pd:2379" in a build with -tags tikv
// (engine_tikv.go; "tikvmock://" is client-go's in-process mock cluster).
//
// # Key layout
//
// The leading byte names the key space; table ids are 4 bytes and versions 8
// bytes, big-endian:
//
//	0x01 | name                                 global state (layout version)
//	0x02 | key                                  meta: the caller's key → value
//	0x03 | table                                table state: version, next row id,
//	                                            last commit time, CDF vacuumed below
//	0x04 | table | version                      history entry (op, params, metrics,
//	                                            CDF on, timestamp)
//	0x05 | table | version | seq-in-commit (4B) change record: insert/delete hold the
//	                                            row, an update holds both images
//	0x06 | table | key                          row: uvarint row id | uvarint commit
//	                                            version | caller's value
//	0x07 | table | index (4B) | entry           index entry → row key; entry is the
//	                                            caller's key columns, then the row key
//	                                            unless the entry is unique (index.go)
//	0x01 | "rowsid"                             the next rows id a rewrite gets
//	0x01 | "shadow" | rows id                   → table: an unfinished rewrite
//
// A table without a primary key is keyed by RowIDKey(row id).
//
// In 0x06 and 0x07, "table" is the table's rows id: its own id until a
// rewrite, then the id its state names (generations, below). Caller table
// ids stay below FirstRowsID (1<<31), from which rows ids are handed out.
// Conflict keys, read sets, the write history and the recently deleted
// keys name rows by the table's own id.
//
// # Generations (generation.go)
//
// A write too big to hold until its commit replaces a table's whole
// content as a new generation: Txn.RewriteRows gives the table a fresh
// rows id (recorded under a shadow key, synced, before anything is
// written there), Rewrite.Insert writes rows and their index entries
// under it in Pebble batches of about 16 MB applied outside the
// transaction, and the transaction's commit — one small batch — switches
// the table's state to the new rows id, range-deletes the old key space
// and deletes the shadow key. Memory holds one batch, not the content.
//
//   - Reads resolve the rows id from the state their snapshot sees
//     (Txn.rowsOf, free until some table was ever rewritten): old content
//     or new, never a mix. Snapshots older than the switch keep reading
//     the old key space; Pebble reclaims it when its range deletion is
//     compacted below every open snapshot.
//   - A crash before the switch leaves the shadow key: Open deletes every
//     shadow's key space (and logs it), so the previous content stands. A
//     transaction that ends without switching deletes its own.
//   - The switch is a TRUNCATE for the conflict rules (invariant 5: first
//     committer wins against every concurrent row write of the table; a
//     serializable reader of it fails, invariant 11), and fails when the
//     table's indexes or version changed since the rewrite began (its
//     rows carry the expected version as commit version). A concurrent
//     DropTable fails too.
//   - Its version records no change records (exception to invariant 7):
//     the history entry has the feed off and Rewritten set, and Changes
//     over it fail with a *ChangesUnavailableError whose Rewritten names
//     it, so a reader of the feed (a view on the view) recomputes in full.
//   - Rewrite.Seal (or the commit) applies the last batch synced and
//     checks unique indexes by counting entries: a repeated key is a
//     *DuplicateKeyError. The rewriting transaction cannot read or write
//     the table's rows otherwise (its new rows are not in its write set).
//   - Kill points for crash tests: MVSERVER_KILL_POINT=rewrite-chunk:n or
//     rewrite-switch:n (SetKillPointFromEnv).
//
// Another engine (TiKV) keeps the same API: a rows id is a key prefix, the
// batches are ordinary non-transactional writes to a prefix no state
// names, and the switch is one transaction on the state and shadow keys.
//
// # Staged writes (stage.go)
//
// The general big-write path, for a write set that passes a threshold
// without replacing the table's whole content. Built so far for inserts:
// a transaction that allows staging (Txn.AllowStaging; the SQL layer's
// autocommit INSERT without ON CONFLICT, COPY FROM, CREATE TABLE AS)
// writes a table's buffered inserts, once they pass Options.StageRows
// (262144), as a sorted run file under <dir>/tmp/storage-stage — rows
// (key → row id, value) and one run per index (entry → row key) — and
// empties the write set. Insert still probes the snapshot (and the
// unstaged writes) for the key and for unique entries, as before.
//
//   - The commit merges each table's runs, in key order, into SSTables:
//     rows with the version the table is expected to get as their commit
//     version, their change records (insert, seq-in-commit in key order,
//     as invariant 7 orders them) when the feed is on, and each index's
//     entries. That is done before commitMu. Under commitMu the rest of
//     the commit's batch (states, history entries, meta keys, other
//     tables' writes: sets and deletes only) is written as SSTables too,
//     split so that none overlaps a staged one, the WAL is synced (so
//     every commit applied before is durable before this one), and one
//     Pebble ingest, under visMu, makes all of them visible at one
//     sequence number (invariant 1 for this commit: it is present whole
//     after a crash or absent; an ingest is durable when it returns).
//   - Snapshot isolation: a snapshot older than the ingest does not see
//     it; a Begin after it sees all of it.
//   - First committer wins, without holding the staged keys: the commit
//     counts as a TRUNCATE of the table (as a rewrite's switch does). It
//     fails with ErrSerialization when a concurrent commit wrote the
//     table's rows or took the version its rows carry, and it sets the
//     table's wipe sequence, so a concurrent transaction that writes the
//     table's rows, or read them serializably, fails after it. So no key
//     of the staged rows, primary or unique, can collide with a
//     concurrent commit's.
//   - Unique keys within the staged rows: a key in two runs (the primary
//     key, or a unique entry's columns) is found by the merge and fails
//     the commit with a *DuplicateKeyError (23505 naming the constraint).
//   - Row ids are allocated at Insert, as before; the state's high-water
//     mark is in the ingested state key.
//   - Reads of a staged table in its own transaction fail with
//     ErrStagedRead (0A000 in the SQL layer): statements in a transaction
//     block, or after another statement of the same implicit transaction,
//     never stage, so they keep today's in-memory path and read their
//     own writes. A table whose write set holds anything but inserts of
//     new keys (a delete, an update, a truncate, an index change) is not
//     staged either.
//   - Crash at any point: before the ingest only files under the stage
//     directory exist, and Open deletes them all; a transaction that ends
//     without committing deletes its own. Kill points stage-spill,
//     stage-ingest, stage-ingested.
//
// CREATE INDEX takes the same path (index_ingest.go): a fresh index of
// at least min(StageRows, 16384) entries, which BuildIndex sorted in
// memory, is written at commit as an SSTable of its own and ingested
// with the rest of the commit, instead of through the batch, the WAL,
// the memtable and compactions. Its conflict rules are BuildIndex's
// (invariant 9); a commit that writes a range deletion (a drop, a
// truncate, a vacuum, a rewrite's switch) keeps the batch.
//
// Not built yet, on the same path: UPDATE and DELETE of millions of rows
// (their runs would hold the old images too, the change records an
// update or delete each, and the SSTables point deletions; the rows they
// read first would be streamed to runs rather than collected), and
// incremental refreshes up to --full-refresh-diff-limit, which still hold
// their difference until commit.
//
// Another engine (TiKV) stages the same runs (in Options.Dir, or in
// memory) but cannot ingest: its commit makes each staged table a new
// generation — the snapshot's rows kept as they were, then the staged
// ones — written in bounded batches and switched to by the commit's
// small transaction (stage_generation.go). So no transaction passes the
// engine's size limit, at the price of copying the rows the table had.
// The change records are written with the rows, under a slot of their
// own that the version's history entry names (HistoryEntry.ChangesAt).
// A write set of at least as many rows of another kind (UPDATE, DELETE)
// commits the same way there (write_generation.go): its change records,
// as the commit would write them, into the slot, and the snapshot's rows
// with the writes laid over them into the generation.
//
// # Invariants
//
//  1. A commit is one Pebble batch (rows, change records, history entries,
//     table states with row-id high-water marks, meta keys) applied with a
//     synced WAL: after a crash a commit is entirely present or absent, and
//     every commit whose Commit returned nil is present.
//  2. Each commit that changes a table makes exactly one new version of it:
//     version 0 by CreateTable (or the first write), then +1 per commit, in
//     commit order; its timestamp is strictly greater than the previous one
//     (the clock is bumped by 1µs when it is not).
//  3. A row's commit version is the version of the commit that last wrote it;
//     its row id never changes and a committed row id is never handed out
//     again (the persisted high-water mark is ≥ every id of the commit).
//  4. A transaction reads its snapshot plus its own writes; it sees exactly
//     the commits applied before Begin (snapshot and logical commit sequence
//     are taken atomically under visMu, against which a commit applies and
//     bumps the sequence). Transactions of one sequence share the snapshot
//     (snapshot.go).
//     4a. A Begin sees only durable commits: it waits for the syncs of
//     applied commits (at most one fsync), and after a failed log write it
//     reads the last durable snapshot, so a commit whose log write failed
//     is never visible (durable.go).
//  5. First committer wins: a commit fails with ErrSerialization when a key it
//     writes (row or meta) or a CheckUnchanged key was written by a commit
//     applied after its Begin; an insert whose key a concurrent commit
//     created fails with ErrDuplicateKey. Table-level: a Truncate fails when a
//     concurrent commit wrote the table's rows; row writes fail after a
//     concurrent Truncate or DropTable. Version counters never conflict.
//  6. The recent-writes bookkeeping holds only commits newer than the oldest
//     open transaction's Begin.
//  7. A commit's change records are its net effect per row id (snapshot
//     state → final state), ordered by key within the commit; the history
//     metrics count the same changes. A rewrite's switch records none
//     (Generations, below); its metrics count every old row deleted and
//     every new one inserted. A staged generation's switch (TiKV) records
//     its inserts, in a slot its history entry names.
//  8. Subscribers hear of a commit after its WAL sync, outside every lock,
//     one call at a time, in commit order.
//  9. A table's index entries are exactly those its rows call for, at every
//     commit: each row write updates them in the transaction (a write whose
//     TableInfo lists other indexes than the table has fails), the commit
//     writes rows and entries in one batch, and a commit that writes rows
//     or entries fails with ErrSerialization when a concurrent commit
//     changed the table's indexes (or, for BuildIndex, wrote its rows).
//     A unique entry is keyed by its columns alone, so a second row with
//     them is a DuplicateKeyError, at once or (concurrent) at commit.
//     Entries are never change records, history metrics or counted rows.
//  10. An entry of the recently deleted row keys (deleted.go), key → seq,
//     means the last write to key a commit made visible deleted it at
//     seq: commits drop the keys they set before their batch is applied
//     and add the keys they delete, with the new seq, before a snapshot
//     can see it. An insert's probe trusts an entry no newer than its
//     snapshot.
//  11. A transaction begun with BeginSerializable that writes commits
//     only if no commit applied after its Begin wrote a row or index
//     entry it read: a key it read (found or not), a key inside a range
//     it scanned (up to where it stopped), any row of a table it read
//     whole (more than maxReadSpans reads, an open-ended change-feed
//     read, its history) or that a concurrent commit truncated or
//     dropped; otherwise it fails with ErrReadDependency (an
//     ErrSerialization). The check and the apply share one hold of
//     commitMu, so each committed serializable writer is equivalent to
//     running alone at its commit point, and a serializable transaction
//     that writes nothing sees a prefix of that serial order and is not
//     checked (serializable.go). Every commit after the Begin of an open
//     serializable transaction is in the write history (writehistory.go)
//     or, past the history's bounds, counted as a write of each of its
//     tables whole (coarseSeq). Meta keys are not read-tracked. Transactions begun
//     with Begin record no reads, and commits add to the history only
//     while a serializable transaction is open.
//
// # Several processes on TiKV (the design; a first slice is built)
//
// Built (shared.go, lease.go; on a shared store: a real cluster, or a
// named mock tikvmock://NAME): a snapshot per Begin, commits that conflict
// with every key another process wrote after their snapshot (the
// Percolator transaction begins at the snapshot's timestamp), table
// versions taken after the snapshot's state, row ids from a per-open node
// range, rewrite rows ids by a conflicting counter write, and leases with
// fencing tokens. The rest of this section is still the design.
//
// Before that slice the TiKV engine was one process's store: the DB keeps, in its
// memory, what Pebble's single owner may keep — table versions and row-id
// high-water marks (tableState), the recent-writes bookkeeping of first
// committer wins, the write history of serializable transactions, the
// recently deleted keys — and hands TiKV one Percolator transaction per
// commit, begun at commit time. With several processes on one cluster
// that memory is no longer the truth; each piece moves into TiKV:
//
//   - Snapshots and the commit order. A transaction's snapshot is a TiKV
//     snapshot at its start_ts (from PD's TSO) instead of a local
//     sequence; StateSeq becomes start_ts. The commit's batch is the
//     Percolator transaction begun at that same start_ts (not at commit
//     time), so TiKV's prewrite fails it with a write conflict when any
//     key it writes was committed by anyone after start_ts: that is first
//     committer wins (invariant 5) for row, index-entry and meta keys,
//     across processes, with no local bookkeeping. CheckUnchanged keys are
//     locked without being written (LockKeys, or a put of the same value).
//     Unique entries and inserts of new keys conflict the same way: the
//     key is in the write set either way.
//   - Table-level rules (Truncate, DropTable, rewrites, index changes):
//     each becomes a write of one per-table key that the conflicting
//     writers also touch. A row write of table T reads T's state key at
//     start_ts and locks it at commit (a lock, not a write: concurrent row
//     writers of one table must not conflict with each other); Truncate,
//     DropTable, a rewrite's switch, BuildIndex and DropIndex write it. A
//     row writer then fails at prewrite when a truncate committed after
//     its start, and a truncate fails when a row writer holds the lock
//     (or is rolled back by it). wipeSeq, dropSeq, switchSeq, indexSeq and
//     rowWriteSeq go away.
//   - Table versions. A version is what a commit of a table gets, +1 per
//     commit, with no gaps (invariant 2), and two commits of one table
//     must not take the same one, yet version counters never conflict
//     (invariant 5). So the version is not allocated from a counter key
//     at prewrite; it is a function of the commit: the state key holds
//     the last version, and a commit that writes T writes T's state key
//     — so two concurrent commits of T conflict on it after all. Rather
//     than let that serialize every writer of a table through retries,
//     the commit takes the state key with a pessimistic lock (TiKV's
//     pessimistic transactions: lock, read the latest value, write it +1)
//     only in its last step, after everything else is prewritten-ready:
//     writers of one table queue on that one lock for the length of a
//     commit, as they queue on commitMu today, and never fail for it. The
//     history entry, change records (0x04, 0x05: keyed by version) and
//     the rows' commit versions are written after the lock gives the
//     version, in the same transaction; the commit timestamp of the
//     history entry is the transaction's commit_ts from PD, strictly
//     increasing per table as the clock rule asks.
//   - Row ids. A row id must never repeat (invariant 3). Each process
//     leases a block of ids per table (say 4096 at first, doubling with
//     use) by a small pessimistic transaction on the state key's
//     next-row-id field, and hands them out from memory; a crash wastes
//     the rest of a block, which is allowed (ids are stable, not dense).
//     Rows ids of rewrites (0x01 "rowsid") and sequences (a meta key the
//     SQL layer owns) are allocated the same way, by blocks of the
//     sequence's CACHE size, which is what PostgreSQL's cached sequences
//     promise across sessions anyway.
//   - Serializable transactions (invariant 11). Their read set cannot be
//     checked against a local write history. Each point read becomes a
//     lock on the key at commit (Percolator's "lock without write", which
//     conflicts with any write committed after start_ts), and each range
//     read locks a per-table "range read" key that every row writer of the
//     table also locks — coarser than today (a range read conflicts with
//     every concurrent writer of the table), correct, and refined later by
//     per-range keys.
//   - The change feed and subscribers. Commit notifications (invariant 8)
//     come from a poll of each table's state key (or TiCDC, later): a
//     process learns a new version of T when T's state moves, and reads
//     its change records from TiKV; trigger and notification delivery
//     across processes are the server's (leases), not storage's.
//   - Recently deleted keys and insert probes (deleted.go, probe.go) are
//     local hints that only skip lookups whose answer is "absent"; with
//     other writers they must be dropped (each probe reads TiKV), or kept
//     per snapshot only. Prefetch stays (a BatchGet).
//   - Generations and big writes. A rewrite's chunks are written
//     non-transactionally (raw puts, or transactions of their own) under a
//     rows id no state names, as the Generations section says; the switch
//     is the transaction that writes the state key, so it conflicts as a
//     truncate does. Staged inserts become such chunks too: TiKV's
//     transaction limits (about 100 MB and 6 MB per entry in client-go's
//     defaults) make one transaction per big INSERT impossible, so a
//     staged table is written as a new generation, the old rows copied
//     into it, and switched in the commit's small transaction (built:
//     stage_generation.go).
//   - Durability and visibility (invariant 4a) are TiKV's: a commit is in
//     a Raft majority when Commit returns, and no snapshot sees a
//     prewritten but uncommitted transaction (readers resolve its locks).
//
// Range deletions (truncate, drop, vacuum of the feed) have no
// transactional form in TiKV: the engine deletes the keys it sees, one by
// one, inside the transaction, which bounds a TRUNCATE by the transaction
// limits. A dead key space — a rewrite's previous generation, a dropped
// or truncated table's (every table created or truncated on TiKV gets a
// key space of its own, freshRowsFor, so its rows never share one with a
// dropped table's), a dropped table's history and change records (a later
// CreateTable of the id finishes their deletion first) — is deleted after
// the commit instead (engine_tikv_dead.go). A TRUNCATE's change records
// (a delete per row) are written before its commit, under the change
// slot of its new key space, as a staged load's are. The multi-process design replaces them by generations (a new
// rows id in the state; the old key space deleted afterwards by TiKV's
// DeleteRange, outside any transaction, once no snapshot reads it:
// after the GC safe point passes the switch).
//
// # Past one process: refresh work split by key range (the design; not built)
//
// Today each view's refresh is one transaction of one process, the holder
// of its refresh lease. A view whose full recompute (or a change too big
// to apply incrementally) does not fit one process would be refreshed by
// several, on the pieces already here:
//
//  1. The lease holder coordinates. It takes the run's snapshot timestamp
//     (a TiKV start_ts: every process reading at it sees the same rows)
//     and cuts the work into ranges with SplitKeys: the driving source's
//     row keys for a join or a filter, or ranges of the view's own key (a
//     group key's hash, or its partition columns) for an aggregate, so
//     that each group belongs to exactly one range.
//  2. It writes one task key per range (refresh/<view>/run/<run>/<i>:
//     range, snapshot, technique) and a fresh rows id for the view's new
//     generation. Processes take tasks under leases of their own, with
//     fencing tokens, as they take refresh leases.
//  3. A worker evaluates its range of the plan at the run's snapshot and
//     writes its output rows, and its range's diff against the view's
//     current rows (the view's change feed), as chunks of the new
//     generation in transactions of their own, each within TiKV's limits.
//     Chunk keys carry the task's token, so a worker whose lease was taken
//     over cannot add to the run: the switch names the token it accepts
//     for each range.
//  4. When every range is done, the coordinator commits the switch: the
//     view's state key names the new generation, with the source versions
//     read and the refresh's history row, fenced by its own lease. Readers
//     see the old generation or the new, never a mix; a concurrent manual
//     REFRESH conflicts with the switch as with any commit.
//  5. A coordinator that dies loses its lease; the next holder finds the
//     run's task keys and resumes it at the same snapshot, or abandons it,
//     and the abandoned generation is deleted (DeleteRange) once the GC
//     safe point passes it.
//
// An incremental refresh of an ordinary change stays one transaction: its
// size is that of the change, and the cost model sends a change too big
// for it to the split full path.
//
// Visibility versus durability: a commit is visible to transactions that
// begin after its batch is applied, which is just before its (shared) fsync
// completes. A commit that read such data is later in the WAL, so it cannot
// be durable without the data it read.
package storage
