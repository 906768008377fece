package types

import (
	"fmt"
	"strings"
)

// Kind is the family of a SQL type.
type Kind uint8

// Kinds. KindNull is the type of an untyped NULL literal and the Kind of a
// NULL Datum; KindUnknown is an untyped string literal or parameter whose type
// is not yet known.
const (
	KindNull Kind = iota
	KindBool
	KindInt2
	KindInt4
	KindInt8
	KindFloat4
	KindFloat8
	KindNumeric
	KindText
	KindVarchar
	KindBytea
	KindDate
	KindTimestamp
	KindTimestampTZ
	KindInterval
	KindUnknown
	KindOid
	KindName
	KindChar
	KindJSON
	// KindArray is a one-dimensional array (lower bound 1) of T.Elem; its
	// Datum holds the elements in A.
	KindArray
	// The OID alias types: the Datum holds the OID in I like KindOid; text
	// input and output go through object names (Ctx.Names in exec).
	KindRegclass
	KindRegtype
	KindRegproc
	KindRegnamespace
	KindRegrole
	// int2vector and oidvector (pg_index.indkey, pg_proc.proargtypes): arrays
	// whose text form is space separated and whose subscripts start at 0.
	KindInt2Vector
	KindOidVector
	// KindInternalChar is PostgreSQL's one-byte "char" (pg_class.relkind),
	// not CHAR(n) (KindChar, bpchar).
	KindInternalChar
	// KindRecord is an anonymous row (PostgreSQL's record): a
	// set-returning function's row used whole; its Datum holds the fields
	// in A (record.go).
	KindRecord
	// KindJSONB is jsonb: its Datum holds the normalized text (json.go).
	KindJSONB
	// KindEnum is a user-defined enum type (T.Enum, enum.go): its Datum
	// holds the label in S and the label's sort order in F.
	KindEnum
)

// T is a SQL type: its kind and modifiers.
type T struct {
	Kind Kind
	// Width is the n of VARCHAR(n) / CHAR(n); 0 = unbounded.
	Width int32
	// Precision and Scale of NUMERIC(p,s); Precision 0 = unconstrained.
	Precision, Scale int32
	// Elem is the element kind of an array (KindArray); the element's
	// modifiers are Width, Precision and Scale.
	Elem Kind
	// Enum is the definition of an enum type (KindEnum), shared by every
	// T of that type in one catalog snapshot.
	Enum *Enum `json:",omitempty"`
}

// ArrayOf returns the array type whose elements are e.
func ArrayOf(e T) T {
	return T{Kind: KindArray, Elem: e.Kind, Width: e.Width, Precision: e.Precision, Scale: e.Scale}
}

// ElemType returns the element type of an array or vector type.
func (t T) ElemType() T {
	switch t.Kind {
	case KindInt2Vector:
		return Int2
	case KindOidVector:
		return Oid
	}
	return T{Kind: t.Elem, Width: t.Width, Precision: t.Precision, Scale: t.Scale}
}

// IsArray reports whether t's values are arrays (KindArray or a vector).
func (t T) IsArray() bool {
	return t.Kind == KindArray || t.Kind == KindInt2Vector || t.Kind == KindOidVector
}

// IsOidAlias reports whether t is oid or one of its alias types (regclass, …).
func (t T) IsOidAlias() bool {
	switch t.Kind {
	case KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole:
		return true
	}
	return false
}

// Common types.
var (
	Null         = T{Kind: KindNull}
	Bool         = T{Kind: KindBool}
	Int2         = T{Kind: KindInt2}
	Int4         = T{Kind: KindInt4}
	Int8         = T{Kind: KindInt8}
	Float4       = T{Kind: KindFloat4}
	Float8       = T{Kind: KindFloat8}
	Numeric      = T{Kind: KindNumeric}
	Text         = T{Kind: KindText}
	Varchar      = T{Kind: KindVarchar}
	Bytea        = T{Kind: KindBytea}
	Date         = T{Kind: KindDate}
	Timestamp    = T{Kind: KindTimestamp}
	TimestampTZ  = T{Kind: KindTimestampTZ}
	Interval     = T{Kind: KindInterval}
	Unknown      = T{Kind: KindUnknown}
	Oid          = T{Kind: KindOid}
	Name         = T{Kind: KindName}
	Char         = T{Kind: KindChar}
	JSON         = T{Kind: KindJSON}
	JSONB        = T{Kind: KindJSONB}
	Regclass     = T{Kind: KindRegclass}
	Regtype      = T{Kind: KindRegtype}
	Regproc      = T{Kind: KindRegproc}
	Regnamespace = T{Kind: KindRegnamespace}
	Regrole      = T{Kind: KindRegrole}
	Int2Vector   = T{Kind: KindInt2Vector}
	OidVector    = T{Kind: KindOidVector}
	InternalChar = T{Kind: KindInternalChar}
	Record       = T{Kind: KindRecord}
)

