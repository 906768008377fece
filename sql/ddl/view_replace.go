package ddl

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
)

// CheckViewReplace is PostgreSQL's rule for CREATE OR REPLACE VIEW: the
// new query keeps every column of the old view, in order, with its name
// and type, and may add columns at the end (42P16 otherwise). The views
// and materialized views reading the old one still find what they read.
func CheckViewReplace(old *catalog.Table, cols []plan.Column) error {
	if len(cols) < len(old.Columns) {
		return pgerror.New(pgerror.InvalidTableDefinition, "cannot drop columns from view")
	}
	for i, oc := range old.Columns {
		nc := cols[i]
		if nc.Name != oc.Name {
			return pgerror.New(pgerror.InvalidTableDefinition, "cannot change name of view column \"%s\" to \"%s\"", oc.Name, nc.Name).
				WithHint("Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead.")
		}
		if nc.T != oc.Type {
			return pgerror.New(pgerror.InvalidTableDefinition, "cannot change data type of view column \"%s\" from %s to %s", oc.Name, oc.Type.String(), nc.T.String())
		}
	}
	return nil
}
