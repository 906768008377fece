package plan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// userType resolves a type name to a user-defined enum type (CREATE TYPE
// … AS ENUM). A bare name that is also a built-in type's is the
// built-in's: pg_catalog comes first on every search path. ok is false
// when the name is no enum type.
func (b *Binder) userType(tn *pg_query.TypeName, parts []string) (types.T, bool, error) {
	if b.Cat == nil || len(parts) > 2 || len(parts) == 2 && parts[0] == "pg_catalog" {
		return types.T{}, false, nil
	}
	if len(parts) == 1 {
		if _, builtin := types.ParseTypeName(parts[0], nil); builtin {
			return types.T{}, false, nil
		}
	}
	e, ok := b.Cat.ResolveEnum(parts, b.SearchPath)
	if !ok {
		return types.T{}, false, nil
	}
	if len(tn.ArrayBounds) > 0 {
		return types.T{}, true, b.errAt(tn.Location, pgerror.FeatureNotSupported, "arrays of enum types (%s[]) are not supported yet", e.Name)
	}
	if len(tn.Typmods) > 0 {
		return types.T{}, true, b.errAt(tn.Location, pgerror.SyntaxError, "type modifier is not allowed for type \"%s\"", e.Name)
	}
	return e.T(), true, nil
}

// sameEnum reports whether a and b are not two different enum types
// (PostgreSQL has no cast or operator between distinct enums).
func sameEnum(a, b types.T) bool {
	if a.Kind != types.KindEnum || b.Kind != types.KindEnum {
		return true
	}
	return a.Enum != nil && b.Enum != nil && a.Enum.OID == b.Enum.OID
}
