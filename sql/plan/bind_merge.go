package plan

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/parse"
)

// MERGE (PostgreSQL 15): each source row is joined to the target rows
// the ON condition matches; a matched pair takes the first WHEN MATCHED
// clause whose AND condition is true, an unmatched source row the first
// WHEN NOT MATCHED clause. The binder rewrites the statement into the
// data-modifying WITH queries of one statement (bind_modifying_with.go),
// one per acting clause, so every part reads the tables as they were when
// MERGE began and each target row is changed at most once:
//
//	WHEN MATCHED AND c THEN UPDATE SET …  → UPDATE target SET … FROM source WHERE on AND c AND <earlier matched conditions> IS NOT TRUE
//	WHEN MATCHED AND c THEN DELETE        → DELETE FROM target USING source WHERE …, the same
//	WHEN NOT MATCHED AND c THEN INSERT …  → INSERT INTO target (…) SELECT … FROM source WHERE NOT EXISTS (target rows ON matches) AND c AND …
//	DO NOTHING                            → no query; it only shadows the clauses after it
//
// The statement's one row is the number of rows changed (MERGE n).
//
// A target row that two source rows would update or delete fails the
// statement with 21000 before anything changes (BindMerge's check).
//
// Not yet (0A000): INSERT DEFAULT VALUES or DEFAULT in
// the VALUES list; MERGE … RETURNING and WHEN NOT MATCHED BY SOURCE
// (PostgreSQL 17); a WITH clause on MERGE.

// BindMerge binds a MERGE statement into a SELECT whose data-modifying
// WITH queries do the work and whose one bigint column counts them.
//
// check, when not nil, returns a row when a target row would be updated
// or deleted by two source rows: MERGE then fails with 21000, as in
// PostgreSQL, before it changes anything (run it first, in the same
// snapshot). It needs the target's row ids (row tracking); without them
// there is no check.
func (b *Binder) BindMerge(m *pg_query.MergeStmt) (q, check *Query, err error) {
	sel, chk, err := b.mergeRewrite(m)
	if err != nil {
		return nil, nil, err
	}
	if chk != nil {
		// Bound first: the main query's WITH queries make later reads of
		// the target read their snapshot copy.
		if check, err = b.BindSelect(chk); err != nil {
			return nil, nil, err
		}
	}
	if q, err = b.BindSelect(sel); err != nil {
		return nil, nil, err
	}
	return q, check, nil
}

// ErrMergeTwice is PostgreSQL's error for a target row two source rows
// update or delete.
func ErrMergeTwice() error {
	return pgerror.New(pgerror.CardinalityViolation, "MERGE command cannot affect row a second time").
		WithHint("Ensure that not more than one source row matches any one target row.")
}

