package exec

import (
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// appendArrayKey appends the order-preserving key encoding of an array
// (a primary-key column of an array type), built from storage's
// encodings so that bytes order as array_cmp orders arrays: a header
// (above NULL), then per element a tag — false before a value, true for a
// NULL element, so NULL elements sort after every value — and the end as
// a NULL, below any tag, so a proper prefix sorts first.
func appendArrayKey(b []byte, d types.Datum) ([]byte, error) {
	b = storage.AppendBool(b, true)
	for _, e := range d.Elems() {
		if e.IsNull() {
			b = storage.AppendBool(b, true)
			continue
		}
		b = storage.AppendBool(b, false)
		var err error
		if b, err = appendKeyDatum(b, e); err != nil {
			return nil, err
		}
	}
	return storage.AppendNull(b), nil
}
