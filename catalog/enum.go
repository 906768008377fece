package catalog

import (
	"sort"

	"github.com/mvserver/mvserver/sql/types"
)

// EnumType is a user-defined enum type (CREATE TYPE name AS ENUM (…)):
// a pg_type row of typtype 'e', its array type, and one pg_enum row per
// label. Columns of the type hold a types.T whose Enum is Def(); the
// catalog relinks them when the type changes (PutEnum) or is loaded.
type EnumType struct {
	ID       uint32            `json:"id"` // the pg_type OID
	ArrayID  uint32            `json:"array_id"`
	SchemaID uint32            `json:"schema_id"`
	Name     string            `json:"name"`
	Owner    uint32            `json:"owner,omitempty"`
	Labels   []types.EnumLabel `json:"labels"` // in sort order
	Comment  string            `json:"comment,omitempty"`

	def *types.Enum
}

// Def is the type's definition as column types carry it.
func (e *EnumType) Def() *types.Enum {
	if e.def == nil {
		e.def = &types.Enum{OID: e.ID, ArrayOID: e.ArrayID, Name: e.Name, Labels: e.Labels}
	}
	return e.def
}

// T is the SQL type of the enum.
func (e *EnumType) T() types.T { return types.T{Kind: types.KindEnum, Enum: e.Def()} }

// Clone returns a copy of e for modification.
func (e *EnumType) Clone() *EnumType {
	c := *e
	c.Labels = append([]types.EnumLabel(nil), e.Labels...)
	c.def = nil
	return &c
}

// Enum returns the enum type with pg_type OID id.
func (c *Catalog) Enum(id uint32) (*EnumType, bool) {
	e, ok := c.enums[id]
	return e, ok
}

// Enums lists the enum types by OID.
func (c *Catalog) Enums() []*EnumType {
	out := make([]*EnumType, 0, len(c.enums))
	for _, e := range c.enums {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// LookupEnum finds an enum type by schema and name.
func (c *Catalog) LookupEnum(schemaID uint32, name string) (*EnumType, bool) {
	for _, e := range c.enums {
		if e.SchemaID == schemaID && e.Name == name {
			return e, true
		}
	}
	return nil, false
}

// ResolveEnum finds an enum type by a 1–2 part name along the search path.
func (c *Catalog) ResolveEnum(parts []string, searchPath []string) (*EnumType, bool) {
	name, schemas, err := c.qualify(parts, searchPath)
	if err != nil {
		return nil, false
	}
	for _, sn := range schemas {
		if s, ok := c.schemas[sn]; ok {
			if e, ok := c.LookupEnum(s.ID, name); ok {
				return e, true
			}
		}
	}
	return nil, false
}

// PutEnum adds or replaces an enum type in a clone, and relinks the
// columns of that type to the new definition. It returns the ids of the
// tables it rewrote (their descriptors are unchanged: they name the type
// by OID).
func (c *Catalog) PutEnum(e *EnumType) []uint32 {
	if c.enums == nil {
		c.enums = map[uint32]*EnumType{}
	}
	c.enums[e.ID] = e
	var ids []uint32
	for _, t := range c.tables {
		if n := c.linkEnums(t); n != t {
			c.PutTable(n)
			ids = append(ids, t.ID)
		}
	}
	for id, f := range c.funcs {
		if usesEnum(f, e.ID) {
			n := f.Clone()
			c.relinkFunction(n)
			c.funcs[id] = n
		}
	}
	return ids
}

// DropEnum removes an enum type from a clone.
func (c *Catalog) DropEnum(id uint32) { delete(c.enums, id) }

// EnumUsers lists the relations with a column of enum type id.
func (c *Catalog) EnumUsers(id uint32) []*Table {
	var out []*Table
	for _, t := range c.Tables() {
		for _, col := range t.Columns {
			if isEnumOf(col.Type, id) {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

func isEnumOf(t types.T, id uint32) bool {
	return t.Kind == types.KindEnum && t.Enum != nil && t.Enum.OID == id
}

// linkEnums returns t with every enum column's type pointing at the
// catalog's current definition (t itself when it already does).
func (c *Catalog) linkEnums(t *Table) *Table {
	var n *Table
	for i, col := range t.Columns {
		if col.Type.Kind != types.KindEnum || col.Type.Enum == nil {
			continue
		}
		e, ok := c.enums[col.Type.Enum.OID]
		if !ok || e.Def() == col.Type.Enum {
			continue
		}
		if n == nil {
			n = t.Clone()
		}
		n.Columns[i].Type.Enum = e.Def()
	}
	if n == nil {
		return t
	}
	return n
}

// usesEnum reports whether f takes or returns enum type id.
func usesEnum(f *Function, id uint32) bool {
	if isEnumOf(f.Returns, id) {
		return true
	}
	for _, a := range f.Args {
		if isEnumOf(a.Type, id) {
			return true
		}
	}
	return false
}
