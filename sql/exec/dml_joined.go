package exec

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/storage"
)

// firstPerRow keeps, of the rows an UPDATE … FROM or DELETE … USING
// joined (t's scan layout first), the first of each target row: PostgreSQL
// updates or deletes a row once however many FROM rows it joins.
func firstPerRow(t *catalog.Table, rows []Row) ([]Row, error) {
	codec := newTableCodec(t)
	seen := make(map[string]bool, len(rows))
	out := rows[:0]
	for _, r := range rows {
		var key []byte
		if len(t.PrimaryKey) > 0 {
			var err error
			if key, err = codec.key(r); err != nil {
				return nil, err
			}
		} else {
			key = storage.RowIDKey(r[len(t.Columns)].I)
		}
		if seen[string(key)] {
			continue
		}
		seen[string(key)] = true
		out = append(out, r)
	}
	return out, nil
}
