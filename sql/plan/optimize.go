package plan

import (
	"github.com/mvserver/mvserver/pgerror"
)

// The optimizer (STYLE: rules are rows). Optimize rewrites a bound plan
// with the rules of Rules, in order, pass after pass, until a pass changes
// nothing. Each rule is a function of a whole plan that returns the plan
// rewritten and whether it changed anything; it builds new nodes
// (WithChildren, copies) and never modifies the nodes it is given, so the
// bound plan stays as it was (refresh analyzes bound plans; a rule's
// golden test prints the plan before and after).
//
// A rule must report no change when it finds nothing to do, also on its
// own output: the passes stop when none reports one. maxPasses bounds
// them all the same (a rule that flip-flops is a bug; the plan it leaves
// is still a correct plan).

// Rule is one rewrite of the optimizer.
type Rule struct {
	Name  string
	Apply func(o *Optimizer, n Node) (Node, bool, error)
}

// Optimizer is what rules know besides the plan.
type Optimizer struct {
	est *Estimator
	// rules are the rules optimizeWith runs, for a rule that optimizes a
	// plan it builds on its own (lookup_groups_join.go).
	rules []Rule
}

// Rules are the optimizer's rules in the order each pass runs them; each
// has a golden file testdata/plan/<name>.txt.
var Rules = []Rule{
	// Expressions of constants and immutable operators and functions
	// become their values (const_fold.go).
	{Name: "constant-folding", Apply: foldConstants},
	// An outer, semi or anti join's ON conjuncts that test one input
	// alone filter that input (join_filter_push.go).
	{Name: "join-filter-pushdown", Apply: pushJoinFilters},
	// Semi and anti joins go down to the input of an inner join their
	// condition reads (semijoin_push.go), so the join order sees them.
	{Name: "semi-join-pushdown", Apply: pushSemiJoins},
	// A semi join whose right side is unique on its keys becomes an
	// inner join the join order can drive from either side
	// (semijoin_unique.go).
	{Name: "semi-join-to-inner", Apply: semiJoinsToInner},
	// Join order: each island of inner joins is ordered by cost, its
	// equalities closed transitively (joinorder.go).
	{Name: "join-order", Apply: orderJoins},
	// Semi and anti joins go down the ordered joins as semi-join-
	// pushdown moves them down the bound ones, before the index-join
	// rule makes lookups of them (semijoin_push.go): the join order may
	// have put a join that keeps few rows below them and the input they
	// filter (TPC-H Q21's lines of one nation's suppliers) below a join
	// that keeps many (its orders).
	{Name: "semi-join-sink", Apply: pushSemiJoins},
	// Index scans: a filtered scan reads through the key its filter
	// bounds best (access.go).
	{Name: "index-scan", Apply: indexScans},
	// An inner join of a small side with a UNION ALL joins each branch,
	// so a branch that is a table can look the keys up (join_union.go).
	{Name: "join-union", Apply: distributeJoins},
	// A left join with a grouped subquery over joins looks each outer
	// row's group up through the table its group columns come from,
	// when that costs less (lookup_groups_join.go).
	{Name: "index-join-groups", Apply: indexJoinGroups},
	// Index nested-loop joins: an equality join with a small side looks
	// the other side up through its key (access.go).
	{Name: "index-join", Apply: indexJoins},
	// Long IN lists of constants are tested through a hash set
	// (in_hash.go).
	{Name: "hashed-in-list", Apply: hashInLists},
}

// maxPasses bounds the passes of Optimize.
const maxPasses = 10

// Optimize rewrites a bound plan with the optimizer's rules (Rules), and
// the plans of the subqueries in its expressions each on their own; est
// estimates rows (nil: one knowing nothing of the tables).
func Optimize(n Node, est *Estimator) (Node, error) {
	return optimizeWith(&Optimizer{est: orDefault(est)}, n, Rules)
}

func ruleNamed(name string) (Rule, bool) {
	for _, r := range Rules {
		if r.Name == name {
			return r, true
		}
	}
	return Rule{}, false
}

// OptimizeExpr optimizes the plans of the subqueries in e (an UPDATE's
// SET expressions).
func OptimizeExpr(e Expr, est *Estimator) (Expr, error) {
	out, _, err := optimizeExprSubqueries(&Optimizer{est: orDefault(est)}, e, map[int]Node{}, Rules)
	return out, err
}

func orDefault(est *Estimator) *Estimator {
	if est == nil {
		return NewEstimator(nil, nil)
	}
	return est
}

func optimizeWith(o *Optimizer, n Node, rules []Rule) (Node, error) {
	if n == nil {
		return nil, nil
	}
	outer := o.rules
	o.rules = rules
	defer func() { o.rules = outer }()
	n, _, err := optimizeSubqueries(o, n, rules)
	if err != nil {
		return nil, err
	}
	for pass := 0; pass < maxPasses; pass++ {
		changed := false
		for _, r := range rules {
			out, c, err := r.Apply(o, n)
			if err != nil {
				if pe, ok := err.(*pgerror.Error); ok && pe.Code != pgerror.InternalError {
					return nil, err
				}
				return nil, errInternal("optimizer rule %s: %v", r.Name, err)
			}
			if c {
				n, changed = out, true
			}
		}
		if !changed {
			break
		}
	}
	return n, nil
}

// optimizeSubqueries optimizes the plan of every subquery in the
// expressions of n and of the nodes below it. A subquery bound once (its
// ID) is optimized once, however many copies of it the plan holds.
func optimizeSubqueries(o *Optimizer, n Node, rules []Rule) (Node, bool, error) {
	memo := map[int]Node{}
	return transformUp(n, func(x Node) (Node, bool, error) {
		return mapOwnExprs(x, func(e Expr) (Expr, error) {
			out, _, err := optimizeExprSubqueries(o, e, memo, rules)
			return out, err
		})
	})
}

// optimizeExprSubqueries returns e with the plans of its subqueries
// optimized (e itself when it has none).
func optimizeExprSubqueries(o *Optimizer, e Expr, memo map[int]Node, rules []Rule) (Expr, bool, error) {
	has := false
	Walk(e, func(x Expr) bool {
		_, is := x.(*Subquery)
		has = has || is
		return !has
	})
	if !has {
		return e, false, nil
	}
	var err error
	out := Rewrite(e, func(x Expr) Expr {
		sq, ok := x.(*Subquery)
		if !ok || err != nil {
			return x
		}
		// x is Rewrite's own copy: setting its plan changes nothing the
		// bound plan holds.
		p, done := memo[sq.ID]
		if !done {
			if p, err = optimizeWith(o, sq.Plan, rules); err != nil {
				return x
			}
			memo[sq.ID] = p
		}
		sq.Plan = p
		return sq
	})
	return out, true, err
}

// transformUp rebuilds n bottom up: fn gets each node after its children
// went through transformUp, and returns it or its replacement and whether
// it changed. Nodes nothing changed under are kept, not copied.
func transformUp(n Node, fn func(Node) (Node, bool, error)) (Node, bool, error) {
	ch := n.Children()
	changed := false
	if len(ch) > 0 {
		var out []Node
		for i, c := range ch {
			nc, cc, err := transformUp(c, fn)
			if err != nil {
				return nil, false, err
			}
			if cc && out == nil {
				out = append([]Node(nil), ch...)
			}
			if out != nil {
				out[i] = nc
			}
			changed = changed || cc
		}
		if changed {
			var err error
			if n, err = n.WithChildren(out...); err != nil {
				return nil, false, err
			}
		}
	}
	out, c, err := fn(n)
	if err != nil {
		return nil, false, err
	}
	return out, changed || c, nil
}
