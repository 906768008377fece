package funcs

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// Poly is the role of a polymorphic parameter (Overload.Poly), after
// PostgreSQL's anycompatible family: every Elem argument and the element
// of every Array argument are brought to one common type.
type Poly uint8

// Polymorphic parameter roles.
const (
	// PolyNone: the parameter has the type in Params.
	PolyNone Poly = iota
	// PolyElem is anycompatible: a value of the common element type.
	PolyElem
	// PolyArray is anycompatiblearray: an array of the common element
	// type (an int2vector or oidvector is passed as it is).
	PolyArray
)

// ReturnsSet reports whether f is a set-returning function.
func (f *Func) ReturnsSet() bool {
	return len(f.Overloads) > 0 && f.Overloads[0].SRF != nil
}

// elemOf is the element type of the (resolved) array argument i.
func elemOf(i int) func([]types.T) types.T {
	return func(args []types.T) types.T { return args[i].ElemType() }
}

// arrayOfArg is the array type whose elements are those of argument i (an
// array or a vector) or argument i itself (an element).
func arrayOfArg(i int) func([]types.T) types.T {
	return func(args []types.T) types.T {
		if args[i].IsArray() {
			return types.ArrayOf(args[i].ElemType())
		}
		return types.ArrayOf(args[i])
	}
}

// reserveElems reserves an array of n elements a function is about to
// build (the elements' own bytes are shared with the values they come
// from, not copied).
func reserveElems(c *Ctx, what string, n int) (int64, error) {
	return c.Reserve(what, 32+int64(n)*types.DatumBytes)
}

// arrayResult builds an array value (lower bound 1) from elems.
func arrayResult(elems []types.Datum) types.Datum { return types.NewArray(types.KindArray, elems) }

// lowerOf is the subscript of an array value's first element.
func lowerOf(d types.Datum) int { return types.ArrayLower(d.K) }

var (
	anyArray = types.T{Kind: types.KindArray}
	polyA    = []Poly{PolyArray}
	polyAI   = []Poly{PolyArray, PolyNone}
	polyAE   = []Poly{PolyArray, PolyElem}
	polyEA   = []Poly{PolyElem, PolyArray}
	polyAA   = []Poly{PolyArray, PolyArray}
	polyAEI  = []Poly{PolyArray, PolyElem, PolyNone}
	polyAEE  = []Poly{PolyArray, PolyElem, PolyElem}
	polyE    = []Poly{PolyElem}
)

