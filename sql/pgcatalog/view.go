package pgcatalog

import (
	"sort"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// Fixed OIDs of built-in objects.
const (
	nsPgCatalog         = 11
	nsInformationSchema = 13000
	nsSystem            = 13001
	// sessionRoleOID is the OID shown for a connected user that is no role
	// (without authentication any name may connect); PostgreSQL's
	// bootstrap superuser has it.
	sessionRoleOID   = 10
	databaseOID      = 5
	amHeap           = 2
	amBtree          = 403
	collDefault      = 100
	langInternal     = 12
	langSQL          = 14
	classPgClass     = 1259
	classPgNamespace = 2615
)

// Derived OIDs of what a table implies (see doc.go).
func rowTypeOID(id uint32) uint32    { return 0x50000000 | id }
func pkIndexOID(id uint32) uint32    { return 0x40000000 | id }
func pkConOID(id uint32) uint32      { return 0x60000000 | id }
func attrDefOID(id, n uint32) uint32 { return 0x70000000 | (id<<8|n)&0x0fffffff }

// View is the catalog as the pg_catalog relations and functions present it
// to one statement.
type View struct {
	Cat *catalog.Catalog
	F   *funcs.Ctx // nil outside a session
	// Stats reads a relation's planner statistics at the statement's
	// snapshot (nil: none known, as for pg_catalog functions).
	Stats func(id uint32) *catalog.TableStats
}

// tableStats returns relation id's statistics (nil: never analyzed).
func (v *View) tableStats(id uint32) *catalog.TableStats {
	if v.Stats == nil {
		return nil
	}
	return v.Stats(id)
}

func newView(cat *catalog.Catalog, f *funcs.Ctx) *View { return &View{Cat: cat, F: f} }

// ViewFor returns the view of a function's context (nil without a catalog).
func ViewFor(f *funcs.Ctx) *View {
	if f == nil {
		return nil
	}
	cat, _ := f.Catalog.(*catalog.Catalog)
	if cat == nil {
		return nil
	}
	return newView(cat, f)
}

// namespace is one pg_namespace row.
type namespace struct {
	oid    uint32
	name   string
	schema *catalog.Schema // nil for the built-in ones
}

func (v *View) namespaces() []namespace {
	out := []namespace{{nsPgCatalog, "pg_catalog", nil}, {nsInformationSchema, "information_schema", nil}, {nsSystem, catalog.SystemSchema, nil}}
	for _, s := range v.Cat.Schemas() {
		out = append(out, namespace{s.ID, s.Name, s})
	}
	return out
}

// schemaOwner is a namespace's owner (the bootstrap superuser for the
// built-in ones and for owner 0).
func (v *View) schemaOwner(n namespace) uint32 {
	if n.schema != nil && n.schema.Owner != 0 {
		return n.schema.Owner
	}
	if n.name == "public" {
		// PostgreSQL 15: public belongs to pg_database_owner.
		return catalog.RoleDatabaseOwner
	}
	return v.ownerOID()
}

func (v *View) namespaceName(oid uint32) (string, bool) {
	for _, n := range v.namespaces() {
		if n.oid == oid {
			return n.name, true
		}
	}
	return "", false
}

func (v *View) namespaceOID(name string) (uint32, bool) {
	for _, n := range v.namespaces() {
		if n.name == name {
			return n.oid, true
		}
	}
	return 0, false
}

// column is one attribute of a relation.
type column struct {
	name    string
	t       types.T
	notNull bool
	def     string
	comment string
	// identity is pg_attribute.attidentity ('a', 'd' or 0); generated is
	// set for a stored generated column, whose def is its expression.
	identity  byte
	generated bool
}

// relation is one pg_class row.
type relation struct {
	oid     uint32
	name    string
	ns      uint32
	kind    byte // r v m i
	cols    []column
	table   *catalog.Table // nil for built-in relations and indexes
	indexOf *catalog.Table // the table of an index
	index   *catalog.Index // a secondary index (nil: the primary key's)
	comment string
}

// indexFacts describes an index relation as pg_index and pg_constraint
// present it.
type indexFacts struct {
	keys, include []int16 // attribute numbers in the table
	options       []int16 // pg_index.indoption per key column
	unique        bool
	primary       bool
	nullsNotDist  bool
	conOID        uint32 // the constraint's OID, 0 without one
	conType       string // "p" or "u"
}

func (r *relation) indexFacts() indexFacts {
	t := r.indexOf
	attnum := func(id uint32) int16 { return int16(t.ColumnByID(id) + 1) }
	if r.index == nil {
		f := indexFacts{unique: true, primary: true, conOID: pkConOID(t.ID), conType: "p"}
		for _, id := range t.PrimaryKey {
			f.keys = append(f.keys, attnum(id))
			f.options = append(f.options, 0)
		}
		return f
	}
	ix := r.index
	f := indexFacts{unique: ix.Unique, nullsNotDist: ix.NullsNotDistinct, conOID: ix.ConstraintID}
	if ix.IsConstraint() {
		f.conType = "u"
	}
	for _, c := range ix.Columns {
		f.keys = append(f.keys, attnum(c.Col))
		var o int16
		if c.Desc {
			o |= 1 // INDOPTION_DESC
		}
		if c.NullsFirst {
			o |= 2 // INDOPTION_NULLS_FIRST
		}
		f.options = append(f.options, o)
	}
	for _, id := range ix.Include {
		f.include = append(f.include, attnum(id))
	}
	return f
}

// hasIndexes reports whether a table has an index (pg_class.relhasindex).
func hasIndexes(t *catalog.Table) bool {
	return t != nil && (len(t.PrimaryKey) > 0 || len(t.Indexes) > 0)
}

// relations lists every relation: user tables, views, materialized views
// and streaming tables, their indexes (primary key's first), the system views and
// pg_catalog's and information_schema's relations.
func (v *View) relations() []*relation {
	var out []*relation
	for _, t := range v.Cat.Tables() {
		r := &relation{oid: t.ID, name: t.Name, ns: t.SchemaID, table: t, comment: t.Comment}
		switch t.Kind {
		case catalog.KindView:
			r.kind = 'v'
		case catalog.KindMaterializedView:
			r.kind = 'm'
		case catalog.KindSequence:
			r.kind = 'S'
		default:
			r.kind = 'r'
		}
		for _, c := range t.Columns {
			col := column{name: c.Name, t: c.Type, notNull: c.NotNull, def: c.Default, comment: c.Comment, identity: c.Identity}
			if c.Identity != 0 {
				col.def = "" // an identity's sequence is no pg_attrdef default
			}
			if c.Generated != "" {
				col.def, col.generated = c.Generated, true
			}
			r.cols = append(r.cols, col)
		}
		out = append(out, r)
		col := func(id uint32) column {
			c := t.Columns[t.ColumnByID(id)]
			return column{name: c.Name, t: c.Type}
		}
		if len(t.PrimaryKey) > 0 {
			ix := &relation{oid: pkIndexOID(t.ID), name: pkName(t), ns: t.SchemaID, kind: 'i', indexOf: t}
			for _, id := range t.PrimaryKey {
				ix.cols = append(ix.cols, col(id))
			}
			out = append(out, ix)
		}
		for i := range t.Indexes {
			x := &t.Indexes[i]
			ix := &relation{oid: x.ID, name: x.Name, ns: t.SchemaID, kind: 'i', indexOf: t, index: x}
			for _, c := range x.Columns {
				ix.cols = append(ix.cols, col(c.Col))
			}
			for _, id := range x.Include {
				ix.cols = append(ix.cols, col(id))
			}
			out = append(out, ix)
		}
	}
	for _, t := range catalog.SystemViews() {
		r := &relation{oid: t.ID, name: t.Name, ns: nsSystem, kind: 'v'}
		for _, c := range t.Columns {
			r.cols = append(r.cols, column{name: c.Name, t: c.Type})
		}
		out = append(out, r)
	}
	for _, sr := range plan.SystemRelations() {
		ns := uint32(nsPgCatalog)
		if sr.Schema == "information_schema" {
			ns = nsInformationSchema
		}
		kind := byte('v')
		if _, ok := knownRelOIDs[sr.Name]; ok && sr.Schema == "pg_catalog" {
			kind = 'r'
		}
		r := &relation{oid: sr.OID, name: sr.Name, ns: ns, kind: kind}
		for _, c := range sr.Cols {
			r.cols = append(r.cols, column{name: c.Name, t: c.T})
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].oid < out[j].oid })
	return out
}

