package types

import (
	"errors"
	"testing"

	"github.com/mvserver/mvserver/pgerror"
)

var (
	int4Array = ArrayOf(Int4)
	textArray = ArrayOf(Text)
)

// TestArrayTextInput: array_in's quoting, escaping, NULL and whitespace
// rules, printed back through array_out (expected values from PostgreSQL 15).
func TestArrayTextInput(t *testing.T) {
	for _, c := range []struct {
		in   string
		typ  T
		want string
	}{
		{`{1,2,NULL,3}`, int4Array, `{1,2,NULL,3}`},
		{`{}`, int4Array, `{}`},
		{`  { }  `, int4Array, `{}`},
		{`{ a b , "c" }`, textArray, `{"a b",c}`},
		{`{a\,b,"x\"y",NULL,"NULL",null,\N}`, textArray, `{"a,b","x\"y",NULL,"NULL",NULL,N}`},
		{`{"\\"}`, textArray, `{"\\"}`},
		{`{a\\ }`, textArray, `{"a\\"}`},
		{`{ "" }`, textArray, `{""}`},
		{`{1 2}`, textArray, `{"1 2"}`},
		{`[1:2]={1,2}`, int4Array, `{1,2}`},
		{`{"{",  x ,"}"}`, textArray, `{"{",x,"}"}`},
	} {
		d, err := ParseText(c.in, c.typ, DefaultEnv)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if got := string(AppendText(nil, d, DefaultEnv)); got != c.want {
			t.Errorf("%q: got %s, want %s", c.in, got, c.want)
		}
	}
}

// TestArrayTextInputErrors: malformed literals are 22P02 with PostgreSQL's
// detail; more than one dimension is 0A000; a bad element is the element
// type's own error.
func TestArrayTextInputErrors(t *testing.T) {
	for _, c := range []struct {
		in, code, detail string
	}{
		{`{1,2`, pgerror.InvalidTextRepresentation, "Unexpected end of input."},
		{`1,2`, pgerror.InvalidTextRepresentation, `Array value must start with "{" or dimension information.`},
		{``, pgerror.InvalidTextRepresentation, `Array value must start with "{" or dimension information.`},
		{`{1,,2}`, pgerror.InvalidTextRepresentation, `Unexpected "," character.`},
		{`{1,}`, pgerror.InvalidTextRepresentation, `Unexpected "}" character.`},
		{`{"a"b}`, pgerror.InvalidTextRepresentation, "Unexpected array element."},
		{`{a"b}`, pgerror.InvalidTextRepresentation, "Unexpected array element."},
		{`{a{b}`, pgerror.InvalidTextRepresentation, `Unexpected "{" character.`},
		{`{a}x`, pgerror.InvalidTextRepresentation, "Junk after closing right brace."},
		{`{1,2}}`, pgerror.InvalidTextRepresentation, "Junk after closing right brace."},
		{`[1:3]={1,2}`, pgerror.InvalidTextRepresentation, "Specified array dimensions do not match array contents."},
		{`[1:2]{1,2}`, pgerror.InvalidTextRepresentation, `Missing "=" after array dimensions.`},
		{`{{1,2},{3,4}}`, pgerror.FeatureNotSupported, ""},
		{`{a}`, pgerror.InvalidTextRepresentation, ""},
	} {
		_, err := ParseText(c.in, int4Array, DefaultEnv)
		var pe *pgerror.Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: got %v, want %s", c.in, err, c.code)
			continue
		}
		if pe.Code != c.code || c.detail != "" && pe.Detail != c.detail {
			t.Errorf("%q: got %s %q (%s), want %s %q", c.in, pe.Code, pe.Message, pe.Detail, c.code, c.detail)
		}
	}
}