func init() {
	// Dimension functions: one-dimensional arrays only, so dimension 1
	// answers and any other is NULL; an empty array has no dimensions.
	dimFn := func(f func(d types.Datum) types.Datum) []*Overload {
		return []*Overload{{Params: []types.T{anyArray, types.Int4}, Poly: polyAI, Ret: ret(types.Int4), NullStrict: true,
			Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
				if a[1].I != 1 || a[0].ArrayLen() == 0 {
					return types.NullDatum, nil
				}
				return f(a[0]), nil
			}}}
	}
	register(&Func{Name: "array_length", Deterministic: true, Overloads: dimFn(func(d types.Datum) types.Datum {
		return types.NewInt4(int64(d.ArrayLen()))
	})})
	register(&Func{Name: "array_lower", Deterministic: true, Overloads: dimFn(func(d types.Datum) types.Datum {
		return types.NewInt4(int64(lowerOf(d)))
	})})
	register(&Func{Name: "array_upper", Deterministic: true, Overloads: dimFn(func(d types.Datum) types.Datum {
		return types.NewInt4(int64(lowerOf(d) + d.ArrayLen() - 1))
	})})
	register(&Func{Name: "array_ndims", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyArray}, Poly: polyA, Ret: ret(types.Int4), NullStrict: true,
		Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			if a[0].ArrayLen() == 0 {
				return types.NullDatum, nil
			}
			return types.NewInt4(1), nil
		}}}})
	register(&Func{Name: "array_dims", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyArray}, Poly: polyA, Ret: ret(types.Text), NullStrict: true,
		Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			if a[0].ArrayLen() == 0 {
				return types.NullDatum, nil
			}
			lo := lowerOf(a[0])
			return types.NewText("[" + strconv.Itoa(lo) + ":" + strconv.Itoa(lo+a[0].ArrayLen()-1) + "]"), nil
		}}}})
	cardinality := []*Overload{{Params: []types.T{anyArray}, Poly: polyA, Ret: ret(types.Int4), NullStrict: true,
		Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) { return types.NewInt4(int64(a[0].ArrayLen())), nil }}}
	register(&Func{Name: "cardinality", Deterministic: true, Overloads: cardinality})
	// Databricks: size(NULL) is NULL under ANSI mode (Databricks SQL's).
	register(&Func{Name: "size", Deterministic: true, Overloads: cardinality})
	register(&Func{Name: "array_size", Deterministic: true, Overloads: cardinality})

	register(&Func{Name: "array_to_string", Deterministic: true, Overloads: []*Overload{
		{Params: []types.T{anyArray, types.Text}, Poly: []Poly{PolyArray, PolyNone}, Ret: ret(types.Text), NullStrict: true, Fn: arrayToString},
		{Params: []types.T{anyArray, types.Text, types.Text}, Poly: []Poly{PolyArray, PolyNone, PolyNone}, Ret: ret(types.Text), Fn: arrayToString},
	}})
	register(&Func{Name: "string_to_array", Deterministic: true, Overloads: []*Overload{
		{Params: []types.T{types.Text, types.Text}, Ret: ret(types.ArrayOf(types.Text)), Fn: stringToArray},
		{Params: []types.T{types.Text, types.Text, types.Text}, Ret: ret(types.ArrayOf(types.Text)), Fn: stringToArray},
	}})

	// array_append(NULL, x) is {x}: a NULL array counts as empty.
	register(&Func{Name: "array_append", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyArray, anyType}, Poly: polyAE, Ret: arrayOfArg(0),
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			held, err := reserveElems(c, "function array_append", a[0].ArrayLen()+1)
			if err != nil {
				return types.Datum{}, err
			}
			defer c.Release(held)
			return arrayResult(append(append(make([]types.Datum, 0, a[0].ArrayLen()+1), a[0].Elems()...), a[1])), nil
		}}}})
	register(&Func{Name: "array_prepend", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyType, anyArray}, Poly: polyEA, Ret: arrayOfArg(1),
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			held, err := reserveElems(c, "function array_prepend", a[1].ArrayLen()+1)
			if err != nil {
				return types.Datum{}, err
			}
			defer c.Release(held)
			return arrayResult(append(append(make([]types.Datum, 0, a[1].ArrayLen()+1), a[0]), a[1].Elems()...)), nil
		}}}})
	register(&Func{Name: "array_cat", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyArray, anyArray}, Poly: polyAA, Ret: arrayOfArg(0), Fn: arrayCat}}})
	register(&Func{Name: "array_position", Deterministic: true, Overloads: []*Overload{
		{Params: []types.T{anyArray, anyType}, Poly: polyAE, Ret: ret(types.Int4), Fn: arrayPosition},
		{Params: []types.T{anyArray, anyType, types.Int4}, Poly: polyAEI, Ret: ret(types.Int4), Fn: arrayPosition},
	}})
	register(&Func{Name: "array_positions", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyArray, anyType}, Poly: polyAE, Ret: ret(types.ArrayOf(types.Int4)),
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if a[0].IsNull() {
				return types.NullDatum, nil
			}
			held, err := reserveElems(c, "function array_positions", a[0].ArrayLen())
			if err != nil {
				return types.Datum{}, err
			}
			defer c.Release(held)
			out := []types.Datum{}
			for i, e := range a[0].Elems() {
				if types.Equal(e, a[1]) {
					out = append(out, types.NewInt4(int64(lowerOf(a[0])+i)))
				}
			}
			return arrayResult(out), nil
		}}}})
	register(&Func{Name: "array_remove", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyArray, anyType}, Poly: polyAE, Ret: arrayOfArg(0),
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if a[0].IsNull() {
				return types.NullDatum, nil
			}
			held, err := reserveElems(c, "function array_remove", a[0].ArrayLen())
			if err != nil {
				return types.Datum{}, err
			}
			defer c.Release(held)
			out := []types.Datum{}
			for _, e := range a[0].Elems() {
				if !types.Equal(e, a[1]) {
					out = append(out, e)
				}
			}
			return arrayResult(out), nil
		}}}})
	register(&Func{Name: "array_replace", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyArray, anyType, anyType}, Poly: polyAEE, Ret: arrayOfArg(0),
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if a[0].IsNull() {
				return types.NullDatum, nil
			}
			held, err := reserveElems(c, "function array_replace", a[0].ArrayLen())
			if err != nil {
				return types.Datum{}, err
			}
			defer c.Release(held)
			out := make([]types.Datum, a[0].ArrayLen())
			for i, e := range a[0].Elems() {
				if types.Equal(e, a[1]) {
					e = a[2]
				}
				out[i] = e
			}
			return arrayResult(out), nil
		}}}})

	// Databricks: array(a, b, …) builds an array as ARRAY[a, b, …] does;
	// array_contains(arr, x) is NULL when arr or x is NULL, or when x is
	// not found but arr holds a NULL (Spark's three-valued answer).
	register(&Func{Name: "array", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyType}, Poly: polyE, Variadic: true, Ret: arrayOfArg(0),
		Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			return arrayResult(append([]types.Datum(nil), a...)), nil
		}}}})
	register(&Func{Name: "array_contains", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyArray, anyType}, Poly: polyAE, Ret: ret(types.Bool), NullStrict: true,
		Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) {
			sawNull := false
			for _, e := range a[0].Elems() {
				if e.IsNull() {
					sawNull = true
					continue
				}
				if types.Compare(e, a[1]) == 0 {
					return types.NewBool(true), nil
				}
			}
			if sawNull {
				return types.NullDatum, nil
			}
			return types.NewBool(false), nil
		}}}})
}