// PostgreSQL type OIDs.
const (
	OidBool         = 16
	OidBytea        = 17
	OidChar         = 18
	OidName         = 19
	OidInt8         = 20
	OidInt2         = 21
	OidInt4         = 23
	OidText         = 25
	OidOid          = 26
	OidJSON         = 114
	OidJSONB        = 3802
	OidFloat4       = 700
	OidFloat8       = 701
	OidUnknown      = 705
	OidBpchar       = 1042
	OidVarchar      = 1043
	OidDate         = 1082
	OidTimestamp    = 1114
	OidTimestampTZ  = 1184
	OidInterval     = 1186
	OidNumeric      = 1700
	OidInt2Vector   = 22
	OidRegproc      = 24
	OidOidVector    = 30
	OidRegclass     = 2205
	OidRegtype      = 2206
	OidRegnamespace = 4089
	OidRegrole      = 4096
	OidRecord       = 2249
)

// arrayOIDs maps an element kind to its array type's OID (pg_type.typarray).
var arrayOIDs = map[Kind]uint32{
	KindBool: 1000, KindBytea: 1001, KindInternalChar: 1002, KindName: 1003, KindInt2: 1005,
	KindInt2Vector: 1006, KindInt4: 1007, KindRegproc: 1008, KindText: 1009, KindOid: 1028,
	KindOidVector: 1013, KindChar: 1014, KindVarchar: 1015, KindInt8: 1016, KindFloat4: 1021,
	KindFloat8: 1022, KindDate: 1182, KindTimestamp: 1115, KindTimestampTZ: 1185,
	KindInterval: 1187, KindNumeric: 1231, KindJSON: 199, KindJSONB: 3807, KindRegclass: 2210,
	KindRegtype: 2211, KindRegnamespace: 4090, KindRegrole: 4097,
}

// ArrayOID returns the OID of the array type whose elements are of kind k
// (0 if there is none).
func ArrayOID(k Kind) uint32 { return arrayOIDs[k] }

// OID returns the PostgreSQL type OID.
func (t T) OID() uint32 {
	switch t.Kind {
	case KindBool:
		return OidBool
	case KindInt2:
		return OidInt2
	case KindInt4:
		return OidInt4
	case KindInt8:
		return OidInt8
	case KindFloat4:
		return OidFloat4
	case KindFloat8:
		return OidFloat8
	case KindNumeric:
		return OidNumeric
	case KindText:
		return OidText
	case KindVarchar:
		return OidVarchar
	case KindBytea:
		return OidBytea
	case KindDate:
		return OidDate
	case KindTimestamp:
		return OidTimestamp
	case KindTimestampTZ:
		return OidTimestampTZ
	case KindInterval:
		return OidInterval
	case KindOid:
		return OidOid
	case KindName:
		return OidName
	case KindChar:
		return OidBpchar
	case KindJSON:
		return OidJSON
	case KindJSONB:
		return OidJSONB
	case KindArray:
		if o := arrayOIDs[t.Elem]; o != 0 {
			return o
		}
		return 1009
	case KindRegclass:
		return OidRegclass
	case KindRegtype:
		return OidRegtype
	case KindRegproc:
		return OidRegproc
	case KindRegnamespace:
		return OidRegnamespace
	case KindRegrole:
		return OidRegrole
	case KindInt2Vector:
		return OidInt2Vector
	case KindOidVector:
		return OidOidVector
	case KindInternalChar:
		return OidChar
	case KindRecord:
		return OidRecord
	case KindEnum:
		if t.Enum != nil {
			return t.Enum.OID
		}
	case KindNull, KindUnknown:
		return OidText
	}
	return OidText
}

