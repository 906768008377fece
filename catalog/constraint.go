package catalog

import "slices"

// Check is a CHECK constraint of a table: Expr is its condition as SQL
// text over the table's columns, bound again wherever rows are written.
type Check struct {
	// ID is the constraint's OID (pg_constraint).
	ID   uint32 `json:"id"`
	Name string `json:"name"`
	Expr string `json:"expr"`
	// NotValid: added NOT VALID, the rows before it are not checked (until
	// VALIDATE CONSTRAINT); new and changed rows are.
	NotValid bool `json:"not_valid,omitempty"`
}

// Referential actions and match types, with pg_constraint's letters.
const (
	FKNoAction   = 'a'
	FKRestrict   = 'r'
	FKCascade    = 'c'
	FKSetNull    = 'n'
	FKSetDefault = 'd'

	FKMatchSimple = 's'
	FKMatchFull   = 'f'
)

// ForeignKey is a FOREIGN KEY constraint of the referencing (child) table:
// Cols of this table reference RefCols of table RefTable, which are that
// table's primary key or the columns of one of its unique indexes.
type ForeignKey struct {
	ID       uint32   `json:"id"`
	Name     string   `json:"name"`
	Cols     []uint32 `json:"cols"`
	RefTable uint32   `json:"ref_table"`
	RefCols  []uint32 `json:"ref_cols"`
	// OnDelete and OnUpdate are FKNoAction … FKSetDefault; Match is
	// FKMatchSimple or FKMatchFull.
	OnDelete   byte `json:"on_delete"`
	OnUpdate   byte `json:"on_update"`
	Match      byte `json:"match"`
	Deferrable bool `json:"deferrable,omitempty"`
	// Deferred: INITIALLY DEFERRED, checked at commit.
	Deferred bool `json:"deferred,omitempty"`
	NotValid bool `json:"not_valid,omitempty"`
}

// CheckByName returns the index of the named CHECK constraint, or -1.
func (t *Table) CheckByName(name string) int {
	for i := range t.Checks {
		if t.Checks[i].Name == name {
			return i
		}
	}
	return -1
}

// ForeignKeyByName returns the index of the named FOREIGN KEY, or -1.
func (t *Table) ForeignKeyByName(name string) int {
	for i := range t.ForeignKeys {
		if t.ForeignKeys[i].Name == name {
			return i
		}
	}
	return -1
}

// ConstraintNameTaken reports whether a constraint of t (primary key,
// UNIQUE, CHECK or FOREIGN KEY) already has name.
func (t *Table) ConstraintNameTaken(name string) bool {
	if len(t.PrimaryKey) > 0 && t.PrimaryKeyName() == name {
		return true
	}
	for _, ix := range t.Indexes {
		if ix.IsConstraint() && ix.Name == name {
			return true
		}
	}
	return t.CheckByName(name) >= 0 || t.ForeignKeyByName(name) >= 0
}

// Referencing lists the foreign keys that reference table id, each with
// the table holding it (a table referencing itself included).
func (c *Catalog) Referencing(id uint32) []Reference {
	var out []Reference
	for _, t := range c.Tables() {
		for i := range t.ForeignKeys {
			if t.ForeignKeys[i].RefTable == id {
				out = append(out, Reference{Table: t, FK: &t.ForeignKeys[i]})
			}
		}
	}
	return out
}

// Reference is one foreign key and the (child) table that holds it.
type Reference struct {
	Table *Table
	FK    *ForeignKey
}

func cloneForeignKeys(fks []ForeignKey) []ForeignKey {
	if fks == nil {
		return nil
	}
	out := make([]ForeignKey, len(fks))
	for i, fk := range fks {
		fk.Cols = append([]uint32(nil), fk.Cols...)
		fk.RefCols = append([]uint32(nil), fk.RefCols...)
		out[i] = fk
	}
	return out
}

// ReferencedBy returns the foreign keys of other tables that reference
// cols of t (as their whole key), with PostgreSQL's description of each.
func (c *Catalog) ReferencedBy(t *Table, cols func(*ForeignKey) bool) []Reference {
	var out []Reference
	for _, ref := range c.Referencing(t.ID) {
		if ref.Table.ID != t.ID && cols(ref.FK) {
			out = append(out, ref)
		}
	}
	return out
}

// SameColumnSet reports whether a and b hold the same column ids, in any order.
func SameColumnSet(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}
