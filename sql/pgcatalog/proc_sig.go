package pgcatalog

import (
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// pg_proc's argument and result types. Every row names types pg_type has,
// as in PostgreSQL: clients that load the catalog (sqlsmith, pgcli's \df)
// look each one up.

// aggProbes are the argument lists an aggregate is resolved with, in
// order, to find one signature it has: the first it accepts is shown.
var aggProbes = [][]types.T{
	{types.Int8}, {types.Float8}, {types.Numeric}, {types.Text}, {},
	{types.Float8, types.Float8}, {types.Text, types.Text}, {types.Bool},
	{types.Float8, types.Numeric},
}

// procSignature is the argument and result types of the pg_proc row of
// name: the first overload's; for an aggregate, the first of aggProbes it
// resolves; for a window function, its parameters and result; for a
// type's I/O function (not callable in SQL here), the type and cstring,
// as PostgreSQL declares them. ok is false when none of these applies.
func procSignature(name string) (args []uint32, ret uint32, strict, ok bool) {
	if f, found := funcs.Lookup(name); found {
		switch {
		case len(f.Overloads) > 0 && f.Overloads[0].Ret != nil:
			o := f.Overloads[0]
			for _, p := range o.Params {
				args = append(args, p.OID())
			}
			return args, o.Ret(o.Params).OID(), o.NullStrict, true
		case f.Agg != nil && f.Agg.Resolve != nil:
			for _, probe := range aggProbes {
				if r, _, ok := f.Agg.Resolve(probe); ok {
					for _, p := range probe {
						args = append(args, p.OID())
					}
					return args, polymorphic(r), false, true
				}
			}
		case f.Window != nil:
			for _, p := range f.Window.Params {
				args = append(args, polymorphic(p))
			}
			return args, polymorphic(f.Window.Ret), false, true
		}
	}
	for _, t := range baseTypes {
		switch name {
		case t.input:
			return []uint32{oidCString}, t.oid, true, true
		case t.output:
			return []uint32{t.oid}, oidCString, true, true
		}
	}
	switch name {
	case "array_in":
		return []uint32{oidCString, 26, 23}, 2277, true, true
	case "array_out":
		return []uint32{2277}, oidCString, true, true
	}
	return nil, 0, false, false
}

// polymorphic is t's OID, and anyelement's for a type a call decides
// (a window function's value parameter, lag's default).
func polymorphic(t types.T) uint32 {
	if t.Kind == types.KindUnknown || t.Kind == types.KindNull {
		return oidAnyElement
	}
	return t.OID()
}
