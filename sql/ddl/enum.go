package ddl

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// maxLabel is NAMEDATALEN - 1: PostgreSQL's limit on an enum label.
const maxLabel = 63

// createEnum runs CREATE TYPE name AS ENUM ('a', 'b', …): the labels sort
// in the order written (enumsortorder 1, 2, …).
func createEnum(e *Env, st *pg_query.CreateEnumStmt) (Result, error) {
	parts := names(st.TypeName)
	sc, name, err := e.Cat.TargetSchema(parts, e.SearchPath)
	if err != nil {
		return Result{}, err
	}
	if err := e.requireCreate(sc); err != nil {
		return Result{}, err
	}
	if typeNameTaken(e.Cat, sc.ID, name) {
		return Result{}, pgerror.New(pgerror.DuplicateObject, "type \"%s\" already exists", name)
	}
	et := &catalog.EnumType{ID: e.Cat.AllocID(), SchemaID: sc.ID, Name: name, Owner: e.Owner}
	et.ArrayID = e.Cat.AllocID()
	for i, v := range st.Vals {
		l := v.GetString_().GetSval()
		if err := checkLabel(l); err != nil {
			return Result{}, err
		}
		for _, x := range et.Labels {
			if x.Label == l {
				// PostgreSQL 15 reports its catalog's unique index.
				return Result{}, pgerror.New(pgerror.UniqueViolation, "duplicate key value violates unique constraint \"pg_enum_typid_label_index\"").
					WithDetail("Key (enumtypid, enumlabel)=(%d, %s) already exists.", et.ID, l)
			}
		}
		et.Labels = append(et.Labels, types.EnumLabel{OID: e.Cat.AllocID(), Label: l, Sort: float64(i + 1)})
	}
	e.Cat.PutEnum(et)
	return Result{Tag: "CREATE TYPE", Changed: []uint32{et.ID}}, nil
}

// typeNameTaken reports whether a pg_type row of the schema has the name:
// an enum's, or the row type every relation has.
func typeNameTaken(c *catalog.Catalog, schemaID uint32, name string) bool {
	if _, ok := c.LookupEnum(schemaID, name); ok {
		return true
	}
	_, ok := c.LookupTable(schemaID, name)
	return ok
}

func checkLabel(l string) error {
	if len(l) == 0 || len(l) > maxLabel {
		return pgerror.New(pgerror.InvalidParameterValue, "invalid enum label \"%s\"", l).
			WithDetail("Labels must be %d bytes or less.", maxLabel)
	}
	return nil
}

// alterEnum runs ALTER TYPE name ADD VALUE [IF NOT EXISTS] 'v'
// [{BEFORE | AFTER} 'w']. The new label sorts between its neighbours
// without renumbering the others, so stored values keep their order.
func alterEnum(e *Env, st *pg_query.AlterEnumStmt) (Result, error) {
	parts := names(st.TypeName)
	et, err := lookupEnum(e, parts)
	if err != nil {
		return Result{}, err
	}
	if !e.owns(et.Owner) {
		return Result{}, pgerror.New(pgerror.InsufficientPrivilege, "must be owner of type %s", et.Name)
	}
	if st.OldVal != "" {
		// ALTER TYPE … RENAME VALUE: stored values hold their label.
		return Result{}, pgerror.New(pgerror.FeatureNotSupported, "renaming an enum label is not supported yet").
			WithHint("Add the new label with ALTER TYPE %s ADD VALUE, update the rows, and stop using the old one.", et.Name)
	}
	l := st.NewVal
	for _, x := range et.Labels {
		if x.Label == l {
			if st.SkipIfNewValExists {
				e.notice("enum label \"%s\" already exists, skipping", l)
				return Result{Tag: "ALTER TYPE"}, nil
			}
			return Result{}, pgerror.New(pgerror.DuplicateObject, "enum label \"%s\" already exists", l)
		}
	}
	if err := checkLabel(l); err != nil {
		return Result{}, err
	}
	n := et.Clone()
	at := len(n.Labels) // insert before index at
	sort := 1.0
	if len(n.Labels) > 0 {
		sort = n.Labels[len(n.Labels)-1].Sort + 1
	}
	if st.NewValNeighbor != "" {
		i := -1
		for j, x := range n.Labels {
			if x.Label == st.NewValNeighbor {
				i = j
			}
		}
		if i < 0 {
			return Result{}, pgerror.New(pgerror.InvalidParameterValue, "\"%s\" is not an existing enum label", st.NewValNeighbor)
		}
		if st.NewValIsAfter {
			at = i + 1
		} else {
			at = i
		}
		switch {
		case at == 0:
			sort = n.Labels[0].Sort - 1
		case at == len(n.Labels):
			sort = n.Labels[at-1].Sort + 1
		default:
			sort = (n.Labels[at-1].Sort + n.Labels[at].Sort) / 2
			if sort == n.Labels[at-1].Sort || sort == n.Labels[at].Sort {
				return Result{}, pgerror.New(pgerror.ProgramLimitExceeded, "no room for a new label between \"%s\" and \"%s\" of enum %s", n.Labels[at-1].Label, n.Labels[at].Label, n.Name)
			}
		}
	}
	lab := types.EnumLabel{OID: e.Cat.AllocID(), Label: l, Sort: sort}
	n.Labels = append(n.Labels[:at], append([]types.EnumLabel{lab}, n.Labels[at:]...)...)
	e.Cat.PutEnum(n)
	return Result{Tag: "ALTER TYPE", Changed: []uint32{n.ID}}, nil
}

