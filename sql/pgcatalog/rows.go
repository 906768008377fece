package pgcatalog

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

func init() {
	pg := func(name string, f rowsFunc) { generators["pg_catalog."+name] = f }
	is := func(name string, f rowsFunc) { generators["information_schema."+name] = f }

	pg("pg_namespace", func(v *View, b *builder) {
		for _, n := range v.namespaces() {
			owner := v.schemaOwner(n)
			var acl catalog.ACL
			if n.schema != nil {
				acl = n.schema.ACL
			}
			nspacl := v.aclOf(acl, owner, catalog.AllSchemaPrivs)
			if nspacl == nil && n.name == "public" {
				// Every role may use every schema here (USAGE is not
				// checked); public shows PostgreSQL 15's ACL, which pg_dump
				// takes as its default.
				o, _ := v.roleName(owner)
				nspacl = []string{quoteIdent(o) + "=UC/" + quoteIdent(o), "=U/" + quoteIdent(o)}
			}
			b.add(vals{"oid": n.oid, "nspname": n.name, "nspowner": owner, "nspacl": nspacl})
		}
	})
	pg("pg_class", func(v *View, b *builder) {
		// PostgreSQL checks foreign keys with triggers on both tables:
		// relhastriggers is what tells pg_dump and psql to look for them.
		fkTables := map[uint32]bool{}
		for _, t := range v.Cat.Tables() {
			for _, fk := range t.ForeignKeys {
				fkTables[t.ID], fkTables[fk.RefTable] = true, true
			}
		}
		for _, r := range v.relations() {
			owner := v.relOwner(r)
			row := vals{"oid": r.oid, "relname": r.name, "relnamespace": r.ns, "relowner": owner,
				"relacl":  v.acl(r.table, owner),
				"relkind": string(r.kind), "relnatts": len(r.cols), "relpersistence": v.persistence(r), "relreplident": "d",
				"relispopulated": populated(r.table), "relfilenode": r.oid, "reltuples": -1, "relpartbound": nil}
			switch r.kind {
			case 'S':
				row["relam"] = uint32(0)
				row["relreplident"] = "n"
			case 'i':
				row["relam"] = uint32(amBtree)
				row["relreplident"] = "n"
			case 'v':
				row["relreplident"] = "n"
				row["reltype"] = rowTypeOID(r.oid)
				row["relfilenode"] = uint32(0)
			default:
				row["relam"] = uint32(amHeap)
				row["reltype"] = rowTypeOID(r.oid)
				row["relhasindex"] = hasIndexes(r.table)
				if r.table != nil {
					row["relchecks"] = len(r.table.Checks)
					row["relhastriggers"] = fkTables[r.table.ID]
				}
			}
			// ANALYZE's row count and size (-1: never analyzed); an
			// index shows its table's.
			of := r.table
			if r.indexOf != nil {
				of = r.indexOf
			}
			if of != nil && r.kind != 'v' && r.kind != 'S' {
				if ts := v.tableStats(of.ID); ts != nil {
					row["reltuples"] = ts.Rows
					row["relpages"] = ts.Pages
					if r.indexOf != nil {
						row["relpages"] = indexPages(r, ts)
					}
				}
			}
			b.add(row)
		}
	})
	pg("pg_attribute", func(v *View, b *builder) {
		for _, r := range v.relations() {
			for i, c := range r.cols {
				var coll uint32
				if c.t.IsString() && c.t.Kind != types.KindName {
					coll = collDefault
				} else if c.t.Kind == types.KindName {
					coll = 950
				}
				ndims := 0
				if c.t.Kind == types.KindArray {
					ndims = 1
				}
				b.add(vals{"attrelid": r.oid, "attname": c.name, "atttypid": c.t.OID(), "attstattarget": -1,
					"attlen": c.t.Size(), "attnum": i + 1, "attndims": ndims, "attcacheoff": -1, "atttypmod": c.t.Modifier(),
					"attbyval": byVal(c.t), "attalign": "i", "attstorage": string(typStorage(c.t)), "attcompression": "",
					"attnotnull": c.notNull, "atthasdef": c.def != "", "attislocal": true, "attcollation": coll,
					"attidentity": identityChar(c.identity), "attgenerated": generatedChar(c.generated)})
			}
		}
	})
	pg("pg_attrdef", func(v *View, b *builder) {
		for _, r := range v.relations() {
			for i, c := range r.cols {
				if c.def != "" {
					b.add(vals{"oid": attrDefOID(r.oid, uint32(i+1)), "adrelid": r.oid, "adnum": i + 1, "adbin": c.def})
				}
			}
		}
	})
	pg("pg_type", func(v *View, b *builder) {
		procs := v.procOIDs()
		for _, t := range v.pgTypes() {
			b.add(vals{"oid": t.oid, "typname": t.name, "typnamespace": t.ns, "typowner": v.ownerOID(),
				"typlen": t.length, "typbyval": t.byVal, "typtype": string(t.typtype), "typcategory": string(t.category),
				"typispreferred": t.pref, "typisdefined": true, "typdelim": ",", "typrelid": t.relid, "typelem": t.elem,
				"typarray": t.array, "typinput": procs[t.input], "typoutput": procs[t.output],
				"typalign": string(t.align), "typstorage": string(t.storage), "typtypmod": -1, "typcollation": t.coll})
		}
	})
	pg("pg_index", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if r.kind != 'i' {
				continue
			}
			t := r.indexOf
			f := r.indexFacts()
			all := append(append([]int16(nil), f.keys...), f.include...)
			colls := make([]uint32, len(f.keys))
			for i, k := range f.keys {
				if ct := t.Columns[k-1].Type; ct.IsString() && ct.Kind != types.KindName {
					colls[i] = collDefault
				}
			}
			b.add(vals{"indexrelid": r.oid, "indrelid": t.ID, "indnatts": len(all), "indnkeyatts": len(f.keys),
				"indisunique": f.unique, "indnullsnotdistinct": f.nullsNotDist, "indisprimary": f.primary, "indimmediate": true,
				"indisvalid": true, "indisready": true,
				"indislive": true, "indkey": types.NewArray(types.KindInt2Vector, int2s(all)),
				"indcollation": types.NewArray(types.KindOidVector, oids(colls)), "indclass": types.NewArray(types.KindOidVector, oids(make([]uint32, len(f.keys)))),
				"indoption": types.NewArray(types.KindInt2Vector, int2s(f.options))})
		}
	})
	pg("pg_constraint", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if r.kind != 'i' {
				continue
			}
			t := r.indexOf
			f := r.indexFacts()
			if f.conOID == 0 {
				continue
			}
			b.add(vals{"oid": f.conOID, "conname": r.name, "connamespace": t.SchemaID, "contype": f.conType,
				"convalidated": true, "conrelid": t.ID, "conindid": r.oid, "confupdtype": " ", "confdeltype": " ",
				"confmatchtype": " ", "conislocal": true, "connoinherit": true, "conkey": f.keys})
		}
		for _, k := range v.tableConstraints() {
			b.add(v.constraintRow(k))
		}
	})
	pg("pg_sequence", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if sq := seqOf(r); sq != nil {
				b.add(vals{"seqrelid": r.oid, "seqtypid": seqTypeOID(sq.Type), "seqstart": sq.Start, "seqincrement": sq.Increment,
					"seqmax": sq.Max, "seqmin": sq.Min, "seqcache": sq.Cache, "seqcycle": sq.Cycle})
			}
		}
	})
	pg("pg_sequences", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if sq := seqOf(r); sq != nil {
				ns, _ := v.namespaceName(r.ns)
				var last any
				if v.F != nil && v.F.Sequences != nil {
					if n, ok, err := v.F.Sequences.Written(r.oid); err == nil && ok {
						last = n
					}
				}
				b.add(vals{"schemaname": ns, "sequencename": r.name, "sequenceowner": v.relOwnerName(r),
					"data_type": types.NewInt(types.KindRegtype, int64(seqTypeOID(sq.Type))), "start_value": sq.Start,
					"min_value": sq.Min, "max_value": sq.Max, "increment_by": sq.Increment, "cycle": sq.Cycle,
					"cache_size": sq.Cache, "last_value": last})
			}
		}
	})
	is("sequences", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if sq := seqOf(r); sq != nil {
				ns, _ := v.namespaceName(r.ns)
				prec := map[string]int{"smallint": 16, "integer": 32, "bigint": 64}[sq.Type]
				cycle := "NO"
				if sq.Cycle {
					cycle = "YES"
				}
				b.add(vals{"sequence_catalog": v.Cat.Database, "sequence_schema": ns, "sequence_name": r.name,
					"data_type": sq.Type, "numeric_precision": prec, "numeric_precision_radix": 2, "numeric_scale": 0,
					"start_value": strconv.FormatInt(sq.Start, 10), "minimum_value": strconv.FormatInt(sq.Min, 10),
					"maximum_value": strconv.FormatInt(sq.Max, 10), "increment": strconv.FormatInt(sq.Increment, 10), "cycle_option": cycle})
			}
		}
	})
	pg("pg_am", func(v *View, b *builder) {
		b.add(vals{"oid": uint32(amHeap), "amname": "heap", "amtype": "t"})
		b.add(vals{"oid": uint32(amBtree), "amname": "btree", "amtype": "i"})
	})
	pg("pg_database", func(v *View, b *builder) {
		b.add(vals{"oid": uint32(databaseOID), "datname": v.Cat.Database, "datdba": v.ownerOID(), "encoding": 6,
			"datlocprovider": "c", "datallowconn": true, "datconnlimit": -1, "dattablespace": uint32(1663),
			"datcollate": "C.UTF-8", "datctype": "C.UTF-8"})
	})
	pg("pg_tablespace", func(v *View, b *builder) {
		b.add(vals{"oid": uint32(1663), "spcname": "pg_default", "spcowner": v.ownerOID()})
		b.add(vals{"oid": uint32(1664), "spcname": "pg_global", "spcowner": v.ownerOID()})
	})
	// pg_authid (superusers only: relations.go) holds the verifiers;
	// pg_roles shows "********" for every role, as PostgreSQL does.
	authid := func(v *View, b *builder, pg bool) {
		for _, r := range v.roles() {
			pw := any("********")
			if pg {
				pw = nil
				if r.password != "" {
					pw = r.password
				}
			}
			// The bootstrap superuser has every attribute, as initdb's
			// does; mvserver has neither replication nor row security.
			boot := r.oid == v.ownerOID()
			b.add(vals{"oid": r.oid, "rolname": r.name, "rolsuper": r.super, "rolinherit": r.inherit,
				"rolcreaterole": r.createRole, "rolcreatedb": r.createDB, "rolcanlogin": r.login,
				"rolreplication": boot, "rolbypassrls": boot, "rolconnlimit": r.connLimit, "rolpassword": pw})
		}
	}
	pg("pg_authid", func(v *View, b *builder) { authid(v, b, true) })
	pg("pg_roles", func(v *View, b *builder) { authid(v, b, false) })
	pg("pg_shadow", func(v *View, b *builder) {
		for _, r := range v.roles() {
			if !r.login {
				continue
			}
			pw := any(nil)
			if r.password != "" {
				pw = r.password
			}
			boot := r.oid == v.ownerOID()
			b.add(vals{"usename": r.name, "usesysid": r.oid, "usecreatedb": r.createDB, "usesuper": r.super,
				"userepl": boot, "usebypassrls": boot, "passwd": pw})
		}
	})
	pg("pg_user", func(v *View, b *builder) {
		for _, r := range v.roles() {
			if !r.login {
				continue
			}
			boot := r.oid == v.ownerOID()
			b.add(vals{"usename": r.name, "usesysid": r.oid, "usecreatedb": r.createDB, "usesuper": r.super,
				"userepl": boot, "usebypassrls": boot, "passwd": "********"})
		}
	})
	// Role memberships (catalog/membership.go); grantor 0 is the
	// bootstrap superuser.
	pg("pg_auth_members", func(v *View, b *builder) {
		for _, r := range v.Cat.Roles() {
			for _, m := range r.MemberOf {
				grantor := m.Grantor
				if grantor == 0 {
					grantor = v.ownerOID()
				}
				b.add(vals{"roleid": m.Role, "member": r.ID, "grantor": grantor, "admin_option": m.Admin})
			}
		}
	})
	pg("pg_description", func(v *View, b *builder) {
		if oid, ok := v.namespaceOID("public"); ok {
			// initdb's comment, which pg_dump leaves out of a dump.
			b.add(vals{"objoid": oid, "classoid": uint32(classPgNamespace), "objsubid": 0, "description": "standard public schema"})
		}
		for _, r := range v.relations() {
			if r.comment != "" {
				b.add(vals{"objoid": r.oid, "classoid": uint32(classPgClass), "objsubid": 0, "description": r.comment})
			}
			for i, c := range r.cols {
				if c.comment != "" {
					b.add(vals{"objoid": r.oid, "classoid": uint32(classPgClass), "objsubid": i + 1, "description": c.comment})
				}
			}
		}
	})
	pg("pg_settings", func(v *View, b *builder) {
		if v.F == nil || v.F.Settings == nil {
			return
		}
		for _, s := range v.F.Settings() {
			if s.Hidden {
				continue
			}
			ctx, vartype, category := s.Context, s.VarType, s.Category
			if ctx == "" {
				ctx = "user"
				if s.ReadOnly {
					ctx = "internal"
				}
			}
			if vartype == "" {
				vartype = "string"
			}
			if category == "" {
				category = "Ungrouped"
			}
			setting := s.Setting
			if setting == "" {
				setting = s.Value
			}
			source := "default"
			if setting != s.Default {
				source = "session"
			}
			var enumvals any
			if s.EnumVals != nil {
				ev := make([]types.Datum, len(s.EnumVals))
				for i, e := range s.EnumVals {
					ev[i] = types.NewText(e)
				}
				enumvals = types.NewArrayOf(ev...)
			}
			b.add(vals{"name": s.Name, "setting": setting, "unit": nullIfEmpty(s.Unit), "category": category, "short_desc": s.Desc,
				"context": ctx, "vartype": vartype, "source": source, "min_val": nullIfEmpty(s.Min), "max_val": nullIfEmpty(s.Max),
				"enumvals": enumvals, "boot_val": s.Default, "reset_val": s.Default, "pending_restart": false})
		}
	})
	pg("pg_proc", func(v *View, b *builder) {
		procs := v.procOIDs()
		names := make([]string, 0, len(procs))
		for n := range procs {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			row := vals{"oid": procs[n], "proname": n, "pronamespace": uint32(nsPgCatalog), "proowner": v.ownerOID(),
				"prolang": uint32(langInternal), "procost": 1.0, "prokind": "f", "provolatile": "i", "proparallel": "s",
				"proargtypes": types.NewArray(types.KindOidVector, nil), "prosrc": n}
			if f, ok := funcs.Lookup(n); ok {
				switch {
				case f.Agg != nil:
					row["prokind"] = "a"
				case f.Window != nil:
					row["prokind"] = "w"
				}
				if !f.Deterministic {
					row["provolatile"] = "v"
				}
			}
			if args, ret, strict, ok := procSignature(n); ok {
				row["pronargs"] = len(args)
				row["proargtypes"] = types.NewArray(types.KindOidVector, oids(args))
				row["proisstrict"] = strict
				row["prorettype"] = ret
			}
			b.add(row)
		}
	})
	pg("pg_language", func(v *View, b *builder) {
		b.add(vals{"oid": uint32(langInternal), "lanname": "internal", "lanowner": v.ownerOID()})
		b.add(vals{"oid": uint32(langSQL), "lanname": "sql", "lanowner": v.ownerOID(), "lanpltrusted": true})
	})
	pg("pg_collation", func(v *View, b *builder) {
		b.add(vals{"oid": uint32(collDefault), "collname": "default", "collnamespace": uint32(nsPgCatalog),
			"collowner": v.ownerOID(), "collprovider": "d", "collisdeterministic": true, "collencoding": -1})
		b.add(vals{"oid": uint32(950), "collname": "C", "collnamespace": uint32(nsPgCatalog), "collowner": v.ownerOID(),
			"collprovider": "c", "collisdeterministic": true, "collencoding": -1, "collcollate": "C", "collctype": "C"})
	})
	pg("pg_tables", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if r.kind == 'r' {
				ns, _ := v.namespaceName(r.ns)
				b.add(vals{"schemaname": ns, "tablename": r.name, "tableowner": v.relOwnerName(r), "tablespace": nil,
					"hasindexes": hasIndexes(r.table)})
			}
		}
	})
	pg("pg_views", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if r.kind == 'v' {
				ns, _ := v.namespaceName(r.ns)
				b.add(vals{"schemaname": ns, "viewname": r.name, "viewowner": v.relOwnerName(r), "definition": v.viewDef(r)})
			}
		}
	})
	pg("pg_matviews", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if r.kind == 'm' {
				ns, _ := v.namespaceName(r.ns)
				b.add(vals{"schemaname": ns, "matviewname": r.name, "matviewowner": v.relOwnerName(r), "tablespace": nil,
					"hasindexes": hasIndexes(r.table), "ispopulated": populated(r.table), "definition": v.viewDef(r)})
			}
		}
	})
	pg("pg_indexes", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if r.kind == 'i' {
				ns, _ := v.namespaceName(r.ns)
				b.add(vals{"schemaname": ns, "tablename": r.indexOf.Name, "indexname": r.name, "tablespace": nil, "indexdef": v.indexDef(r, 0, false)})
			}
		}
	})

	is("schemata", func(v *View, b *builder) {
		for _, n := range v.namespaces() {
			owner, _ := v.roleName(v.schemaOwner(n))
			b.add(vals{"catalog_name": v.Cat.Database, "schema_name": n.name, "schema_owner": owner})
		}
	})
	is("tables", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if r.kind == 'i' || r.kind == 'S' {
				continue
			}
			ns, _ := v.namespaceName(r.ns)
			if catalog.IsTempSchema(ns) && ns != v.myTemp() {
				continue // another session's temporary table
			}
			typ, insertable := "BASE TABLE", "YES"
			switch {
			case catalog.IsTempSchema(ns):
				typ = "LOCAL TEMPORARY"
				if r.kind == 'v' {
					insertable = "NO"
				}
			case r.kind == 'v':
				typ, insertable = "VIEW", "NO"
			case r.kind == 'm':
				// information_schema leaves materialized views out in
				// PostgreSQL; BI tools find them through it here.
				typ, insertable = "MATERIALIZED VIEW", "NO"
			case r.table != nil && r.table.Kind == catalog.KindStreamingTable:
				typ, insertable = "STREAMING TABLE", "NO"
			}
			b.add(vals{"table_catalog": v.Cat.Database, "table_schema": ns, "table_name": r.name, "table_type": typ,
				"is_insertable_into": insertable, "is_typed": "NO", "self_referencing_column_name": nil,
				"reference_generation": nil, "user_defined_type_catalog": nil, "user_defined_type_schema": nil,
				"user_defined_type_name": nil, "commit_action": nil})
		}
	})
	is("columns", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if r.kind == 'i' {
				continue
			}
			ns, _ := v.namespaceName(r.ns)
			for i, c := range r.cols {
				nullable := "YES"
				if c.notNull {
					nullable = "NO"
				}
				row := vals{"table_catalog": v.Cat.Database, "table_schema": ns, "table_name": r.name, "column_name": c.name,
					"ordinal_position": i + 1, "is_nullable": nullable, "data_type": dataType(c.t),
					"udt_catalog": v.Cat.Database, "udt_schema": "pg_catalog", "udt_name": udtName(c.t),
					"dtd_identifier": strconv.Itoa(i + 1), "is_self_referencing": "NO", "is_identity": "NO",
					"identity_cycle": "NO", "is_generated": "NEVER", "is_updatable": yesNo(r.kind == 'r'),
					"character_set_catalog": nil, "character_set_schema": nil, "character_set_name": nil,
					"collation_catalog": nil, "collation_schema": nil, "collation_name": nil, "domain_catalog": nil,
					"domain_schema": nil, "domain_name": nil, "scope_catalog": nil, "scope_schema": nil, "scope_name": nil,
					"character_maximum_length": nil, "character_octet_length": nil, "numeric_precision": nil,
					"numeric_precision_radix": nil, "numeric_scale": nil, "datetime_precision": nil,
					"interval_precision": nil, "maximum_cardinality": nil}
				switch {
				case c.generated:
					row["is_generated"], row["generation_expression"] = "ALWAYS", c.def
				case c.identity != 0:
					row["is_identity"], row["identity_generation"] = "YES", map[byte]string{'a': "ALWAYS", 'd': "BY DEFAULT"}[c.identity]
					row["identity_cycle"] = "NO"
				case c.def != "":
					row["column_default"] = c.def
				}
				for k, x := range typeFacts(c.t) {
					row[k] = x
				}
				b.add(row)
			}
		}
	})
	is("views", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if r.kind == 'v' && r.table != nil {
				ns, _ := v.namespaceName(r.ns)
				b.add(vals{"table_catalog": v.Cat.Database, "table_schema": ns, "table_name": r.name,
					"view_definition": v.viewDef(r), "check_option": "NONE", "is_updatable": "NO", "is_insertable_into": "NO",
					"is_trigger_updatable": "NO", "is_trigger_deletable": "NO", "is_trigger_insertable_into": "NO"})
			}
		}
	})
	is("table_constraints", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if r.kind == 'i' {
				f := r.indexFacts()
				if f.conOID == 0 {
					continue
				}
				ns, _ := v.namespaceName(r.ns)
				typ, nullsDistinct := "PRIMARY KEY", any(nil)
				if f.conType == "u" {
					typ, nullsDistinct = "UNIQUE", yesNo(!f.nullsNotDist)
				}
				b.add(vals{"constraint_catalog": v.Cat.Database, "constraint_schema": ns, "constraint_name": r.name,
					"table_catalog": v.Cat.Database, "table_schema": ns, "table_name": r.indexOf.Name,
					"constraint_type": typ, "is_deferrable": "NO", "initially_deferred": "NO", "enforced": "YES", "nulls_distinct": nullsDistinct})
			}
		}
		for _, k := range v.tableConstraints() {
			ns, _ := v.namespaceName(k.t.SchemaID)
			typ, deferrable, deferred := "CHECK", false, false
			if k.fk != nil {
				typ, deferrable, deferred = "FOREIGN KEY", k.fk.Deferrable, k.fk.Deferred
			}
			b.add(vals{"constraint_catalog": v.Cat.Database, "constraint_schema": ns, "constraint_name": k.name(),
				"table_catalog": v.Cat.Database, "table_schema": ns, "table_name": k.t.Name,
				"constraint_type": typ, "is_deferrable": yesNo(deferrable), "initially_deferred": yesNo(deferred), "enforced": "YES", "nulls_distinct": nil})
		}
		// NOT NULL columns are CHECK constraints there too.
		for _, r := range v.relations() {
			if r.kind != 'r' || r.table == nil {
				continue
			}
			ns, _ := v.namespaceName(r.ns)
			for i, c := range r.cols {
				if c.notNull {
					b.add(vals{"constraint_catalog": v.Cat.Database, "constraint_schema": ns, "constraint_name": notNullName(r.ns, r.oid, i+1),
						"table_catalog": v.Cat.Database, "table_schema": ns, "table_name": r.name,
						"constraint_type": "CHECK", "is_deferrable": "NO", "initially_deferred": "NO", "enforced": "YES", "nulls_distinct": nil})
				}
			}
		}
	})
	is("key_column_usage", func(v *View, b *builder) {
		for _, r := range v.relations() {
			if r.kind == 'i' {
				f := r.indexFacts()
				if f.conOID == 0 {
					continue
				}
				ns, _ := v.namespaceName(r.ns)
				for i, c := range r.cols[:len(f.keys)] {
					b.add(vals{"constraint_catalog": v.Cat.Database, "constraint_schema": ns, "constraint_name": r.name,
						"table_catalog": v.Cat.Database, "table_schema": ns, "table_name": r.indexOf.Name,
						"column_name": c.name, "ordinal_position": i + 1, "position_in_unique_constraint": nil})
				}
			}
		}
		for _, k := range v.tableConstraints() {
			if k.fk == nil {
				continue
			}
			ns, _ := v.namespaceName(k.t.SchemaID)
			for i, id := range k.fk.Cols {
				// position_in_unique_constraint: where the referenced
				// column sits in the unique key it references.
				var pos any
				if k.parent != nil {
					if ix, _ := refIndex(k.parent, k.fk.RefCols); ix != 0 {
						key := k.parent.PrimaryKey
						if ix != pkIndexOID(k.parent.ID) {
							key = k.parent.IndexByID(ix).ColumnIDs()
						}
						for j, kid := range key {
							if kid == k.fk.RefCols[i] {
								pos = j + 1
							}
						}
					}
				}
				b.add(vals{"constraint_catalog": v.Cat.Database, "constraint_schema": ns, "constraint_name": k.name(),
					"table_catalog": v.Cat.Database, "table_schema": ns, "table_name": k.t.Name,
					"column_name": k.t.Columns[k.t.ColumnByID(id)].Name, "ordinal_position": i + 1, "position_in_unique_constraint": pos})
			}
		}
	})
}

