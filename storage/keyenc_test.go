package storage

import (
	"bytes"
	"cmp"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/cockroachdb/apd/v3"
)

// seededRand prints the seed so a failure can be replayed (SEED=n).
func seededRand(t testing.TB) *rand.Rand {
	seed := rand.Uint64()
	if s := os.Getenv("SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d", seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
}

// value is one column value of a random tuple: a kind and a NULL flag.
type value struct {
	kind int // 0 bool, 1 int, 2 float, 3 bytes, 4 string, 5 decimal
	null bool
	b    bool
	i    int64
	f    float64
	s    []byte
	d    *apd.Decimal
}

const numKinds = 6

func randValue(r *rand.Rand, kind int) value {
	v := value{kind: kind}
	if r.IntN(8) == 0 {
		v.null = true
		return v
	}
	switch kind {
	case 0:
		v.b = r.IntN(2) == 1
	case 1:
		switch r.IntN(4) {
		case 0:
			v.i = []int64{math.MinInt64, math.MaxInt64, 0, -1, 1}[r.IntN(5)]
		case 1:
			v.i = int64(r.IntN(20)) - 10
		default:
			v.i = int64(r.Uint64())
		}
	case 2:
		switch r.IntN(5) {
		case 0:
			v.f = []float64{math.Inf(1), math.Inf(-1), math.NaN(), math.Copysign(0, -1), 0,
				math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64}[r.IntN(9)]
		case 1:
			v.f = float64(r.IntN(10) - 5)
		default:
			v.f = r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		}
	case 3, 4:
		n := r.IntN(6)
		v.s = make([]byte, n)
		for i := range v.s {
			v.s[i] = []byte{0, 1, 0xFF, 'a', 'b', 0xFE}[r.IntN(6)]
		}
	case 5:
		v.d = randDecimal(r)
	}
	return v
}

func randDecimal(r *rand.Rand) *apd.Decimal {
	switch r.IntN(12) {
	case 0:
		return &apd.Decimal{Form: apd.NaN}
	case 1:
		return &apd.Decimal{Form: apd.Infinite}
	case 2:
		return &apd.Decimal{Form: apd.Infinite, Negative: true}
	case 3:
		d := apd.New(0, int32(r.IntN(10)-5))
		d.Negative = r.IntN(2) == 0 // -0 == 0
		return d
	case 4: // the same value at several scales: 1, 1.0, 1.00, 10 × 10^-1
		c := int64(r.IntN(3) + 1)
		z := r.IntN(4)
		return apd.New(c*int64(math.Pow10(z)), int32(-z))
	case 5: // big coefficient
		var coeff apd.BigInt
		s := ""
		for i := 0; i < 30+r.IntN(20); i++ {
			s += string(rune('0' + r.IntN(10)))
		}
		coeff.SetString("1"+s, 10)
		d := apd.NewWithBigInt(&coeff, int32(r.IntN(80)-40))
		d.Negative = r.IntN(2) == 0
		return d
	}
	d := apd.New(int64(r.IntN(2000))-1000, int32(r.IntN(12)-6))
	return d
}

func cmpValue(a, b value) int {
	if a.null || b.null {
		return cmp.Compare(boolInt(!a.null), boolInt(!b.null))
	}
	switch a.kind {
	case 0:
		return cmp.Compare(boolInt(a.b), boolInt(b.b))
	case 1:
		return cmp.Compare(a.i, b.i)
	case 2:
		return cmpFloat(a.f, b.f)
	case 3, 4:
		return bytes.Compare(a.s, b.s)
	default:
		return cmpDecimal(a.d, b.d)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// cmpFloat orders as PostgreSQL: NaN equals NaN and is above everything.
func cmpFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(a, b)
}

// cmpDecimal orders as PostgreSQL numeric: -Inf < finite < +Inf < NaN.
func cmpDecimal(a, b *apd.Decimal) int {
	rank := func(d *apd.Decimal) int {
		switch {
		case d.Form == apd.NaN || d.Form == apd.NaNSignaling:
			return 3
		case d.Form == apd.Infinite && d.Negative:
			return 0
		case d.Form == apd.Infinite:
			return 2
		}
		return 1
	}
	ra, rb := rank(a), rank(b)
	if ra != rb || ra != 1 {
		return cmp.Compare(ra, rb)
	}
	return a.Cmp(b)
}

func encodeValue(b []byte, v value, desc bool) []byte {
	if v.null {
		if desc {
			return AppendNullDesc(b)
		}
		return AppendNull(b)
	}
	switch v.kind {
	case 0:
		if desc {
			return AppendBoolDesc(b, v.b)
		}
		return AppendBool(b, v.b)
	case 1:
		if desc {
			return AppendInt64Desc(b, v.i)
		}
		return AppendInt64(b, v.i)
	case 2:
		if desc {
			return AppendFloat64Desc(b, v.f)
		}
		return AppendFloat64(b, v.f)
	case 3:
		if desc {
			return AppendBytesDesc(b, v.s)
		}
		return AppendBytes(b, v.s)
	case 4:
		if desc {
			return AppendStringDesc(b, string(v.s))
		}
		return AppendString(b, string(v.s))
	default:
		if desc {
			return AppendDecimalDesc(b, v.d)
		}
		return AppendDecimal(b, v.d)
	}
}

// decodeValue decodes one column and checks it equals v.
func decodeValue(t *testing.T, b []byte, v value, desc bool) []byte {
	t.Helper()
	var isNull bool
	if desc {
		b, isNull = DecodeIfNullDesc(b)
	} else {
		b, isNull = DecodeIfNull(b)
	}
	if isNull != v.null {
		t.Fatalf("null = %v, want %v", isNull, v.null)
	}
	if isNull {
		return b
	}
	var err error
	var got value
	got.kind = v.kind
	switch v.kind {
	case 0:
		if desc {
			b, got.b, err = DecodeBoolDesc(b)
		} else {
			b, got.b, err = DecodeBool(b)
		}
	case 1:
		if desc {
			b, got.i, err = DecodeInt64Desc(b)
		} else {
			b, got.i, err = DecodeInt64(b)
		}
	case 2:
		if desc {
			b, got.f, err = DecodeFloat64Desc(b)
		} else {
			b, got.f, err = DecodeFloat64(b)
		}
	case 3:
		if desc {
			b, got.s, err = DecodeBytesDesc(b, nil)
		} else {
			b, got.s, err = DecodeBytes(b, nil)
		}
	case 4:
		var s string
		if desc {
			b, s, err = DecodeStringDesc(b)
		} else {
			b, s, err = DecodeString(b)
		}
		got.s = []byte(s)
	case 5:
		got.d = new(apd.Decimal)
		if desc {
			b, err = DecodeDecimalDesc(b, got.d)
		} else {
			b, err = DecodeDecimal(b, got.d)
		}
	}
	if err != nil {
		t.Fatalf("decode %v: %v", v, err)
	}
	if cmpValue(got, v) != 0 {
		t.Fatalf("decoded %+v, want %+v", got, v)
	}
	return b
}

func TestKeyEncodingOrderSingle(t *testing.T) {
	r := seededRand(t)
	for kind := 0; kind < numKinds; kind++ {
		for _, desc := range []bool{false, true} {
			vals := make([]value, 400)
			for i := range vals {
				vals[i] = randValue(r, kind)
			}
			checkOrder(t, vals, func(v value) []byte { return encodeValue(nil, v, desc) },
				func(a, b value) int {
					if desc {
						return -cmpValue(a, b)
					}
					return cmpValue(a, b)
				})
			for _, v := range vals {
				b := encodeValue(nil, v, desc)
				if rest := decodeValue(t, b, v, desc); len(rest) != 0 {
					t.Fatalf("kind %d: %d bytes left after decode", kind, len(rest))
				}
			}
		}
	}
}

// checkOrder: for every pair, the order of the encodings equals the order of
// the values (equal values encode equally).
func checkOrder[V any](t *testing.T, vals []V, enc func(V) []byte, cmpV func(a, b V) int) {
	t.Helper()
	keys := make([][]byte, len(vals))
	for i, v := range vals {
		keys[i] = enc(v)
	}
	for i := range vals {
		for j := range vals {
			want := cmpV(vals[i], vals[j])
			got := bytes.Compare(keys[i], keys[j])
			if want != got {
				t.Fatalf("compare(%+v, %+v): values %d, keys %d (%x vs %x)", vals[i], vals[j], want, got, keys[i], keys[j])
			}
		}
	}
	// And sorting by key sorts the values.
	idx := make([]int, len(vals))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	for i := 1; i < len(idx); i++ {
		if cmpV(vals[idx[i-1]], vals[idx[i]]) > 0 {
			t.Fatalf("sorted keys out of value order at %d", i)
		}
	}
}

func TestKeyEncodingOrderComposite(t *testing.T) {
	r := seededRand(t)
	for round := 0; round < 20; round++ {
		ncol := 1 + r.IntN(4)
		kinds := make([]int, ncol)
		desc := make([]bool, ncol)
		for i := range kinds {
			kinds[i], desc[i] = r.IntN(numKinds), r.IntN(2) == 0
		}
		// Few distinct values per column so that ties on a prefix are common.
		pool := make([][]value, ncol)
		for c := range pool {
			for i := 0; i < 5; i++ {
				pool[c] = append(pool[c], randValue(r, kinds[c]))
			}
		}
		tuples := make([][]value, 150)
		for i := range tuples {
			tuples[i] = make([]value, ncol)
			for c := range tuples[i] {
				tuples[i][c] = pool[c][r.IntN(len(pool[c]))]
			}
		}
		enc := func(tup []value) []byte {
			var b []byte
			for c, v := range tup {
				b = encodeValue(b, v, desc[c])
			}
			return b
		}
		cmpT := func(a, b []value) int {
			for c := range a {
				x := cmpValue(a[c], b[c])
				if desc[c] {
					x = -x
				}
				if x != 0 {
					return x
				}
			}
			return 0
		}
		checkOrder(t, tuples, enc, cmpT)
		for _, tup := range tuples {
			b := enc(tup)
			for c, v := range tup {
				b = decodeValue(t, b, v, desc[c])
			}
			if len(b) != 0 {
				t.Fatalf("%d bytes left", len(b))
			}
		}
	}
}

func TestKeyEncodingDetails(t *testing.T) {
	if got := AppendInt64(nil, 5); len(got) != 9 {
		t.Fatalf("int64 encoding is %d bytes, want 9", len(got))
	}
	if !bytes.Equal(AppendFloat64(nil, math.Copysign(0, -1)), AppendFloat64(nil, 0)) {
		t.Fatal("-0 and 0 encode differently")
	}
	if !bytes.Equal(AppendFloat64(nil, math.NaN()), AppendFloat64(nil, -math.NaN())) {
		t.Fatal("NaNs encode differently")
	}
	for _, s := range []string{"1", "1.0", "1.00", "10E-1", "0.001E3"} {
		d, _, _ := apd.NewFromString(s)
		if !bytes.Equal(AppendDecimal(nil, d), AppendDecimal(nil, apd.New(1, 0))) {
			t.Fatalf("%s encodes unlike 1", s)
		}
	}
	// Prefixes sort first; 0x00 inside a string is escaped.
	a, ab, a0 := AppendString(nil, "a"), AppendString(nil, "ab"), AppendString(nil, "a\x00")
	if !(bytes.Compare(a, a0) < 0 && bytes.Compare(a0, ab) < 0) {
		t.Fatal("string prefix order")
	}
	// NOT NULL marker sits between NULL and every value.
	nn := AppendNotNullMarker(nil)
	for _, v := range [][]byte{AppendBool(nil, false), AppendInt64(nil, math.MinInt64),
		AppendFloat64(nil, math.Inf(-1)), AppendBytes(nil, nil), AppendDecimal(nil, &apd.Decimal{Form: apd.Infinite, Negative: true})} {
		if bytes.Compare(AppendNull(nil), nn) >= 0 || bytes.Compare(nn, v) >= 0 {
			t.Fatalf("not-null marker out of place for %x", v)
		}
	}
	if PrefixEnd([]byte{1, 0xFF}) == nil || !bytes.Equal(PrefixEnd([]byte{1, 0xFF}), []byte{2}) {
		t.Fatal("PrefixEnd")
	}
	if PrefixEnd([]byte{0xFF, 0xFF}) != nil || PrefixEnd(nil) != nil {
		t.Fatal("PrefixEnd of all-0xFF")
	}
	// Bad input is an error, not a panic.
	for _, b := range [][]byte{nil, {markerInt, 1}, {markerBytes, 'a'}, {markerBytes, 0, 7}, {markerDecimal, decPos, 0, 0}} {
		if _, _, err := DecodeInt64(b); err == nil && len(b) > 0 && b[0] == markerInt {
			t.Fatalf("DecodeInt64(%x) no error", b)
		}
		if _, _, err := DecodeBytes(b, nil); err == nil && len(b) > 0 && b[0] == markerBytes {
			t.Fatalf("DecodeBytes(%x) no error", b)
		}
		var d apd.Decimal
		if _, err := DecodeDecimal(b, &d); err == nil && len(b) > 0 && b[0] == markerDecimal {
			t.Fatalf("DecodeDecimal(%x) no error", b)
		}
	}
}

func TestDecodeDecimalRoundTrip(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "-1", "0.5", "12345.678", "-0.000123", "1E+40", "9.99E-30",
		"123456789012345678901234567890.123", "100", "0.01", "-250", "NaN", "Infinity", "-Infinity"} {
		d, _, err := apd.NewFromString(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, desc := range []bool{false, true} {
			var got apd.Decimal
			var rest []byte
			if desc {
				rest, err = DecodeDecimalDesc(AppendDecimalDesc(nil, d), &got)
			} else {
				rest, err = DecodeDecimal(AppendDecimal(nil, d), &got)
			}
			if err != nil || len(rest) != 0 {
				t.Fatalf("%s: %v, %d left", s, err, len(rest))
			}
			if cmpDecimal(&got, d) != 0 {
				t.Fatalf("%s decoded as %s", s, got.String())
			}
		}
	}
}

func FuzzDecodeKey(f *testing.F) {
	f.Add(AppendDecimal(AppendString(AppendInt64(nil, 7), "x\x00y"), apd.New(-15, -1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		var d apd.Decimal
		_, _, _ = DecodeInt64(b)
		_, _, _ = DecodeBytes(b, nil)
		_, _, _ = DecodeBytesDesc(b, nil)
		_, _ = DecodeDecimal(b, &d)
		_, _ = DecodeDecimalDesc(b, &d)
		_, _, _ = DecodeFloat64(b)
	})
}

func BenchmarkKeyEncoding(b *testing.B) {
	d, _, _ := apd.NewFromString("12345.6789")
	b.Run("int64", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		for i := 0; b.Loop(); i++ {
			buf = AppendInt64(buf[:0], int64(i))
		}
	})
	b.Run("string", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		for b.Loop() {
			buf = AppendString(buf[:0], "customer-000123")
		}
	})
	b.Run("decimal", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		for b.Loop() {
			buf = AppendDecimal(buf[:0], d)
		}
	})
	b.Run("composite3", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		for i := 0; b.Loop(); i++ {
			buf = AppendInt64(buf[:0], int64(i))
			buf = AppendStringDesc(buf, "region-7")
			buf = AppendDecimal(buf, d)
		}
	})
	b.Run("decode-composite3", func(b *testing.B) {
		key := AppendDecimal(AppendStringDesc(AppendInt64(nil, 42), "region-7"), d)
		var dec apd.Decimal
		var sbuf []byte
		for b.Loop() {
			rest, _, _ := DecodeInt64(key)
			rest, sbuf, _ = DecodeBytesDesc(rest, sbuf[:0])
			_, _ = DecodeDecimal(rest, &dec)
		}
	})
}
