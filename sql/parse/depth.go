package parse

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/mvserver/mvserver/pgerror"
)

// Statement depth (R-Q6: nothing a client sends can stop the server).
//
// pg_query's C code recurses once per level of the tree it builds: turning
// PostgreSQL's tree into protobuf when it parses, and unpacking protobuf
// (protobuf-c, about 950 bytes of stack a level) when it deparses. The
// grammar itself is bison's: left-recursive chains (1+1+…, UNION, JOIN)
// need no parser stack at all, and nesting ((((…)))) is bounded by bison's
// own YYMAXDEPTH (10 000 entries; past it PostgreSQL's "memory exhausted"
// syntax error). So a statement of 50 000 terms parses fine in C and then
// overflows the thread's C stack while it is written out — a SIGSEGV no Go
// code can recover from. C runs on the thread's own stack (8 MB under the
// usual `ulimit -s 8192`, 2 MB when unlimited), not on a growing Go stack.
//
// Three checks keep every statement within that stack:
//
//  1. Before pg_query sees a statement, checkNesting estimates, on its
//     tokens, how deep the tree will be (tokenDepth) and refuses one deeper
//     than parseLimit with 54001, as PostgreSQL does ("stack depth limit
//     exceeded"), or, past YYMAXDEPTH open brackets, with the syntax error
//     PostgreSQL's bison gives. The estimate is an upper bound in tree
//     levels for the shapes that deepen a tree: each nesting bracket, CASE
//     and subquery, and each operator, UNION, JOIN, cast and keyword
//     operator of a chain.
//  2. The tree pg_query returns is unpacked with protobuf's recursion limit
//     (unmarshalLimit, the 10 000 levels pg_query_go has always used, so
//     every statement that parsed before still parses); a deeper one is
//     54001 too, exact where the estimate is rough.
//  3. Deparse (view definitions, defaults) measures the tree exactly
//     (treeDepth) and refuses one deeper than deparseLimit.
//
// The limits scale with the thread stack; at 8 MB, a chain of 1+1+… parses
// up to about 4 999 terms (PostgreSQL 15 at its 2 MB max_stack_depth: about
// 4 050) and deparses up to about 2 900. Go code (binder, planner,
// executor) recurses on goroutine stacks that grow to 1 GB, far beyond
// what 10 000 levels need.

const (
	// yyMaxDepth is bison's stack limit in PostgreSQL's grammar.
	yyMaxDepth = 10000
	// unmarshalLimit is the protobuf recursion limit for pg_query's tree
	// (protowire.DefaultRecursionLimit, what pg_query.Parse uses).
	unmarshalLimit = 10000
	// Stack bytes a tree level costs in C, measured with ulimit -s 2048
	// and 8192 on chains of +, UNION, JOIN, ::, COLLATE, NOT and
	// subqueries (a crash at about 47 000 levels in 8 MB when parsing,
	// 8 800 when deparsing), rounded up.
	parseLevelBytes   = 180
	deparseLevelBytes = 960
	// safety divides the levels that fit, for the frames below pg_query
	// (Go's cgo entry, the session's own calls) and shapes that cost more.
	safety = 2
)

var (
	threadStack = threadStackBytes()
	// parseLimit bounds tokenDepth: at 8 MB, 23 300 estimated levels,
	// more than unmarshalLimit lets through, so the estimate's slack costs
	// no statement that parsed before.
	parseLimit = int(threadStack / parseLevelBytes / safety)
	// deparseLimit bounds treeDepth for Deparse: at 8 MB, 4 369 levels.
	deparseLimit = int(threadStack / deparseLevelBytes / safety)
)

// depthError is PostgreSQL's answer to a statement too deep for its stack.
func depthError() *pgerror.Error {
	return pgerror.New(pgerror.StatementTooComplex, "stack depth limit exceeded").
		WithHint("The statement nests too deeply for the server's %dkB thread stack (ulimit -s); simplify it or split it into smaller statements.", threadStack>>10)
}

