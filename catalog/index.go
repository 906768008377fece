package catalog

import (
	"fmt"
	"strings"
)

// Index is a secondary index of a table or materialized view (R-T10): one
// made by CREATE INDEX, or the index of a UNIQUE constraint. Its entries
// live in storage, maintained with every row write (storage/index.go).
// Index names share the relation namespace of the table's schema.
type Index struct {
	// ID is the index's catalog object id: its OID and its storage id.
	ID      uint32        `json:"id"`
	Name    string        `json:"name"`
	Columns []IndexColumn `json:"columns"`
	// Include lists the ids of INCLUDE columns: shown, not in the key.
	Include []uint32 `json:"include,omitempty"`
	Unique  bool     `json:"unique,omitempty"`
	// NullsNotDistinct makes NULLs equal for uniqueness (PostgreSQL 15).
	NullsNotDistinct bool `json:"nulls_not_distinct,omitempty"`
	// ConstraintID is set for the index of a UNIQUE constraint: the
	// constraint's OID (pg_constraint), which shares the index's name.
	ConstraintID uint32 `json:"constraint_id,omitempty"`
}

// IndexColumn is one key column of an index.
type IndexColumn struct {
	Col  uint32 `json:"col"` // column id
	Desc bool   `json:"desc,omitempty"`
	// NullsFirst is where NULLs sort: by default last ascending, first
	// descending. Entries are stored ascending whatever the order given;
	// the order is kept to show the definition as it was written.
	NullsFirst bool `json:"nulls_first,omitempty"`
}

// IsConstraint reports whether the index belongs to a UNIQUE constraint.
func (ix *Index) IsConstraint() bool { return ix.ConstraintID != 0 }

// ColumnIDs returns the key columns' ids in key order.
func (ix *Index) ColumnIDs() []uint32 {
	ids := make([]uint32, len(ix.Columns))
	for i, c := range ix.Columns {
		ids[i] = c.Col
	}
	return ids
}

// Uses reports whether the index reads column id (as a key or INCLUDE
// column).
func (ix *Index) Uses(id uint32) bool {
	for _, c := range ix.Columns {
		if c.Col == id {
			return true
		}
	}
	for _, c := range ix.Include {
		if c == id {
			return true
		}
	}
	return false
}

func cloneIndexes(ixs []Index) []Index {
	if ixs == nil {
		return nil
	}
	out := make([]Index, len(ixs))
	for i, ix := range ixs {
		ix.Columns = append([]IndexColumn(nil), ix.Columns...)
		ix.Include = append([]uint32(nil), ix.Include...)
		out[i] = ix
	}
	return out
}

// IndexByID returns the table's index with the given id.
func (t *Table) IndexByID(id uint32) *Index {
	for i := range t.Indexes {
		if t.Indexes[i].ID == id {
			return &t.Indexes[i]
		}
	}
	return nil
}

// IndexByName returns the table's index with the given name.
func (t *Table) IndexByName(name string) *Index {
	for i := range t.Indexes {
		if t.Indexes[i].Name == name {
			return &t.Indexes[i]
		}
	}
	return nil
}

// PrimaryKeyName is the name of a table's primary-key constraint and its
// index.
func (t *Table) PrimaryKeyName() string { return t.Name + "_pkey" }

// LookupIndex finds an index by schema and name.
func (c *Catalog) LookupIndex(schemaID uint32, name string) (*Table, *Index, bool) {
	for _, t := range c.tables {
		if t.SchemaID != schemaID {
			continue
		}
		if ix := t.IndexByName(name); ix != nil {
			return t, ix, true
		}
	}
	return nil, nil, false
}

// NameTaken reports whether a relation of the schema has the name: a
// table, view, materialized view, sequence, index or primary-key index
// (they share PostgreSQL's pg_class namespace).
func (c *Catalog) NameTaken(schemaID uint32, name string) bool {
	if _, ok := c.byName[schemaID][name]; ok {
		return true
	}
	return c.IndexNameTaken(schemaID, name)
}

// IndexNameTaken reports whether an index of the schema (or a primary
// key's) has the name.
func (c *Catalog) IndexNameTaken(schemaID uint32, name string) bool {
	for _, t := range c.tables {
		if t.SchemaID != schemaID {
			continue
		}
		if t.IndexByName(name) != nil || len(t.PrimaryKey) > 0 && t.PrimaryKeyName() == name {
			return true
		}
	}
	return false
}

// ResolveIndex finds an index by a 1–3 part name using the search path.
func (c *Catalog) ResolveIndex(parts []string, searchPath []string) (*Table, *Index, error) {
	name, schemas, err := c.qualify(parts, searchPath)
	if err != nil {
		return nil, nil, err
	}
	for _, sn := range schemas {
		if s, ok := c.schemas[sn]; ok {
			if t, ix, ok := c.LookupIndex(s.ID, name); ok {
				return t, ix, nil
			}
		}
	}
	return nil, nil, nil
}

// nameDataLen is PostgreSQL's NAMEDATALEN: names hold at most 63 bytes.
const nameDataLen = 64

// ChooseIndexName picks a free name for an index of t as PostgreSQL does:
// table_col1_col2_label ("t_email_key" for a UNIQUE constraint, "t_a_b_idx"
// for CREATE INDEX, "t_pkey"), shortened to 63 bytes, with a number after
// the label when the name is taken ("t_a_idx1"). taken reports names in
// use besides the catalog's (earlier indexes of the same statement).
func (c *Catalog) ChooseIndexName(t *Table, cols []string, label string, taken func(string) bool) string {
	name2 := ""
	for _, col := range cols {
		if name2 != "" {
			name2 += "_"
		}
		name2 += col
		if len(name2) >= nameDataLen {
			break
		}
	}
	for pass := 0; ; pass++ {
		l := label
		if pass > 0 {
			l = fmt.Sprintf("%s%d", label, pass)
		}
		name := makeObjectName(t.Name, name2, l)
		if !c.NameTaken(t.SchemaID, name) && (taken == nil || !taken(name)) {
			return name
		}
	}
}

// makeObjectName is PostgreSQL's makeObjectName: name1_name2_label with
// name1 and name2 shortened (the longer first) to fit 63 bytes.
func makeObjectName(name1, name2, label string) string {
	overhead := len(label) + 1
	n1, n2 := len(name1), len(name2)
	if name2 != "" {
		overhead++
	}
	avail := nameDataLen - 1 - overhead
	for n1+n2 > avail {
		if n1 > n2 {
			n1--
		} else {
			n2--
		}
	}
	parts := []string{clipName(name1, n1)}
	if name2 != "" {
		parts = append(parts, clipName(name2, n2))
	}
	return strings.Join(append(parts, label), "_")
}

// clipName shortens s to at most n bytes without splitting a UTF-8
// character.
func clipName(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
