package pgcatalog

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/types"
)

func init() {
	// pg_enum: one row per label of every enum type, in sort order.
	generators["pg_catalog.pg_enum"] = func(v *View, b *builder) {
		for _, e := range v.Cat.Enums() {
			for _, l := range e.Labels {
				b.add(vals{"oid": l.OID, "enumtypid": e.ID, "enumsortorder": l.Sort, "enumlabel": l.Label})
			}
		}
	}
}

// enumTypes are the pg_type rows of the enum types (typtype 'e',
// category 'E', the enum_in / enum_out I/O functions) and their array
// types, as CREATE TYPE … AS ENUM makes them.
func (v *View) enumTypes() []pgType {
	var out []pgType
	for _, e := range v.Cat.Enums() {
		out = append(out,
			pgType{oid: e.ID, name: e.Name, ns: e.SchemaID, length: 4, byVal: true, typtype: 'e', category: 'E', array: e.ArrayID,
				input: "enum_in", output: "enum_out", align: 'i', storage: 'p', owner: e.Owner, t: e.T()},
			pgType{oid: e.ArrayID, name: "_" + e.Name, ns: e.SchemaID, length: -1, typtype: 'b', category: 'A', elem: e.ID,
				input: "array_in", output: "array_out", align: 'i', storage: 'x', owner: e.Owner})
	}
	return out
}

// enumOf returns the enum type of t (false when t is no enum).
func (v *View) enumOf(t types.T) (*catalog.EnumType, bool) {
	if t.Kind != types.KindEnum || t.Enum == nil {
		return nil, false
	}
	return v.Cat.Enum(t.Enum.OID)
}
