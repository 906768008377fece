package funcs

import (
	"math"
	"math/big"
	"sync"
)

// Correctly rounded exp, ln, log10 and power for double precision.
// PostgreSQL calls glibc, whose results are (all but always) the double
// nearest the true value; Go's math package is often one unit in the last
// place off. These compute in double-double arithmetic (about 106 bits)
// and round once, so they agree with PostgreSQL digit for digit in all
// but vanishingly rare cases, at a few hundred nanoseconds a call.

// dd is an unevaluated sum hi + lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	v := s - a
	return dd{s, (a - (s - v)) + (b - v)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (x dd) add(y dd) dd {
	s := twoSum(x.hi, y.hi)
	t := twoSum(x.lo, y.lo)
	s.lo += t.hi
	s = quickTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return quickTwoSum(s.hi, s.lo)
}

func (x dd) mul(y dd) dd {
	p := twoProd(x.hi, y.hi)
	p.lo += x.hi*y.lo + x.lo*y.hi
	return quickTwoSum(p.hi, p.lo)
}

func (x dd) mulF(f float64) dd {
	p := twoProd(x.hi, f)
	p.lo += x.lo * f
	return quickTwoSum(p.hi, p.lo)
}

func (x dd) div(y dd) dd {
	q1 := x.hi / y.hi
	r := x.add(y.mulF(-q1))
	q2 := r.hi / y.hi
	r = r.add(y.mulF(-q2))
	q3 := r.hi / y.hi
	q := quickTwoSum(q1, q2)
	return q.add(dd{q3, 0})
}

// ddConst reads a constant given to more than 32 digits.
func ddConst(s string) dd {
	f, _, err := big.ParseFloat(s, 10, 200, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	hi, _ := f.Float64()
	rest := new(big.Float).SetPrec(200).Sub(f, new(big.Float).SetFloat64(hi))
	lo, _ := rest.Float64()
	return dd{hi, lo}
}

var (
	ddLn2    = ddConst("0.693147180559945309417232121458176568075500134360255254120680009493393621969694715605863326996418687")
	ddLog10e = ddConst("0.434294481903251827651128918916605082294397005803666566114453783165864649208870774729224949338431748")
	// invFact[n] = 1/n!
	invFact = func() []dd {
		out := make([]dd, 16)
		f := new(big.Float).SetPrec(200).SetInt64(1)
		for n := 1; n < len(out); n++ {
			f.Quo(f, new(big.Float).SetPrec(200).SetInt64(int64(n)))
			hi, _ := f.Float64()
			lo, _ := new(big.Float).SetPrec(200).Sub(f, new(big.Float).SetFloat64(hi)).Float64()
			out[n] = dd{hi, lo}
		}
		return out
	}()
)

// ddExp is e^a for a finite a with |a.hi| < 746; ok=false past the
// double range (overflow: +Inf; underflow: 0).
func ddExp(a dd) (dd, int) {
	// a = k·ln2 + r, |r| <= ln2/2; e^r by Taylor on r/512, squared 9 times
	k := math.Round(a.hi / ddLn2.hi)
	r := a.add(ddLn2.mulF(-k))
	r = dd{r.hi / 512, r.lo / 512}
	// expm1(r) = r + r²/2! + … (|r| < 7e-4: 10 terms reach 1e-35)
	sum := dd{0, 0}
	term := r
	for n := 1; n <= 10; n++ {
		sum = sum.add(term.mul(invFact[n]))
		term = term.mul(r)
	}
	// (1+s)² - 1 = 2s + s²
	for i := 0; i < 9; i++ {
		sum = sum.mulF(2).add(sum.mul(sum))
	}
	return sum.add(dd{1, 0}), int(k)
}

// scale rounds x·2^k to the nearest double.
func scale(x dd, k int) float64 {
	hi := math.Ldexp(x.hi, k)
	if math.IsInf(hi, 0) || hi == 0 {
		return hi
	}
	if math.Abs(hi) < 0x1p-1022 {
		// subnormal: round the sum once, at the subnormal grid
		return math.Ldexp(x.hi+x.lo, k)
	}
	return hi + math.Ldexp(x.lo, k)
}

// crExp is e^x, correctly rounded.
func crExp(x float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case math.IsInf(x, -1) || x < -746:
		return 0
	case x > 710:
		return math.Inf(1)
	}
	e, k := ddExp(dd{x, 0})
	return scale(e, k)
}

// ddLog is ln(x) for a finite x > 0: Go's estimate refined by one
// Newton step in double-double.
func ddLog(x float64) dd {
	y := math.Log(x)
	if y == 0 {
		// x == 1, or so close that ln(x) ≈ x-1
		d := twoSum(x, -1)
		if d.hi == 0 {
			return dd{0, 0}
		}
		y = d.hi
	}
	// y + (x·e^-y - 1)
	e, k := ddExp(dd{-y, 0})
	t := e.mulF(math.Ldexp(x, k)) // x·2^k is near 1/e: no overflow
	return dd{y, 0}.add(t.add(dd{-1, 0}))
}

func crLog(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 1) {
		return math.Log(x)
	}
	l := ddLog(x)
	return l.hi + l.lo
}