func (b *Binder) mergeRewrite(m *pg_query.MergeStmt) (*pg_query.SelectStmt, *pg_query.SelectStmt, error) {
	switch {
	case m.WithClause != nil:
		return nil, nil, pgerror.New(pgerror.FeatureNotSupported, "WITH before MERGE is not supported yet")
	case len(m.ReturningList) > 0:
		return nil, nil, pgerror.New(pgerror.FeatureNotSupported, "MERGE … RETURNING is not supported (PostgreSQL 15 has no such clause)")
	}
	t, err := b.Cat.Resolve(parse.RangeVarParts(m.Relation), b.SearchPath)
	if err == nil && t.Kind != catalog.KindTable {
		return nil, nil, b.errAt(m.Relation.Location, pgerror.FeatureNotSupported, "cannot execute MERGE on relation \"%s\"", t.Name)
	}
	var ctes []*pg_query.Node
	var acting []*pg_query.Node                         // the WHERE of each matched UPDATE or DELETE
	var matchedBefore, unmatchedBefore []*pg_query.Node // conditions of earlier clauses
	matchedAll, unmatchedAll := false, false            // an earlier clause without condition
	for i, n := range m.MergeWhenClauses {
		w := n.GetMergeWhenClause()
		if w == nil {
			continue
		}
		matched := w.MatchKind == pg_query.MergeMatchKind_MERGE_WHEN_MATCHED
		if w.MatchKind == pg_query.MergeMatchKind_MERGE_WHEN_NOT_MATCHED_BY_SOURCE {
			return nil, nil, pgerror.New(pgerror.FeatureNotSupported, "WHEN NOT MATCHED BY SOURCE is not supported (PostgreSQL 15 has no such clause)")
		}
		before, all := &unmatchedBefore, &unmatchedAll
		if matched {
			before, all = &matchedBefore, &matchedAll
		}
		if *all {
			continue // an earlier unconditional clause takes every row
		}
		conds := []*pg_query.Node{}
		if matched {
			conds = append(conds, m.JoinCondition)
		} else {
			conds = append(conds, notExists(m))
		}
		if w.Condition != nil {
			conds = append(conds, w.Condition)
		}
		for _, c := range *before {
			conds = append(conds, &pg_query.Node{Node: &pg_query.Node_BooleanTest{BooleanTest: &pg_query.BooleanTest{Arg: c, Booltesttype: pg_query.BoolTestType_IS_NOT_TRUE, Location: -1}}})
		}
		if w.Condition != nil {
			*before = append(*before, w.Condition)
		} else {
			*all = true
		}
		where := pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, conds, -1)
		ret := []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(pg_query.MakeAConstIntNode(1, -1), -1)}
		var stmt *pg_query.Node
		switch w.CommandType {
		case pg_query.CmdType_CMD_NOTHING:
			continue
		case pg_query.CmdType_CMD_UPDATE:
			acting = append(acting, where)
			stmt = &pg_query.Node{Node: &pg_query.Node_UpdateStmt{UpdateStmt: &pg_query.UpdateStmt{Relation: m.Relation,
				TargetList: w.TargetList, FromClause: []*pg_query.Node{m.SourceRelation}, WhereClause: where, ReturningList: ret}}}
		case pg_query.CmdType_CMD_DELETE:
			acting = append(acting, where)
			stmt = &pg_query.Node{Node: &pg_query.Node_DeleteStmt{DeleteStmt: &pg_query.DeleteStmt{Relation: m.Relation,
				UsingClause: []*pg_query.Node{m.SourceRelation}, WhereClause: where, ReturningList: ret}}}
		case pg_query.CmdType_CMD_INSERT:
			if len(w.Values) == 0 {
				return nil, nil, pgerror.New(pgerror.FeatureNotSupported, "MERGE … INSERT DEFAULT VALUES is not supported yet").
					WithHint("List the columns and their values.")
			}
			for _, v := range w.Values {
				if v.GetSetToDefault() != nil {
					return nil, nil, pgerror.New(pgerror.FeatureNotSupported, "DEFAULT in MERGE's INSERT values is not supported yet").
						WithHint("Leave the column out of the column list instead.")
				}
			}
			var targets []*pg_query.Node
			for _, v := range w.Values {
				targets = append(targets, pg_query.MakeResTargetNodeWithVal(v, -1))
			}
			// The values read the source only: the target without its alias.
			r := m.Relation
			rel := pg_query.RangeVar{Catalogname: r.Catalogname, Schemaname: r.Schemaname, Relname: r.Relname, Inh: r.Inh, Relpersistence: r.Relpersistence, Location: r.Location}
			src := &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{Op: pg_query.SetOperation_SETOP_NONE, LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT, TargetList: targets,
				FromClause: []*pg_query.Node{m.SourceRelation}, WhereClause: where}}}
			stmt = &pg_query.Node{Node: &pg_query.Node_InsertStmt{InsertStmt: &pg_query.InsertStmt{Relation: &rel, Cols: w.TargetList,
				SelectStmt: src, ReturningList: ret, Override: w.Override}}}
		default:
			return nil, nil, pgerror.New(pgerror.FeatureNotSupported, "this MERGE action is not supported")
		}
		ctes = append(ctes, &pg_query.Node{Node: &pg_query.Node_CommonTableExpr{CommonTableExpr: &pg_query.CommonTableExpr{
			Ctename: mergeCTEName(i), Ctequery: stmt, Ctematerialized: pg_query.CTEMaterialize_CTEMaterializeDefault, Location: -1}}})
	}
	// SELECT (SELECT count(*) FROM m0) + (SELECT count(*) FROM m1) + …
	var sum *pg_query.Node
	for _, c := range ctes {
		name := c.GetCommonTableExpr().Ctename
		cnt := &pg_query.Node{Node: &pg_query.Node_SubLink{SubLink: &pg_query.SubLink{SubLinkType: pg_query.SubLinkType_EXPR_SUBLINK, Location: -1,
			Subselect: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{Op: pg_query.SetOperation_SETOP_NONE, LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT,
				TargetList: []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(&pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: &pg_query.FuncCall{
					Funcname: []*pg_query.Node{pg_query.MakeStrNode("count")}, AggStar: true, Location: -1}}}, -1)},
				FromClause: []*pg_query.Node{pg_query.MakeSimpleRangeVarNode(name, -1)}}}}}}}
		if sum == nil {
			sum = cnt
		} else {
			sum = pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("+")}, sum, cnt, -1)
		}
	}
	if sum == nil {
		sum = &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: pg_query.MakeAConstIntNode(0, -1),
			TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("int8")}, Typemod: -1, Location: -1}, Location: -1}}}
	}
	sel := &pg_query.SelectStmt{Op: pg_query.SetOperation_SETOP_NONE, LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT, TargetList: []*pg_query.Node{pg_query.MakeResTargetNodeWithNameAndVal("merge", sum, -1)}}
	if len(ctes) > 0 {
		sel.WithClause = &pg_query.WithClause{Ctes: ctes, Location: -1}
	}
	var check *pg_query.SelectStmt
	if len(acting) > 0 && t != nil && t.RowTracking() {
		check = twiceCheck(m, acting)
	}
	return sel, check, nil
}

