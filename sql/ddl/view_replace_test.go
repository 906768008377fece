package ddl

import (
	"testing"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

func TestCheckViewReplace(t *testing.T) {
	old := &catalog.Table{Name: "v", Kind: catalog.KindView, Columns: []catalog.Column{{Name: "k", Type: types.Int4}, {Name: "v", Type: types.Text}}}
	col := func(n string, typ types.T) plan.Column { return plan.Column{Name: n, T: typ} }
	for _, c := range []struct {
		cols []plan.Column
		code string
	}{
		{[]plan.Column{col("k", types.Int4), col("v", types.Text)}, ""},
		{[]plan.Column{col("k", types.Int4), col("v", types.Text), col("extra", types.Bool)}, ""},
		{[]plan.Column{col("k", types.Int4)}, pgerror.InvalidTableDefinition},
		{[]plan.Column{col("k", types.Int4), col("w", types.Text)}, pgerror.InvalidTableDefinition},
		{[]plan.Column{col("k", types.Int8), col("v", types.Text)}, pgerror.InvalidTableDefinition},
	} {
		if got := pgerror.Code(CheckViewReplace(old, c.cols)); (c.code == "" && CheckViewReplace(old, c.cols) != nil) || (c.code != "" && got != c.code) {
			t.Errorf("%v: got %v, want %q", c.cols, CheckViewReplace(old, c.cols), c.code)
		}
	}
}
