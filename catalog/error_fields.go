package catalog

import (
	"errors"

	"github.com/mvserver/mvserver/pgerror"
)

// FillErrorSchema sets the schema field of an error about a relation of
// c (pgerror.Error.RelationID) to the relation's schema, as PostgreSQL's
// ErrorResponse carries schema, table and constraint of a constraint
// violation. Other errors, and one whose relation c lacks, are left as
// they are. It returns err.
func (c *Catalog) FillErrorSchema(err error) error {
	var pe *pgerror.Error
	if c == nil || !errors.As(err, &pe) || pe.RelationID == 0 || pe.Schema != "" {
		return err
	}
	if t, ok := c.Table(pe.RelationID); ok {
		if s, ok := c.SchemaByID(t.SchemaID); ok {
			pe.Schema = s.Name
		}
	}
	return err
}
