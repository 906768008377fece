package plan

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
)

// RelationUse is one place a query names a relation of the catalog (a
// table, view, materialized view, streaming table or sequence) by name:
// From is a FROM item that resolved to it, Qualifier a column reference
// (or rel.*) qualified by the name of such an unaliased FROM item. One of
// the two is set. PostgreSQL keeps a view's query as a tree of OIDs, so
// its views follow ALTER … RENAME TO and SET SCHEMA; mvserver keeps SQL
// text, and these are the names that text must change (sql/ddl). Only the
// query's own names count: those inside a plain view it reads belong to
// that view.
type RelationUse struct {
	Table     uint32
	From      *pg_query.RangeVar
	Qualifier *pg_query.ColumnRef
}

// noteRelation records the FROM item rv that resolved to t when the binder
// collects relation uses.
func (b *Binder) noteRelation(rv *pg_query.RangeVar, t *catalog.Table) {
	if b.relUses != nil {
		*b.relUses = append(*b.relUses, RelationUse{Table: t.ID, From: rv})
	}
}

// noteQualifier records ref, qualified by rel, when rel is in s the name
// of exactly one unaliased relation.
func (b *Binder) noteQualifier(s *scope, ref *pg_query.ColumnRef, rel string) {
	if b.relUses == nil || ref == nil || rel == "" {
		return
	}
	var id uint32
	for k, r := range s.rels {
		if r != rel || k >= len(s.relIDs) || s.relIDs[k] == 0 {
			continue
		}
		if id != 0 && id != s.relIDs[k] {
			return
		}
		id = s.relIDs[k]
	}
	if id != 0 {
		*b.relUses = append(*b.relUses, RelationUse{Table: id, Qualifier: ref})
	}
}
