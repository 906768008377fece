package funcs

import (
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/sql/types"
)

// cbrt follows glibc (PostgreSQL's cbrt), not Go's math.Cbrt.
func TestCbrtMatchesGlibc(t *testing.T) {
	for x, want := range map[float64]string{
		27: "3.0000000000000004", -8: "-2", 2: "1.2599210498948734", 0.00030833822306392943: "0.0675578451060979",
	} {
		if got := types.NewFloat8(cbrt(x)).String(); got != want {
			t.Errorf("cbrt(%v) = %s, want %s", x, got, want)
		}
	}
}

func TestSparkPattern(t *testing.T) {
	for f, want := range map[string]bool{
		"yyyy-MM-dd": true, "dd/MM/yyyy": true, "yyyy-MM-dd HH:mm:ss": true, "HH:mm:ss": true,
		"YYYY-MM-DD": false, "yyyy-mm-dd": false, "HH24:MI:SS": false, "DD Mon YYYY": false, "'yyyy' MM": false,
	} {
		if got := sparkPattern(f); got != want {
			t.Errorf("sparkPattern(%q) = %v, want %v", f, got, want)
		}
	}
}

func TestQuoteIdent(t *testing.T) {
	for in, want := range map[string]string{
		"abc": "abc", "Abc": `"Abc"`, "a b": `"a b"`, "select": `"select"`, "name": "name", "1a": `"1a"`, `a"b`: `"a""b"`, "": `""`,
	} {
		if got := QuoteIdent(in); got != want {
			t.Errorf("QuoteIdent(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestRegexpFlags(t *testing.T) {
	if _, err := parseReFlags("gz"); err == nil {
		t.Error("flag z accepted")
	}
	f, _ := parseReFlags("in")
	re, err := compileRe("a.b", f)
	if err != nil {
		t.Fatal(err)
	}
	if !re.MatchString("A_B") || re.MatchString("a\nb") {
		t.Error("i and n flags not applied")
	}
	f, _ = parseReFlags("")
	if re, _ = compileRe("a.b", f); !re.MatchString("a\nb") {
		t.Error(". does not match a newline by default")
	}
}

// A variance state that took values back equals one built from the
// remaining values (what GROUP_AGGREGATE relies on).
func TestVarianceRetract(t *testing.T) {
	vals := []string{"1.50", "2.25", "-3.00", "9.99", "0.00"}
	d := func(s string) types.Datum {
		x, _, _ := apd.NewFromString(s)
		return types.NewNumeric(x)
	}
	full := &varNumeric{k: varKind{sample: true, stddev: true}}
	fresh := &varNumeric{k: varKind{sample: true, stddev: true}}
	for _, v := range vals {
		full.Add(nil, []types.Datum{d(v)})
	}
	for _, v := range vals[:2] {
		full.Retract(nil, []types.Datum{d(v)})
	}
	for _, v := range vals[2:] {
		fresh.Add(nil, []types.Datum{d(v)})
	}
	a, _ := full.Result(nil)
	b, _ := fresh.Result(nil)
	if a.String() != b.String() {
		t.Errorf("after retract %s, fresh %s", a, b)
	}
	var back varNumeric
	back.k = full.k
	if err := back.SetState(full.State()); err != nil {
		t.Fatal(err)
	}
	if c, _ := back.Result(nil); c.String() != a.String() {
		t.Errorf("restored state gives %s, want %s", c, a)
	}
}

// The double precision exp, ln, log10 and power give glibc's (and so
// PostgreSQL's) results; these values are glibc 2.36's.
func TestFloatMatchesGlibc(t *testing.T) {
	for _, c := range []struct {
		got  float64
		want string
	}{
		{crExp(160.69906436962663), "6.176136740099162e+69"},
		{crExp(0.5903871311313933), "1.804686930673911"},
		{crLog(1.7953503553170093e+103), "237.75146476530165"},
		{crLog10(0.5828429643581691), "-0.23444844163793946"},
		{crLog10(1.0057442663531056e+27), "27.0024875653812"},
		{crLog10(1000), "3"},
		{crPow(-78, 13), "-3.955759092264801e+24"},
		{crPow(90.57072610207433, -35.52172574905927), "3.050804066234173e-70"},
		{crPow(1e10, -2.5), "1e-25"},
		{crPow(2, 1.5), "2.8284271247461903"},
	} {
		if got := types.NewFloat8(c.got).String(); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

func BenchmarkExp(b *testing.B) {
	for i := 0; i < b.N; i++ {
		crExp(1.2345 + float64(i%100))
	}
}

func BenchmarkPow(b *testing.B) {
	for i := 0; i < b.N; i++ {
		crPow(1.2345+float64(i%100), 2.5)
	}
}

// The trigonometric functions give glibc's results (glibc 2.36's values).
func TestTrigMatchesGlibc(t *testing.T) {
	for _, c := range []struct {
		got  float64
		want string
	}{
		{crSin(2.5), "0.5984721441039565"},
		{1 / crTan(1), "0.6420926159343306"},
	} {
		if got := types.NewFloat8(c.got).String(); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}

// Arguments past 1e15 are reduced in arbitrary precision (glibc 2.36's
// values).
func TestTrigHugeArguments(t *testing.T) {
	for _, c := range []struct {
		got  float64
		want string
	}{
		{crCos(9223372036854775807), "0.011800076512800236"},
		{crTan(9223372036854775807), "84.73931296875567"},
		{crSin(1e300), "-0.8178819121159085"},
		{crSin(-1e300), "0.8178819121159085"},
	} {
		if got := types.NewFloat8(c.got).String(); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}