func sampleArrays() []struct {
	d Datum
	t T
} {
	return []struct {
		d Datum
		t T
	}{
		{NewArrayOf(NewInt4(1), NullDatum, NewInt4(-3)), int4Array},
		{NewArrayOf(), int4Array},
		{NewArrayOf(NewText("a b"), NewText(""), NewText("NULL"), NullDatum, NewText(`x"\y`)), textArray},
		{NewArrayOf(dec("1.50"), dec("-2")), ArrayOf(Numeric)},
		{NewArrayOf(NewTimestamp(KindTimestampTZ, 1_700_000_000_123_456)), ArrayOf(TimestampTZ)},
		{NewArrayOf(NewBytea([]byte{0, '"', 255})), ArrayOf(Bytea)},
		{NewArrayOf(NewBool(true), NewBool(false)), ArrayOf(Bool)},
		{NewArray(KindInt2Vector, []Datum{NewInt(KindInt2, 1), NewInt(KindInt2, 3)}), Int2Vector},
		{NewArray(KindOidVector, []Datum{NewInt(KindOid, 23), NewInt(KindOid, 4294967295)}), OidVector},
		{NewArray(KindOidVector, nil), OidVector},
	}
}

// TestArrayRoundTrips: text output parses back, binary output decodes
// back, and the row encoding stores and reads arrays (also skipped ones).
func TestArrayRoundTrips(t *testing.T) {
	for _, c := range sampleArrays() {
		txt := string(AppendText(nil, c.d, DefaultEnv))
		back, err := ParseText(txt, c.t, DefaultEnv)
		if err != nil || !Equal(back, c.d) || back.K != c.d.K || back.ArrayLen() != c.d.ArrayLen() {
			t.Errorf("%s text %q -> %v, %v", c.t, txt, back, err)
		}
		bin, err := AppendBinary(nil, c.d, c.t)
		if err != nil {
			t.Fatalf("%s: %v", c.t, err)
		}
		back, err = ParseBinary(bin, c.t)
		if err != nil || !Equal(back, c.d) || back.K != c.d.K {
			t.Errorf("%s binary -> %v, %v", c.t, back, err)
		}
		if _, err := ParseBinary(bin[:len(bin)-1], c.t); err == nil && len(bin) > 12 {
			t.Errorf("%s: truncated binary decoded without error", c.t)
		}
		ids := []uint32{1, 2, 5}
		row := []Datum{NewInt4(7), c.d, NewText("after")}
		enc := AppendRowValue(nil, ids, row)
		out := make([]Datum, 3)
		if err := NewRowDecoder(ids).Decode(enc, out); err != nil {
			t.Fatal(err)
		}
		if !Equal(out[1], c.d) || out[1].K != c.d.K || out[2].S != "after" {
			t.Errorf("%s row codec: %v", c.t, out)
		}
		skip := make([]Datum, 1)
		if err := NewRowDecoder([]uint32{5}).Decode(enc, skip); err != nil || skip[0].S != "after" {
			t.Errorf("%s row codec skipping the array: %v %v", c.t, skip, err)
		}
	}
}

// TestArrayBinaryFormat pins array_send's layout for int4[] {1,NULL}.
func TestArrayBinaryFormat(t *testing.T) {
	b, err := AppendBinary(nil, NewArrayOf(NewInt4(1), NullDatum), int4Array)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 23, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1, 255, 255, 255, 255}
	if string(b) != string(want) {
		t.Errorf("got %v, want %v", b, want)
	}
	if _, err := ParseBinary(b, ArrayOf(Int8)); err == nil {
		t.Errorf("an int4[] read as int8[] without error")
	}
}

