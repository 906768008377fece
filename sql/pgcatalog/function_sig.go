package pgcatalog

import (
	"strings"

	"github.com/mvserver/mvserver/sql/types"
)

// pg_get_function_result, pg_get_function_arguments and
// pg_get_function_identity_arguments: a function's result type and
// argument list as PostgreSQL prints them (psql's and pgcli's \df). A SQL
// function's arguments carry their names ("x integer"); a built-in's are
// its types alone. Types are named without typmods, as in PostgreSQL. An
// OID that is no function gives NULL.

// funcSignature is the argument names (empty for unnamed) and the
// argument and result type OIDs of the function with OID id.
func (v *View) funcSignature(id uint32) (names []string, args []uint32, ret uint32, ok bool) {
	if f, found := v.Cat.Function(id); found {
		for _, a := range f.Args {
			names = append(names, a.Name)
			args = append(args, a.Type.OID())
		}
		return names, args, f.Returns.OID(), true
	}
	for name, oid := range v.procOIDs() {
		if oid == id {
			args, ret, _, ok = procSignature(name)
			return make([]string, len(args)), args, ret, ok
		}
	}
	return nil, nil, 0, false
}

// functionResult is pg_get_function_result(id).
func (v *View) functionResult(id uint32) types.Datum {
	_, _, ret, ok := v.funcSignature(id)
	if !ok || ret == 0 {
		return types.NullDatum
	}
	return types.NewText(v.formatType(ret, -1))
}

// functionArguments is pg_get_function_arguments(id) (and, with no
// defaults kept here, pg_get_function_identity_arguments too).
func (v *View) functionArguments(id uint32) types.Datum {
	names, args, _, ok := v.funcSignature(id)
	if !ok {
		return types.NullDatum
	}
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = v.formatType(a, -1)
		if names[i] != "" {
			parts[i] = quoteIdent(names[i]) + " " + parts[i]
		}
	}
	return types.NewText(strings.Join(parts, ", "))
}