func (v *View) relation(oid uint32) *relation {
	for _, r := range v.relations() {
		if r.oid == oid {
			return r
		}
	}
	return nil
}

// pkName is the name of a table's primary-key constraint and index.
func pkName(t *catalog.Table) string { return t.Name + "_pkey" }

// searchPath is the session's search path as PostgreSQL searches it: its
// temporary schema, pg_catalog, then search_path.
func (v *View) searchPath() []string {
	path := []string{"pg_catalog"}
	if t := v.myTemp(); t != "" {
		path = []string{t, "pg_catalog"}
	}
	if v.F != nil {
		for _, p := range v.F.SearchPath {
			if p != "pg_catalog" && p != v.myTemp() {
				path = append(path, p)
			}
		}
	} else {
		path = append(path, "public")
	}
	return path
}

// myTemp is the session's temporary schema ("" when there is no session):
// the session puts it first on its search path.
func (v *View) myTemp() string {
	if v.F != nil && len(v.F.SearchPath) > 0 && catalog.IsTempSchema(v.F.SearchPath[0]) {
		return v.F.SearchPath[0]
	}
	return ""
}

// persistence is pg_class.relpersistence: 't' in a temporary schema.
func (v *View) persistence(r *relation) string {
	if ns, ok := v.namespaceName(r.ns); ok && catalog.IsTempSchema(ns) {
		return "t"
	}
	return "p"
}

