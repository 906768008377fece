package funcs

import (
	"github.com/cockroachdb/apd/v3"

	"github.com/mvserver/mvserver/sql/types"
)

// jsonb's containment and existence operators, as PostgreSQL 15 defines
// them (sql/plan binds the operators to these functions, by
// JSONBOperatorFunc):
//
//	a @> b   jsonb_contains(a, b): b's structure and values are in a
//	a <@ b   jsonb_contained(a, b): jsonb_contains(b, a)
//	a ? k    jsonb_exists(a, k): k is a top-level key of the object a, or a
//	         string element of the array a (or the string a itself)
//	a ?| ks  jsonb_exists_any(a, ks): some element of ks exists in a
//	a ?& ks  jsonb_exists_all(a, ks): every element of ks exists in a
//
// Containment: scalars contain an equal scalar (numbers by value); an
// object contains an object each of whose keys it has with a containing
// value; an array contains an array each of whose elements some element
// of it contains; a top-level array also contains a scalar it has as an
// element.

// JSONBOperatorFunc names the function of a jsonb containment or
// existence operator, "" for another operator.
func JSONBOperatorFunc(op string) string {
	return map[string]string{"@>": "jsonb_contains", "<@": "jsonb_contained", "?": "jsonb_exists",
		"?|": "jsonb_exists_any", "?&": "jsonb_exists_all"}[op]
}

// jsonbContains reports whether a contains b; top is true for the
// operands themselves (where an array contains a scalar element).
func jsonbContains(a, b *types.JSONValue, top bool) bool {
	if a.Kind == types.JSONArray && b.Kind != types.JSONArray && b.Kind != types.JSONObject && top {
		for _, e := range a.Elems {
			if jsonbContains(e, b, false) {
				return true
			}
		}
		return false
	}
	if a.Kind != b.Kind {
		return false
	}
	switch a.Kind {
	case types.JSONNull:
		return true
	case types.JSONBool:
		return a.Bool == b.Bool
	case types.JSONString:
		return a.Str == b.Str
	case types.JSONNumber:
		x, _, errX := apd.NewFromString(a.Str)
		y, _, errY := apd.NewFromString(b.Str)
		if errX != nil || errY != nil {
			return a.Str == b.Str
		}
		return x.Cmp(y) == 0
	case types.JSONObject:
		for i, k := range b.Keys {
			v, ok := a.Field(k)
			if !ok || !jsonbContains(v, b.Elems[i], false) {
				return false
			}
		}
		return true
	}
	// Arrays: each element of b is contained in some element of a.
	for _, be := range b.Elems {
		found := false
		for _, ae := range a.Elems {
			if jsonbContains(ae, be, false) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// jsonbExists reports whether key exists at the top level of v.
func jsonbExists(v *types.JSONValue, key string) bool {
	switch v.Kind {
	case types.JSONObject:
		_, ok := v.Field(key)
		return ok
	case types.JSONArray:
		for _, e := range v.Elems {
			if e.Kind == types.JSONString && e.Str == key {
				return true
			}
		}
	case types.JSONString:
		return v.Str == key
	}
	return false
}

func init() {
	jb, textArr := types.JSONB, types.ArrayOf(types.Text)
	two := func(name string, swap bool) {
		register(&Func{Name: name, Deterministic: true, Overloads: []*Overload{{Params: []types.T{jb, jb}, Ret: ret(types.Bool), NullStrict: true,
			Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
				x, err := types.ParseJSON(a[0].S)
				if err != nil {
					return types.Datum{}, err
				}
				y, err := types.ParseJSON(a[1].S)
				if err != nil {
					return types.Datum{}, err
				}
				if swap {
					x, y = y, x
				}
				return types.NewBool(jsonbContains(x, y, true)), nil
			}}}})
	}
	two("jsonb_contains", false)
	two("jsonb_contained", true)
	register(&Func{Name: "jsonb_exists", Deterministic: true, Overloads: []*Overload{{Params: []types.T{jb, types.Text}, Ret: ret(types.Bool), NullStrict: true,
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			v, err := types.ParseJSON(a[0].S)
			if err != nil {
				return types.Datum{}, err
			}
			return types.NewBool(jsonbExists(v, a[1].S)), nil
		}}}})
	// ?| and ?&: NULL elements of the key array are skipped, as in
	// PostgreSQL.
	keys := func(name string, all bool) {
		register(&Func{Name: name, Deterministic: true, Overloads: []*Overload{{Params: []types.T{jb, textArr}, Ret: ret(types.Bool), NullStrict: true,
			Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
				v, err := types.ParseJSON(a[0].S)
				if err != nil {
					return types.Datum{}, err
				}
				if a[1].A == nil {
					return types.NewBool(all), nil
				}
				for _, k := range a[1].A.Elems {
					if k.IsNull() {
						continue
					}
					if jsonbExists(v, k.S) != all {
						return types.NewBool(!all), nil
					}
				}
				return types.NewBool(all), nil
			}}}})
	}
	keys("jsonb_exists_any", false)
	keys("jsonb_exists_all", true)
}
