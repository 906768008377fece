package funcs

import (
	"math"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// to_char over numbers: PostgreSQL's numeric templates (formatting.c's
// NUM_processor) 9 0 . , D G S MI PL SG PR L V TH RN EEEE and FM, in the
// C locale (D is '.', G is ',', L is a space).

const (
	numComma = iota + 1
	numDec
	num0
	num9
	numB
	numC
	numD
	numE
	numFM
	numG
	numL
	numMI
	numPL
	numPR
	numRN
	numrn
	numSG
	numSP
	numS
	numTH
	numth
	numV
)

var numKeys = []struct {
	name string
	id   int
}{
	{",", numComma}, {".", numDec}, {"0", num0}, {"9", num9}, {"B", numB}, {"C", numC}, {"D", numD},
	{"EEEE", numE}, {"FM", numFM}, {"G", numG}, {"L", numL}, {"MI", numMI}, {"PL", numPL}, {"PR", numPR},
	{"RN", numRN}, {"SG", numSG}, {"SP", numSP}, {"S", numS}, {"TH", numTH}, {"V", numV},
	{"b", numB}, {"c", numC}, {"d", numD}, {"eeee", numE}, {"fm", numFM}, {"g", numG}, {"l", numL},
	{"mi", numMI}, {"pl", numPL}, {"pr", numPR}, {"rn", numrn}, {"sg", numSG}, {"sp", numSP}, {"s", numS},
	{"th", numth}, {"v", numV},
}

type numNode struct {
	id   int // 0: literal text
	text string
}

// numDesc is NUMDesc: what a template asks for.
type numDesc struct {
	pre, post, multi           int
	zeroStart, zeroEnd         int
	preLsignNum                int
	lsign                      int // 0 none, 1 pre, 2 post
	decimal, ldecimal, zero    bool
	fill, minus, plus, bracket bool
	roman, eeee, lsignFlag     bool
	vSeen                      bool
}

func (d *numDesc) multiSet() bool { return d.vSeen }

func numErr(format string, args ...any) *pgerror.Error {
	return pgerror.New(pgerror.SyntaxError, format, args...)
}

func parseNum(f string) ([]numNode, *numDesc, error) {
	d := &numDesc{}
	var nodes []numNode
	for i := 0; i < len(f); {
		id := 0
		for _, k := range numKeys {
			if strings.HasPrefix(f[i:], k.name) {
				id = k.id
				i += len(k.name)
				break
			}
		}
		if id == 0 {
			_, size := decodeRune(f[i:])
			if f[i] == '"' {
				// quoted text
				j := i + 1
				for j < len(f) && f[j] != '"' {
					j++
				}
				nodes = append(nodes, numNode{text: f[i+1 : min(j, len(f))]})
				i = j + 1
				continue
			}
			nodes = append(nodes, numNode{text: f[i : i+size]})
			i += size
			continue
		}
		switch id {
		case num9:
			if d.bracket {
				return nil, nil, numErr("\"9\" must be ahead of \"PR\"")
			}
			if d.multiSet() {
				d.multi++
				break
			}
			if d.decimal {
				d.post++
			} else {
				d.pre++
			}
		case num0:
			if d.bracket {
				return nil, nil, numErr("\"0\" must be ahead of \"PR\"")
			}
			if !d.zero && !d.decimal {
				d.zero = true
				d.zeroStart = d.pre + 1
			}
			if !d.decimal {
				d.pre++
			} else {
				d.post++
			}
			d.zeroEnd = d.pre + d.post
		case numD, numDec:
			if id == numD {
				d.ldecimal = true
			}
			if d.decimal {
				return nil, nil, numErr("multiple decimal points")
			}
			if d.multiSet() {
				return nil, nil, numErr("cannot use \"V\" and decimal point together")
			}
			d.decimal = true
		case numFM:
			d.fill = true
		case numS:
			if d.lsignFlag {
				return nil, nil, numErr("cannot use \"S\" twice")
			}
			if d.plus || d.minus || d.bracket {
				return nil, nil, numErr("cannot use \"S\" and \"PL\"/\"MI\"/\"SG\"/\"PR\" together")
			}
			if !d.decimal {
				d.lsign, d.preLsignNum, d.lsignFlag = 1, d.pre, true
			} else if d.lsign == 0 {
				d.lsign, d.lsignFlag = 2, true
			}
		case numMI:
			if d.lsignFlag {
				return nil, nil, numErr("cannot use \"S\" and \"MI\" together")
			}
			d.minus = true
		case numPL:
			if d.lsignFlag {
				return nil, nil, numErr("cannot use \"S\" and \"PL\" together")
			}
			d.plus = true
		case numSG:
			if d.lsignFlag {
				return nil, nil, numErr("cannot use \"S\" and \"SG\" together")
			}
			d.minus, d.plus = true, true
		case numPR:
			if d.lsignFlag || d.plus || d.minus {
				return nil, nil, numErr("cannot use \"PR\" and \"S\"/\"PL\"/\"MI\"/\"SG\" together")
			}
			d.bracket = true
		case numRN, numrn:
			d.roman = true
		case numV:
			if d.decimal {
				return nil, nil, numErr("cannot use \"V\" and decimal point together")
			}
			d.multi = 0
			d.vSeen = true
		case numE:
			if d.eeee {
				return nil, nil, numErr("cannot use \"EEEE\" twice")
			}
			if d.fill || d.lsignFlag || d.bracket || d.minus || d.plus || d.roman || d.multiSet() {
				return nil, nil, numErr("\"EEEE\" is incompatible with other formats").
					WithDetail("\"EEEE\" may only be used together with digit and decimal point patterns.")
			}
			d.eeee = true
		}
		nodes = append(nodes, numNode{id: id})
	}
	return nodes, d, nil
}

// toRoman is int_to_roman: 1 to 3999, else 15 #.
func toRoman(v int64) string {
	if v < 1 || v > 3999 {
		return strings.Repeat("#", 15)
	}
	vals := []int64{1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1}
	syms := []string{"M", "CM", "D", "CD", "C", "XC", "L", "XL", "X", "IX", "V", "IV", "I"}
	var b strings.Builder
	for i, x := range vals {
		for v >= x {
			b.WriteString(syms[i])
			v -= x
		}
	}
	return b.String()
}

// numProc is NUMProc: the state of one to_char over a number.
type numProc struct {
	d                 *numDesc
	sign              byte
	signWrote         bool
	number            string
	p                 int // index into number
	lastRelevant      int // index into number, -1 if none
	outPreSpaces      int
	numCount, numCurr int
	numIn             bool
	out               strings.Builder
}

func (np *numProc) cur() byte {
	if np.p < len(np.number) {
		return np.number[np.p]
	}
	return 0
}

func (np *numProc) predecSpace() bool {
	return !np.d.zero && np.p == 0 && len(np.number) > 0 && np.number[0] == '0' && np.d.post != 0
}

func (np *numProc) lastRelevantIsDot() bool {
	return np.lastRelevant >= 0 && np.lastRelevant < len(np.number) && np.number[np.lastRelevant] == '.'
}

// numpart is NUM_numpart_to_char.
func (np *numProc) numpart(id int) {
	d := np.d
	if d.roman {
		return
	}
	np.numIn = false
	if !np.signWrote && (np.numCurr >= np.outPreSpaces || d.zero && d.zeroStart == np.numCurr) &&
		(!np.predecSpace() || np.lastRelevantIsDot()) {
		switch {
		case d.lsignFlag:
			if d.lsign == 1 {
				if np.sign == '-' {
					np.out.WriteByte('-')
				} else {
					np.out.WriteByte('+')
				}
				np.signWrote = true
			}
		case d.bracket:
			if np.sign == '+' {
				np.out.WriteByte(' ')
			} else {
				np.out.WriteByte('<')
			}
			np.signWrote = true
		case np.sign == '+':
			if !d.fill {
				np.out.WriteByte(' ')
			}
			np.signWrote = true
		case np.sign == '-':
			np.out.WriteByte('-')
			np.signWrote = true
		}
	}
	if id == num9 || id == num0 || id == numD || id == numDec {
		switch {
		case np.numCurr < np.outPreSpaces && (d.zeroStart > np.numCurr || !d.zero):
			if !d.fill {
				np.out.WriteByte(' ')
			}
		case d.zero && np.numCurr < np.outPreSpaces && d.zeroStart <= np.numCurr:
			np.out.WriteByte('0')
			np.numIn = true
		default:
			if np.cur() == '.' {
				if !np.lastRelevantIsDot() || d.fill {
					np.out.WriteByte('.')
				}
			} else {
				switch {
				case np.lastRelevant >= 0 && np.p > np.lastRelevant && id != num0:
				case np.predecSpace():
					if !d.fill {
						np.out.WriteByte(' ')
					} else if np.lastRelevantIsDot() {
						np.out.WriteByte('0')
					}
				default:
					if c := np.cur(); c != 0 {
						np.out.WriteByte(c)
					}
					np.numIn = true
				}
			}
			if np.p < len(np.number) {
				np.p++
			}
		}
		end := np.numCount
		if np.outPreSpaces > 0 {
			end++
		}
		if d.decimal {
			end++
		}
		if np.lastRelevant >= 0 && np.lastRelevant == np.p {
			end = np.numCurr
		}
		if np.numCurr+1 == end {
			if np.signWrote && d.bracket {
				if np.sign == '+' {
					np.out.WriteByte(' ')
				} else {
					np.out.WriteByte('>')
				}
			} else if d.lsignFlag && d.lsign == 2 {
				if np.sign == '-' {
					np.out.WriteByte('-')
				} else {
					np.out.WriteByte('+')
				}
			}
		}
	}
	np.numCurr++
}

// numProcess is NUM_processor for to_char.
func numProcess(nodes []numNode, d *numDesc, number string, outPreSpaces int, sign byte) string {
	np := &numProc{d: d, number: number, sign: sign, lastRelevant: -1}
	if d.zeroStart > 0 {
		d.zeroStart--
	}
	if d.eeee {
		return number
	}
	if d.roman {
		d.lsign, d.preLsignNum, d.post, d.pre, outPreSpaces = 0, 0, 0, 0, 0
		np.sign = 0
		d.lsignFlag = false
	}
	if d.plus || d.minus {
		np.signWrote = !(d.plus && !d.minus)
	} else {
		if np.sign != '-' && d.fill {
			d.bracket = false
		}
		np.signWrote = np.sign == '+' && d.fill && !d.lsignFlag
		if d.lsign == 1 && d.pre == d.preLsignNum {
			d.lsign = 2
		}
	}
	np.numCount = d.post + d.pre - 1
	np.outPreSpaces = outPreSpaces
	if d.fill && d.decimal {
		if dot := strings.IndexByte(number, '.'); dot >= 0 {
			np.lastRelevant = dot
			for i := dot + 1; i < len(number); i++ {
				if number[i] != '0' {
					np.lastRelevant = i
				}
			}
		}
		if np.lastRelevant >= 0 && d.zeroEnd > np.outPreSpaces {
			lastZero := min(len(number)-1, d.zeroEnd-np.outPreSpaces)
			if np.lastRelevant < lastZero {
				np.lastRelevant = lastZero
			}
		}
	}
	if !np.signWrote && np.outPreSpaces == 0 {
		np.numCount++
	}
	for _, n := range nodes {
		switch n.id {
		case 0:
			np.out.WriteString(n.text)
		case num9, num0, numDec, numD:
			np.numpart(n.id)
		case numComma, numG:
			if !np.numIn {
				if !d.fill {
					np.out.WriteByte(' ')
				}
			} else {
				np.out.WriteByte(',')
			}
		case numL:
			np.out.WriteByte(' ')
		case numRN, numrn:
			s := number[np.p:]
			if n.id == numrn {
				s = strings.ToLower(s)
			}
			if !d.fill {
				for len(s) < 15 {
					s = " " + s
				}
			}
			np.out.WriteString(s)
		case numTH, numth:
			if d.roman || strings.HasPrefix(number, "#") || np.sign == '-' || d.decimal {
				continue
			}
			np.out.WriteString(ordinal(number, n.id == numTH)[len(number):])
		case numMI:
			if np.sign == '-' {
				np.out.WriteByte('-')
			} else if !d.fill {
				np.out.WriteByte(' ')
			}
		case numPL:
			if np.sign == '+' {
				np.out.WriteByte('+')
			} else if !d.fill {
				np.out.WriteByte(' ')
			}
		case numSG:
			np.out.WriteByte(np.sign)
		}
	}
	return np.out.String()
}

// overflowed is the # string of a number too wide for its template.
func overflowed(d *numDesc) string {
	b := []byte(strings.Repeat("#", d.pre+d.post+1))
	b[d.pre] = '.'
	return string(b)
}

// splitSign takes a leading '-' off a number's text.
func splitSign(s string) (string, byte) {
	if strings.HasPrefix(s, "-") {
		return s[1:], '-'
	}
	return s, '+'
}

func prePadding(numstr string, d *numDesc) (string, int) {
	preLen := len(numstr)
	if i := strings.IndexByte(numstr, '.'); i >= 0 {
		preLen = i
	}
	switch {
	case preLen < d.pre:
		return numstr, d.pre - preLen
	case preLen > d.pre:
		return overflowed(d), 0
	}
	return numstr, 0
}

// sciExp writes a double as C's %+.*e (two exponent digits at least).
func sciExp(f float64, prec int) string {
	s := strconv.FormatFloat(f, 'e', prec, 64)
	if f >= 0 || math.IsNaN(f) {
		s = "+" + s
	}
	return s
}

func numericToChar(v *apd.Decimal, f string) (types.Datum, error) {
	nodes, d, err := parseNum(f)
	if err != nil {
		return types.Datum{}, err
	}
	var numstr string
	outPre, sign := 0, byte('+')
	switch {
	case d.roman:
		if v.Form == apd.NaN {
			return types.Datum{}, pgerror.New(pgerror.FeatureNotSupported, "cannot convert NaN to integer")
		}
		if v.Form == apd.Infinite {
			return types.Datum{}, pgerror.New(pgerror.FeatureNotSupported, "cannot convert infinity to integer")
		}
		r, err := roundNumeric(v, 0)
		if err != nil {
			return types.Datum{}, err
		}
		i, err := r.D.Int64()
		if err != nil || v.Form != apd.Finite {
			i = 0
		}
		numstr = toRoman(i)
	case d.eeee:
		if v.Form != apd.Finite {
			b := []byte(strings.Repeat("#", d.pre+d.post+6))
			b[0] = ' '
			b[d.pre+1] = '.'
			numstr = string(b)
			break
		}
		numstr = numericSci(v, d.post)
		if !strings.HasPrefix(numstr, "-") {
			numstr = " " + numstr
		}
	default:
		val := v
		if d.multi > 0 {
			val = new(apd.Decimal)
			types.DecimalCtx.Mul(val, v, apd.New(1, int32(d.multi)))
			d.pre += d.multi
		}
		if val.Form != apd.Finite {
			// NaN and Infinity go through as their text, as numeric_out
			// writes them
			numstr, sign = splitSign(types.NewNumeric(val).String())
			numstr, outPre = prePadding(numstr, d)
			break
		}
		r, err := roundNumeric(val, int32(d.post))
		if err != nil {
			return types.Datum{}, err
		}
		numstr, sign = splitSign(r.String())
		numstr, outPre = prePadding(numstr, d)
	}
	return types.NewText(numProcess(nodes, d, numstr, outPre, sign)), nil
}

// numericSci is numeric_out_sci: the significand rounded to scale
// digits after its point and a signed two-digit (at least) exponent.
func numericSci(v *apd.Decimal, scale int) string {
	exp := 0
	if !v.IsZero() {
		exp = msdExp(v)
	}
	sig := new(apd.Decimal)
	types.DecimalCtx.Quo(sig, v, apd.New(1, int32(exp)))
	r, _ := roundTo(sig, int32(scale))
	s := r.Text('f')
	e := strconv.Itoa(iabs(exp))
	if len(e) < 2 {
		e = "0" + e
	}
	if exp < 0 {
		return s + "e-" + e
	}
	return s + "e+" + e
}

func intToChar(v int64, f string, k types.Kind) (types.Datum, error) {
	nodes, d, err := parseNum(f)
	if err != nil {
		return types.Datum{}, err
	}
	var numstr string
	outPre, sign := 0, byte('+')
	switch {
	case d.roman:
		numstr = toRoman(v)
	case d.eeee:
		numstr = sciExp(float64(v), d.post)
		if numstr[0] == '+' {
			numstr = " " + numstr[1:]
		}
	default:
		x := v
		if d.multi > 0 {
			var err error
			if x, err = types.IntMul(k, v, int64(math.Pow(10, float64(d.multi)))); err != nil {
				return types.Datum{}, err
			}
			d.pre += d.multi
		}
		numstr, sign = splitSign(strconv.FormatInt(x, 10))
		if d.post > 0 {
			numstr += "." + strings.Repeat("0", d.post)
		}
		numstr, outPre = prePadding(numstr, d)
	}
	return types.NewText(numProcess(nodes, d, numstr, outPre, sign)), nil
}

func floatToChar(v float64, f string, digits int) (types.Datum, error) {
	nodes, d, err := parseNum(f)
	if err != nil {
		return types.Datum{}, err
	}
	var numstr string
	outPre, sign := 0, byte('+')
	switch {
	case d.roman:
		numstr = toRoman(int64(math.RoundToEven(v)))
	case d.eeee:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			b := []byte(strings.Repeat("#", d.pre+d.post+6))
			b[0] = ' '
			b[d.pre+1] = '.'
			numstr = string(b)
			break
		}
		numstr = sciExp(v, d.post)
		if numstr[0] == '+' {
			numstr = " " + numstr[1:]
		}
	default:
		val := v
		if d.multi > 0 {
			val = v * math.Pow(10, float64(d.multi))
			d.pre += d.multi
		}
		if math.IsNaN(val) || math.IsInf(val, 0) {
			numstr, sign = splitSign(types.NewFloat8(val).String())
			numstr, outPre = prePadding(numstr, d)
			break
		}
		preLen := len(strconv.FormatFloat(math.Abs(val), 'f', 0, 64))
		if preLen >= digits {
			d.post = 0
		} else if preLen+d.post > digits {
			d.post = digits - preLen
		}
		numstr, sign = splitSign(strconv.FormatFloat(val, 'f', d.post, 64))
		numstr, outPre = prePadding(numstr, d)
	}
	return types.NewText(numProcess(nodes, d, numstr, outPre, sign)), nil
}

func numericToCharOverloads() []*Overload {
	text := types.Text
	return []*Overload{
		strict(params(types.Int4, text), text, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return intToChar(a[0].I, a[1].S, types.KindInt4) }),
		strict(params(types.Int8, text), text, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return intToChar(a[0].I, a[1].S, types.KindInt8) }),
		strict(params(types.Numeric, text), text, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return numericToChar(a[0].D, a[1].S) }),
		strict(params(types.Float4, text), text, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return floatToChar(a[0].F, a[1].S, 6) }),
		strict(params(types.Float8, text), text, func(_ *Ctx, a []types.Datum) (types.Datum, error) { return floatToChar(a[0].F, a[1].S, 15) }),
	}
}