// twiceCheck is SELECT 1 FROM target, source WHERE <an UPDATE or DELETE
// clause acts> GROUP BY target._row_id HAVING count(*) > 1 LIMIT 1.
func twiceCheck(m *pg_query.MergeStmt, acting []*pg_query.Node) *pg_query.SelectStmt {
	ref := m.Relation.Relname
	if m.Relation.Alias != nil {
		ref = m.Relation.Alias.Aliasname
	}
	where := acting[0]
	if len(acting) > 1 {
		where = pg_query.MakeBoolExprNode(pg_query.BoolExprType_OR_EXPR, acting, -1)
	}
	count := &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: &pg_query.FuncCall{
		Funcname: []*pg_query.Node{pg_query.MakeStrNode("count")}, AggStar: true, Location: -1}}}
	return &pg_query.SelectStmt{Op: pg_query.SetOperation_SETOP_NONE, LimitOption: pg_query.LimitOption_LIMIT_OPTION_COUNT,
		TargetList:   []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(pg_query.MakeAConstIntNode(1, -1), -1)},
		FromClause:   []*pg_query.Node{{Node: &pg_query.Node_RangeVar{RangeVar: m.Relation}}, m.SourceRelation},
		WhereClause:  where,
		GroupClause:  []*pg_query.Node{pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeStrNode(ref), pg_query.MakeStrNode(HiddenRowID)}, -1)},
		HavingClause: pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(">")}, count, pg_query.MakeAConstIntNode(1, -1), -1),
		LimitCount:   pg_query.MakeAConstIntNode(1, -1)}
}

// notExists is NOT EXISTS (SELECT 1 FROM target WHERE on): the source row
// matches no target row.
func notExists(m *pg_query.MergeStmt) *pg_query.Node {
	sub := &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: &pg_query.SelectStmt{Op: pg_query.SetOperation_SETOP_NONE, LimitOption: pg_query.LimitOption_LIMIT_OPTION_DEFAULT,
		TargetList:  []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(pg_query.MakeAConstIntNode(1, -1), -1)},
		FromClause:  []*pg_query.Node{{Node: &pg_query.Node_RangeVar{RangeVar: m.Relation}}},
		WhereClause: m.JoinCondition}}}
	ex := &pg_query.Node{Node: &pg_query.Node_SubLink{SubLink: &pg_query.SubLink{SubLinkType: pg_query.SubLinkType_EXISTS_SUBLINK, Subselect: sub, Location: -1}}}
	return pg_query.MakeBoolExprNode(pg_query.BoolExprType_NOT_EXPR, []*pg_query.Node{ex}, -1)
}

// mergeCTEName names the WITH query of clause i; the leading space keeps
// it from any name a query can spell unquoted.
func mergeCTEName(i int) string { return fmt.Sprintf(" merge %d", i) }