// crLog10 is glibc's log10 (e_log10.c, from fdlibm): exponent and
// mantissa logarithm combined in double precision, which is what
// PostgreSQL returns (it is not always the nearest double).
func crLog10(x float64) float64 {
	if x <= 0 || math.IsNaN(x) || math.IsInf(x, 1) {
		return math.Log10(x)
	}
	const (
		two54    = 1.80143985094819840000e+16
		ivln10   = 4.34294481903251816668e-01
		log102hi = 3.01029995663611771306e-01
		log102lo = 3.69423907715893078616e-13
	)
	k := int32(0)
	hx := int32(math.Float64bits(x) >> 32)
	if hx < 0x00100000 { // subnormal
		k -= 54
		x *= two54
		hx = int32(math.Float64bits(x) >> 32)
	}
	k += (hx >> 20) - 1023
	i := int32((uint32(k) & 0x80000000) >> 31)
	hx = (hx & 0x000fffff) | ((0x3ff - i) << 20)
	y := float64(k + i)
	x = math.Float64frombits(uint64(uint32(hx))<<32 | math.Float64bits(x)&0xffffffff)
	z := y*log102lo + ivln10*crLog(x)
	return z + y*log102hi
}

// crPow is x^y for finite x and y with x > 0 or y an integer; the
// caller has ruled out the error cases.
func crPow(x, y float64) float64 {
	if x == 0 || math.IsInf(x, 0) || math.IsInf(y, 0) || math.IsNaN(x) || math.IsNaN(y) || y == 0 || x == 1 {
		return math.Pow(x, y)
	}
	neg := false
	if x < 0 {
		// y is an integer here: odd powers keep the sign
		neg = math.Mod(y, 2) != 0
		x = -x
	}
	p := ddLog(x).mulF(y)
	var r float64
	switch {
	case p.hi > 710:
		r = math.Inf(1)
	case p.hi < -746:
		r = 0
	default:
		e, k := ddExp(p)
		r = scale(e, k)
	}
	if neg {
		r = -r
	}
	return r
}

// Trigonometry in double-double: the argument reduced modulo π/2 with a
// 159-bit π/2, Taylor series on |r| <= π/4, and the inverse functions by
// one Newton step from Go's estimate. glibc's sin, cos, tan, asin, acos,
// atan and atan2 (which PostgreSQL calls) round correctly in practice, so
// these agree with them.

var (
	// π/2 as three doubles (fdlibm's pio2_1, pio2_2, pio2_3 are 33-bit
	// pieces; these are full 53-bit ones, so k·piece is exact in dd).
	pio2Parts = func() [3]float64 {
		f, _, _ := big.ParseFloat("1.570796326794896619231321691639751442098584699687552910487472296153908203143104499314017412671058534", 10, 300, big.ToNearestEven)
		var out [3]float64
		for i := range out {
			out[i], _ = f.Float64()
			f.Sub(f, new(big.Float).SetFloat64(out[i]))
		}
		return out
	}()
	ddPio2 = dd{pio2Parts[0], pio2Parts[1]}
	ddPi   = ddConst("3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798")
)