// arrayToString is array_to_string(arr, sep [, null_string]): NULL
// elements are left out unless null_string is given (and not NULL).
func arrayToString(c *Ctx, a []types.Datum) (types.Datum, error) {
	if a[0].IsNull() || a[1].IsNull() {
		return types.NullDatum, nil
	}
	nullStr, useNull := "", len(a) > 2 && !a[2].IsNull()
	if useNull {
		nullStr = a[2].S
	}
	var b []byte
	bld := c.building("function array_to_string")
	defer bld.done()
	first := true
	for _, e := range a[0].Elems() {
		if e.IsNull() && !useNull {
			continue
		}
		// The text grows by doubling: what it may take is twice its size.
		if err := bld.need(2 * int64(len(b)+len(a[1].S)+len(e.S)+len(nullStr)+24)); err != nil {
			return types.Datum{}, err
		}
		if !first {
			b = append(b, a[1].S...)
		}
		first = false
		if e.IsNull() {
			b = append(b, nullStr...)
		} else {
			b = types.AppendText(b, e, c.Env)
		}
	}
	return types.NewText(string(b)), nil
}

// stringToArray is string_to_array(s, delim [, null_string]): a NULL
// delimiter splits s into characters, an empty one keeps s whole; an
// empty s gives an empty array.
func stringToArray(c *Ctx, a []types.Datum) (types.Datum, error) {
	if a[0].IsNull() {
		return types.NullDatum, nil
	}
	s := a[0].S
	// The number of elements is known before the array is built, and the
	// elements share s's bytes: the array is what gets reserved.
	n := 0
	switch {
	case s == "":
	case a[1].IsNull():
		n = utf8.RuneCountInString(s)
	case a[1].S == "":
		n = 1
	default:
		n = strings.Count(s, a[1].S) + 1
	}
	held, err := reserveElems(c, "function string_to_array", n)
	if err != nil {
		return types.Datum{}, err
	}
	defer c.Release(held)
	nullStr, useNull := "", len(a) > 2 && !a[2].IsNull()
	if useNull {
		nullStr = a[2].S
	}
	out := make([]types.Datum, 0, n)
	add := func(p string) {
		if useNull && p == nullStr {
			out = append(out, types.NullDatum)
			return
		}
		out = append(out, types.NewText(p))
	}
	switch {
	case s == "":
	case a[1].IsNull():
		for s != "" {
			_, w := utf8.DecodeRuneInString(s)
			add(s[:w])
			s = s[w:]
		}
	case a[1].S == "":
		add(s)
	default:
		sep := a[1].S
		for {
			i := strings.Index(s, sep)
			if i < 0 {
				break
			}
			add(s[:i])
			s = s[i+len(sep):]
		}
		add(s)
	}
	return arrayResult(out), nil
}

