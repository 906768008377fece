package exec

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// Readahead. A long scan reads and decodes its rows on a goroutine of its
// own while the operators above it work on the batches already read, so
// a full refresh or a big query keeps both cores busy: reading Pebble and
// decoding rows is a third to a half of the work of a scan-and-aggregate.
// The rows and their order are exactly those of the plain scan; only who
// reads them changes.
//
// A scan turns to readahead after readaheadAfter full batches (small and
// key-range reads never do), when it reads its last key range from the
// snapshot alone: such a storage iterator touches nothing shared with the
// transaction until it is released (storage.Iterator.SnapshotOnly), and
// its release — by the scan's Close or by the end of the transaction —
// first stops the reading goroutine and waits for it.

// readaheadAfter is how many full batches a scan reads itself first.
const readaheadAfter = 4

// readaheadDepth is how many batches the reader may be ahead.
const readaheadDepth = 4

// readaheadOK reports whether it can be read on another goroutine.
func readaheadOK(it rowIter) bool {
	sit, ok := it.(*storage.Iterator)
	return ok && sit.SnapshotOnly() && runtime.GOMAXPROCS(0) > 1
}

type scanBatch struct {
	rows    []Row
	backing []types.Datum // the datums of rows
	err     error
}

type readahead struct {
	s       *scanOp
	batches chan scanBatch
	// free are the batches the consumer is done with, for the reader to
	// fill again (a scan that reuses its batches, scan_reuse.go).
	free   chan scanBatch
	quit   chan struct{}
	exited chan struct{}
	once   sync.Once
}

// readaheadScans counts the scans that turned to readahead.
var readaheadScans atomic.Int64

// ReadaheadScans returns how many scans have read ahead on a goroutine of
// their own since the process started.
func ReadaheadScans() int64 { return readaheadScans.Load() }

func startReadahead(s *scanOp) *readahead {
	readaheadScans.Add(1)
	ra := &readahead{s: s, batches: make(chan scanBatch, readaheadDepth), free: make(chan scanBatch, readaheadDepth+2), quit: make(chan struct{}), exited: make(chan struct{})}
	s.it.(*storage.Iterator).OnRelease(ra.stop)
	go ra.run()
	return ra
}

// run reads full batches until the iterator ends, an error, or stop. It
// reads s.it, s.dec and s.s only, which nothing else touches meanwhile;
// not s.c (a portal swaps its Context between Executes): the statement's
// cancellation is checked by the consumer, and the reader is at most
// readaheadDepth batches ahead.
func (ra *readahead) run() {
	defer close(ra.exited)
	defer close(ra.batches)
	s := ra.s
	for {
		select {
		case <-ra.quit:
			return
		default:
		}
		var b scanBatch
		var more bool
		select {
		case b = <-ra.free:
		default:
			b = scanBatch{rows: make([]Row, 0, BatchSize), backing: make([]types.Datum, BatchSize*s.width)}
		}
		b.rows, more, b.err = s.read(b.rows[:0], b.backing, false)
		if len(b.rows) > 0 || b.err != nil {
			select {
			case ra.batches <- b:
			case <-ra.quit:
				return
			}
		}
		if b.err != nil || !more {
			return
		}
	}
}

// next returns the next batch read ahead; nil at the end. When s reuses
// its batches, the one it handed out last goes back to the reader.
func (ra *readahead) next(s *scanOp) ([]Row, error) {
	if s.reuse && cap(s.last.rows) == BatchSize {
		// The reader fills a batch to its capacity: only full-size ones
		// go back (the scan's last own batch may be smaller).
		select {
		case ra.free <- s.last:
		default:
		}
		s.last = scanBatch{}
	}
	b, ok := <-ra.batches
	if !ok {
		return nil, nil
	}
	if s.reuse {
		s.last = b
	}
	return b.rows, b.err
}

// stop ends the reader and waits for it: after stop the scan's iterator
// is the caller's again. It runs at the scan's Close, or earlier when the
// transaction ends with the scan still open (a portal suspended at a
// Sync): whichever comes first.
func (ra *readahead) stop() {
	ra.once.Do(func() {
		close(ra.quit)
		<-ra.exited
	})
}
