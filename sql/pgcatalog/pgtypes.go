package pgcatalog

import "github.com/mvserver/mvserver/sql/types"

// OIDs of pseudo-types pg_proc rows name.
const (
	oidCString    = 2275
	oidAnyElement = 2283
)

// pgType is one pg_type row.
type pgType struct {
	oid      uint32
	name     string
	ns       uint32
	length   int16
	byVal    bool
	typtype  byte // b base, c composite, p pseudo
	category byte
	pref     bool
	elem     uint32
	array    uint32
	relid    uint32
	input    string // the I/O function names (regproc)
	output   string
	align    byte
	storage  byte
	coll     uint32
	t        types.T // the type it is, KindNull for pseudo and row types
}

// baseTypes are the built-in types mvserver has, with PostgreSQL's OIDs
// and properties, plus the pseudo-types clients look up.
var baseTypes = []pgType{
	{oid: 16, name: "bool", length: 1, byVal: true, category: 'B', pref: true, array: 1000, input: "boolin", output: "boolout", align: 'c', storage: 'p', t: types.Bool},
	{oid: 17, name: "bytea", length: -1, category: 'U', array: 1001, input: "byteain", output: "byteaout", align: 'i', storage: 'x', t: types.Bytea},
	{oid: 18, name: "char", length: 1, byVal: true, category: 'Z', array: 1002, input: "charin", output: "charout", align: 'c', storage: 'p', t: types.InternalChar},
	{oid: 19, name: "name", length: 64, category: 'S', elem: 18, array: 1003, input: "namein", output: "nameout", align: 'c', storage: 'p', coll: 950, t: types.Name},
	{oid: 20, name: "int8", length: 8, byVal: true, category: 'N', array: 1016, input: "int8in", output: "int8out", align: 'd', storage: 'p', t: types.Int8},
	{oid: 21, name: "int2", length: 2, byVal: true, category: 'N', array: 1005, input: "int2in", output: "int2out", align: 's', storage: 'p', t: types.Int2},
	{oid: 22, name: "int2vector", length: -1, category: 'A', elem: 21, array: 1006, input: "int2vectorin", output: "int2vectorout", align: 'i', storage: 'p', t: types.Int2Vector},
	{oid: 23, name: "int4", length: 4, byVal: true, category: 'N', array: 1007, input: "int4in", output: "int4out", align: 'i', storage: 'p', t: types.Int4},
	{oid: 24, name: "regproc", length: 4, byVal: true, category: 'N', array: 1008, input: "regprocin", output: "regprocout", align: 'i', storage: 'p', t: types.Regproc},
	{oid: 25, name: "text", length: -1, category: 'S', pref: true, array: 1009, input: "textin", output: "textout", align: 'i', storage: 'x', coll: collDefault, t: types.Text},
	{oid: 26, name: "oid", length: 4, byVal: true, category: 'N', pref: true, array: 1028, input: "oidin", output: "oidout", align: 'i', storage: 'p', t: types.Oid},
	{oid: 30, name: "oidvector", length: -1, category: 'A', elem: 26, array: 1013, input: "oidvectorin", output: "oidvectorout", align: 'i', storage: 'p', t: types.OidVector},
	{oid: 114, name: "json", length: -1, category: 'U', array: 199, input: "json_in", output: "json_out", align: 'i', storage: 'x', t: types.JSON},
	{oid: 194, name: "pg_node_tree", length: -1, category: 'Z', input: "pg_node_tree_in", output: "pg_node_tree_out", align: 'i', storage: 'x', coll: collDefault},
	{oid: 700, name: "float4", length: 4, byVal: true, category: 'N', array: 1021, input: "float4in", output: "float4out", align: 'i', storage: 'p', t: types.Float4},
	{oid: 701, name: "float8", length: 8, byVal: true, category: 'N', pref: true, array: 1022, input: "float8in", output: "float8out", align: 'd', storage: 'p', t: types.Float8},
	{oid: 705, name: "unknown", length: -2, typtype: 'p', category: 'X', input: "unknownin", output: "unknownout", align: 'c', storage: 'p'},
	{oid: 1033, name: "aclitem", length: 12, category: 'U', array: 1034, input: "aclitemin", output: "aclitemout", align: 'i', storage: 'p'},
	{oid: 1042, name: "bpchar", length: -1, category: 'S', array: 1014, input: "bpcharin", output: "bpcharout", align: 'i', storage: 'x', coll: collDefault, t: types.Char},
	{oid: 1043, name: "varchar", length: -1, category: 'S', array: 1015, input: "varcharin", output: "varcharout", align: 'i', storage: 'x', coll: collDefault, t: types.Varchar},
	{oid: 1082, name: "date", length: 4, byVal: true, category: 'D', array: 1182, input: "date_in", output: "date_out", align: 'i', storage: 'p', t: types.Date},
	{oid: 1114, name: "timestamp", length: 8, byVal: true, category: 'D', array: 1115, input: "timestamp_in", output: "timestamp_out", align: 'd', storage: 'p', t: types.Timestamp},
	{oid: 1184, name: "timestamptz", length: 8, byVal: true, category: 'D', pref: true, array: 1185, input: "timestamptz_in", output: "timestamptz_out", align: 'd', storage: 'p', t: types.TimestampTZ},
	{oid: 1186, name: "interval", length: 16, category: 'T', pref: true, array: 1187, input: "interval_in", output: "interval_out", align: 'd', storage: 'p', t: types.Interval},
	{oid: 1700, name: "numeric", length: -1, category: 'N', array: 1231, input: "numeric_in", output: "numeric_out", align: 'i', storage: 'm', t: types.Numeric},
	{oid: 2205, name: "regclass", length: 4, byVal: true, category: 'N', array: 2210, input: "regclassin", output: "regclassout", align: 'i', storage: 'p', t: types.Regclass},
	{oid: 2206, name: "regtype", length: 4, byVal: true, category: 'N', array: 2211, input: "regtypein", output: "regtypeout", align: 'i', storage: 'p', t: types.Regtype},
	{oid: 2249, name: "record", length: -1, typtype: 'p', category: 'P', array: 2287, input: "record_in", output: "record_out", align: 'd', storage: 'x'},
	{oid: oidCString, name: "cstring", length: -2, typtype: 'p', category: 'P', array: 1263, input: "cstring_in", output: "cstring_out", align: 'c', storage: 'p'},
	{oid: 2276, name: "any", length: 4, byVal: true, typtype: 'p', category: 'P', input: "any_in", output: "any_out", align: 'i', storage: 'p'},
	{oid: 2277, name: "anyarray", length: -1, typtype: 'p', category: 'P', input: "anyarray_in", output: "anyarray_out", align: 'd', storage: 'x'},
	{oid: 2278, name: "void", length: 4, byVal: true, typtype: 'p', category: 'P', input: "void_in", output: "void_out", align: 'i', storage: 'p'},
	{oid: 2279, name: "trigger", length: 4, byVal: true, typtype: 'p', category: 'P', input: "trigger_in", output: "trigger_out", align: 'i', storage: 'p'},
	{oid: 2281, name: "internal", length: 8, byVal: true, typtype: 'p', category: 'P', input: "internal_in", output: "internal_out", align: 'd', storage: 'p'},
	{oid: oidAnyElement, name: "anyelement", length: 4, byVal: true, typtype: 'p', category: 'P', input: "anyelement_in", output: "anyelement_out", align: 'i', storage: 'p'},
	{oid: 3802, name: "jsonb", length: -1, category: 'U', array: 3807, input: "jsonb_in", output: "jsonb_out", align: 'i', storage: 'x', t: types.JSONB},
	{oid: 4089, name: "regnamespace", length: 4, byVal: true, category: 'N', array: 4090, input: "regnamespacein", output: "regnamespaceout", align: 'i', storage: 'p', t: types.Regnamespace},
	{oid: 4096, name: "regrole", length: 4, byVal: true, category: 'N', array: 4097, input: "regrolein", output: "regroleout", align: 'i', storage: 'p', t: types.Regrole},
}