// arrayCat is array_cat (and array || array): a NULL side is left out; both
// NULL is NULL.
func arrayCat(c *Ctx, a []types.Datum) (types.Datum, error) {
	switch {
	case a[0].IsNull() && a[1].IsNull():
		return types.NullDatum, nil
	case a[0].IsNull():
		return arrayResult(a[1].Elems()), nil
	case a[1].IsNull():
		return arrayResult(a[0].Elems()), nil
	}
	held, err := reserveElems(c, "function array_cat", a[0].ArrayLen()+a[1].ArrayLen())
	if err != nil {
		return types.Datum{}, err
	}
	defer c.Release(held)
	out := make([]types.Datum, 0, a[0].ArrayLen()+a[1].ArrayLen())
	return arrayResult(append(append(out, a[0].Elems()...), a[1].Elems()...)), nil
}

// arrayPosition is array_position(arr, x [, start]): the subscript of the
// first element not distinct from x (from start on), NULL if none.
func arrayPosition(_ *Ctx, a []types.Datum) (types.Datum, error) {
	if a[0].IsNull() {
		return types.NullDatum, nil
	}
	lo := lowerOf(a[0])
	from := 0
	if len(a) > 2 {
		if a[2].IsNull() {
			return types.Datum{}, pgerror.New(pgerror.NullValueNotAllowed, "initial position must not be null")
		}
		from = int(a[2].I) - lo
		if from < 0 {
			from = 0
		}
	}
	for i := from; i < a[0].ArrayLen(); i++ {
		if types.Equal(a[0].Elems()[i], a[1]) {
			return types.NewInt4(int64(lo + i)), nil
		}
	}
	return types.NullDatum, nil
}

// Subscript returns element i (a subscript as SQL writes it) of an array
// value, NULL when out of range (PostgreSQL's arr[i]).
func Subscript(arr types.Datum, i int64) types.Datum {
	k := i - int64(lowerOf(arr))
	if k < 0 || k >= int64(arr.ArrayLen()) {
		return types.NullDatum
	}
	return arr.Elems()[k]
}

// Slice returns arr[lo:hi] (a missing bound is the array's own), an empty
// array when the range holds no element, as PostgreSQL's slices; the
// result's subscripts start at 1.
func Slice(arr types.Datum, lo, hi *int64) types.Datum {
	first := int64(lowerOf(arr))
	last := first + int64(arr.ArrayLen()) - 1
	l, h := first, last
	if lo != nil && *lo > l {
		l = *lo
	}
	if hi != nil && *hi < h {
		h = *hi
	}
	if l > h {
		return arrayResult([]types.Datum{})
	}
	return arrayResult(append([]types.Datum(nil), arr.Elems()[l-first:h-first+1]...))
}

// The array operators @>, <@ and && (PostgreSQL's arraycontains,
// arraycontained, arrayoverlap): NULL elements match nothing.
func init() {
	contains := func(a, b types.Datum) bool {
		for _, y := range b.Elems() {
			found := false
			for _, x := range a.Elems() {
				if !x.IsNull() && !y.IsNull() && types.Compare(x, y) == 0 {
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	op := func(fn func(a, b types.Datum) bool) []*Overload {
		return []*Overload{{Params: []types.T{anyArray, anyArray}, Poly: polyAA, Ret: ret(types.Bool), NullStrict: true,
			Fn: func(_ *Ctx, a []types.Datum) (types.Datum, error) { return types.NewBool(fn(a[0], a[1])), nil }}}
	}
	register(&Func{Name: "arraycontains", Deterministic: true, Overloads: op(contains)})
	register(&Func{Name: "arraycontained", Deterministic: true, Overloads: op(func(a, b types.Datum) bool { return contains(b, a) })})
	register(&Func{Name: "arrayoverlap", Deterministic: true, Overloads: op(func(a, b types.Datum) bool {
		for _, x := range a.Elems() {
			for _, y := range b.Elems() {
				if !x.IsNull() && !y.IsNull() && types.Compare(x, y) == 0 {
					return true
				}
			}
		}
		return false
	})})
}
