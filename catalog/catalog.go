package catalog

import (
	"sort"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// ObjectKind distinguishes relations.
type ObjectKind string

// Relation kinds.
const (
	KindTable ObjectKind = "table"
	// KindView is a plain view (R-Q4): Query is expanded where it is read.
	KindView ObjectKind = "view"
	// KindMaterializedView is a materialized view: rows stored like a
	// table's, computed from Query by refreshes.
	KindMaterializedView ObjectKind = "materialized_view"
	// KindStreamingTable is a streaming table (R-ST1): rows stored like a
	// table's, appended by refreshes that run Query over the source rows
	// committed since the table's checkpoint (Dataset.Streams).
	KindStreamingTable ObjectKind = "streaming_table"
)

// IsDataset reports whether t is refreshed from a query: a materialized
// view or a streaming table.
func (t *Table) IsDataset() bool {
	return t.Kind == KindMaterializedView || t.Kind == KindStreamingTable
}

// Schema is a namespace.
type Schema struct {
	ID   uint32 `json:"id"`
	Name string `json:"name"`
	// Owner is the role that created the schema (0: the bootstrap
	// superuser, as for public); ACL its grants of USAGE and CREATE.
	Owner uint32 `json:"owner,omitempty"`
	ACL   ACL    `json:"acl,omitempty"`
}

// Clone returns a copy of s for modification.
func (s *Schema) Clone() *Schema {
	c := *s
	c.ACL = append(ACL(nil), s.ACL...)
	return &c
}

// Column is one column of a table.
type Column struct {
	ID      uint32  `json:"id"`
	Name    string  `json:"name"`
	Type    types.T `json:"type"`
	NotNull bool    `json:"not_null,omitempty"`
	// Default is the SQL text of the column default ("" = NULL).
	Default string `json:"default,omitempty"`
	Comment string `json:"comment,omitempty"`
	// Identity is 'a' for GENERATED ALWAYS AS IDENTITY, 'd' for BY
	// DEFAULT (pg_attribute.attidentity), 0 otherwise. Default then holds
	// the nextval of the column's sequence.
	Identity byte `json:"identity,omitempty"`
	// Generated is the SQL text of a GENERATED ALWAYS AS (expr) STORED
	// column's expression ("" otherwise), computed on every row write.
	Generated string `json:"generated,omitempty"`
}

// Property is one table property; Key keeps the spelling it was set with.
type Property struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Table is a relation descriptor.
type Table struct {
	ID       uint32     `json:"id"`
	SchemaID uint32     `json:"schema_id"`
	Name     string     `json:"name"`
	Kind     ObjectKind `json:"kind"`
	Columns  []Column   `json:"columns"`
	// PrimaryKey lists column ids in key order (empty: rows keyed by row id).
	PrimaryKey []uint32 `json:"primary_key,omitempty"`
	// Indexes are the secondary indexes (index.go), in creation order.
	Indexes []Index `json:"indexes,omitempty"`
	// Checks and ForeignKeys are the table's CHECK and FOREIGN KEY
	// constraints (constraint.go), in creation order.
	Checks      []Check      `json:"checks,omitempty"`
	ForeignKeys []ForeignKey `json:"foreign_keys,omitempty"`
	PartitionBy []string     `json:"partition_by,omitempty"`
	ClusterBy   []string     `json:"cluster_by,omitempty"`
	Properties  []Property   `json:"properties,omitempty"`
	Comment     string       `json:"comment,omitempty"`
	NextColID   uint32       `json:"next_col_id"`
	// Query is the defining SELECT of a view or materialized view, as SQL
	// text in PostgreSQL's grammar (after the Databricks-spellings pass).
	Query string `json:"query,omitempty"`
	// DependsOn lists the ids of the relations Query reads (direct only).
	DependsOn []uint32 `json:"depends_on,omitempty"`
	// ViewSearchPath is the search path a view was created under, which
	// its query's names are resolved with (PostgreSQL binds them at
	// CREATE VIEW); empty for views created before it was kept, which
	// use the reader's.
	ViewSearchPath []string `json:"view_search_path,omitempty"`
	// Dataset is set for materialized views and streaming tables.
	Dataset *Dataset `json:"dataset,omitempty"`
	// Sequence is set for sequences.
	Sequence *Sequence `json:"sequence,omitempty"`
	// OnCommit is a temporary table's ON COMMIT action (temp.go; ""
	// preserves rows).
	OnCommit string `json:"on_commit,omitempty"`
	// Owner is the role that created the relation (0: created before roles
	// were checked, owned by the bootstrap superuser); ACL its grants.
	Owner uint32 `json:"owner,omitempty"`
	ACL   ACL    `json:"acl,omitempty"`
}

// Dependents lists the relations whose DependsOn names id.
func (c *Catalog) Dependents(id uint32) []*Table {
	var out []*Table
	for _, t := range c.Tables() {
		for _, d := range t.DependsOn {
			if d == id {
				out = append(out, t)
				break
			}
		}
	}
	return out
}

// Clone returns a deep copy of t for modification.
func (t *Table) Clone() *Table {
	c := *t
	c.Columns = append([]Column(nil), t.Columns...)
	c.PrimaryKey = append([]uint32(nil), t.PrimaryKey...)
	c.Indexes = cloneIndexes(t.Indexes)
	c.Checks = append([]Check(nil), t.Checks...)
	c.ForeignKeys = cloneForeignKeys(t.ForeignKeys)
	c.PartitionBy = append([]string(nil), t.PartitionBy...)
	c.ClusterBy = append([]string(nil), t.ClusterBy...)
	c.Properties = append([]Property(nil), t.Properties...)
	c.DependsOn = append([]uint32(nil), t.DependsOn...)
	c.ACL = append(ACL(nil), t.ACL...)
	if t.Dataset != nil {
		d := *t.Dataset
		d.Expectations = append([]Expectation(nil), t.Dataset.Expectations...)
		d.SearchPath = append([]string(nil), t.Dataset.SearchPath...)
		d.Streams = append([]uint32(nil), t.Dataset.Streams...)
		c.Dataset = &d
	}
	if t.Sequence != nil {
		sq := *t.Sequence
		c.Sequence = &sq
	}
	return &c
}

// ColumnIndex returns the position of the named column, or -1.
func (t *Table) ColumnIndex(name string) int {
	for i, c := range t.Columns {
		if c.Name == name {
			return i
		}
	}
	return -1
}

// ColumnByID returns the position of the column with id, or -1.
func (t *Table) ColumnByID(id uint32) int {
	for i, c := range t.Columns {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// Property returns the value of a property (case-insensitive key).
func (t *Table) Property(key string) (string, bool) {
	for _, p := range t.Properties {
		if strings.EqualFold(p.Key, key) {
			return p.Value, true
		}
	}
	return "", false
}

func (t *Table) boolProp(key string) bool {
	v, ok := t.Property(key)
	return ok && strings.EqualFold(v, "true")
}

// ChangeDataFeed reports delta.enableChangeDataFeed (R-T7).
func (t *Table) ChangeDataFeed() bool { return t.boolProp(PropChangeDataFeed) }

// RowTracking reports delta.enableRowTracking (R-T6).
func (t *Table) RowTracking() bool { return t.boolProp(PropRowTracking) }

// DeletionVectors reports delta.enableDeletionVectors (R-T8).
func (t *Table) DeletionVectors() bool { return t.boolProp(PropDeletionVectors) }

// StorageInfo is what storage needs to know about the table, without its
// indexes: enough for calls that write no rows (CreateTable, Truncate,
// RecordVersion). Row writes take sql/exec's StorageInfo, which adds the
// indexes' key functions (storage refuses a row write without them).
func (t *Table) StorageInfo() storage.TableInfo {
	return storage.TableInfo{ID: storage.TableID(t.ID), ChangeDataFeed: t.ChangeDataFeed()}
}

// Catalog is an immutable snapshot of every schema object.
type Catalog struct {
	Gen      uint64
	Database string
	schemas  map[string]*Schema
	tables   map[uint32]*Table
	byName   map[uint32]map[string]*Table // schema id → name → table
	nextID   uint32
	roles    roleSet              // roles.go
	enums    map[uint32]*EnumType // enum.go
	funcs    map[uint32]*Function // function.go
}

func newCatalog(db string) *Catalog {
	return &Catalog{Database: db, schemas: map[string]*Schema{}, tables: map[uint32]*Table{}, byName: map[uint32]map[string]*Table{}, nextID: FirstObjectID}
}

// FirstObjectID is the first id given to user objects (PostgreSQL's
// FirstNormalObjectId).
const FirstObjectID = 16384

// Clone returns a copy whose maps may be modified (objects are shared;
// replace them, never mutate them).
func (c *Catalog) Clone() *Catalog {
	n := &Catalog{Gen: c.Gen, Database: c.Database, nextID: c.nextID,
		schemas: make(map[string]*Schema, len(c.schemas)), tables: make(map[uint32]*Table, len(c.tables)), byName: make(map[uint32]map[string]*Table, len(c.byName))}
	for k, v := range c.schemas {
		n.schemas[k] = v
	}
	for k, v := range c.tables {
		n.tables[k] = v
	}
	for k, m := range c.byName {
		mm := make(map[string]*Table, len(m))
		for kk, vv := range m {
			mm[kk] = vv
		}
		n.byName[k] = mm
	}
	n.roles = c.roles.clone()
	if len(c.enums) > 0 {
		n.enums = make(map[uint32]*EnumType, len(c.enums))
		for k, v := range c.enums {
			n.enums[k] = v
		}
	}
	if len(c.funcs) > 0 {
		n.funcs = make(map[uint32]*Function, len(c.funcs))
		for k, v := range c.funcs {
			n.funcs[k] = v
		}
	}
	return n
}

// Schema returns the schema with the given name.
func (c *Catalog) Schema(name string) (*Schema, bool) {
	s, ok := c.schemas[name]
	return s, ok
}

// SchemaByID returns the schema with the given id.
func (c *Catalog) SchemaByID(id uint32) (*Schema, bool) {
	for _, s := range c.schemas {
		if s.ID == id {
			return s, true
		}
	}
	return nil, false
}

// Schemas lists every schema ordered by name.
func (c *Catalog) Schemas() []*Schema {
	out := make([]*Schema, 0, len(c.schemas))
	for _, s := range c.schemas {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Table returns the table with the given id.
func (c *Catalog) Table(id uint32) (*Table, bool) {
	t, ok := c.tables[id]
	if !ok {
		t, ok = systemViewsByID[id]
	}
	return t, ok
}

// Tables lists every table ordered by schema and name.
func (c *Catalog) Tables() []*Table {
	out := make([]*Table, 0, len(c.tables))
	for _, t := range c.tables {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].SchemaID != out[j].SchemaID {
			return out[i].SchemaID < out[j].SchemaID
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// LookupTable finds a table by schema and name.
func (c *Catalog) LookupTable(schemaID uint32, name string) (*Table, bool) {
	t, ok := c.byName[schemaID][name]
	return t, ok
}

// Resolve finds a relation by a 1–3 part name using the search path.
func (c *Catalog) Resolve(parts []string, searchPath []string) (*Table, error) {
	name, schemas, err := c.qualify(parts, searchPath)
	if err != nil {
		return nil, err
	}
	own := ownTemp(searchPath)
	for _, sn := range schemas {
		if len(parts) == 1 && IsTempSchema(sn) && sn != own {
			continue // another session's, named in search_path
		}
		s, ok := c.schemas[sn]
		if !ok {
			if len(schemas) == 1 && sn != SystemSchema && sn != "pg_catalog" {
				return nil, pgerror.New(pgerror.UndefinedTable, "relation \"%s\" does not exist", strings.Join(parts, "."))
			}
			continue
		}
		if t, ok := c.byName[s.ID][name]; ok {
			return t, nil
		}
	}
	// The system views answer to their bare name (after the user's
	// schemas), to system.name and to pg_catalog.name.
	if len(parts) == 1 || (len(schemas) == 1 && (schemas[0] == SystemSchema || schemas[0] == "pg_catalog")) {
		if t, ok := c.systemView(name); ok {
			return t, nil
		}
	}
	return nil, pgerror.New(pgerror.UndefinedTable, "relation \"%s\" does not exist", strings.Join(parts, "."))
}

// qualify splits a name into its object name and the schemas to search.
func (c *Catalog) qualify(parts []string, searchPath []string) (string, []string, error) {
	switch len(parts) {
	case 1:
		return parts[0], searchPath, nil
	case 2:
		sn, err := tempSchemaRef(parts[0], searchPath)
		return parts[1], []string{sn}, err
	case 3:
		if parts[0] != c.Database {
			return "", nil, pgerror.New(pgerror.FeatureNotSupported, "cross-database references are not implemented: \"%s\"", strings.Join(parts, "."))
		}
		sn, err := tempSchemaRef(parts[1], searchPath)
		return parts[2], []string{sn}, err
	}
	return "", nil, pgerror.New(pgerror.SyntaxError, "improper qualified name (too many dotted names): %s", strings.Join(parts, "."))
}

// TargetSchema returns the schema a new object named by parts goes into.
func (c *Catalog) TargetSchema(parts []string, searchPath []string) (*Schema, string, error) {
	name, schemas, err := c.qualify(parts, searchPath)
	if err != nil {
		return nil, "", err
	}
	for _, sn := range schemas {
		if len(parts) == 1 && IsTempSchema(sn) {
			continue // only TEMP or pg_temp.name creates there
		}
		if s, ok := c.schemas[sn]; ok {
			return s, name, nil
		}
		if len(parts) > 1 {
			return nil, "", pgerror.New(pgerror.InvalidSchemaName, "schema \"%s\" does not exist", sn)
		}
	}
	return nil, "", pgerror.New(pgerror.InvalidSchemaName, "no schema has been selected to create in")
}

// AllocID returns a new object id (the clone records it).
func (c *Catalog) AllocID() uint32 {
	id := c.nextID
	c.nextID++
	return id
}

// PutSchema adds or replaces a schema in a clone.
func (c *Catalog) PutSchema(s *Schema) {
	c.schemas[s.Name] = s
	if c.byName[s.ID] == nil {
		c.byName[s.ID] = map[string]*Table{}
	}
}

// DropSchema removes a schema from a clone, with the enum types and SQL
// functions in it (their ids returned, for their descriptors); its
// relations the caller drops first.
func (c *Catalog) DropSchema(s *Schema) []uint32 {
	delete(c.schemas, s.Name)
	delete(c.byName, s.ID)
	var ids []uint32
	for _, e := range c.Enums() {
		if e.SchemaID == s.ID {
			c.DropEnum(e.ID)
			ids = append(ids, e.ID)
		}
	}
	for _, f := range c.Functions() {
		if f.SchemaID == s.ID {
			c.DropFunction(f.ID)
			ids = append(ids, f.ID)
		}
	}
	return ids
}

// PutTable adds or replaces a table in a clone.
func (c *Catalog) PutTable(t *Table) {
	if len(c.enums) > 0 {
		t = c.linkEnums(t)
	}
	if old, ok := c.tables[t.ID]; ok {
		delete(c.byName[old.SchemaID], old.Name)
	}
	c.tables[t.ID] = t
	if c.byName[t.SchemaID] == nil {
		c.byName[t.SchemaID] = map[string]*Table{}
	}
	c.byName[t.SchemaID][t.Name] = t
}

// DropTable removes a table from a clone.
func (c *Catalog) DropTable(id uint32) {
	if old, ok := c.tables[id]; ok {
		delete(c.byName[old.SchemaID], old.Name)
		delete(c.tables, id)
	}
}

// QualifiedName returns schema.name of t.
func (c *Catalog) QualifiedName(t *Table) string {
	if s, ok := c.SchemaByID(t.SchemaID); ok {
		return s.Name + "." + t.Name
	}
	return t.Name
}
