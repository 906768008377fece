package exec

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/storage"
)

// changedRows are, per table, the keys of the rows that the parts of a
// statement with data-modifying WITH queries have updated or deleted so
// far. A later part's UPDATE or DELETE reads its target as it was at the
// statement's start (plan/bind_modifying_with.go) and skips these rows,
// as PostgreSQL skips a row its own command already changed: each row is
// changed at most once per statement.
type changedRows map[storage.TableID]map[string]struct{}

// trackChanges starts noting the rows c's statement updates and deletes.
func (c *Ctx) trackChanges() {
	st := c.state()
	if st.changed == nil {
		st.changed = changedRows{}
	}
}

// storageKey is the storage key of row (t's scan layout, row id included).
func storageKey(codec *tableCodec, t *catalog.Table, row Row) ([]byte, error) {
	if len(t.PrimaryKey) > 0 {
		return codec.key(row)
	}
	return storage.RowIDKey(row[len(t.Columns)].I), nil
}

// noteChanged records that the statement updated or deleted t's row at
// key (nothing unless trackChanges ran).
func (c *Ctx) noteChanged(t *catalog.Table, key []byte) {
	if c.stmt == nil || c.stmt.changed == nil {
		return
	}
	id := storage.TableID(t.ID)
	m := c.stmt.changed[id]
	if m == nil {
		m = map[string]struct{}{}
		c.stmt.changed[id] = m
	}
	m[string(key)] = struct{}{}
}

// unchanged drops from rows (t's scan layout, row id included), the rows
// an UPDATE or DELETE is about to change, those an earlier part of the
// statement already updated or deleted.
func (c *Ctx) unchanged(t *catalog.Table, rows []Row) ([]Row, error) {
	if c.stmt == nil || len(c.stmt.changed[storage.TableID(t.ID)]) == 0 {
		return rows, nil
	}
	done := c.stmt.changed[storage.TableID(t.ID)]
	codec := newTableCodec(t)
	out := rows[:0]
	for _, r := range rows {
		key, err := storageKey(codec, t, r)
		if err != nil {
			return nil, err
		}
		if _, ok := done[string(key)]; !ok {
			out = append(out, r)
		}
	}
	return out, nil
}
