package pgcatalog

import (
	"fmt"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

// PostgreSQL's OIDs of pg_catalog's own tables (pg_description.classoid,
// obj_description(oid, 'pg_class')); the views get ids from firstViewOID on.
var knownRelOIDs = map[string]uint32{
	"pg_type": 1247, "pg_attribute": 1249, "pg_proc": 1255, "pg_class": 1259, "pg_authid": 1260,
	"pg_auth_members": 1261, "pg_database": 1262, "pg_namespace": 2615, "pg_constraint": 2606,
	"pg_index": 2610, "pg_attrdef": 2604, "pg_description": 2609, "pg_am": 2601, "pg_inherits": 2611,
	"pg_language": 2612, "pg_extension": 3079, "pg_collation": 3456, "pg_trigger": 2620,
	"pg_rewrite": 2618, "pg_policy": 3256, "pg_statistic_ext": 3381, "pg_publication": 6104,
	"pg_publication_rel": 6106, "pg_publication_namespace": 6237, "pg_partitioned_table": 3350,
	"pg_tablespace": 1213, "pg_sequence": 2224, "pg_depend": 2608, "pg_shdescription": 2396,
	"pg_enum": 3501, "pg_range": 3541, "pg_operator": 2617, "pg_cast": 2605, "pg_event_trigger": 3466,
	"pg_foreign_table": 3118, "pg_foreign_server": 1417, "pg_foreign_data_wrapper": 2328,
	"pg_opclass": 2616, "pg_aggregate": 2600, "pg_init_privs": 3394, "pg_seclabel": 3596,
	"pg_default_acl": 826, "pg_conversion": 2607, "pg_ts_config": 3602,
	"pg_transform": 3576, "pg_opfamily": 2753, "pg_amop": 2602, "pg_amproc": 2603, "pg_ts_parser": 3601,
	"pg_ts_template": 3764, "pg_ts_dict": 3600, "pg_ts_config_map": 3603, "pg_subscription": 6100,
	"pg_subscription_rel": 6102, "pg_largeobject_metadata": 2995, "pg_largeobject": 2613,
	"pg_shseclabel": 3592, "pg_db_role_setting": 2964, "pg_parameter_acl": 6243,
}

const firstViewOID = 12000

// superuserOnly are the relations PostgreSQL lets only superusers read:
// they show the roles' password verifiers (pg_roles and pg_user show
// "********" to everyone).
var superuserOnly = map[string]bool{"pg_catalog.pg_authid": true, "pg_catalog.pg_shadow": true}

// rowsFunc computes a relation's rows.
type rowsFunc func(v *View, b *builder)

// generators are the relations that have rows; the others are empty.
var generators = map[string]rowsFunc{}

func init() {
	next := uint32(firstViewOID)
	for _, s := range specs {
		oid, ok := knownRelOIDs[s.name]
		if !ok || s.schema != "pg_catalog" {
			oid = next
			next++
		}
		r := &plan.SystemRelation{Schema: s.schema, Name: s.name, OID: oid, Noun: "view", SuperuserOnly: superuserOnly[s.schema+"."+s.name]}
		if ok && s.schema == "pg_catalog" {
			r.Noun = "table"
		}
		for _, c := range strings.Fields(s.cols) {
			name, typ, _ := strings.Cut(c, ":")
			r.Cols = append(r.Cols, plan.Column{Name: name, T: specType(typ)})
		}
		plan.RegisterSystemRelation(r)
	}
	exec.RegisterRowSource(plan.GenCatalog, func(c *exec.Ctx, arg any) ([]exec.Row, error) {
		a := arg.(plan.CatalogRelArg)
		gen := generators[a.Rel.Schema+"."+a.Rel.Name]
		if gen == nil {
			return nil, nil
		}
		v := newView(a.Cat, c.Funcs)
		if c.Txn != nil {
			v.Stats = func(id uint32) *catalog.TableStats {
				ts, err := catalog.ReadStats(c.Txn, id)
				if err != nil {
					return nil
				}
				return ts
			}
		}
		b := newBuilder(a.Rel)
		gen(v, b)
		return b.rows, nil
	})
}

// specType maps a spec's type name to a type.
func specType(s string) types.T {
	if e, ok := strings.CutSuffix(s, "[]"); ok {
		return types.ArrayOf(specType(e))
	}
	switch s {
	case "char":
		return types.InternalChar
	case "varchar":
		return types.Varchar
	}
	t, ok := types.ParseTypeName(s, nil)
	if !ok {
		panic(fmt.Sprintf("pgcatalog: unknown type %q in specs", s))
	}
	return t
}

// builder collects a relation's rows from column-name → value maps.
type builder struct {
	rel  *plan.SystemRelation
	idx  map[string]int
	rows []exec.Row
}

func newBuilder(rel *plan.SystemRelation) *builder {
	b := &builder{rel: rel, idx: make(map[string]int, len(rel.Cols))}
	for i, c := range rel.Cols {
		b.idx[c.Name] = i
	}
	return b
}

// vals are a row's values by column name: string, bool, int kinds, uint32,
// []string, []uint32, []int16, types.Datum or nil (NULL). Columns left out
// take the value a catalog column without it has in PostgreSQL: 0, false,
// ” for name and "char" columns, NULL otherwise.
type vals map[string]any

func (b *builder) add(v vals) {
	row := make(exec.Row, len(b.rel.Cols))
	for i, c := range b.rel.Cols {
		switch c.T.Kind {
		case types.KindBool:
			row[i] = types.NewBool(false)
		case types.KindInt2, types.KindInt4, types.KindInt8, types.KindOid, types.KindRegproc, types.KindRegtype, types.KindRegclass:
			row[i] = types.NewInt(c.T.Kind, 0)
		case types.KindFloat4, types.KindFloat8:
			row[i] = types.NewFloat(c.T.Kind, 0)
		case types.KindName, types.KindInternalChar:
			row[i] = types.NewString(c.T.Kind, "")
		}
	}
	for name, x := range v {
		i, ok := b.idx[name]
		if !ok {
			panic(fmt.Sprintf("pgcatalog: %s has no column %s", b.rel.Name, name))
		}
		row[i] = datum(x, b.rel.Cols[i].T)
	}
	b.rows = append(b.rows, row)
}

// datum converts a Go value to a datum of type t.
func datum(x any, t types.T) types.Datum {
	switch v := x.(type) {
	case nil:
		return types.NullDatum
	case types.Datum:
		return v
	case string:
		switch t.Kind {
		case types.KindName, types.KindInternalChar, types.KindVarchar, types.KindText:
			return types.NewString(t.Kind, v)
		}
		return types.NewText(v)
	case bool:
		return types.NewBool(v)
	case int:
		return intDatum(int64(v), t)
	case int16:
		return intDatum(int64(v), t)
	case int32:
		return intDatum(int64(v), t)
	case int64:
		return intDatum(v, t)
	case uint32:
		return intDatum(int64(v), t)
	case float64:
		return types.NewFloat(t.Kind, v)
	case []string:
		e := make([]types.Datum, len(v))
		for i, s := range v {
			e[i] = types.NewString(t.ElemType().Kind, s)
		}
		return types.NewArray(t.Kind, e)
	case []uint32:
		e := make([]types.Datum, len(v))
		for i, o := range v {
			e[i] = types.NewInt(t.ElemType().Kind, int64(o))
		}
		return types.NewArray(t.Kind, e)
	case []int16:
		e := make([]types.Datum, len(v))
		for i, n := range v {
			e[i] = types.NewInt(types.KindInt2, int64(n))
		}
		return types.NewArray(t.Kind, e)
	}
	panic(fmt.Sprintf("pgcatalog: value %T for a %s column", x, t))
}

func intDatum(v int64, t types.T) types.Datum {
	switch t.Kind {
	case types.KindFloat4, types.KindFloat8:
		return types.NewFloat(t.Kind, float64(v))
	case types.KindInt2, types.KindInt4, types.KindInt8:
		return types.NewInt(t.Kind, v)
	}
	if t.IsOidAlias() {
		return types.NewInt(t.Kind, v)
	}
	return types.NewInt(types.KindInt8, v)
}
