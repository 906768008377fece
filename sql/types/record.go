package types

import (
	"encoding/binary"
	"strings"
)

// Records (KindRecord): anonymous rows, as PostgreSQL's record_out and
// record_send write them. The field names live in the plan (a column's
// Fields), not in the value.

// NewRecord returns a record datum of the given fields.
func NewRecord(fields []Datum) Datum { return Datum{K: KindRecord, A: &Array{Elems: fields}} }

// appendRecordText is record_out: (f1,f2,…), a NULL field empty, a field
// quoted when empty or holding a quote, a backslash, a parenthesis, a
// comma or white space, with quotes and backslashes doubled inside.
func appendRecordText(buf []byte, d Datum, env *Env) []byte {
	buf = append(buf, '(')
	var tmp []byte
	for i, f := range d.Elems() {
		if i > 0 {
			buf = append(buf, ',')
		}
		if f.IsNull() {
			continue
		}
		tmp = AppendText(tmp[:0], f, env)
		quote := len(tmp) == 0 || strings.ContainsAny(string(tmp), "\"\\(),")
		for _, c := range tmp {
			quote = quote || arraySpace(c)
		}
		if !quote {
			buf = append(buf, tmp...)
			continue
		}
		buf = append(buf, '"')
		for _, c := range tmp {
			if c == '"' || c == '\\' {
				buf = append(buf, c)
			}
			buf = append(buf, c)
		}
		buf = append(buf, '"')
	}
	return append(buf, ')')
}

// appendRecordBinary is record_send: the field count, then per field its
// type OID, its length (-1 for NULL) and its binary form. A field's type is
// its value's kind (a NULL field is sent as text).
func appendRecordBinary(buf []byte, d Datum) ([]byte, error) {
	fields := d.Elems()
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(fields)))
	for _, f := range fields {
		if f.IsNull() {
			buf = binary.BigEndian.AppendUint32(buf, OidText)
			buf = binary.BigEndian.AppendUint32(buf, 0xFFFFFFFF)
			continue
		}
		t := T{Kind: f.K}
		if f.K == KindArray && len(f.Elems()) > 0 {
			t = ArrayOf(T{Kind: f.Elems()[0].K})
		}
		buf = binary.BigEndian.AppendUint32(buf, t.OID())
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		var err error
		if buf, err = AppendBinary(buf, f, t); err != nil {
			return nil, err
		}
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	return buf, nil
}
