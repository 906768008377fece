package plan

import (
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// The system column tableoid: every table and every pg_catalog or
// information_schema relation answers rel.tableoid (and an unqualified
// tableoid when it is the only such relation in its FROM clause) with its
// OID, as PostgreSQL does; pg_dump selects it from every catalog it
// reads. It is not stored and * does not expand to it. A derived table,
// function or WITH query has none (42703, as in PostgreSQL).

// TableOIDColumn is the system column's name.
const TableOIDColumn = "tableoid"

// withTableOID returns s noting that its relation rel is the one of OID
// oid.
func (s *scope) withTableOID(rel string, oid uint32) *scope {
	s.oids = map[string]uint32{rel: oid}
	return s
}

// mergeOIDs is the tableoid map of a scope joining a and b.
func mergeOIDs(a, b map[string]uint32) map[string]uint32 {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	m := make(map[string]uint32, len(a)+len(b))
	for k, v := range a {
		m[k] = v
	}
	for k, v := range b {
		m[k] = v
	}
	return m
}

// tableOID resolves rel.tableoid (rel "": unqualified) in s alone: ok
// false when s has no such relation.
func (s *scope) tableOID(b *Binder, rel string, loc int32) (Expr, bool, error) {
	if len(s.oids) == 0 {
		return nil, false, nil
	}
	var oid uint32
	if rel != "" {
		o, ok := s.oids[rel]
		if !ok {
			return nil, false, nil
		}
		oid = o
	} else {
		if len(s.oids) > 1 {
			return nil, false, b.errAt(loc, pgerror.AmbiguousColumn, "column reference \"%s\" is ambiguous", TableOIDColumn)
		}
		for _, o := range s.oids {
			oid = o
		}
	}
	return &Const{D: types.NewInt(types.KindOid, int64(oid)), T: types.Oid}, true, nil
}