// bigPio2 is π/2 to 1300 bits, for reducing arguments up to the
// largest double (computed once, by Machin's formula).
var bigPio2 = sync.OnceValue(func() *big.Float {
	const prec = 1300
	atanInv := func(n int64) *big.Float {
		// atan(1/n) = Σ (-1)^k / ((2k+1)·n^(2k+1))
		sum := new(big.Float).SetPrec(prec)
		pow := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), new(big.Float).SetPrec(prec).SetInt64(n))
		n2 := new(big.Float).SetPrec(prec).SetInt64(n * n)
		eps := new(big.Float).SetPrec(prec).SetMantExp(big.NewFloat(1), -prec-8)
		for k := int64(0); ; k++ {
			term := new(big.Float).SetPrec(prec).Quo(pow, new(big.Float).SetPrec(prec).SetInt64(2*k+1))
			if k%2 == 0 {
				sum.Add(sum, term)
			} else {
				sum.Sub(sum, term)
			}
			if term.Cmp(eps) < 0 {
				return sum
			}
			pow.Quo(pow, n2)
		}
	}
	pi := new(big.Float).SetPrec(prec).Mul(atanInv(5), new(big.Float).SetPrec(prec).SetInt64(16))
	pi.Sub(pi, new(big.Float).SetPrec(prec).Mul(atanInv(239), new(big.Float).SetPrec(prec).SetInt64(4)))
	return pi.Quo(pi, new(big.Float).SetPrec(prec).SetInt64(2))
})

// reduceBig is reduce for any finite x, in arbitrary precision.
func reduceBig(x float64) (dd, int) {
	const prec = 1300
	pio2 := bigPio2()
	X := new(big.Float).SetPrec(prec).SetFloat64(x)
	q := new(big.Float).SetPrec(prec).Quo(X, pio2)
	// k = round(q)
	half := new(big.Float).SetPrec(prec).SetFloat64(0.5)
	if q.Sign() < 0 {
		q.Sub(q, half)
	} else {
		q.Add(q, half)
	}
	k, _ := q.Int(nil)
	r := new(big.Float).SetPrec(prec).Mul(new(big.Float).SetPrec(prec).SetInt(k), pio2)
	r.Sub(X, r)
	hi, _ := r.Float64()
	lo, _ := new(big.Float).SetPrec(prec).Sub(r, new(big.Float).SetFloat64(hi)).Float64()
	m := new(big.Int).Mod(k, big.NewInt(4)) // Euclidean: 0..3
	return dd{hi, lo}, int(m.Int64())
}

// reduce returns r = x - k·π/2 in dd and k mod 4.
func reduce(x float64) (dd, int, bool) {
	if math.Abs(x) > 1e15 {
		r, q := reduceBig(x)
		return r, q, true
	}
	k := math.Round(x / pio2Parts[0])
	r := dd{x, 0}
	for _, p := range pio2Parts {
		r = r.add(twoProd(-k, p))
	}
	q := int(math.Mod(k, 4))
	if q < 0 {
		q += 4
	}
	return r, q, true
}

// sinCosDD is sin(r) and cos(r) for |r| <= π/4 (a little more is fine).
func sinCosDD(r dd) (dd, dd) {
	r2 := r.mul(r)
	// sin r = r·(1 - r²/3! + r⁴/5! - …), cos r = 1 - r²/2! + r⁴/4! - …
	s, c := dd{0, 0}, dd{0, 0}
	ps := dd{1, 0} // r^(2n)
	for n := 0; n <= 13; n++ {
		sign := 1.0
		if n%2 == 1 {
			sign = -1
		}
		if 2*n+1 < len(invFact) {
			s = s.add(ps.mul(invFact[2*n+1]).mulF(sign))
		} else {
			s = s.add(ps.mul(invFactBig(2*n + 1)).mulF(sign))
		}
		if 2*n < len(invFact) {
			if n == 0 {
				c = c.add(dd{1, 0})
			} else {
				c = c.add(ps.mul(invFact[2*n]).mulF(sign))
			}
		} else {
			c = c.add(ps.mul(invFactBig(2 * n)).mulF(sign))
		}
		ps = ps.mul(r2)
	}
	return s.mul(r), c
}

var invFactMore = map[int]dd{}

