package pgcatalog

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// acldefault(kind, owner) is PostgreSQL's built-in privileges of an object
// of that kind owned by owner, as an aclitem[] (shown as text[], as the
// catalogs' acl columns are): what pg_dump compares an object's ACL with
// to decide which GRANTs and REVOKEs to write. Kinds: r relation, s
// sequence, n schema, d database, f function, l language, T type.
func init() {
	textArr := types.ArrayOf(types.Text)
	fn := func(c *funcs.Ctx, a []types.Datum) (types.Datum, error) {
		owner := ""
		if v := ViewFor(c); v != nil {
			owner, _ = v.roleName(uint32(a[1].I))
		}
		if owner == "" {
			return types.NullDatum, nil
		}
		o := quoteIdent(owner)
		var items []string
		switch a[0].S {
		case "r":
			items = []string{o + "=" + aclLetters(catalog.AllTablePrivs) + "/" + o}
		case "s":
			items = []string{o + "=" + aclLetters(catalog.AllSequencePrivs) + "/" + o}
		case "n":
			items = []string{o + "=" + aclLetters(catalog.AllSchemaPrivs) + "/" + o}
		case "d":
			items = []string{"=Tc/" + o, o + "=CTc/" + o}
		case "f", "l", "T":
			letter := map[string]string{"f": "X", "l": "U", "T": "U"}[a[0].S]
			items = []string{"=" + letter + "/" + o, o + "=" + letter + "/" + o}
		default:
			items = []string{}
		}
		e := make([]types.Datum, len(items))
		for i, s := range items {
			e[i] = types.NewText(s)
		}
		return types.NewArray(textArr.Kind, e), nil
	}
	// The kind is PostgreSQL's "char"; character(1) is accepted too.
	funcs.Register(&funcs.Func{Name: "acldefault", Overloads: []*funcs.Overload{
		{Params: []types.T{types.InternalChar, types.Oid}, Ret: func([]types.T) types.T { return textArr }, NullStrict: true, Fn: fn},
		{Params: []types.T{types.Char, types.Oid}, Ret: func([]types.T) types.T { return textArr }, NullStrict: true, Fn: fn},
	}})
}
