package pgcatalog

import "github.com/mvserver/mvserver/sql/types"

// sqlFunctionRows adds the pg_proc rows of the SQL functions (CREATE
// FUNCTION … LANGUAGE sql), as PostgreSQL 15 shows them.
func (v *View) sqlFunctionRows(b *builder) {
	for _, f := range v.Cat.Functions() {
		args := make([]uint32, len(f.Args))
		var argNames []types.Datum
		named := false
		for i, a := range f.Args {
			args[i] = a.Type.OID()
			argNames = append(argNames, types.NewText(a.Name))
			named = named || a.Name != ""
		}
		owner := f.Owner
		if owner == 0 {
			owner = v.ownerOID()
		}
		row := vals{"oid": f.ID, "proname": f.Name, "pronamespace": f.SchemaID, "proowner": owner,
			"prolang": uint32(langSQL), "procost": 100.0, "prokind": "f", "provolatile": string(f.Volatility), "proparallel": "u",
			"pronargs": len(args), "prorettype": f.Returns.OID(), "proargtypes": types.NewArray(types.KindOidVector, oids(args)),
			"prosrc": f.Source}
		if named {
			row["proargnames"] = types.NewArray(types.KindArray, argNames)
		}
		b.add(row)
	}
}
