package stats

import (
	"math"
	"math/rand"
)

// reservoir keeps a uniform random sample of up to size items of a
// stream of unknown length (Li's Algorithm L: after the reservoir fills,
// the stream positions to take next are drawn directly, so the items
// skipped cost nothing to decode).
type reservoir struct {
	size int
	rng  *rand.Rand
	seen int64 // items offered so far
	next int64 // the position of the next item to take (after filling)
	w    float64
}

func newReservoir(size int, rng *rand.Rand) *reservoir {
	return &reservoir{size: size, rng: rng}
}

// offer tells whether the item at the stream's next position goes into
// the sample, and at which slot (a slot below the current length
// replaces that item; slot == length appends).
func (r *reservoir) offer() (slot int, take bool) {
	pos := r.seen
	r.seen++
	if pos < int64(r.size) {
		if pos == int64(r.size)-1 {
			r.w = math.Exp(math.Log(r.rng.Float64()) / float64(r.size))
			r.skip(pos)
		}
		return int(pos), true
	}
	if pos < r.next {
		return 0, false
	}
	slot = r.rng.Intn(r.size)
	r.w *= math.Exp(math.Log(r.rng.Float64()) / float64(r.size))
	r.skip(pos)
	return slot, true
}

// skip draws the position after pos of the next item to take.
func (r *reservoir) skip(pos int64) {
	u := r.rng.Float64()
	for u == 0 {
		u = r.rng.Float64()
	}
	gap := math.Floor(math.Log(u) / math.Log(1-r.w))
	switch {
	case math.IsNaN(gap) || gap < 0:
		gap = 0
	case gap > math.MaxInt64/4:
		gap = math.MaxInt64 / 4
	}
	r.next = pos + 1 + int64(gap)
}