// level is one open bracket (or CASE … END, or the statement itself) while
// tokenDepth scans.
type level struct {
	kind byte // '(', '[', 'c' (CASE), 0 (the statement)
	// base is the tree levels the bracket itself adds; sel is set once
	// the bracket holds a SELECT, VALUES or WITH (a subquery's SubLink,
	// SelectStmt and target entry).
	base, sel int
	// chain counts UNION/INTERSECT/EXCEPT and JOIN: left-deep chains
	// over the whole bracket, whatever commas and ANDs lie between.
	chain int
	// item counts the operators of the current list item (reset at a
	// comma, AND, OR and clause keywords, whose operands are siblings in
	// the tree); itemChild is the deepest bracket closed in the item.
	item, itemChild int
	// deepest is the deepest item seen so far (operators plus bracket).
	deepest int
	// and, or: the bracket holds AND or OR lists (a BoolExpr each, flat
	// however long; OR over AND nests two).
	and, or bool
	// clause is what a clause adds above its condition (QUALIFY's
	// window definition).
	clause int
	// between counts BETWEENs waiting for their AND, which is no
	// separator: a BETWEEN b AND c || d … nests what follows.
	between int
}

func (l *level) endItem() {
	l.deepest = max(l.deepest, l.item+l.itemChild)
	l.item, l.itemChild = 0, 0
}

func (l *level) cost() int {
	l.endItem()
	c := l.base + l.sel + l.chain + l.deepest
	if l.and {
		c += 2
	}
	if l.or {
		c += 2
	}
	c += l.clause
	return c
}

// Word classes for tokenDepth.
const (
	wNone    = iota
	wItemOp  // a keyword operator: one node over its operands
	wBetween // BETWEEN: an operator whose AND is no separator
	wSimilar // SIMILAR TO: an operator over a function of its pattern
	wSetOp   // UNION, INTERSECT, EXCEPT
	wJoin    // JOIN
	wSep     // starts a sibling: a clause keyword, WHEN/THEN/ELSE
	wQualify // QUALIFY
	wBool    // AND, OR
	wSelect  // SELECT, VALUES
	wCase    // CASE
	wCaseEnd // END
)

var depthWords = map[string]uint8{
	"is": wItemOp, "isnull": wItemOp, "notnull": wItemOp, "not": wItemOp, "collate": wItemOp,
	"at": wItemOp, "like": wItemOp, "ilike": wItemOp, "similar": wSimilar, "between": wBetween,
	"in": wItemOp, "overlaps": wItemOp, "operator": wItemOp, "escape": wItemOp, "unique": wItemOp,
	"union": wSetOp, "intersect": wSetOp, "except": wSetOp,
	"join": wJoin,
	"and":  wBool, "or": wBool,
	"when": wSep, "then": wSep, "else": wSep, "from": wSep, "where": wSep, "group": wSep,
	"having": wSep, "order": wSep, "limit": wSep, "offset": wSep, "on": wSep, "using": wSep,
	"set": wSep, "returning": wSep, "window": wSep,
	"qualify": wQualify,
	"select":  wSelect, "values": wSelect, "with": wSelect, "table": wSelect, "insert": wSelect,
	"update": wSelect, "delete": wSelect, "merge": wSelect,
	"case": wCase, "end": wCaseEnd,
}

