package session

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	"github.com/mvserver/mvserver/sql/parse"
)

// createStreamingTable runs CREATE [OR REFRESH] STREAMING TABLE (R-ST1) and
// its first refresh, in the statement's transaction. CREATE OR REFRESH of an
// existing table keeps its rows and checkpoints: a changed definition (query,
// columns, clauses) is stored and applies to the rows committed from now on
// (R-ST2), then the table is refreshed.
func (s *Session) createStreamingTable(ctx context.Context, c *parse.CreateMaterializedView) (string, error) {
	if c.Explain {
		return "", pgerror.New(pgerror.FeatureNotSupported, "EXPLAIN CREATE STREAMING TABLE is not supported").
			WithHint("A streaming table's refresh always processes the rows its streams gained; CREATE itself reports what its query cannot do.")
	}
	if c.Mode == parse.CreateOrReplace {
		return "", pgerror.New(pgerror.FeatureNotSupported, "CREATE OR REPLACE STREAMING TABLE is not supported").
			WithHint("Use CREATE OR REFRESH STREAMING TABLE (it keeps the rows; a new definition applies to new rows), or DROP STREAMING TABLE and CREATE it again.")
	}
	const tag = "CREATE STREAMING TABLE"
	schema, name, old, skip, err := s.datasetTarget(c, catalog.KindStreamingTable,
		"CREATE OR REFRESH STREAMING TABLE refreshes it (and applies a changed definition to new rows).")
	if err != nil {
		return "", err
	}
	if skip {
		return tag, nil
	}
	exists := old != nil
	refs, err := parse.ExtractStreams(c.Query)
	if err != nil {
		return "", err
	}
	ids, err := s.references(c.Query)
	if err != nil {
		return "", err
	}
	if err := s.refuseTemp(schema, ids); err != nil {
		return "", err
	}
	streams, err := s.streamSources(c.Query, refs, ids)
	if err != nil {
		return "", err
	}
	b := s.binder(c.Query, nil)
	q, err := b.BindSelect(c.Query.AST.GetSelectStmt())
	if err != nil {
		return "", err
	}
	if len(b.Params) > 0 {
		return "", pgerror.New(pgerror.FeatureNotSupported, "a streaming table's query cannot have parameters")
	}
	if err := refresh.CheckStreamingQuery(q.Root, streams); err != nil {
		return "", err
	}
	text, err := parse.Deparse(c.Query.AST)
	if err != nil {
		return "", err
	}
	if exists && dependsOnAny(s.cat, ids, old.ID) {
		return "", pgerror.New(pgerror.InvalidObjectDefinition, "streaming table \"%s\" would depend on itself", name)
	}
	t, ds := s.newDataset(catalog.KindStreamingTable, schema.ID, name, text, ids, c)
	ds.Streams = streams
	dataset.ClausesToCatalog(&c.Clauses, ds)
	if err := s.datasetDefinition(t, c, q.Cols, tag); err != nil {
		return "", err
	}
	if err := dataset.CheckStreamingProperties(t); err != nil {
		return "", err
	}
	cat := s.cat.Clone()
	if exists {
		t.ID, t.Owner, t.ACL = old.ID, old.Owner, old.ACL
		if err := carryColumns(old, t); err != nil {
			return "", err
		}
	}
	// As for materialized views: refreshing an unchanged table needs
	// REFRESH (MAINTAIN); redefining it needs CREATE on the schema and its
	// ownership, and it keeps its owner and grants.
	if exists && sameDescriptor(old, t) {
		if err := s.require(old, catalog.PrivMaintain); err != nil {
			return "", err
		}
	} else {
		if err := s.requireCreate(schema); err != nil {
			return "", err
		}
		if exists {
			if err := s.requireOwner(old); err != nil {
				return "", err
			}
		}
	}
	if s.eng.ValidateDataset != nil {
		if err := s.eng.ValidateDataset(s.cat, t); err != nil {
			return "", err
		}
	}
	if exists {
		s.streamRefreshes = append(s.streamRefreshes, name)
		if sameDescriptor(old, t) {
			return tag, s.refreshInTxn(ctx, old.ID, false)
		}
		s.datasets = append(s.datasets, t.ID)
		cat.PutTable(t)
		if err := s.persist(cat, []uint32{t.ID}, nil); err != nil {
			return "", err
		}
		if err := s.txn.RecordVersion(t.StorageInfo(), "CREATE OR REFRESH STREAMING TABLE", map[string]string{"query": text}); err != nil {
			return "", mapStorageErr(err)
		}
		if err := s.logUserAction(t, "altered"); err != nil {
			return "", err
		}
		return tag, s.refreshInTxn(ctx, t.ID, false)
	}
	if err := s.storeNewDataset(cat, t, tag); err != nil {
		return "", err
	}
	return tag, s.refreshInTxn(ctx, t.ID, false)
}