// FromOID returns the type for a PostgreSQL type OID (false if unsupported).
func FromOID(oid uint32) (T, bool) {
	switch oid {
	case OidBool:
		return Bool, true
	case OidInt2:
		return Int2, true
	case OidInt4:
		return Int4, true
	case OidInt8:
		return Int8, true
	case OidFloat4:
		return Float4, true
	case OidFloat8:
		return Float8, true
	case OidNumeric:
		return Numeric, true
	case OidText:
		return Text, true
	case OidVarchar:
		return Varchar, true
	case OidBpchar:
		return Char, true
	case OidBytea:
		return Bytea, true
	case OidDate:
		return Date, true
	case OidTimestamp:
		return Timestamp, true
	case OidTimestampTZ:
		return TimestampTZ, true
	case OidInterval:
		return Interval, true
	case OidOid:
		return Oid, true
	case OidName:
		return Name, true
	case OidJSON:
		return JSON, true
	case OidJSONB:
		return JSONB, true
	case OidUnknown:
		return Unknown, true
	case OidRegclass:
		return Regclass, true
	case OidRegtype:
		return Regtype, true
	case OidRegproc:
		return Regproc, true
	case OidRegnamespace:
		return Regnamespace, true
	case OidRegrole:
		return Regrole, true
	case OidInt2Vector:
		return Int2Vector, true
	case OidOidVector:
		return OidVector, true
	case OidChar:
		return InternalChar, true
	case OidRecord:
		return Record, true
	}
	for k, o := range arrayOIDs {
		if o == oid {
			return ArrayOf(T{Kind: k}), true
		}
	}
	return T{}, false
}

// Size is the pg_type typlen of the type (-1 for variable length).
func (t T) Size() int16 {
	switch t.Kind {
	case KindBool:
		return 1
	case KindInt2:
		return 2
	case KindInt4, KindFloat4, KindDate, KindOid, KindRegclass, KindRegtype, KindRegproc, KindRegnamespace, KindRegrole, KindEnum:
		return 4
	case KindInternalChar:
		return 1
	case KindInt8, KindFloat8, KindTimestamp, KindTimestampTZ:
		return 8
	case KindInterval:
		return 16
	case KindName:
		return 64
	}
	return -1
}

// Unmodified returns t without a NUMERIC(p,s) precision and scale: the type
// of an operator's result, which in PostgreSQL carries no type modifier
// (numeric(15,2) / 3 is plain numeric; only a cast or an assignment to a
// column applies a modifier, and rounds).
func (t T) Unmodified() T {
	if t.Kind == KindNumeric {
		t.Precision, t.Scale = 0, 0
	}
	return t
}

// Modifier is the atttypmod of the type (-1 when none).
func (t T) Modifier() int32 {
	switch t.Kind {
	case KindArray:
		return t.ElemType().Modifier()
	case KindVarchar, KindChar:
		if t.Width > 0 {
			return t.Width + 4
		}
	case KindNumeric:
		if t.Precision > 0 {
			return ((t.Precision << 16) | t.Scale) + 4
		}
	}
	return -1
}

// String returns the type's name as PostgreSQL's format_type prints it.
func (t T) String() string {
	switch t.Kind {
	case KindNull:
		return "unknown"
	case KindBool:
		return "boolean"
	case KindInt2:
		return "smallint"
	case KindInt4:
		return "integer"
	case KindInt8:
		return "bigint"
	case KindFloat4:
		return "real"
	case KindFloat8:
		return "double precision"
	case KindNumeric:
		if t.Precision > 0 {
			return fmt.Sprintf("numeric(%d,%d)", t.Precision, t.Scale)
		}
		return "numeric"
	case KindText:
		return "text"
	case KindVarchar:
		if t.Width > 0 {
			return fmt.Sprintf("character varying(%d)", t.Width)
		}
		return "character varying"
	case KindChar:
		if t.Width > 0 {
			return fmt.Sprintf("character(%d)", t.Width)
		}
		return "character"
	case KindBytea:
		return "bytea"
	case KindDate:
		return "date"
	case KindTimestamp:
		return "timestamp without time zone"
	case KindTimestampTZ:
		return "timestamp with time zone"
	case KindInterval:
		return "interval"
	case KindUnknown:
		return "unknown"
	case KindOid:
		return "oid"
	case KindName:
		return "name"
	case KindJSON:
		return "json"
	case KindJSONB:
		return "jsonb"
	case KindArray:
		return t.ElemType().String() + "[]"
	case KindRegclass:
		return "regclass"
	case KindRegtype:
		return "regtype"
	case KindRegproc:
		return "regproc"
	case KindRegnamespace:
		return "regnamespace"
	case KindRegrole:
		return "regrole"
	case KindInt2Vector:
		return "int2vector"
	case KindOidVector:
		return "oidvector"
	case KindInternalChar:
		return `"char"`
	case KindRecord:
		return "record"
	case KindEnum:
		if t.Enum != nil {
			return t.Enum.Name
		}
		return "anyenum"
	}
	return "unknown"
}

