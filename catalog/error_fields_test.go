package catalog

import (
	"fmt"
	"testing"

	"github.com/mvserver/mvserver/pgerror"
)

func TestFillErrorSchema(t *testing.T) {
	c := (&Catalog{Database: "d"}).Clone()
	sc := &Schema{ID: c.AllocID(), Name: "app"}
	c.PutSchema(sc)
	tab := &Table{ID: c.AllocID(), SchemaID: sc.ID, Name: "t", Kind: KindTable}
	c.PutTable(tab)
	e := pgerror.New(pgerror.UniqueViolation, "duplicate key value violates unique constraint \"t_pkey\"")
	e.Table, e.RelationID, e.Constraint = "t", tab.ID, "t_pkey"
	wrapped := fmt.Errorf("statement: %w", e)
	if c.FillErrorSchema(wrapped) != wrapped || e.Schema != "app" {
		t.Fatalf("schema %q, want app", e.Schema)
	}
	other := pgerror.New(pgerror.DivisionByZero, "division by zero")
	c.FillErrorSchema(other)
	if other.Schema != "" {
		t.Fatalf("an error about no relation got schema %q", other.Schema)
	}
}