// depthWord classifies an identifier token.
func depthWord(src string, t token) uint8 {
	n := t.end - t.start
	if n < 2 || n > len("intersect") {
		return wNone
	}
	var buf [9]byte
	for k := 0; k < n; k++ {
		c := src[t.start+k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[k] = c
	}
	return depthWords[string(buf[:n])]
}

// isDistinctFrom: toks[i] is the FROM of IS [NOT] DISTINCT FROM.
func isDistinctFrom(src string, toks []token, i int) bool {
	if i < 2 || toks[i-1].kind != tokIdent || !strings.EqualFold(toks[i-1].text(src), "distinct") {
		return false
	}
	p := toks[i-2]
	return p.kind == tokIdent && (strings.EqualFold(p.text(src), "is") || strings.EqualFold(p.text(src), "not"))
}

// tokenDepth estimates the depth of the tree pg_query builds for the
// significant tokens toks of src (see the top of this file). It stops as
// soon as the estimate passes limit (returning a value above it) and
// reports the token at which yyMaxDepth brackets were open, or -1.
//
// What a repetition of each deepening shape costs in the tree (Node
// wrapper plus node, as protobuf nests them), and what the estimate
// counts for it:
//
//	a + b, NOT a, a::t, a COLLATE c, a IS …   2    an operator or keyword operator: 2
//	a BETWEEN b AND c, a SIMILAR TO b           4    4 (the bounds are a List; the
//	                                                   pattern a function call)
//	a IS DISTINCT FROM b                        2    2 (its FROM is no clause)
//	f(f(…)), ROW(…), x IN (…)                   2-4  a bracket after a word: 2, plus the word
//	((…)) (grouping)                            0    a bracket after anything else: 0,
//	(a, b) (row)                                2      2 once it holds a comma
//	(…).field                                   2    "." after ")": 2
//	x[…], ARRAY[…]                              2-4  "[": 4, and 2 over the operand it follows
//	CASE WHEN … THEN CASE …                     2-4  CASE: 4
//	(SELECT …), FROM (SELECT …), WITH … AS (…)  4-6  SELECT, VALUES, WITH … in a bracket: 6
//	UNION / INTERSECT / EXCEPT                  1    1 (a left-deep chain over the bracket)
//	JOIN                                        2    2 (likewise)
//
// Operands separated by a comma, AND, OR or a clause keyword are siblings
// in the tree, so an item's operators count from the last separator and a
// bracket costs the deepest of its items.
func tokenDepth(src string, toks []token, limit int) (depth, tooNested int) {
	// The statement: ParseResult, RawStmt, Node, the leaf at the bottom
	// of the deepest path (a ColumnRef's Node, ColumnRef, Node, String),
	// and 2 for the statements whose fixed shape is deeper than a
	// SELECT's (BEGIN ISOLATION LEVEL …: TransactionStmt, DefElem, Node,
	// A_Const, String).
	stack := []level{{base: 9}}
	closeTop := func() int {
		c := stack[len(stack)-1].cost()
		stack = stack[:len(stack)-1]
		top := &stack[len(stack)-1]
		top.itemChild = max(top.itemChild, c)
		return c
	}
	for i, t := range toks {
		top := &stack[len(stack)-1]
		switch t.kind {
		case tokOp:
			switch s := t.text(src); s {
			case "(":
				base := 0
				if i > 0 {
					switch p := toks[i-1]; p.kind {
					case tokIdent, tokQuoted, tokBacktick:
						base = 2
					case tokOp:
						if ps := p.text(src); ps == ")" || ps == "]" {
							base = 2
						}
					}
				}
				stack = append(stack, level{kind: '(', base: base})
				if len(stack) > yyMaxDepth {
					return limit + 1, i
				}
				continue
			case "[":
				if i > 0 {
					if p := toks[i-1]; p.kind == tokOp && p.text(src) == ")" || p.kind == tokIdent || p.kind == tokQuoted {
						// (x)[i], a[i]: an A_Indirection over the operand
						// (further subscripts join its list).
						top.item += 2
					}
				}
				stack = append(stack, level{kind: '[', base: 4})
				if len(stack) > yyMaxDepth {
					return limit + 1, i
				}
				continue
			case ")", "]":
				for len(stack) > 1 {
					k := stack[len(stack)-1].kind
					if closeTop() > limit {
						return limit + 1, -1
					}
					if k == s[0]-1 || k == s[0]-2 { // '(' is ')'-1, '[' is ']'-2
						break
					}
				}
				continue
			case ",":
				top.endItem()
				if top.kind == '(' && top.base == 0 {
					top.base = 2 // a row: RowExpr
				}
				continue
			case ".":
				if i > 0 && toks[i-1].kind == tokOp && toks[i-1].text(src) == ")" {
					top.item += 2 // (x).field: A_Indirection
				}
				continue
			}
			top.item += 2
		case tokIdent:
			switch depthWord(src, t) {
			case wItemOp:
				top.item += 2
			case wBetween:
				// A_Expr over a List of the two bounds: Node, A_Expr,
				// Node, List, then the bound's Node.
				top.item += 4
				top.between++
			case wSimilar:
				// A_Expr over similar_to_escape(pattern): Node, A_Expr,
				// Node, FuncCall, then the pattern's Node.
				top.item += 4
			case wSetOp:
				top.chain++
				top.endItem()
			case wJoin:
				top.chain += 2
				top.endItem()
			case wSep:
				if isDistinctFrom(src, toks, i) {
					// a IS [NOT] DISTINCT FROM b: one A_Expr over
					// both operands, no separator.
					top.item += 2
					break
				}
				top.endItem()
			case wQualify:
				// QUALIFY cond becomes WINDOW … AS (PARTITION BY cond)
				// (qualify.go): two levels more than a WHERE.
				top.clause = 2
				top.endItem()
			case wBool:
				if top.between > 0 && (src[t.start] == 'a' || src[t.start] == 'A') {
					top.between--
					break
				}
				if src[t.start] == 'a' || src[t.start] == 'A' {
					top.and = true
				} else {
					top.or = true
				}
				top.endItem()
			case wSelect:
				top.sel = 6
				top.endItem()
			case wCase:
				stack = append(stack, level{kind: 'c', base: 4})
				if len(stack) > yyMaxDepth {
					return limit + 1, i
				}
				continue
			case wCaseEnd:
				if top.kind == 'c' {
					if closeTop() > limit {
						return limit + 1, -1
					}
				}
				continue
			}
		default:
			continue
		}
		if top.item > limit || top.chain > limit {
			return limit + 1, -1
		}
	}
	for len(stack) > 1 {
		closeTop()
	}
	return stack[0].cost(), -1
}

// checkNesting refuses a statement whose tree would be too deep for
// pg_query's C stack (check 1 above). toks are the significant tokens of
// st.Text.
func (st *Statement) checkNesting(toks []token) error {
	d, at := tokenDepth(st.Text, toks, parseLimit)
	if at >= 0 {
		// PostgreSQL's bison runs out of stack here, whatever the
		// brackets hold.
		t := toks[at]
		return pgerror.New(pgerror.SyntaxError, "memory exhausted at or near \"%s\"", st.Text[t.start:t.end]).
			WithPosition(st.textPosition(t.start))
	}
	if d > parseLimit {
		return depthError()
	}
	return nil
}

// isRecursionLimit: protobuf refused pg_query's tree for its depth (check
// 2 above). The protobuf module keeps that error unexported.
func isRecursionLimit(err error) bool {
	return strings.Contains(err.Error(), "exceeded maximum recursion depth")
}

// treeDepth is the depth of m as protobuf nests it (check 3 above): m
// itself is 1. It looks no deeper than limit+1 levels, so a tree built by
// hand costs no more stack here than one of that depth.
func treeDepth(m protoreflect.Message, limit int) int {
	if limit <= 0 {
		return 1
	}
	deepest := 0
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Message() == nil || fd.IsMap() {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len() && deepest <= limit; i++ {
				deepest = max(deepest, treeDepth(l.Get(i).Message(), limit-1))
			}
		} else {
			deepest = max(deepest, treeDepth(v.Message(), limit-1))
		}
		return deepest <= limit
	})
	return deepest + 1
}

// checkDeparse refuses a tree too deep for pg_query's deparser.
func checkDeparse(tree *pg_query.ParseResult) error {
	if treeDepth(tree.ProtoReflect(), deparseLimit) > deparseLimit {
		return depthError()
	}
	return nil
}
