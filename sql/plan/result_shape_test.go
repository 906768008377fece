package plan

import (
	"testing"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

func TestCheckSameResult(t *testing.T) {
	cols := []Column{{Name: "id", T: types.Int4}, {Name: "name", T: types.T{Kind: types.KindVarchar, Width: 80}}}
	if err := CheckSameResult(cols, append([]Column(nil), cols...)); err != nil {
		t.Fatalf("same columns: %v", err)
	}
	for name, now := range map[string][]Column{
		"added":   append(append([]Column(nil), cols...), Column{Name: "email", T: types.Text}),
		"renamed": {cols[0], {Name: "label", T: cols[1].T}},
		"retyped": {{Name: "id", T: types.Int8}, cols[1]},
		"widened": {cols[0], {Name: "name", T: types.T{Kind: types.KindVarchar, Width: 120}}},
	} {
		err := CheckSameResult(cols, now)
		if pe, ok := err.(*pgerror.Error); !ok || pe.Code != pgerror.FeatureNotSupported || pe.Message != "cached plan must not change result type" {
			t.Errorf("%s: got %v, want 0A000 cached plan must not change result type", name, err)
		}
	}
}