// streamSources decides which relations a streaming table's query reads as
// streams: the STREAM(name) items, or, when there are none, the one
// relation the query reads. A plain view stands for the relations it reads.
// Only tables and streaming tables can be streams, each needs its change
// data feed (new rows are read from it), and none may also be read whole.
func (s *Session) streamSources(q *parse.Statement, refs []parse.StreamRef, ids []uint32) ([]uint32, error) {
	var named []*catalog.Table
	if len(refs) > 0 {
		ctes := parse.CTENames(q.AST)
		for _, r := range refs {
			rv := r.RangeVar
			if rv.Schemaname == "" && rv.Catalogname == "" && ctes[rv.Relname] {
				return nil, q.Errorf(r.Location, pgerror.FeatureNotSupported, "STREAM(%s) names a WITH query; STREAM takes a table", rv.Relname).
					WithHint("Read the stream with STREAM(table) inside the WITH query.")
			}
			t, err := s.cat.Resolve(parse.RangeVarParts(rv), s.resolvePath())
			if err != nil {
				return nil, withPosition(err, q, rv.Location)
			}
			named = append(named, t)
		}
		// A relation read as a stream must not also be read whole.
		streamed := map[*pg_query.RangeVar]bool{}
		for _, r := range refs {
			streamed[r.RangeVar] = true
		}
		ctesUsed := parse.CTENames(q.AST)
		for _, rv := range parse.RangeVars(q.AST) {
			if streamed[rv] || rv.Schemaname == "" && rv.Catalogname == "" && ctesUsed[rv.Relname] {
				continue
			}
			t, err := s.cat.Resolve(parse.RangeVarParts(rv), s.resolvePath())
			if err != nil {
				return nil, withPosition(err, q, rv.Location)
			}
			for _, n := range named {
				if n.ID == t.ID {
					return nil, q.Errorf(rv.Location, pgerror.FeatureNotSupported, "%s is read both as a stream and whole", t.Name).
						WithHint("Read it with STREAM(…) everywhere or nowhere in the query.")
				}
			}
		}
	} else {
		var names []string
		for _, id := range ids {
			if t, ok := s.cat.Table(id); ok {
				names = append(names, s.cat.QualifiedName(t))
			}
		}
		switch len(ids) {
		case 0:
			return nil, pgerror.New(pgerror.InvalidObjectDefinition, "the query of a streaming table must read a table").
				WithHint("e.g. CREATE STREAMING TABLE name AS SELECT … FROM STREAM(source).")
		case 1:
			t, _ := s.cat.Table(ids[0])
			named = append(named, t)
		default:
			return nil, pgerror.New(pgerror.InvalidObjectDefinition, "the query of a streaming table reads several relations (%s): say which one is the stream", strings.Join(names, ", ")).
				WithHint("Read the stream with STREAM(name), e.g. FROM STREAM(%s) JOIN …; the others are read whole at each refresh.", names[0])
		}
	}
	var out []uint32
	seen := map[uint32]bool{}
	var add func(t *catalog.Table, via string) error
	add = func(t *catalog.Table, via string) error {
		if seen[t.ID] {
			return nil
		}
		seen[t.ID] = true
		qn := s.cat.QualifiedName(t)
		switch {
		case catalog.IsSystem(t):
			return pgerror.New(pgerror.FeatureNotSupported, "system view %s cannot be read as a stream", t.Name)
		case t.Kind == catalog.KindView:
			for _, d := range t.DependsOn {
				u, ok := s.cat.Table(d)
				if !ok {
					continue
				}
				if err := add(u, qn); err != nil {
					return err
				}
			}
			return nil
		case t.Kind == catalog.KindMaterializedView:
			e := pgerror.New(pgerror.FeatureNotSupported, "materialized view %s cannot be read as a stream: its refreshes update and delete rows", qn)
			if via != "" {
				e.Message += " (it is read through view " + via + ")"
			}
			return e.WithHint("Stream the materialized view's own sources, or read it whole in a join with a stream.")
		}
		if !t.ChangeDataFeed() {
			kind := "TABLE"
			if t.Kind == catalog.KindStreamingTable {
				kind = "STREAMING TABLE"
			}
			return pgerror.New(pgerror.ObjectNotInPrerequisiteState, "%s cannot be read as a stream: it does not record a change data feed, which a streaming table reads new rows from", qn).
				WithHint("ALTER %s %s SET TBLPROPERTIES (delta.enableChangeDataFeed = true)", kind, qn)
		}
		out = append(out, t.ID)
		return nil
	}
	for _, t := range named {
		if err := add(t, ""); err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

// carryColumns gives t (a streaming table's new definition) the column ids
// of old's columns of the same name, so the rows already stored keep their
// values under it; a new column gets a new id (older rows read NULL). A
// column whose type changes cannot be carried: the stored rows hold the old
// type.
func carryColumns(old, t *catalog.Table) error {
	next := old.NextColID
	for i := range t.Columns {
		c := &t.Columns[i]
		if j := old.ColumnIndex(c.Name); j >= 0 {
			oc := old.Columns[j]
			if oc.Type != c.Type {
				return pgerror.New(pgerror.InvalidTableDefinition, "cannot change the type of column \"%s\" of streaming table \"%s\" from %s to %s: its rows already hold %s values",
					c.Name, t.Name, oc.Type.SparkName(), c.Type.SparkName(), oc.Type.SparkName()).
					WithHint("Keep the type with a CAST in the query, or DROP STREAMING TABLE and CREATE it again to reprocess every row with the new type.")
			}
			c.ID = oc.ID
			continue
		}
		c.ID = next
		next++
	}
	t.NextColID = next
	return nil
}

// sameDescriptor reports whether two descriptors of one table are equal.
func sameDescriptor(a, b *catalog.Table) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
