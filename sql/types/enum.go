package types

import (
	"encoding/json"

	"github.com/mvserver/mvserver/pgerror"
)

// Enum is a user-defined enum type (CREATE TYPE … AS ENUM): its pg_type
// OID, name and labels. A column or expression of the type has
// T{Kind: KindEnum, Enum: e}; the catalog owns the definition and hands
// out one *Enum per type and catalog snapshot. An Enum is never modified
// once built (ALTER TYPE … ADD VALUE builds a new one).
//
// A value is Datum{K: KindEnum, S: label, F: sort order}. Sort orders of
// existing labels never change (a label added BEFORE or AFTER another
// takes a value between its neighbours, as PostgreSQL's enumsortorder
// does), so a stored value keeps comparing in declaration order.
type Enum struct {
	OID      uint32
	ArrayOID uint32
	Name     string
	Labels   []EnumLabel // in sort order
}

// EnumLabel is one pg_enum row.
type EnumLabel struct {
	OID   uint32  `json:"oid"`
	Label string  `json:"label"`
	Sort  float64 `json:"sort"`
}

// Label returns the value of label l (false if the type has no such label).
func (e *Enum) Label(l string) (Datum, bool) {
	for _, x := range e.Labels {
		if x.Label == l {
			return Datum{K: KindEnum, S: x.Label, F: x.Sort}, true
		}
	}
	return Datum{}, false
}

// parse is the enum's input function (enum_in).
func (e *Enum) parse(s string) (Datum, error) {
	if d, ok := e.Label(s); ok {
		return d, nil
	}
	return Datum{}, pgerror.New(pgerror.InvalidTextRepresentation, "invalid input value for enum %s: \"%s\"", e.Name, s)
}

// enumRef is how a column's type names its enum in a persisted
// descriptor: by OID only, the catalog relinks it to the definition
// (catalog.Catalog.Enum) when it loads, so an added label is seen by
// every column of the type.
type enumRef struct {
	OID uint32 `json:"oid"`
}

// MarshalJSON writes the reference, not the labels.
func (e *Enum) MarshalJSON() ([]byte, error) { return json.Marshal(enumRef{OID: e.OID}) }

// UnmarshalJSON reads a reference; the labels come from the catalog.
func (e *Enum) UnmarshalJSON(b []byte) error {
	var r enumRef
	if err := json.Unmarshal(b, &r); err != nil {
		return err
	}
	e.OID = r.OID
	return nil
}
