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
)

// T is a SQL type: its kind and modifiers.
type T struct {
	Kind Kind
	// Width is the n of VARCHAR(n) / CHAR(n); 0 = unbounded.
	Width int32
	// Precision and Scale of NUMERIC(p,s); Precision 0 = unconstrained.
	Precision, Scale int32
}

// Common types.
var (
	Null        = T{Kind: KindNull}
	Bool        = T{Kind: KindBool}
	Int2        = T{Kind: KindInt2}
	Int4        = T{Kind: KindInt4}
	Int8        = T{Kind: KindInt8}
	Float4      = T{Kind: KindFloat4}
	Float8      = T{Kind: KindFloat8}
	Numeric     = T{Kind: KindNumeric}
	Text        = T{Kind: KindText}
	Varchar     = T{Kind: KindVarchar}
	Bytea       = T{Kind: KindBytea}
	Date        = T{Kind: KindDate}
	Timestamp   = T{Kind: KindTimestamp}
	TimestampTZ = T{Kind: KindTimestampTZ}
	Interval    = T{Kind: KindInterval}
	Unknown     = T{Kind: KindUnknown}
	Oid         = T{Kind: KindOid}
	Name        = T{Kind: KindName}
	Char        = T{Kind: KindChar}
	JSON        = T{Kind: KindJSON}
)

// PostgreSQL type OIDs.
const (
	OidBool        = 16
	OidBytea       = 17
	OidChar        = 18
	OidName        = 19
	OidInt8        = 20
	OidInt2        = 21
	OidInt4        = 23
	OidText        = 25
	OidOid         = 26
	OidJSON        = 114
	OidFloat4      = 700
	OidFloat8      = 701
	OidUnknown     = 705
	OidBpchar      = 1042
	OidVarchar     = 1043
	OidDate        = 1082
	OidTimestamp   = 1114
	OidTimestampTZ = 1184
	OidInterval    = 1186
	OidNumeric     = 1700
)

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
	case OidUnknown:
		return Unknown, true
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
	case KindInt4, KindFloat4, KindDate, KindOid:
		return 4
	case KindInt8, KindFloat8, KindTimestamp, KindTimestampTZ:
		return 8
	case KindInterval:
		return 16
	case KindName:
		return 64
	}
	return -1
}

// Modifier is the atttypmod of the type (-1 when none).
func (t T) Modifier() int32 {
	switch t.Kind {
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
	case "oid", "regclass", "regtype", "regproc":
		t = Oid
	case "name":
		t = Name
	case "json", "jsonb":
		t = JSON
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
	}
	return t.String()
}
