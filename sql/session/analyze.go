package session

import (
	"context"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/stats"
)

// analyzeTarget is one relation of an ANALYZE (or VACUUM ANALYZE) and
// the column positions named (nil: all).
type analyzeTarget struct {
	t    *catalog.Table
	cols []int
}

// analyzeColumns resolves ANALYZE t (cols): PostgreSQL refuses a column
// list without ANALYZE and a column that does not exist.
func analyzeColumns(t *catalog.Table, names []*pg_query.Node, analyze bool) ([]int, error) {
	if len(names) == 0 {
		return nil, nil
	}
	if !analyze {
		return nil, pgerror.New(pgerror.InvalidParameterValue, "ANALYZE option must be specified when a column list is provided")
	}
	var cols []int
	for _, n := range names {
		name := n.GetString_().GetSval()
		pos := -1
		for i, c := range t.Columns {
			if c.Name == name {
				pos = i
				break
			}
		}
		if pos < 0 {
			return nil, pgerror.New(pgerror.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, t.Name)
		}
		for _, p := range cols {
			if p == pos {
				return nil, pgerror.New(pgerror.DuplicateColumn, "column \"%s\" of relation \"%s\" appears more than once", name, t.Name)
			}
		}
		cols = append(cols, pos)
	}
	return cols, nil
}

// analyzeTable collects a's statistics in the statement's transaction
// (stats.Analyze), reporting as PostgreSQL's ANALYZE VERBOSE does.
func (s *Session) analyzeTable(ctx context.Context, a analyzeTarget, verbose bool) error {
	name := s.cat.QualifiedName(a.t)
	if verbose {
		s.infoMsg("analyzing \"%s\"", strings.ReplaceAll(name, "\"", ""))
	}
	ts, err := stats.Analyze(ctx, s.txn, a.t, stats.Options{Columns: a.cols})
	if err != nil {
		if ctx.Err() != nil {
			return pgerror.New(pgerror.QueryCanceled, "canceling statement due to user request")
		}
		return mapStorageErr(err)
	}
	if verbose {
		sample := min(int(ts.Rows), 300*stats.DefaultTarget)
		s.infoMsg("\"%s\": scanned %d of %d pages, containing %.0f live rows and 0 dead rows; %d rows in sample, %.0f estimated total rows",
			a.t.Name, ts.Pages, ts.Pages, ts.Rows, sample, ts.Rows)
	}
	return nil
}

// infoMsg queues an INFO message (ANALYZE VERBOSE's).
func (s *Session) infoMsg(format string, args ...any) {
	n := pgerror.Notice(format, args...)
	n.Severity = "INFO"
	s.notices = append(s.notices, n)
}
