package pgcatalog

import (
	"fmt"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// viewDef is pg_get_viewdef's text of a view or materialized view.
func (v *View) viewDef(r *relation) any {
	if r.table == nil {
		return nil
	}
	q := r.table.Query
	if r.table.Dataset != nil && r.table.Dataset.QueryText != "" {
		q = r.table.Dataset.QueryText
	}
	q = strings.TrimSpace(q)
	if q == "" {
		return nil
	}
	q = strings.TrimSpace(v.qualifyText(strings.TrimSuffix(q, ";"), false, r.table.DependsOn, r.table.SchemaID))
	if !strings.HasSuffix(q, ";") {
		q += ";"
	}
	return " " + q
}

// indexDef is pg_get_indexdef(index, col, pretty): the CREATE INDEX of an
// index, or the name of its col-th column. Pretty names the table bare
// when the search path finds it.
func (v *View) indexDef(r *relation, col int, pretty bool) string {
	if col > 0 {
		if col <= len(r.cols) {
			return quoteIdent(r.cols[col-1].name)
		}
		return ""
	}
	ns, _ := v.namespaceName(r.ns)
	f := r.indexFacts()
	keys := make([]string, len(f.keys))
	for i := range f.keys {
		keys[i] = quoteIdent(r.cols[i].name)
		desc, nullsFirst := f.options[i]&1 != 0, f.options[i]&2 != 0
		if desc {
			keys[i] += " DESC"
			if !nullsFirst {
				keys[i] += " NULLS LAST"
			}
		} else if nullsFirst {
			keys[i] += " NULLS FIRST"
		}
	}
	unique := ""
	if f.unique {
		unique = "UNIQUE "
	}
	table := quoteIdent(ns) + "." + quoteIdent(r.indexOf.Name)
	if pretty {
		if tr := v.relation(r.indexOf.ID); tr != nil {
			table = v.qualifiedName(tr)
		}
	}
	def := fmt.Sprintf("CREATE %sINDEX %s ON %s USING btree (%s)", unique, quoteIdent(r.name), table, strings.Join(keys, ", "))
	if len(f.include) > 0 {
		def += " INCLUDE (" + strings.Join(colNames(r.cols[len(f.keys):]), ", ") + ")"
	}
	if f.nullsNotDist {
		def += " NULLS NOT DISTINCT"
	}
	return def
}

// constraintDef is pg_get_constraintdef of a primary key or UNIQUE
// constraint (its index relation r).
func constraintDef(r *relation) string {
	f := r.indexFacts()
	keys := strings.Join(colNames(r.cols[:len(f.keys)]), ", ")
	if f.primary {
		return "PRIMARY KEY (" + keys + ")"
	}
	def := "UNIQUE "
	if f.nullsNotDist {
		def += "NULLS NOT DISTINCT "
	}
	def += "(" + keys + ")"
	if len(f.include) > 0 {
		def += " INCLUDE (" + strings.Join(colNames(r.cols[len(f.keys):]), ", ") + ")"
	}
	return def
}

func colNames(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = quoteIdent(c.name)
	}
	return out
}