// lookupEnum resolves an enum type by name (42704 when there is none).
func lookupEnum(e *Env, parts []string) (*catalog.EnumType, error) {
	if et, ok := e.Cat.ResolveEnum(parts, e.SearchPath); ok {
		return et, nil
	}
	if _, err := e.Cat.Resolve(parts, e.SearchPath); err == nil || isBuiltinType(parts) {
		return nil, pgerror.New(pgerror.WrongObjectType, "%s is not an enum", strings.Join(parts, "."))
	}
	return nil, pgerror.New(pgerror.UndefinedObject, "type \"%s\" does not exist", strings.Join(parts, "."))
}

func isBuiltinType(parts []string) bool {
	_, ok := types.ParseTypeName(parts[len(parts)-1], nil)
	return ok && (len(parts) == 1 || parts[0] == "pg_catalog")
}

// dropTypes runs DROP TYPE [IF EXISTS] name, … [CASCADE | RESTRICT]. A
// type that a column uses is not dropped (2BP01).
func dropTypes(e *Env, st *pg_query.DropStmt) (Result, error) {
	r := Result{Tag: "DROP TYPE"}
	for _, o := range st.Objects {
		tn := o.GetTypeName()
		if tn == nil {
			continue
		}
		parts := names(tn.Names)
		et, ok := e.Cat.ResolveEnum(parts, e.SearchPath)
		if !ok {
			if isBuiltinType(parts) {
				return Result{}, pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop type %s because it is required by the database system", parts[len(parts)-1])
			}
			if st.MissingOk {
				e.notice("type \"%s\" does not exist, skipping", strings.Join(parts, "."))
				continue
			}
			return Result{}, e.errAt(tn.Location, pgerror.UndefinedObject, "type \"%s\" does not exist", strings.Join(parts, "."))
		}
		if !e.owns(et.Owner) {
			return Result{}, pgerror.New(pgerror.InsufficientPrivilege, "must be owner of type %s", et.Name)
		}
		if users := e.Cat.EnumUsers(et.ID); len(users) > 0 {
			t := users[0]
			col := ""
			for _, c := range t.Columns {
				if c.Type.Kind == types.KindEnum && c.Type.Enum.OID == et.ID {
					col = c.Name
					break
				}
			}
			if st.Behavior == pg_query.DropBehavior_DROP_CASCADE {
				return Result{}, pgerror.New(pgerror.FeatureNotSupported, "DROP TYPE … CASCADE of a type that columns use is not supported yet").
					WithDetail("column %s of %s %s depends on type %s", col, t.Noun(), t.Name, et.Name).
					WithHint("Drop or change those columns first.")
			}
			return Result{}, pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop type %s because other objects depend on it", et.Name).
				WithDetail("column %s of %s %s depends on type %s", col, t.Noun(), t.Name, et.Name).
				WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
		}
		e.Cat.DropEnum(et.ID)
		r.Dropped = append(r.Dropped, et.ID)
	}
	return r, nil
}
