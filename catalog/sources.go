package catalog

// WalkSources visits what a dataset reading ids reads: every relation ids
// name and, for a plain view, the relations its query reads in turn (a plain
// view is expanded where it is read, so its sources are the reader's). Each
// id is visited once, depth first in list order, a plain view before its own
// sources. visit gets the id, its table (nil when the catalog no longer
// holds it) and whether the walk reached it through a plain view. The walk
// stops at the first error visit returns and returns it.
func (c *Catalog) WalkSources(ids []uint32, visit func(id uint32, t *Table, viaView bool) error) error {
	seen := map[uint32]bool{}
	var walk func(ids []uint32, viaView bool) error
	walk = func(ids []uint32, viaView bool) error {
		for _, id := range ids {
			if seen[id] {
				continue
			}
			seen[id] = true
			t, _ := c.Table(id)
			if err := visit(id, t, viaView); err != nil {
				return err
			}
			if t != nil && t.Kind == KindView {
				if err := walk(t.DependsOn, true); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(ids, false)
}

// StoredSources lists the relations with stored rows (tables, materialized
// views, streaming tables) that a dataset reading ids reads, looking through
// plain views, in WalkSources' order. Ids the catalog no longer holds are
// left out.
func (c *Catalog) StoredSources(ids []uint32) []*Table {
	var out []*Table
	_ = c.WalkSources(ids, func(_ uint32, t *Table, _ bool) error {
		if t != nil && t.Kind != KindView {
			out = append(out, t)
		}
		return nil
	})
	return out
}