// IsInteger reports whether t is SMALLINT, INT or BIGINT.
func (t T) IsInteger() bool {
	return t.Kind == KindInt2 || t.Kind == KindInt4 || t.Kind == KindInt8 || t.Kind == KindOid
}

// IsNumeric reports whether t is a number type.
func (t T) IsNumeric() bool {
	return t.IsInteger() || t.Kind == KindFloat4 || t.Kind == KindFloat8 || t.Kind == KindNumeric
}

// IsString reports whether t is a character string type.
func (t T) IsString() bool {
	return t.Kind == KindText || t.Kind == KindVarchar || t.Kind == KindChar || t.Kind == KindName || t.Kind == KindUnknown
}

// IsTime reports whether t is a date or timestamp.
func (t T) IsTime() bool {
	return t.Kind == KindDate || t.Kind == KindTimestamp || t.Kind == KindTimestampTZ
}

// Equivalent reports whether a and b hold the same values (ignoring modifiers).
func (t T) Equivalent(o T) bool { return t.Kind == o.Kind }

// ParseTypeName maps a type name as written in SQL (either dialect; lower
// case, without modifiers) to a type. ok is false for unknown names.
func ParseTypeName(name string, mods []int32) (T, bool) {
	name = strings.ToLower(name)
	name = strings.TrimPrefix(name, "pg_catalog.")
	if e, ok := arrayTypeName(name, mods); ok {
		return e, ok
	}
	var t T
	switch name {
	case "bool", "boolean":
		t = Bool
	case "int2", "smallint", "short", "tinyint", "byte":
		t = Int2
	case "int4", "int", "integer", "serial", "serial4":
		t = Int4
	case "int8", "bigint", "long", "bigserial", "serial8":
		t = Int8
	case "float4", "real", "float":
		t = Float4
		if name == "float" {
			t = Float8
			if len(mods) == 1 && mods[0] <= 24 {
				t = Float4
			}
			return t, true
		}
	case "float8", "double", "double precision":
		t = Float8
	case "numeric", "decimal", "dec":
		t = Numeric
		if len(mods) >= 1 {
			t.Precision = mods[0]
			if len(mods) >= 2 {
				t.Scale = mods[1]
			}
		} else if name != "numeric" {
			// Databricks: DECIMAL without precision is DECIMAL(10,0).
			t.Precision, t.Scale = 10, 0
		}
		return t, true
	case "text", "string":
		t = Text
	case "varchar", "character varying":
		t = Varchar
		if len(mods) >= 1 {
			t.Width = mods[0]
		}
		return t, true
	case "bpchar", "char", "character":
		t = Char
		if len(mods) >= 1 {
			t.Width = mods[0]
		} else {
			t.Width = 1
		}
		return t, true
	case "bytea", "binary":
		t = Bytea
	case "date":
		t = Date
	case "timestamp", "timestamp without time zone", "timestamp_ntz":
		t = Timestamp
	case "timestamptz", "timestamp with time zone", "timestamp_ltz":
		t = TimestampTZ
	case "interval":
		t = Interval
	case "oid":
		t = Oid
	case "regclass":
		t = Regclass
	case "regtype":
		t = Regtype
	case "regproc", "regprocedure":
		t = Regproc
	case "regnamespace":
		t = Regnamespace
	case "regrole":
		t = Regrole
	case "int2vector":
		t = Int2Vector
	case "oidvector":
		t = OidVector
	case "name":
		t = Name
	case "json":
		t = JSON
	case "jsonb":
		t = JSONB
	case "unknown":
		t = Unknown
	default:
		return T{}, false
	}
	return t, true
}

// SparkName is the type's name as Databricks' DESCRIBE prints it.
func (t T) SparkName() string {
	switch t.Kind {
	case KindBool:
		return "boolean"
	case KindInt2:
		return "smallint"
	case KindInt4:
		return "int"
	case KindInt8:
		return "bigint"
	case KindFloat4:
		return "float"
	case KindFloat8:
		return "double"
	case KindNumeric:
		if t.Precision > 0 {
			return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
		}
		return "decimal"
	case KindText:
		return "string"
	case KindVarchar:
		if t.Width > 0 {
			return fmt.Sprintf("varchar(%d)", t.Width)
		}
		return "string"
	case KindChar:
		return fmt.Sprintf("char(%d)", t.Width)
	case KindBytea:
		return "binary"
	case KindDate:
		return "date"
	case KindTimestamp:
		return "timestamp_ntz"
	case KindTimestampTZ:
		return "timestamp"
	case KindInterval:
		return "interval"
	case KindArray:
		return "array<" + t.ElemType().SparkName() + ">"
	}
	return t.String()
}