// The catalog functions (R-P3). Each reads the statement's catalog through
// funcs.Ctx.Catalog; without one (a refresh) they answer as for an unknown
// object.
func init() {
	reg := func(name string, deterministic bool, ovs ...*funcs.Overload) {
		funcs.Register(&funcs.Func{Name: name, Deterministic: deterministic, Overloads: ovs})
	}
	ret := func(t types.T) func([]types.T) types.T { return func([]types.T) types.T { return t } }
	oid := types.Oid
	withView := func(t types.T, params []types.T, fn func(v *View, a []types.Datum) types.Datum) *funcs.Overload {
		return &funcs.Overload{Params: params, Ret: ret(t), NullStrict: true, Fn: func(c *funcs.Ctx, a []types.Datum) (types.Datum, error) {
			v := ViewFor(c)
			if v == nil {
				return types.NullDatum, nil
			}
			return fn(v, a), nil
		}}
	}
	relBool := func(fn func(v *View, r *relation) bool) func(v *View, a []types.Datum) types.Datum {
		return func(v *View, a []types.Datum) types.Datum {
			r := v.relation(uint32(a[0].I))
			if r == nil {
				return types.NullDatum
			}
			return types.NewBool(fn(v, r))
		}
	}
	// pg_my_temp_schema is the session's temporary schema, 0 before its
	// first temporary table.
	reg("pg_my_temp_schema", false, withView(oid, nil, func(v *View, _ []types.Datum) types.Datum {
		n, _ := v.namespaceOID(v.myTemp())
		return types.NewInt(types.KindOid, int64(n))
	}))
	reg("pg_is_other_temp_schema", false, withView(types.Bool, []types.T{oid}, func(v *View, a []types.Datum) types.Datum {
		n, ok := v.namespaceName(uint32(a[0].I))
		return types.NewBool(ok && catalog.IsTempSchema(n) && n != v.myTemp())
	}))
	reg("pg_table_is_visible", false, withView(types.Bool, []types.T{oid}, relBool(func(v *View, r *relation) bool { return v.visible(r) })))
	reg("pg_type_is_visible", false, withView(types.Bool, []types.T{oid}, func(v *View, a []types.Datum) types.Datum {
		t, ok := v.pgType(uint32(a[0].I))
		if !ok {
			return types.NullDatum
		}
		if t.relid != 0 {
			if r := v.relation(t.relid); r != nil {
				return types.NewBool(v.visible(r))
			}
		}
		return types.NewBool(true)
	}))
	reg("pg_function_is_visible", false, withView(types.Bool, []types.T{oid}, func(*View, []types.Datum) types.Datum { return types.NewBool(true) }))
	reg("pg_get_userbyid", false, withView(types.Name, []types.T{oid}, func(v *View, a []types.Datum) types.Datum {
		if n, ok := v.roleName(uint32(a[0].I)); ok {
			return types.NewString(types.KindName, n)
		}
		return types.NewString(types.KindName, fmt.Sprintf("unknown (OID=%d)", a[0].I))
	}))
	reg("format_type", false, &funcs.Overload{Params: []types.T{oid, types.Int4}, Ret: ret(types.Text),
		Fn: func(c *funcs.Ctx, a []types.Datum) (types.Datum, error) {
			if a[0].IsNull() {
				return types.NullDatum, nil
			}
			typmod := int32(-1)
			if !a[1].IsNull() {
				typmod = int32(a[1].I)
			}
			v := ViewFor(c)
			if v == nil {
				if t, ok := types.FromOID(uint32(a[0].I)); ok {
					return types.NewText(decorate(t, typmod).String()), nil
				}
				return types.NewText("???"), nil
			}
			return types.NewText(v.formatType(uint32(a[0].I), typmod)), nil
		}})
	// Defaults and expressions are kept as SQL text: pg_get_expr returns it.
	// A bare sequence name in nextval('…') is qualified as the relation
	// names of views are (qualify.go).
	getExpr := func(c *funcs.Ctx, a []types.Datum) (types.Datum, error) {
		text := a[0].S
		if v := ViewFor(c); v != nil {
			if t, ok := v.Cat.Table(uint32(a[1].I)); ok {
				text = v.qualifyText(text, true, nil, t.SchemaID)
			}
		}
		return types.NewText(text), nil
	}
	reg("pg_get_expr", false,
		&funcs.Overload{Params: []types.T{types.Text, oid}, Ret: ret(types.Text), NullStrict: true, Fn: getExpr},
		&funcs.Overload{Params: []types.T{types.Text, oid, types.Bool}, Ret: ret(types.Text), NullStrict: true, Fn: getExpr})
	indexDef := func(v *View, a []types.Datum) types.Datum {
		r := v.relation(uint32(a[0].I))
		if r == nil || r.kind != 'i' {
			return types.NullDatum
		}
		col, pretty := 0, false
		if len(a) > 2 {
			col, pretty = int(a[1].I), a[2].Bool()
		}
		return types.NewText(v.indexDef(r, col, pretty))
	}
	reg("pg_get_indexdef", false, withView(types.Text, []types.T{oid}, indexDef),
		withView(types.Text, []types.T{oid, types.Int4, types.Bool}, indexDef))
	conDef := func(v *View, a []types.Datum) types.Datum {
		for _, r := range v.relations() {
			if r.kind == 'i' {
				if f := r.indexFacts(); f.conOID != 0 && f.conOID == uint32(a[0].I) {
					return types.NewText(constraintDef(r))
				}
			}
		}
		if k := v.constraintByOID(uint32(a[0].I)); k != nil {
			return types.NewText(k.def(v, len(a) > 1 && a[1].Bool()))
		}
		return types.NullDatum
	}
	reg("pg_get_constraintdef", false, withView(types.Text, []types.T{oid}, conDef), withView(types.Text, []types.T{oid, types.Bool}, conDef))
	viewDef := func(v *View, a []types.Datum) types.Datum {
		r := v.relation(uint32(a[0].I))
		if r == nil {
			return types.NullDatum
		}
		return datum(v.viewDef(r), types.Text)
	}
	reg("pg_get_viewdef", false, withView(types.Text, []types.T{oid}, viewDef),
		withView(types.Text, []types.T{oid, types.Bool}, viewDef), withView(types.Text, []types.T{oid, types.Int4}, viewDef))
	objDesc := func(v *View, a []types.Datum) types.Datum {
		if r := v.relation(uint32(a[0].I)); r != nil && r.comment != "" {
			return types.NewText(r.comment)
		}
		return types.NullDatum
	}
	reg("obj_description", false, withView(types.Text, []types.T{oid}, objDesc), withView(types.Text, []types.T{oid, types.Name}, objDesc))
	reg("shobj_description", false, withView(types.Text, []types.T{oid, types.Name}, func(*View, []types.Datum) types.Datum { return types.NullDatum }))
	reg("col_description", false, withView(types.Text, []types.T{oid, types.Int4}, func(v *View, a []types.Datum) types.Datum {
		r := v.relation(uint32(a[0].I))
		n := int(a[1].I)
		if r == nil || n < 1 || n > len(r.cols) || r.cols[n-1].comment == "" {
			return types.NullDatum
		}
		return types.NewText(r.cols[n-1].comment)
	}))
	reg("current_schema", false, &funcs.Overload{Ret: ret(types.Name), Fn: func(c *funcs.Ctx, _ []types.Datum) (types.Datum, error) {
		if v := ViewFor(c); v != nil {
			for _, s := range v.searchPath() {
				if s == "pg_catalog" || catalog.IsTempSchema(s) {
					continue // searched implicitly
				}
				if _, ok := v.Cat.Schema(s); ok {
					return types.NewString(types.KindName, s), nil
				}
			}
		}
		return types.NullDatum, nil
	}})
	reg("current_schemas", false, &funcs.Overload{Params: []types.T{types.Bool}, Ret: ret(types.ArrayOf(types.Name)), NullStrict: true,
		Fn: func(c *funcs.Ctx, a []types.Datum) (types.Datum, error) {
			var out []types.Datum
			if v := ViewFor(c); v != nil {
				for i, s := range v.searchPath() {
					if a[0].I == 0 && (s == "pg_catalog" && i <= 1 || s == v.myTemp()) {
						continue // implicit schemas only when asked for
					}
					if _, ok := v.namespaceOID(s); ok {
						out = append(out, types.NewString(types.KindName, s))
					}
				}
			}
			return types.NewArray(types.KindArray, out), nil
		}})
	reg("pg_encoding_to_char", true, &funcs.Overload{Params: []types.T{types.Int4}, Ret: ret(types.Name), NullStrict: true,
		Fn: func(_ *funcs.Ctx, a []types.Datum) (types.Datum, error) {
			name := map[int64]string{0: "SQL_ASCII", 6: "UTF8"}[a[0].I]
			return types.NewString(types.KindName, name), nil
		}})
	reg("pg_char_to_encoding", true, &funcs.Overload{Params: []types.T{types.Name}, Ret: ret(types.Int4), NullStrict: true,
		Fn: func(_ *funcs.Ctx, a []types.Datum) (types.Datum, error) {
			switch strings.ToUpper(a[0].S) {
			case "UTF8", "UTF-8":
				return types.NewInt4(6), nil
			case "SQL_ASCII":
				return types.NewInt4(0), nil
			}
			return types.NewInt4(-1), nil
		}})
	reg("pg_size_pretty", true, &funcs.Overload{Params: []types.T{types.Int8}, Ret: ret(types.Text), NullStrict: true,
		Fn: func(_ *funcs.Ctx, a []types.Datum) (types.Datum, error) {
			return types.NewText(sizePretty(a[0].I)), nil
		}})
	// Privileges on relations are real (GRANT, ownership, superuser);
	// mvserver has none on databases, functions, sequences, tablespaces or
	// role membership, which every role may use.
	tablePriv := func(c *funcs.Ctx, a []types.Datum) (types.Datum, error) {
		v, user, r, a, err := relationPrivilegeArgs(c, a)
		if v == nil || err != nil {
			return types.NullDatum, err
		}
		if r.table == nil {
			return types.NewBool(true), nil // built-in relations: readable by all
		}
		privs, err := privilegeList(a[len(a)-1].S)
		if err != nil {
			return types.Datum{}, err
		}
		return anyAllowed(v, c, user, r.table, privs), nil
	}
	// regPriv registers a has_*_privilege function: (object, privileges)
	// and (role, object, privileges).
	regPriv := func(name string, fn func(c *funcs.Ctx, a []types.Datum) (types.Datum, error)) {
		reg(name, false,
			&funcs.Overload{Params: []types.T{types.Unknown, types.Text}, Ret: ret(types.Bool), NullStrict: true, Fn: fn},
			&funcs.Overload{Params: []types.T{types.Unknown, types.Unknown, types.Text}, Ret: ret(types.Bool), NullStrict: true, Fn: fn})
	}
	regPriv("has_table_privilege", tablePriv)
	regPriv("has_any_column_privilege", tablePriv)
	seqPriv := func(c *funcs.Ctx, a []types.Datum) (types.Datum, error) {
		v, user, r, a, err := relationPrivilegeArgs(c, a)
		if v == nil || err != nil {
			return types.NullDatum, err
		}
		if r.table == nil || r.table.Kind != catalog.KindSequence {
			return types.Datum{}, pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a sequence", r.name)
		}
		privs, err := namedPrivileges(a[1].S, map[string]byte{"USAGE": catalog.PrivUsage, "SELECT": catalog.PrivSelect, "UPDATE": catalog.PrivUpdate})
		if err != nil {
			return types.Datum{}, err
		}
		return anyAllowed(v, c, user, r.table, privs), nil
	}
	regPriv("has_sequence_privilege", seqPriv)
	schemaPriv := func(c *funcs.Ctx, a []types.Datum) (types.Datum, error) {
		v := ViewFor(c)
		if v == nil {
			return types.NullDatum, nil
		}
		user, a, err := v.privilegeUser(c, a)
		if err != nil {
			return types.Datum{}, err
		}
		// The built-in schemas: USAGE for all, CREATE for superusers.
		builtin := func() types.Datum {
			_, super := v.Cat.UserRole(user, c.RequireRoles)
			return types.NewBool(super || !strings.Contains(strings.ToUpper(a[1].S), "CREATE"))
		}
		var sc *catalog.Schema
		if a[0].K == types.KindText || a[0].K == types.KindUnknown || a[0].K == types.KindName || a[0].K == types.KindVarchar {
			var ok bool
			if sc, ok = v.Cat.Schema(a[0].S); !ok && v.isBuiltinSchema(a[0].S) {
				return builtin(), nil
			} else if !ok {
				return types.Datum{}, pgerror.New(pgerror.UndefinedSchema, "schema \"%s\" does not exist", a[0].S)
			}
		} else {
			var ok bool
			if sc, ok = v.Cat.SchemaByID(uint32(a[0].I)); !ok {
				if _, ok := v.namespaceName(uint32(a[0].I)); ok {
					return builtin(), nil
				}
				return types.Datum{}, pgerror.New(pgerror.UndefinedSchema, "schema with OID %d does not exist", a[0].I)
			}
		}
		privs, err := namedPrivileges(a[1].S, map[string]byte{"USAGE": catalog.PrivUsage, "CREATE": catalog.PrivCreate})
		if err != nil {
			return types.Datum{}, err
		}
		for _, p := range privs {
			if v.Cat.SchemaAllowed(user, c.RequireRoles, sc, p) {
				return types.NewBool(true), nil
			}
		}
		return types.NewBool(false), nil
	}
	regPriv("has_schema_privilege", schemaPriv)
	regPriv("pg_has_role", roleMembership)
	for _, name := range []string{"has_database_privilege",
		"has_column_privilege", "has_function_privilege",
		"has_tablespace_privilege"} {
		yes := func(*funcs.Ctx, []types.Datum) (types.Datum, error) { return types.NewBool(true), nil }
		var ovs []*funcs.Overload
		for n := 2; n <= 4; n++ {
			params := make([]types.T, n)
			for i := range params {
				params[i] = types.Unknown
			}
			ovs = append(ovs, &funcs.Overload{Params: params, Ret: ret(types.Bool), NullStrict: true, Fn: yes})
		}
		reg(name, false, ovs...)
	}
	constant := func(name string, t types.T, d types.Datum, params ...types.T) {
		reg(name, true, &funcs.Overload{Params: params, Ret: ret(t), Fn: func(*funcs.Ctx, []types.Datum) (types.Datum, error) { return d, nil }})
	}
	// Objects mvserver does not have: what PostgreSQL answers for none.
	constant("pg_relation_is_publishable", types.Bool, types.NewBool(false), oid)
	constant("pg_get_statisticsobjdef_columns", types.Text, types.NullDatum, oid)
	constant("pg_get_triggerdef", types.Text, types.NullDatum, oid, types.Bool)
	constant("pg_get_partkeydef", types.Text, types.NullDatum, oid)
	constant("pg_get_serial_sequence", types.Text, types.NullDatum, types.Text, types.Text)
	constant("pg_tablespace_location", types.Text, types.NewText(""), oid)
	constant("pg_is_in_recovery", types.Bool, types.NewBool(false))
	reg("pg_get_function_result", false, withView(types.Text, []types.T{oid}, func(v *View, a []types.Datum) types.Datum {
		return v.functionResult(uint32(a[0].I))
	}))
	funcArgs := withView(types.Text, []types.T{oid}, func(v *View, a []types.Datum) types.Datum {
		return v.functionArguments(uint32(a[0].I))
	})
	reg("pg_get_function_arguments", false, funcArgs)
	reg("pg_get_function_identity_arguments", false, funcArgs)
	// Sizes: a stored relation's rows, plus its change data feed and
	// history for the total; indexes and views take nothing.
	size := func(total bool) func(c *funcs.Ctx, a []types.Datum) (types.Datum, error) {
		return func(c *funcs.Ctx, a []types.Datum) (types.Datum, error) {
			v := ViewFor(c)
			if v == nil {
				return types.NullDatum, nil
			}
			r := v.relation(uint32(a[0].I))
			if r == nil {
				return types.NullDatum, nil
			}
			if r.table == nil || r.kind == 'v' || c.RelationSize == nil {
				return types.NewInt8(0), nil
			}
			n, err := c.RelationSize(r.oid, total)
			return types.NewInt8(n), err
		}
	}
	for name, total := range map[string]bool{"pg_table_size": false, "pg_relation_size": false, "pg_total_relation_size": true} {
		reg(name, false, &funcs.Overload{Params: []types.T{types.Regclass}, Ret: ret(types.Int8), NullStrict: true, Fn: size(total)})
	}
	reg("pg_indexes_size", false, withView(types.Int8, []types.T{types.Regclass}, func(*View, []types.Datum) types.Datum { return types.NewInt8(0) }))
}

