package catalog

import (
	"strings"

	"github.com/mvserver/mvserver/pgerror"
)

// Temporary tables live in a schema of their session, pg_temp_N (N the
// session's process id), as PostgreSQL's do. The schema and its tables are
// ordinary descriptors created and dropped through the normal DDL paths;
// the session drops them when it ends and the server drops any a crash
// left behind when it starts. Only the owning session resolves names in
// it: it puts its schema first on the search path it passes to Resolve,
// and "pg_temp" names that schema.

// TempSchemaPrefix starts the name of every session's temporary schema.
const TempSchemaPrefix = "pg_temp_"

// TempAlias is the schema name that stands for the session's own
// temporary schema.
const TempAlias = "pg_temp"

// On-commit actions of a temporary table (Table.OnCommit; "" preserves rows).
const (
	OnCommitDeleteRows = "delete_rows"
	OnCommitDrop       = "drop"
)

// IsTempSchema reports whether a schema name is a session's temporary schema.
func IsTempSchema(name string) bool { return strings.HasPrefix(name, TempSchemaPrefix) }

// IsTemp reports whether t lives in a temporary schema.
func (c *Catalog) IsTemp(t *Table) bool {
	s, ok := c.SchemaByID(t.SchemaID)
	return ok && IsTempSchema(s.Name)
}

// TempSchemas lists the temporary schemas of every session.
func (c *Catalog) TempSchemas() []*Schema {
	var out []*Schema
	for _, s := range c.Schemas() {
		if IsTempSchema(s.Name) {
			out = append(out, s)
		}
	}
	return out
}

// SchemaTables lists the relations of a schema.
func (c *Catalog) SchemaTables(id uint32) []*Table {
	var out []*Table
	for _, t := range c.Tables() {
		if t.SchemaID == id {
			out = append(out, t)
		}
	}
	return out
}

// ownTemp is the temporary schema a search path belongs to: the session
// puts its own first ("" when it has none).
func ownTemp(searchPath []string) string {
	if len(searchPath) > 0 && IsTempSchema(searchPath[0]) {
		return searchPath[0]
	}
	return ""
}

// tempSchemaRef maps an explicit schema name: pg_temp to the session's own
// temporary schema, another session's temporary schema to an error.
func tempSchemaRef(schema string, searchPath []string) (string, error) {
	own := ownTemp(searchPath)
	switch {
	case schema == TempAlias:
		if own == "" {
			return TempAlias, nil
		}
		return own, nil
	case IsTempSchema(schema) && schema != own:
		return "", pgerror.New(pgerror.FeatureNotSupported, "cannot access temporary tables of other sessions")
	}
	return schema, nil
}
