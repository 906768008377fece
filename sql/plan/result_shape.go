package plan

import (
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// CheckSameResult is PostgreSQL's check when a prepared statement is
// planned again (after DDL): the client was told the result's columns
// (its RowDescription) when it prepared the statement, so a new plan
// whose columns differ in number, name or type fails with 0A000 "cached
// plan must not change result type" rather than send rows the client
// cannot read. described is what the client was told, now the new plan's.
func CheckSameResult(described, now []Column) error {
	same := len(described) == len(now)
	for i := 0; same && i < len(now); i++ {
		a, b := described[i], now[i]
		same = a.Name == b.Name && a.T.OID() == b.T.OID() && sameTypmod(a.T, b.T)
	}
	if !same {
		return pgerror.New(pgerror.FeatureNotSupported, "cached plan must not change result type")
	}
	return nil
}

func sameTypmod(a, b types.T) bool {
	return a.Width == b.Width && a.Precision == b.Precision && a.Scale == b.Scale
}