func int2s(v []int16) []types.Datum {
	out := make([]types.Datum, len(v))
	for i, n := range v {
		out[i] = types.NewInt(types.KindInt2, int64(n))
	}
	return out
}

func oids(v []uint32) []types.Datum {
	out := make([]types.Datum, len(v))
	for i, n := range v {
		out[i] = types.NewInt(types.KindOid, int64(n))
	}
	return out
}

func byVal(t types.T) bool {
	switch t.Size() {
	case 1, 2, 4, 8:
		return true
	}
	return false
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

// ownerName is the owner every object has: the bootstrap superuser.
// relOwner is a relation's owner: its creator, or the bootstrap superuser
// for the built-in relations and owner 0.
func (v *View) relOwner(r *relation) uint32 {
	if r.table != nil && r.table.Owner != 0 {
		return r.table.Owner
	}
	return v.ownerOID()
}

// relOwnerName is relOwner's name ("" for a dropped role).
func (v *View) relOwnerName(r *relation) string {
	n, _ := v.roleName(v.relOwner(r))
	return n
}

func (v *View) ownerName() string {
	n, _ := v.roleName(v.ownerOID())
	return n
}

// procOIDs gives every function name pg_proc lists an OID: the registry's
// functions and the types' I/O functions, numbered in name order from 8000
// (stable for a given build).
func (v *View) procOIDs() map[string]uint32 {
	set := map[string]bool{"array_in": true, "array_out": true}
	for _, t := range baseTypes {
		set[t.input], set[t.output] = true, true
	}
	for _, f := range funcs.All() {
		set[f.Name] = true
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make(map[string]uint32, len(names))
	for i, n := range names {
		out[n] = uint32(8000 + i)
	}
	return out
}

// dataType is information_schema's data_type of a column type.
func dataType(t types.T) string {
	if t.Kind == types.KindArray {
		return "ARRAY"
	}
	if t.Kind == types.KindName || t.Kind == types.KindInternalChar || t.IsOidAlias() || t.Kind == types.KindInt2Vector || t.Kind == types.KindOidVector {
		return "USER-DEFINED"
	}
	return types.T{Kind: t.Kind}.String()
}

// udtName is the pg_type name of a column's type.
func udtName(t types.T) string {
	for _, b := range baseTypes {
		if b.oid == t.OID() {
			return b.name
		}
		if b.array == t.OID() {
			return "_" + b.name
		}
	}
	return t.String()
}

// typeFacts are information_schema.columns' length, precision and scale.
func typeFacts(t types.T) vals {
	switch t.Kind {
	case types.KindVarchar, types.KindChar:
		if t.Width > 0 {
			return vals{"character_maximum_length": int(t.Width), "character_octet_length": int(t.Width) * 4}
		}
		return vals{"character_octet_length": 1073741824}
	case types.KindText:
		return vals{"character_octet_length": 1073741824}
	case types.KindInt2:
		return vals{"numeric_precision": 16, "numeric_precision_radix": 2, "numeric_scale": 0}
	case types.KindInt4:
		return vals{"numeric_precision": 32, "numeric_precision_radix": 2, "numeric_scale": 0}
	case types.KindInt8:
		return vals{"numeric_precision": 64, "numeric_precision_radix": 2, "numeric_scale": 0}
	case types.KindFloat4:
		return vals{"numeric_precision": 24, "numeric_precision_radix": 2}
	case types.KindFloat8:
		return vals{"numeric_precision": 53, "numeric_precision_radix": 2}
	case types.KindNumeric:
		if t.Precision > 0 {
			return vals{"numeric_precision": int(t.Precision), "numeric_precision_radix": 10, "numeric_scale": int(t.Scale)}
		}
		return vals{"numeric_precision_radix": 10}
	case types.KindDate:
		return vals{"datetime_precision": 0}
	case types.KindTimestamp, types.KindTimestampTZ, types.KindInterval:
		return vals{"datetime_precision": 6}
	}
	return nil
}

// seqOf is the definition of a sequence relation (nil for others).
func seqOf(r *relation) *catalog.Sequence {
	if r.kind != 'S' || r.table == nil {
		return nil
	}
	return r.table.Sequence
}

func seqTypeOID(typ string) uint32 {
	switch typ {
	case "smallint":
		return types.OidInt2
	case "integer":
		return types.OidInt4
	}
	return types.OidInt8
}

// acl renders a relation's grants as pg_class.relacl: NULL when it has
// none (the owner's default rights), else {grantee=privs/grantor,…} with
// the owner's own entry first, PUBLIC as an empty grantee.
func (v *View) acl(t *catalog.Table, owner uint32) any {
	if t == nil {
		return nil
	}
	return v.aclOf(t.ACL, owner, t.AllPrivs())
}

// aclOf renders an object's grants as aclitem[] text, the owner's implicit
// privileges (all) first; NULL when nothing was granted, as PostgreSQL
// shows an object's default privileges.
func (v *View) aclOf(acl catalog.ACL, owner uint32, all string) any {
	if len(acl) == 0 {
		return nil
	}
	ownerName, _ := v.roleName(owner)
	items := []string{quoteIdent(ownerName) + "=" + aclLetters(all) + "/" + quoteIdent(ownerName)}
	for _, a := range acl {
		who := ""
		if a.Grantee != 0 {
			n, ok := v.roleName(a.Grantee)
			if !ok {
				continue // a dropped role
			}
			who = quoteIdent(n)
		}
		items = append(items, who+"="+aclLetters(a.Privs)+"/"+quoteIdent(ownerName))
	}
	return items
}

// aclLetters orders privilege letters as PostgreSQL prints them.
func aclLetters(privs string) string {
	var b strings.Builder
	for _, l := range "arwdDxtmUC" {
		if strings.ContainsRune(privs, l) {
			b.WriteRune(l)
		}
	}
	return b.String()
}

// typStorage is a type's pg_type.typstorage, which its columns take.
func typStorage(t types.T) byte {
	if t.IsArray() && t.Kind == types.KindArray {
		return 'x'
	}
	for _, b := range baseTypes {
		if b.oid == t.OID() {
			return b.storage
		}
	}
	return 'p'
}

// populated is pg_class.relispopulated: false for a materialized view
// created or refreshed WITH NO DATA.
func populated(t *catalog.Table) bool {
	return t == nil || t.Dataset == nil || !t.Dataset.Unpopulated
}

// nullIfEmpty is NULL for "", else the text.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// indexPages estimates an index's size in pages from its table's
// statistics: a B-tree entry is an 8-byte header, its key (the columns'
// average widths) and a 4-byte line pointer, leaf pages 90% full, plus
// the metapage.
func indexPages(r *relation, ts *catalog.TableStats) int32 {
	width := 12.0
	for _, c := range r.cols {
		if i := r.indexOf.ColumnIndex(c.name); i >= 0 {
			if cs := ts.Column(r.indexOf.Columns[i]); cs != nil {
				width += float64(cs.AvgWidth)
			}
		}
	}
	return int32(math.Ceil(ts.Rows*width/(8192*0.9))) + 1
}

func identityChar(b byte) string {
	if b == 0 {
		return ""
	}
	return string(rune(b))
}

func generatedChar(stored bool) string {
	if stored {
		return "s"
	}
	return ""
}
