package pgcatalog

import (
	"strings"

	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/types"
)

// pg_options_to_table(options text[]) is PostgreSQL's set-returning
// function that splits an options array (reloptions, attoptions,
// fdwoptions, …) into (option_name, option_value) rows at each item's
// first "="; an item without one has a NULL value. pg_dump reads
// attfdwoptions and the foreign-data options through it.
func init() {
	textArr := types.ArrayOf(types.Text)
	funcs.Register(&funcs.Func{Name: "pg_options_to_table", Deterministic: true, Overloads: []*funcs.Overload{{
		Params: []types.T{textArr}, Ret: func([]types.T) types.T { return types.Text }, NullStrict: true,
		Cols: func([]types.T) []funcs.Col {
			return []funcs.Col{{Name: "option_name", T: types.Text}, {Name: "option_value", T: types.Text}}
		},
		SRF: func(_ *funcs.Ctx, a []types.Datum) (funcs.RowIter, error) {
			elems, i := a[0].Elems(), 0
			return func() ([]types.Datum, bool, error) {
				for i < len(elems) {
					e := elems[i]
					i++
					if e.IsNull() {
						continue
					}
					name, value, ok := strings.Cut(e.S, "=")
					v := types.NullDatum
					if ok {
						v = types.NewText(value)
					}
					return []types.Datum{types.NewText(name), v}, true, nil
				}
				return nil, false, nil
			}, nil
		},
	}}})
}
