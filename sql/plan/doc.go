// Package plan binds statements parsed by sql/parse against a catalog
// snapshot — names, types, implicit casts, parameters — and produces plans:
// plain data structures (nodes and typed expressions) that sql/exec runs.
//
// Invariants:
//  1. Plans are data: no node holds storage handles or runs anything; the
//     planner never touches Pebble, the executor never parses.
//  2. Every expression is typed when bound; implicit casts are explicit Cast
//     nodes, so the executor never guesses a type.
//  3. A row flowing between nodes is a []types.Datum laid out as the node's
//     Columns() say; a Scan's row holds every table column (those the plan
//     does not need stay NULL and are never decoded) followed by the hidden
//     row-tracking columns.
//  4. Errors carry SQLSTATEs and positions into the client's text.
//  5. A ColRef reads the row of its own evaluation level; a column of an
//     enclosing query is an OuterRef, which reads one of the values the
//     level above handed down (Subquery.Params, Apply.Params). Levels are
//     the top query, each subquery in an expression and each LATERAL item;
//     derived tables, WITH bodies and views share the level they are bound
//     in (scope.go).
//
// Name resolution (R-Q2). A scope lists the columns of one FROM clause and
// points to the scope of the enclosing query; a reference is resolved in the
// nearest scope that has it. A reference to an enclosing query becomes an
// OuterRef relayed through every level in between, so the executor only
// ever looks one level out.
//
// Queries. A subquery in FROM, VALUES, a view (its stored text parsed and
// bound afresh) and a WITH query are derived tables: bound on their own and
// exposed under their alias. A WITH query is bound again at each reference
// in the scopes of its definition; one referenced several times that reads
// no enclosing column is marked Shared and computed once. WITH RECURSIVE is
// a RecursiveUnion whose recursive term reads the previous round through a
// WorkTableScan. A data-modifying WITH query (INSERT/UPDATE/DELETE) is
// bound once, where it is defined, into Query.With or the DML's With; its
// references read its RETURNING rows, and reads of a table an earlier one
// wrote read a copy taken at the statement's start (bind_modifying_with.go).
// Set operations type each column with the common type of
// their inputs. NATURAL and USING joins put a projection of merged columns
// over the join. WHERE conjuncts with subqueries are decorrelated when
// bound (decorrelate.go): [NOT] EXISTS correlated by equalities and IN /
// = ANY become semi/anti joins, NOT IN of one column a null-aware anti
// join (decorrelate_in.go), a correlated scalar count/sum/avg/min/max a
// left join with the subquery grouped by its correlation, count read as
// COALESCE(count, 0) (decorrelate_scalar.go); other subqueries stay
// expressions evaluated per row. The index-join rule turns such a join
// back into a key lookup per outer row when that is estimated cheaper.
//
// Window functions (bind_window.go, node_window.go). Window calls are
// collected like aggregates from the select list, ORDER BY and QUALIFY,
// each standing as a WinRef until one Window node, placed after the
// aggregation and HAVING and before DISTINCT, ORDER BY and LIMIT, computes
// them; QUALIFY (carried from sql/parse as a marked WINDOW definition) is a
// Filter over that node. Named windows follow PostgreSQL's rules for
// copying a definition.
//
// Set-returning functions (node_project_set.go). A ProjectSet runs
// set-returning calls (generate_series, unnest, …) on each row of its
// input, side by side. In FROM (bind_func_from.go) the calls sit over one
// empty row, their arguments bound one level down like a LATERAL item;
// one that reads the items to its left becomes a ProjectSet over them
// (flattenSRFApply), so `FROM t, unnest(t.a)` is one pass over t. In a
// select list (bind_srf.go) each call stands as an SRFRef until one
// ProjectSet is placed over the aggregation and window functions. A
// call's row used whole is a record whose fields (col).field selects.
//
// Plans are data (children.go). Every node lists its inputs (Children)
// and is rebuilt over others by WithChildren, which copies and never
// modifies; refresh builds its change plans the same way.
//
// The optimizer (optimize.go) is a table of rules (Rules), each a named
// function of a whole plan returning the rewritten plan and whether it
// changed, run pass after pass until none changes anything; each rule has
// a golden file, testdata/plan/<rule>.txt. Optimize runs on the
// statements a session executes (Binder.Optimize) and on the plans a
// refresh evaluates (refresh/evalplan.go), never on the bound plan a
// refresh analyzes and differentiates.
//
// Join order (joinorder.go, estimate.go). The join-order rule takes each
// island of inner joins (with JOIN … USING's column projections) as a
// join graph, closes its equalities transitively, propagates constants,
// and picks the cheapest tree by dynamic programming over connected
// subsets (greedily past 10 relations), estimating rows from the tables'
// row counts (Binder.Stats) and ANALYZE's column statistics
// (estimate_stats.go: most common values and n_distinct for equalities,
// histograms for ranges, null_frac for IS NULL and join keys, avg_width
// for EXPLAIN's widths; estimate_join.go: eqjoinsel with MCV matching
// and eqjoinsel_semi; estimate_like.go: pattern matches against the
// MCVs and histogram; estimate_expr.go: conditions on an expression of
// one column the same way; estimate_fold.go: constant bounds folded by the
// executor's evaluator, which it registers; estimate_agg_threshold.go: a
// threshold on a group's sum or average from the column's mean and
// variance), else PostgreSQL's default selectivities. A join is priced as
// a hash join, or, where one side is a scan keyed on the join columns, as
// the index-join rule's lookups when those are cheaper
// (joinorder_lookup.go). A projection keeps the island's column order; outer
// joins stay in place. Before it, join-filter-pushdown moves an outer,
// semi or anti join's ON conjuncts on one input into that input
// (join_filter_push.go), and semi-join-pushdown moves a semi or anti
// join down to the inner-join input its condition reads, and below
// another semi or anti join that keeps more rows (semijoin_push.go),
// where the join order places it as a leaf; after it, semi-join-sink
// does the same on the ordered joins, before index-join makes lookups
// of them.
//
// Access paths (pushdown.go, access.go). The binder gives a filtered
// scan its primary-key point, prefix or range. The index-scan rule picks
// among the primary key and the table's secondary indexes the key the
// filter bounds best (equality, IN, range on leading columns), and the
// index-join rule turns an equality join with a small side into an index
// nested-loop join (an Apply looking the small side's keys up); before
// it, index-join-groups turns a left join with a grouped subquery over
// joins into an Apply whose inner side reads each outer row's group
// through the table its group columns come from, when the cost model
// finds that cheaper (lookup_groups_join.go). The Filter always stays
// above the scan.
//
// Arrays (bind_array.go): ARRAY[…], subscripts, op ANY/ALL (array) and
// the array operators bind to calls of sql/funcs functions; polymorphic
// function parameters (funcs.Poly) take the common element type of their
// arguments.
//
// Imports: sql/parse, sql/funcs, sql/types, catalog, pgerror.
package plan