// sizePretty is pg_size_pretty: bytes, kB, MB, GB, TB with PostgreSQL's
// rounding (half up, switching unit past 10240 of the smaller one).
func sizePretty(n int64) string {
	units := []string{"bytes", "kB", "MB", "GB", "TB", "PB"}
	neg := n < 0
	if neg {
		n = -n
	}
	i := 0
	for i < len(units)-1 && n >= 10*1024-512 {
		// half-up rounding to the next unit, as size_pretty does
		n = (n + 512) / 1024
		i++
		if n < 10*1024 {
			break
		}
	}
	if neg {
		n = -n
	}
	return fmt.Sprintf("%d %s", n, units[i])
}

// Names implements types.Names over a catalog for the OID alias types.
type Names struct{ V *View }

// OIDName returns the name an alias type prints for oid.
func (n Names) OIDName(k types.Kind, oid uint32) (string, bool) {
	v := n.V
	switch k {
	case types.KindRegclass:
		if r := v.relation(oid); r != nil {
			return v.qualifiedName(r), true
		}
	case types.KindRegtype:
		if _, ok := v.pgType(oid); ok {
			return v.formatType(oid, -1), true
		}
	case types.KindRegnamespace:
		if s, ok := v.namespaceName(oid); ok {
			return quoteIdent(s), true
		}
	case types.KindRegrole:
		if s, ok := v.roleName(oid); ok {
			return quoteIdent(s), true
		}
	case types.KindRegproc:
		for name, o := range v.procOIDs() {
			if o == oid {
				return name, true
			}
		}
	}
	return "", false
}