// pgTypes lists every pg_type row: the base types, their array types and
// one composite row type per relation that has columns.
func (v *View) pgTypes() []pgType {
	out := make([]pgType, 0, 2*len(baseTypes))
	for _, b := range baseTypes {
		b.ns = nsPgCatalog
		if b.typtype == 0 {
			b.typtype = 'b'
		}
		out = append(out, b)
		if b.array != 0 {
			out = append(out, pgType{oid: b.array, name: "_" + b.name, ns: nsPgCatalog, length: -1, typtype: 'b', category: 'A',
				elem: b.oid, input: "array_in", output: "array_out", align: b.align, storage: 'x', coll: b.coll, t: types.ArrayOf(b.t)})
		}
	}
	for _, r := range v.relations() {
		if r.kind == 'i' {
			continue
		}
		out = append(out, pgType{oid: rowTypeOID(r.oid), name: r.name, ns: r.ns, length: -1, typtype: 'c', category: 'C',
			relid: r.oid, input: "record_in", output: "record_out", align: 'd', storage: 'x'})
	}
	return out
}

func (v *View) pgType(oid uint32) (pgType, bool) {
	for _, b := range baseTypes {
		if b.oid == oid {
			return b, true
		}
	}
	for _, t := range v.pgTypes() {
		if t.oid == oid {
			return t, true
		}
	}
	return pgType{}, false
}

// formatType is format_type(oid, typmod): the SQL name of a type.
func (v *View) formatType(oid uint32, typmod int32) string {
	t, ok := types.FromOID(oid)
	if ok && t.Kind != types.KindUnknown {
		if t.Kind == types.KindArray {
			e := t.ElemType()
			return decorate(e, typmod).String() + "[]"
		}
		return decorate(t, typmod).String()
	}
	if pt, ok := v.pgType(oid); ok {
		if pt.typtype == 'c' {
			if r := v.relation(pt.relid); r != nil {
				return v.qualifiedName(r)
			}
		}
		return pt.name
	}
	return "???"
}

// decorate applies an atttypmod to a type (varchar(n), numeric(p,s), …).
func decorate(t types.T, typmod int32) types.T {
	if typmod < 0 {
		return t
	}
	switch t.Kind {
	case types.KindVarchar, types.KindChar:
		t.Width = typmod - 4
	case types.KindNumeric:
		m := typmod - 4
		t.Precision, t.Scale = m>>16, m&0xffff
	}
	return t
}
