package stats

import (
	"math"
	"slices"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

// sampleValue is one sampled value of a column with its sample row's
// position in key order (for the correlation).
type sampleValue struct {
	d   types.Datum
	pos int
}

// computeColumn computes a column's statistics from its values in a
// sample of sampleRows rows (in key order: vals[i].pos ascending) of a
// table of totalRows rows, with PostgreSQL's analyze.c rules for a column
// whose type has an ordering (compute_scalar_stats); a JSON column gets
// only its NULL share and width (compute_trivial_stats).
func computeColumn(col catalog.Column, vals []types.Datum, totalRows float64, target int) catalog.ColumnStats {
	cs := catalog.ColumnStats{ColID: col.ID, TypeOID: col.Type.OID()}
	sampleRows := len(vals)
	if sampleRows == 0 {
		return cs
	}
	nonnull := make([]sampleValue, 0, len(vals))
	width := 0.0
	for i, d := range vals {
		if d.IsNull() {
			continue
		}
		nonnull = append(nonnull, sampleValue{d, i})
		width += datumWidth(col.Type, d)
	}
	nulls := sampleRows - len(nonnull)
	cs.NullFrac = float64(nulls) / float64(sampleRows)
	if len(nonnull) == 0 {
		// All NULL: n_distinct 0, and the width a fixed-width type's
		// length (0 for a variable one), as PostgreSQL says.
		if s := col.Type.Size(); s > 0 {
			cs.AvgWidth = int32(s)
		}
		return cs
	}
	cs.AvgWidth = int32(math.Round(width / float64(len(nonnull))))
	if col.Type.Kind == types.KindJSON {
		return cs
	}
	// By value, ties in key order (PostgreSQL's compare_scalars): sort
	// indexes, then move each value once.
	order := make([]int32, len(nonnull))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := types.Compare(nonnull[a].d, nonnull[b].d); c != 0 {
			return c
		}
		return int(a - b)
	})
	sorted := make([]sampleValue, len(nonnull))
	for i, k := range order {
		sorted[i] = nonnull[k]
	}
	nonnull = sorted

	// Runs of equal values: the distinct count, the values seen more than
	// once (nmultiple) and the target most frequent of them (track).
	type tracked struct {
		first, count int // first index in nonnull, occurrences
	}
	var track []tracked
	ndistinct, nmultiple := 0, 0
	for i := 0; i < len(nonnull); {
		j := i + 1
		for j < len(nonnull) && types.Compare(nonnull[i].d, nonnull[j].d) == 0 {
			j++
		}
		ndistinct++
		if n := j - i; n > 1 {
			nmultiple++
			if len(track) < target || n > track[len(track)-1].count {
				// Insert keeping track by descending count (a stable
				// order among equal counts: the smaller value first).
				k := len(track)
				if k < target {
					track = append(track, tracked{})
				} else {
					k--
				}
				for k > 0 && track[k-1].count < n {
					track[k] = track[k-1]
					k--
				}
				track[k] = tracked{i, n}
			}
		}
		i = j
	}
	n := float64(len(nonnull))
	// The table's non-NULL rows.
	totalNonNull := totalRows * (1 - cs.NullFrac)
	switch {
	case nmultiple == 0:
		// Every value unique: assume the column is unique.
		cs.NDistinct = -1 * (1 - cs.NullFrac)
	case nmultiple == ndistinct:
		// Every value seen more than once: assume all values were seen.
		cs.NDistinct = float64(ndistinct)
	default:
		// Haas and Stokes' Duj1 estimator: n*d / (n - f1 + f1*n/N).
		f1 := float64(ndistinct - nmultiple)
		d := float64(ndistinct)
		N := totalNonNull
		denom := (n - f1) + f1*n/N
		est := d
		if denom > 0 {
			est = n * d / denom
		}
		est = math.Max(est, d)
		est = math.Min(est, N)
		cs.NDistinct = math.Floor(est + 0.5)
	}
	// A count that grows with the table is kept as a fraction.
	if cs.NDistinct > 0.1*totalRows {
		cs.NDistinct = -(cs.NDistinct / totalRows)
	}

	// Most common values: every value when all were seen and they fit,
	// otherwise those significantly more common than the rest.
	numMCV := target
	if len(track) == ndistinct && cs.NDistinct > 0 && len(track) <= numMCV {
		numMCV = len(track)
	} else {
		numMCV = min(numMCV, len(track))
		counts := make([]int, numMCV)
		for i := range counts {
			counts[i] = track[i].count
		}
		numMCV = analyzeMCVList(counts, cs.NDistinct, cs.NullFrac, sampleRows, totalRows)
	}
	inMCV := make([]bool, len(nonnull))
	for _, t := range track[:numMCV] {
		cs.MCV = append(cs.MCV, nonnull[t.first].d)
		cs.MCF = append(cs.MCF, float64(t.count)/float64(sampleRows))
		for k := t.first; k < t.first+t.count; k++ {
			inMCV[k] = true
		}
	}

	// Histogram of the values not in the MCV list, when at least two
	// distinct ones remain.
	if numHist := ndistinct - numMCV; numHist >= 2 {
		numHist = min(numHist, target+1)
		rest := make([]types.Datum, 0, len(nonnull))
		for i, v := range nonnull {
			if !inMCV[i] {
				rest = append(rest, v.d)
			}
		}
		delta := (len(rest) - 1) / (numHist - 1)
		deltaFrac := (len(rest) - 1) % (numHist - 1)
		pos, posFrac := 0, 0
		for i := 0; i < numHist; i++ {
			cs.Histogram = append(cs.Histogram, rest[pos])
			pos += delta
			posFrac += deltaFrac
			if posFrac >= numHist-1 {
				pos++
				posFrac -= numHist - 1
			}
		}
	}

	// Both ranks run over 0..n-1: Σx = Σy = n(n-1)/2, Σx² = n(n-1)(2n-1)/6.
	if len(nonnull) > 1 {
		sumX := n * (n - 1) / 2
		sumX2 := n * (n - 1) * (2*n - 1) / 6
		// Positions are sample row indexes, not 0..n-1 when NULLs are
		// skipped: rank them.
		// order maps sorted rank to the key-order index: invert it.
		corrXY := 0.0
		for sortedRank, physRank := range order {
			corrXY += float64(physRank) * float64(sortedRank)
		}
		cs.Correlation = (n*corrXY - sumX*sumX) / (n*sumX2 - sumX*sumX)
		cs.HasCorrelation = true
	}
	return cs
}