// TestArrayCompare: array_cmp's order — element by element, NULL elements
// last, a proper prefix first — and equal hash keys for equal arrays.
func TestArrayCompare(t *testing.T) {
	a := func(xs ...any) Datum {
		var es []Datum
		for _, x := range xs {
			if x == nil {
				es = append(es, NullDatum)
			} else {
				es = append(es, NewInt4(int64(x.(int))))
			}
		}
		return NewArrayOf(es...)
	}
	ordered := []Datum{a(), a(1), a(1, 2), a(1, 2, nil), a(1, 3), a(1, nil), a(2)}
	for i := range ordered {
		for j := range ordered {
			got := Compare(ordered[i], ordered[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("Compare(%v, %v) = %d, want %d", ordered[i], ordered[j], got, want)
			}
		}
	}
	x := NewArrayOf(NewInt4(1), NullDatum)
	y := NewArrayOf(NewInt8(1), NullDatum)
	if !Equal(x, y) || string(HashKey(nil, x)) != string(HashKey(nil, y)) {
		t.Errorf("int4 and int8 arrays of equal values differ")
	}
	if string(HashKey(nil, a(1, 2))) == string(HashKey(nil, a(1))) {
		t.Errorf("hash keys of different arrays collide")
	}
}

// TestArrayCast: element-wise casts between array types, to and from text.
func TestArrayCast(t *testing.T) {
	d, err := Cast(NewArrayOf(NewInt4(1), NullDatum), ArrayOf(Numeric), DefaultEnv, false)
	if err != nil || d.Elems()[0].K != KindNumeric || !d.Elems()[1].IsNull() {
		t.Errorf("int4[] -> numeric[]: %v %v", d, err)
	}
	d, err = Cast(NewText("{1,2}"), ArrayOf(Int8), DefaultEnv, true)
	if err != nil || d.String() != "{1,2}" || d.Elems()[0].K != KindInt8 {
		t.Errorf("text -> int8[]: %v %v", d, err)
	}
	d, err = Cast(NewArrayOf(NewText("a b")), Text, DefaultEnv, true)
	if err != nil || d.S != `{"a b"}` {
		t.Errorf("text[] -> text: %v %v", d, err)
	}
	if _, err = Cast(NewArrayOf(NewText("x")), int4Array, DefaultEnv, true); err == nil {
		t.Errorf("text[] {x} -> int4[] without error")
	}
	if !CanCast(ArrayOf(Int4), ArrayOf(Text)) || CanCast(ArrayOf(Date), ArrayOf(Int4)) {
		t.Errorf("CanCast between arrays follows their elements")
	}
	d, err = Cast(NewArray(KindInt2Vector, []Datum{NewInt(KindInt2, 3)}), ArrayOf(Int2), DefaultEnv, true)
	if err != nil || d.K != KindArray || d.String() != "{3}" {
		t.Errorf("int2vector -> int2[]: %v %v", d, err)
	}
}

// TestArrayTypeNames: the array spellings ParseTypeName reads, and the
// names the type prints under.
func TestArrayTypeNames(t *testing.T) {
	for name, want := range map[string]string{"_int4": "integer[]", "int[]": "integer[]", "text[]": "text[]", "_varchar": "character varying[]", "numeric[]": "numeric[]"} {
		got, ok := ParseTypeName(name, nil)
		if !ok || got.String() != want {
			t.Errorf("%s: got %s %v, want %s", name, got, ok, want)
		}
	}
	if _, ok := ParseTypeName("_nosuch", nil); ok {
		t.Errorf("_nosuch parsed")
	}
	at := ArrayOf(T{Kind: KindVarchar, Width: 10})
	if at.String() != "character varying(10)[]" || at.OID() != 1015 || at.Modifier() != 14 || at.SparkName() != "array<varchar(10)>" {
		t.Errorf("varchar(10)[]: %s %d %d %s", at, at.OID(), at.Modifier(), at.SparkName())
	}
	if ft, ok := FromOID(1007); !ok || ft != int4Array {
		t.Errorf("FromOID(1007) = %v", ft)
	}
}

// TestRecordText: record_out's quoting (expected values from PostgreSQL 15).
func TestRecordText(t *testing.T) {
	r := NewRecord([]Datum{NewText("a b"), NullDatum, NewText(""), NewText(`q"\`), NewInt4(1), NewArrayOf(NewInt4(1), NewInt4(2))})
	if got, want := r.String(), `("a b",,"","q""\\",1,"{1,2}")`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := AppendBinary(nil, r, Record); err != nil {
		t.Error(err)
	}
}
