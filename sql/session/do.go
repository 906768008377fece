package session

import (
	"context"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plpgsql"
	"github.com/mvserver/mvserver/sql/types"
)

// DO: sql/plpgsql parses and interprets the block; the session is its
// Runner, running each statement in the session's transaction as
// PostgreSQL runs a DO block's.

func (s *Session) prepareDo(p *prepared, n *pg_query.DoStmt) (*prepared, error) {
	blk, err := plpgsql.Parse(n)
	if err != nil {
		return nil, err
	}
	p.action = func(ctx context.Context, _ []types.Datum) (string, error) {
		return "DO", plpgsql.Run(ctx, blk, doRunner{s})
	}
	return p, nil
}

// doRunner runs a DO block's statements for plpgsql.Run.
type doRunner struct{ s *Session }

func (r doRunner) Notice(n *pgerror.Error) { r.s.notices = append(r.s.notices, n) }

// Run prepares sql with every parameter text (the block casts them) and
// runs it: a query's rows in the text format, a command's row count.
func (r doRunner) Run(ctx context.Context, sql string, params []*string) (*plpgsql.Result, error) {
	s := r.s
	st, err := parse.ParseOne(sql)
	if err != nil {
		return nil, err
	}
	if st == nil {
		return &plpgsql.Result{}, nil
	}
	if classifyTxn(st) != notTxnControl {
		return nil, pgerror.New(pgerror.FeatureNotSupported, "transaction control in a DO block is not supported")
	}
	ptypes := make([]types.T, len(params))
	args := make([]types.Datum, len(params))
	for i, v := range params {
		ptypes[i] = types.Text
		args[i] = types.NullDatum
		if v != nil {
			args[i] = types.NewText(*v)
		}
	}
	p, err := s.prepare(st, ptypes)
	if err != nil {
		return nil, err
	}
	switch {
	case p.copy != nil:
		return nil, pgerror.New(pgerror.FeatureNotSupported, "COPY in a DO block is not supported")
	case p.node != nil:
		res := &plpgsql.Result{Cols: []plpgsql.Column{}}
		for _, c := range p.cols {
			res.Cols = append(res.Cols, plpgsql.Column{Name: c.Name, Type: c.T.String()})
		}
		p.params = args
		err := s.drainQuery(ctx, p, func(rows []exec.Row) error {
			for _, row := range rows {
				out := make([]*string, len(row))
				for i, d := range row[:min(len(row), len(p.cols))] {
					if !d.IsNull() {
						text := string(types.AppendText(nil, d, s.env))
						out[i] = &text
					}
				}
				res.Rows = append(res.Rows, out)
			}
			return ctx.Err()
		})
		if err != nil {
			return nil, mapStorageErr(err)
		}
		return res, nil
	default:
		tag, err := p.action(ctx, args)
		if err != nil {
			return nil, mapStorageErr(err)
		}
		res := &plpgsql.Result{}
		if i := strings.LastIndexByte(tag, ' '); i >= 0 {
			res.Affected, _ = strconv.ParseInt(tag[i+1:], 10, 64)
		}
		return res, nil
	}
}