// analyzeMCVList returns how many of the most common values (counts,
// descending) to keep: drop the least common while it is not
// significantly more common than the values outside the list would be
// (PostgreSQL 15's analyze_mcv_list: a count more than two standard
// errors above the others' average share).
func analyzeMCVList(counts []int, stadistinct, nullFrac float64, sampleRows int, totalRows float64) int {
	num := len(counts)
	if float64(sampleRows) >= totalRows || totalRows <= 1 {
		return num
	}
	ndistinctTable := stadistinct
	if ndistinctTable < 0 {
		ndistinctTable = -ndistinctTable * totalRows
	}
	sum := 0.0
	for _, c := range counts {
		sum += float64(c)
	}
	N, n := totalRows, float64(sampleRows)
	for ; num > 0; num-- {
		sum -= float64(counts[num-1])
		selec := 1 - sum/n - nullFrac
		selec = math.Max(0, math.Min(1, selec))
		other := ndistinctTable - float64(num-1)
		if other > 1 {
			selec /= other
		}
		K := N * float64(counts[num-1]) / n
		variance := n * K * (N - K) * (N - n) / (N * N * (N - 1))
		if float64(counts[num-1]) > selec*n+2*math.Sqrt(variance)+0.5 {
			break
		}
	}
	return num
}

// datumWidth is d's stored width in bytes as PostgreSQL counts it
// (pg_stats.avg_width): a fixed-width type's length, a variable one's
// bytes plus its header (1 byte up to 126 bytes, else 4).
func datumWidth(t types.T, d types.Datum) float64 {
	switch d.K {
	case types.KindNumeric:
		return float64(numericWidth(d))
	case types.KindText, types.KindVarchar, types.KindChar, types.KindBytea, types.KindJSON, types.KindUnknown:
		n := len(d.S)
		if n <= 126 {
			return float64(n + 1)
		}
		return float64(n + 4)
	case types.KindArray, types.KindInt2Vector, types.KindOidVector, types.KindRecord:
		w := 21.0 // array header with one dimension
		for _, e := range d.Elems() {
			if !e.IsNull() {
				w += datumWidth(types.T{Kind: e.K}, e)
			}
		}
		return w
	}
	if s := t.Size(); s > 0 {
		return float64(s)
	}
	return float64(len(d.String()) + 1)
}

// numericWidth is PostgreSQL's stored size of a numeric: a 1-byte header,
// 2 bytes of sign, scale and weight, and 2 bytes per base-10000 digit
// from the first to the last non-zero one (groups of 4 decimal digits
// aligned on the decimal point).
func numericWidth(d types.Datum) int {
	s := d.D.Coeff.String()
	exp := int(d.D.Exponent)
	lo, hi, any := 0, 0, false
	for k := 0; k < len(s); k++ {
		if s[k] == '0' {
			continue
		}
		p := len(s) - 1 - k + exp // the digit's power of ten
		g := p / 4
		if p < 0 && p%4 != 0 {
			g-- // floor division
		}
		if !any {
			lo, hi, any = g, g, true
		}
		lo, hi = min(lo, g), max(hi, g)
	}
	if !any {
		return 3
	}
	return 3 + 2*(hi-lo+1)
}