// invFactBig is 1/n! for n past invFact's table.
func invFactBig(n int) dd {
	if v, ok := invFactMore[n]; ok {
		return v
	}
	f := new(big.Float).SetPrec(200).SetInt64(1)
	for i := 2; i <= n; i++ {
		f.Quo(f, new(big.Float).SetPrec(200).SetInt64(int64(i)))
	}
	hi, _ := f.Float64()
	lo, _ := new(big.Float).SetPrec(200).Sub(f, new(big.Float).SetFloat64(hi)).Float64()
	return dd{hi, lo}
}

func init() {
	for n := len(invFact); n <= 28; n++ {
		invFactMore[n] = invFactBig(n)
	}
}

// sinCos is sin(x), cos(x) in dd; ok=false past the reduction's range.
func sinCos(x dd) (dd, dd, bool) {
	r, q, ok := reduce(x.hi)
	if !ok {
		return dd{}, dd{}, false
	}
	r = r.add(dd{x.lo, 0})
	s, c := sinCosDD(r)
	neg := func(v dd) dd { return dd{-v.hi, -v.lo} }
	switch q {
	case 1:
		s, c = c, neg(s)
	case 2:
		s, c = neg(s), neg(c)
	case 3:
		s, c = neg(c), s
	}
	return s, c, true
}

func crSin(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return math.Sin(x)
	}
	s, _, ok := sinCos(dd{x, 0})
	if !ok {
		return math.Sin(x)
	}
	return s.hi + s.lo
}

func crCos(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.Cos(x)
	}
	_, c, ok := sinCos(dd{x, 0})
	if !ok {
		return math.Cos(x)
	}
	return c.hi + c.lo
}

func crTan(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return math.Tan(x)
	}
	s, c, ok := sinCos(dd{x, 0})
	if !ok {
		return math.Tan(x)
	}
	t := s.div(c)
	return t.hi + t.lo
}

func crAtan(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) < 0x1p-27 {
		return math.Atan(x)
	}
	if math.Abs(x) <= 1 {
		r := ddAtan(dd{x, 0})
		return r.hi + r.lo
	}
	// atan(x) = ±π/2 - atan(1/x): Newton is well-conditioned on |x| <= 1
	inv := dd{1, 0}.div(dd{x, 0})
	r := ddPio2.add(ddAtan(inv).mulF(-1))
	if x < 0 {
		r = dd{-ddPio2.hi, -ddPio2.lo}.add(ddAtan(inv).mulF(-1))
	}
	return r.hi + r.lo
}

// ddAtan is atan(a) for |a| <= 1: Go's estimate and one Newton step,
// y - (sin y - a cos y)·cos y.
func ddAtan(a dd) dd {
	y := math.Atan(a.hi)
	s, c, _ := sinCos(dd{y, 0})
	corr := s.add(c.mul(a).mulF(-1)).mul(c)
	return dd{y, 0}.add(dd{-corr.hi, -corr.lo})
}

func crAsin(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.Abs(x) >= 1 || math.Abs(x) < 0x1p-26 {
		return math.Asin(x)
	}
	y := math.Asin(x)
	s, c, _ := sinCos(dd{y, 0})
	corr := s.add(dd{-x, 0}).div(c)
	r := dd{y, 0}.add(dd{-corr.hi, -corr.lo})
	return r.hi + r.lo
}

func crAcos(x float64) float64 {
	if math.IsNaN(x) || math.Abs(x) >= 1 {
		return math.Acos(x)
	}
	y := math.Acos(x)
	s, c, _ := sinCos(dd{y, 0})
	corr := c.add(dd{-x, 0}).div(s)
	r := dd{y, 0}.add(corr)
	return r.hi + r.lo
}

func crAtan2(y, x float64) float64 {
	if y == 0 || x == 0 || math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return math.Atan2(y, x)
	}
	t := math.Atan2(y, x)
	s, c, _ := sinCos(dd{t, 0})
	// t + (y cos t - x sin t)/(x cos t + y sin t)
	num := c.mulF(y).add(s.mulF(-x))
	den := c.mulF(x).add(s.mulF(y))
	r := dd{t, 0}.add(num.div(den))
	return r.hi + r.lo
}
