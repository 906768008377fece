package session

import (
	"context"
	"strings"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/dataset"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
)

func (s *Session) resolve(n parse.Name) (*catalog.Table, error) {
	t, err := s.cat.Resolve(n.Parts, s.resolvePath())
	if err != nil {
		if pe, ok := err.(*pgerror.Error); ok && pe.Position == 0 {
			pe.Position = n.Pos
		}
		return nil, err
	}
	return t, nil
}

// prepareExt binds mvserver's own statements.
func (s *Session) prepareExt(p *prepared) (*prepared, error) {
	switch x := p.st.Ext.(type) {
	case *parse.ShowDatasets:
		n, cols, err := dataset.Show(s.cat, s.txn, x)
		if err != nil {
			return nil, err
		}
		p.node, p.cols, p.rowsTag = n, cols, "SELECT"
	case *parse.DescribeHistory:
		t, err := s.resolve(x.Name)
		if err != nil {
			return nil, err
		}
		// A table's history tells what its writes did: SELECT, as reading
		// it (R-P2).
		if err := s.require(t, catalog.PrivSelect); err != nil {
			return nil, withPos(err, x.Name.Pos)
		}
		p.node = &plan.Rows{Cols: exec.HistoryColumns, Gen: "history", Arg: t.ID}
		p.cols, p.rowsTag = exec.HistoryColumns, "SELECT"
	case *parse.ShowTblProperties:
		t, err := s.resolve(x.Name)
		if err != nil {
			return nil, err
		}
		cols := []plan.Column{{Name: "key", T: types.Text}, {Name: "value", T: types.Text}}
		var rows [][]types.Datum
		for _, pr := range t.Properties {
			if x.Key != "" && !equalFold(pr.Key, x.Key) {
				continue
			}
			rows = append(rows, []types.Datum{types.NewText(pr.Key), types.NewText(pr.Value)})
		}
		if x.Key != "" && len(rows) == 0 {
			rows = append(rows, []types.Datum{types.NewText(x.Key), types.NewText("Table " + s.cat.QualifiedName(t) + " does not have property: " + x.Key)})
		}
		p.node, p.cols, p.rowsTag = plan.ValuesOf(cols, rows), cols, "SELECT"
	case *parse.DescribeTable:
		t, err := s.resolve(x.Name)
		if err != nil {
			return nil, err
		}
		cols := []plan.Column{{Name: "col_name", T: types.Text}, {Name: "data_type", T: types.Text}, {Name: "comment", T: types.Text}}
		var rows [][]types.Datum
		text := func(v string) types.Datum {
			if v == "" {
				return types.NullDatum
			}
			return types.NewText(v)
		}
		for _, c := range t.Columns {
			rows = append(rows, []types.Datum{types.NewText(c.Name), types.NewText(c.Type.SparkName()), text(c.Comment)})
		}
		if len(t.PartitionBy) > 0 {
			rows = append(rows, []types.Datum{types.NewText("# Partition Information"), types.NewText(""), types.NewText("")})
			rows = append(rows, []types.Datum{types.NewText("# col_name"), types.NewText("data_type"), types.NewText("comment")})
			for _, pc := range t.PartitionBy {
				if i := t.ColumnIndex(pc); i >= 0 {
					rows = append(rows, []types.Datum{types.NewText(pc), types.NewText(t.Columns[i].Type.SparkName()), text(t.Columns[i].Comment)})
				}
			}
		}
		if x.Extended {
			schema, _ := s.cat.SchemaByID(t.SchemaID)
			version, err := s.txn.TableVersion(storageID(t))
			if err != nil {
				return nil, err
			}
			var kvs []string
			for _, pr := range t.Properties {
				kvs = append(kvs, pr.Key+"="+pr.Value)
			}
			props := "[" + strings.Join(kvs, ",") + "]"
			rows = append(rows,
				[]types.Datum{types.NewText(""), types.NewText(""), types.NewText("")},
				[]types.Datum{types.NewText("# Detailed Table Information"), types.NewText(""), types.NewText("")},
				[]types.Datum{types.NewText("Catalog"), types.NewText(s.eng.Database), types.NullDatum},
				[]types.Datum{types.NewText("Database"), types.NewText(schema.Name), types.NullDatum},
				[]types.Datum{types.NewText("Table"), types.NewText(t.Name), types.NullDatum},
				[]types.Datum{types.NewText("Type"), types.NewText(describeType(t)), types.NullDatum},
				[]types.Datum{types.NewText("Provider"), types.NewText("delta"), types.NullDatum},
				[]types.Datum{types.NewText("Comment"), text(t.Comment), types.NullDatum},
				[]types.Datum{types.NewText("Version"), types.NewText(types.NewInt8(version).String()), types.NullDatum},
				[]types.Datum{types.NewText("Table Properties"), types.NewText(props), types.NullDatum},
			)
			if t.Dataset != nil {
				more, err := dataset.DescribeRows(s.cat, s.txn, s.eng.NextRun, t)
				if err != nil {
					return nil, err
				}
				rows = append(rows, more...)
			} else if t.Kind == catalog.KindView {
				rows = append(rows, []types.Datum{types.NewText("View Text"), types.NewText(t.Query), types.NullDatum})
			}
		}
		p.node, p.cols, p.rowsTag = plan.ValuesOf(cols, rows), cols, "SELECT"
	case *parse.CreateMaterializedView:
		if x.Explain && !x.Streaming {
			n, err := s.explainCreate(x)
			if err != nil {
				return nil, err
			}
			p.node, p.cols, p.rowsTag = n, dataset.ExplainCols, "EXPLAIN"
			return p, nil
		}
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) { return s.createMaterializedView(ctx, x) }
	case *parse.RefreshDataset:
		if x.Explain && !x.Streaming {
			n, err := s.explainRefresh(x)
			if err != nil {
				return nil, err
			}
			p.node, p.cols, p.rowsTag = n, dataset.ExplainCols, "EXPLAIN"
			return p, nil
		}
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) { return s.refreshDataset(ctx, x) }
	case *parse.DropDataset:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) {
			kind := catalog.KindMaterializedView
			if x.Streaming {
				kind = catalog.KindStreamingTable
			}
			names := make([][]string, len(x.Names))
			for i, n := range x.Names {
				names[i] = n.Parts
			}
			return s.dropRelations(kind, names, x.IfExists, x.Cascade)
		}
	case *parse.CancelRefresh:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) {
			t, err := s.resolve(x.Name)
			if err != nil {
				return "", err
			}
			if !t.IsDataset() {
				return "", pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a materialized view or streaming table", t.Name).WithPosition(x.Name.Pos)
			}
			// Who may start a refresh may stop one: REFRESH (MAINTAIN).
			if err := s.require(t, catalog.PrivMaintain); err != nil {
				return "", err
			}
			if !s.eng.Refresher.Cancel(t.ID) {
				s.notice("no refresh of %s is running", t.Name)
			}
			return "CANCEL REFRESH", nil
		}
	case *parse.AlterDataset:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) { return s.alterDataset(x) }
	case *parse.CheckDataset:
		return s.prepareCheck(p, x)
	case *parse.Vacuum:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) { return s.vacuum(x) }
	case *parse.AlterTblProperties:
		p.action = func(ctx context.Context, _ []types.Datum) (string, error) { return s.alterTblProperties(x) }
	default:
		return nil, pgerror.New(pgerror.FeatureNotSupported, "%s is not supported yet", commandWords(p.st.Text))
	}
	return p, nil
}

func describeType(t *catalog.Table) string {
	switch t.Kind {
	case catalog.KindMaterializedView:
		return "MATERIALIZED_VIEW"
	case catalog.KindStreamingTable:
		return "STREAMING_TABLE"
	case catalog.KindView:
		return "VIEW"
	}
	return "MANAGED"
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x >= 'A' && x <= 'Z' {
			x += 32
		}
		if y >= 'A' && y <= 'Z' {
			y += 32
		}
		if x != y {
			return false
		}
	}
	return true
}