// NameOID finds the object a regclass, regtype, … literal names.
func (n Names) NameOID(k types.Kind, name string) (uint32, error) {
	v := n.V
	parts := splitQualified(name)
	switch k {
	case types.KindRegclass:
		if r := v.lookupRelation(parts); r != nil {
			return r.oid, nil
		}
	case types.KindRegtype:
		last := parts[len(parts)-1]
		if t, ok := types.ParseTypeName(last, nil); ok && len(parts) <= 2 {
			return t.OID(), nil
		}
		for _, t := range v.pgTypes() {
			if t.name == last {
				return t.oid, nil
			}
		}
	case types.KindRegnamespace:
		if len(parts) == 1 {
			if o, ok := v.namespaceOID(parts[0]); ok {
				return o, nil
			}
		}
	case types.KindRegrole:
		for _, r := range v.roles() {
			if len(parts) == 1 && r.name == parts[0] {
				return r.oid, nil
			}
		}
	case types.KindRegproc:
		if (len(parts) == 1 || len(parts) == 2 && parts[0] == "pg_catalog") && v.procOIDs()[parts[len(parts)-1]] != 0 {
			return v.procOIDs()[parts[len(parts)-1]], nil
		}
	}
	return 0, types.ErrUndefinedObject(k, name)
}