// visible reports whether a relation is found by its bare name: the first
// schema of the search path holding that name is its own.
func (v *View) visible(r *relation) bool {
	rels := v.relations()
	for _, s := range v.searchPath() {
		ns, ok := v.namespaceOID(s)
		if !ok {
			continue
		}
		for _, o := range rels {
			if o.ns == ns && o.name == r.name {
				return o.oid == r.oid
			}
		}
	}
	return false
}

// qualifiedName is how regclass prints a relation: bare when visible.
func (v *View) qualifiedName(r *relation) string {
	if v.visible(r) {
		return quoteIdent(r.name)
	}
	ns, _ := v.namespaceName(r.ns)
	return quoteIdent(ns) + "." + quoteIdent(r.name)
}

// quoteIdent quotes an identifier when PostgreSQL's quote_ident would.
func quoteIdent(s string) string {
	ok := s != ""
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && (r >= '0' && r <= '9' || r == '$')) {
			ok = false
			break
		}
	}
	if ok && !reservedWords[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// reservedWords are the keywords quote_ident quotes (the common ones).
var reservedWords = map[string]bool{
	"all": true, "analyse": true, "analyze": true, "and": true, "any": true, "array": true, "as": true, "asc": true,
	"both": true, "case": true, "cast": true, "check": true, "collate": true, "column": true, "constraint": true,
	"create": true, "current_date": true, "current_role": true, "current_time": true, "current_timestamp": true,
	"current_user": true, "default": true, "deferrable": true, "desc": true, "distinct": true, "do": true,
	"else": true, "end": true, "except": true, "false": true, "fetch": true, "for": true, "foreign": true,
	"from": true, "grant": true, "group": true, "having": true, "in": true, "initially": true, "intersect": true,
	"into": true, "lateral": true, "leading": true, "limit": true, "localtime": true, "localtimestamp": true,
	"not": true, "null": true, "offset": true, "on": true, "only": true, "or": true, "order": true, "placing": true,
	"primary": true, "references": true, "returning": true, "select": true, "session_user": true, "some": true,
	"symmetric": true, "table": true, "then": true, "to": true, "trailing": true, "true": true, "union": true,
	"unique": true, "user": true, "using": true, "variadic": true, "when": true, "where": true, "window": true, "with": true,
}

// roleName is the name of a role OID.
func (v *View) roleName(oid uint32) (string, bool) {
	for _, r := range v.roles() {
		if r.oid == oid {
			return r.name, true
		}
	}
	return "", false
}

// role is one pg_authid row.
type role struct {
	oid                                         uint32
	name                                        string
	super, inherit, createRole, createDB, login bool
	connLimit                                   int32
	password                                    string
}

// roles lists the catalog's roles, and the connected user as a superuser
// when it is no role (without authentication any name may connect).
func (v *View) roles() []role {
	var out []role
	user := ""
	if v.F != nil {
		user = v.F.User
	}
	known := false
	for _, r := range v.Cat.Roles() {
		out = append(out, role{oid: r.ID, name: r.Name, super: r.Superuser, inherit: r.Inherit, createRole: r.CreateRole,
			createDB: r.CreateDB, login: r.Login, connLimit: r.ConnLimit, password: r.Password})
		known = known || r.Name == user
	}
	if !known && user != "" {
		out = append(out, role{oid: sessionRoleOID, name: user, super: true, inherit: true, createRole: true, createDB: true, login: true, connLimit: -1})
	}
	return out
}

// ownerOID is the owner of every object: the first superuser role (the
// bootstrap superuser is created first).
func (v *View) ownerOID() uint32 {
	owner := uint32(0)
	for _, r := range v.Cat.Roles() {
		if r.Superuser && (owner == 0 || r.ID < owner) {
			owner = r.ID
		}
	}
	if owner == 0 {
		return sessionRoleOID
	}
	return owner
}
