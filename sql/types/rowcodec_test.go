package types

import (
	"math/rand"
	"testing"
)

// TestDecodeStopsAtLastWanted: Decode, DecodeWanted and DecodeRaw stop at
// the last column wanted. A row whose bytes after that column are not a
// row at all still decodes (the decoders do not walk there), every wanted
// column holds the full decode's value, and DecodeWanted leaves the other
// places of its row as they were.
func TestDecodeStopsAtLastWanted(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	ids := []uint32{1, 2, 3, 4, 5, 6}
	for n := 0; n < 500; n++ {
		vals := []Datum{NewInt8(rng.Int63()), NewText("abc"[:rng.Intn(4)]), Datum{K: KindDate, I: rng.Int63n(9000)},
			NewInt4(int64(rng.Int31())), NewText("x"), NewBool(rng.Intn(2) == 0)}
		for i := range vals {
			// (column 3 is the last wanted: when it is NULL, absent from
			// the row, decoding walks on)
			if rng.Intn(5) == 0 && i != 2 {
				vals[i] = NullDatum
			}
		}
		all := make([]Datum, len(ids))
		if err := NewRowDecoder(ids).Decode(AppendRowValue(nil, ids, vals), all); err != nil {
			t.Fatal(err)
		}
		// Columns 2 and 3 (or only 3) wanted; columns 4.. replaced by
		// bytes no decoder accepts.
		want := []uint32{3}
		if rng.Intn(2) == 0 {
			want = []uint32{2, 3}
		}
		buf := AppendRowValue(nil, ids[:3], vals[:3])
		buf = append(buf, 0xff, 0xff, 0xff)
		rd := NewRowDecoderAt(want, []int{4, 5}[2-len(want):])
		row := make([]Datum, 6)
		row[0] = NewText("kept")
		if err := rd.DecodeWanted(buf, row); err != nil {
			t.Fatalf("row %d: DecodeWanted: %v", n, err)
		}
		if row[0].S != "kept" {
			t.Fatalf("row %d: DecodeWanted cleared a place it does not write", n)
		}
		full := make([]Datum, 6)
		if err := rd.Decode(buf, full); err != nil {
			t.Fatalf("row %d: Decode: %v", n, err)
		}
		raw := make([]RawValue, 6)
		if err := rd.DecodeRaw(buf, raw); err != nil {
			t.Fatalf("row %d: DecodeRaw: %v", n, err)
		}
		for k, id := range want {
			place := 6 - len(want) + k
			w := all[id-1]
			for _, got := range []Datum{row[place], full[place]} {
				if Compare(got, w) != 0 || got.K != w.K {
					t.Fatalf("row %d column %d: %v, want %v", n, id, got, w)
				}
			}
			if (raw[place].K == KindNull) != w.IsNull() || (!w.IsNull() && w.K == KindDate && raw[place].I != w.I) {
				t.Fatalf("row %d column %d: raw %+v, want %v", n, id, raw[place], w)
			}
		}
	}
}