// lookupRelation resolves a possibly qualified relation name the way the
// binder does: pg_catalog first, then the search path.
func (v *View) lookupRelation(parts []string) *relation {
	var schemas []string
	switch len(parts) {
	case 1:
		schemas = v.searchPath()
	case 2:
		schemas = parts[:1]
		if parts[0] == catalog.TempAlias {
			schemas = []string{v.myTemp()}
		}
	default:
		return nil
	}
	name := parts[len(parts)-1]
	rels := v.relations()
	for _, s := range schemas {
		ns, ok := v.namespaceOID(s)
		if !ok {
			continue
		}
		for _, r := range rels {
			if r.ns == ns && r.name == name {
				return r
			}
		}
	}
	return nil
}

// splitQualified splits a.b."C" into its parts, lower-casing unquoted ones.
func splitQualified(s string) []string {
	var parts []string
	var cur strings.Builder
	quoted, wasQuoted := false, false
	flush := func() {
		p := cur.String()
		if !wasQuoted {
			p = strings.ToLower(strings.TrimSpace(p))
		}
		parts = append(parts, p)
		cur.Reset()
		wasQuoted = false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' && quoted && i+1 < len(s) && s[i+1] == '"':
			cur.WriteByte('"')
			i++
		case c == '"':
			quoted = !quoted
			wasQuoted = true
		case c == '.' && !quoted:
			flush()
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return parts
}

// Compile-time check that the session can hand Names to types.Env.
var _ types.Names = Names{}

// privilegeList reads has_table_privilege's privilege text: a comma
// separated list of names, each optionally WITH GRANT OPTION.
func privilegeList(s string) ([]byte, error) {
	var out []byte
	for _, p := range strings.Split(s, ",") {
		p = strings.ToUpper(strings.TrimSpace(p))
		p = strings.TrimSpace(strings.TrimSuffix(p, "WITH GRANT OPTION"))
		switch p {
		case "SELECT":
			out = append(out, catalog.PrivSelect)
		case "INSERT":
			out = append(out, catalog.PrivInsert)
		case "UPDATE":
			out = append(out, catalog.PrivUpdate)
		case "DELETE":
			out = append(out, catalog.PrivDelete)
		case "TRUNCATE":
			out = append(out, catalog.PrivTruncate)
		case "MAINTAIN", "REFRESH":
			out = append(out, catalog.PrivMaintain)
		case "REFERENCES", "TRIGGER":
			// mvserver has neither: only the owner or a superuser "may".
			out = append(out, 0)
		default:
			return nil, pgerror.New(pgerror.InvalidParameterValue, "unrecognized privilege type: \"%s\"", p)
		}
	}
	return out, nil
}

// relationPrivilegeArgs reads has_table_privilege's (and
// has_sequence_privilege's) arguments: the role (the session's when only
// two are given), the relation and the rest. v is nil without a catalog.
func relationPrivilegeArgs(c *funcs.Ctx, a []types.Datum) (v *View, user string, r *relation, rest []types.Datum, err error) {
	if v = ViewFor(c); v == nil {
		return nil, "", nil, nil, nil
	}
	if user, rest, err = v.privilegeUser(c, a); err != nil {
		return v, "", nil, nil, err
	}
	r, err = v.relationArg(rest[0])
	return v, user, r, rest, err
}

// anyAllowed reports whether user holds one of privs on t.
func anyAllowed(v *View, c *funcs.Ctx, user string, t *catalog.Table, privs []byte) types.Datum {
	for _, p := range privs {
		if v.Cat.Allowed(user, c.RequireRoles, t, p) {
			return types.NewBool(true)
		}
	}
	return types.NewBool(false)
}

// privilegeUser splits a has_*_privilege call's arguments: the role its
// first of three names (else the session's user), and the rest.
func (v *View) privilegeUser(c *funcs.Ctx, a []types.Datum) (string, []types.Datum, error) {
	if len(a) == 3 {
		u, err := v.userArg(a[0])
		return u, a[1:], err
	}
	return c.User, a, nil
}

// namedPrivileges parses a has_*_privilege list ("USAGE, SELECT WITH
// GRANT OPTION") against the privileges its object type takes.
func namedPrivileges(s string, known map[string]byte) ([]byte, error) {
	var out []byte
	for _, p := range strings.Split(s, ",") {
		p = strings.ToUpper(strings.TrimSpace(p))
		p = strings.TrimSpace(strings.TrimSuffix(p, "WITH GRANT OPTION"))
		l, ok := known[p]
		if !ok {
			return nil, pgerror.New(pgerror.InvalidParameterValue, "unrecognized privilege type: \"%s\"", p)
		}
		out = append(out, l)
	}
	return out, nil
}

// isBuiltinSchema reports whether name is one of the schemas mvserver
// provides (pg_catalog, information_schema, system): usable by all, and
// no role creates there.
func (v *View) isBuiltinSchema(name string) bool {
	_, ok := v.namespaceOID(name)
	_, user := v.Cat.Schema(name)
	return ok && !user
}

// userArg reads a role given by name or OID.
func (v *View) userArg(d types.Datum) (string, error) {
	if d.K == types.KindText || d.K == types.KindUnknown || d.K == types.KindName || d.K == types.KindVarchar {
		return d.S, nil
	}
	if n, ok := v.roleName(uint32(d.I)); ok {
		return n, nil
	}
	return "", pgerror.New(pgerror.UndefinedObject, "role with OID %d does not exist", d.I)
}

// relationArg reads a relation given by name or OID.
func (v *View) relationArg(d types.Datum) (*relation, error) {
	if d.K == types.KindText || d.K == types.KindUnknown || d.K == types.KindName || d.K == types.KindVarchar {
		r := v.lookupRelation(splitQualified(d.S))
		if r == nil {
			return nil, pgerror.New(pgerror.UndefinedTable, "relation \"%s\" does not exist", d.S)
		}
		return r, nil
	}
	r := v.relation(uint32(d.I))
	if r == nil {
		return nil, pgerror.New(pgerror.UndefinedTable, "relation with OID %d does not exist", d.I)
	}
	return r, nil
}

// rolePrivs are pg_has_role's privilege names: MEMBER is membership
// through any grants, USAGE the privileges of the role (inherited
// membership); WITH ADMIN (or GRANT) OPTION asks for the admin option.
var rolePrivs = map[string]byte{"MEMBER": 'm', "USAGE": 'u', "MEMBER WITH ADMIN OPTION": 'a', "MEMBER WITH GRANT OPTION": 'a',
	"USAGE WITH ADMIN OPTION": 'a', "USAGE WITH GRANT OPTION": 'a'}

// roleMembership is pg_has_role([user,] role, privileges).
func roleMembership(c *funcs.Ctx, a []types.Datum) (types.Datum, error) {
	v := ViewFor(c)
	if v == nil {
		return types.NullDatum, nil
	}
	user, a, err := v.privilegeUser(c, a)
	if err != nil {
		return types.Datum{}, err
	}
	var role uint32
	if k := a[0].K; k == types.KindText || k == types.KindUnknown || k == types.KindName || k == types.KindVarchar {
		r, ok := v.Cat.Role(a[0].S)
		if !ok {
			return types.Datum{}, pgerror.New(pgerror.UndefinedObject, "role \"%s\" does not exist", a[0].S)
		}
		role = r.ID
	} else {
		role = uint32(a[0].I)
	}
	var privs []byte
	for _, p := range strings.Split(a[1].S, ",") {
		p = strings.Join(strings.Fields(strings.ToUpper(p)), " ")
		l, ok := rolePrivs[p]
		if !ok {
			return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "unrecognized privilege type: \"%s\"", strings.TrimSpace(a[1].S))
		}
		privs = append(privs, l)
	}
	id, super := v.Cat.UserRole(user, c.RequireRoles)
	if !super {
		if _, ok := v.Cat.RoleByID(role); !ok {
			return types.NullDatum, nil
		}
	}
	for _, p := range privs {
		var yes bool
		switch p {
		case 'm':
			yes = super || v.Cat.IsMemberOfRole(id, role)
		case 'u':
			yes = super || v.Cat.HasPrivsOfRole(id, role)
		case 'a':
			yes = super || v.Cat.IsAdminOfRole(id, role)
		}
		if yes {
			return types.NewBool(true), nil
		}
	}
	return types.NewBool(false), nil
}
