package parse

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/proto"

	"github.com/mvserver/mvserver/pgerror"
)

// Statement is one statement of a query string.
type Statement struct {
	// Text is the statement as the client sent it.
	Text string
	// SQL is the text given to pg_query (Text after rewrites); AST's
	// locations are byte offsets into it.
	SQL string
	// AST is pg_query's tree for a PostgreSQL-grammar statement.
	AST *pg_query.Node
	// Ext is set instead of AST for mvserver's own statements.
	Ext Ext
	// CreateExtras holds the Databricks clauses of a CREATE TABLE.
	CreateExtras *CreateTableExtras

	query  string // the whole query string
	offset int    // byte offset of Text in query
	m      *posMap
}

// Position maps a byte offset into SQL (a pg_query Location) to a 1-based
// character position in the query string the client sent (R-Q6).
func (s *Statement) Position(loc int32) int32 {
	if loc < 0 {
		return 0
	}
	off := int(loc)
	if s.m != nil {
		off = s.m.orig(off)
	}
	off += s.offset
	if off > len(s.query) {
		off = len(s.query)
	}
	return int32(utf8.RuneCountInString(s.query[:off])) + 1
}

// textPosition is Position for a byte offset into Text (no rewrite
// applied).
func (s *Statement) textPosition(off int) int32 {
	off += s.offset
	return int32(utf8.RuneCountInString(s.query[:off])) + 1
}

// Errorf returns an error with code and a position at loc.
func (s *Statement) Errorf(loc int32, code, format string, args ...any) *pgerror.Error {
	e := pgerror.New(code, format, args...)
	if loc >= 0 {
		e.Position = s.Position(loc)
	}
	return e
}

// Parse splits query into statements and parses each. Empty statements are
// dropped; a query of only whitespace and comments gives none.
func Parse(query string) ([]*Statement, error) {
	return parse(query, true)
}

// parse is Parse, with the INSERT … VALUES fast path (insert_fast.go) or,
// for the tests that compare the two, without it.
func parse(query string, fast bool) ([]*Statement, error) {
	if !utf8.ValidString(query) {
		return nil, pgerror.New(pgerror.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
	}
	toks := lex(query)
	var out []*Statement
	start := 0
	for i := 0; i <= len(toks); i++ {
		if i < len(toks) && toks[i].kind != tokSemi {
			continue
		}
		piece := toks[start:i]
		start = i + 1
		st, err := parseOne(query, piece, fast, true)
		if err != nil {
			return nil, err
		}
		if st != nil {
			out = append(out, st)
		}
	}
	return out, nil
}

// ParseOne parses a query that must hold at most one statement (extended
// protocol Parse). It returns nil for an empty query.
func ParseOne(query string) (*Statement, error) {
	stmts, err := Parse(query)
	if err != nil {
		return nil, err
	}
	switch len(stmts) {
	case 0:
		return nil, nil
	case 1:
		return stmts[0], nil
	}
	return nil, pgerror.New(pgerror.SyntaxError, "cannot insert multiple commands into a prepared statement")
}

// parseOne parses one statement's tokens; ext says whether it may be one
// of mvserver's own statements (not for the query of a materialized view,
// which must be a SELECT: CREATE MATERIALIZED VIEW v AS CREATE … would
// recurse once per repetition, re-lexing the rest each time).
func parseOne(query string, toks []token, fast, ext bool) (*Statement, error) {
	base, local := trim(toks)
	if local == nil {
		return nil, nil
	}
	text := query[base : base+local[len(local)-1].end]
	st := &Statement{Text: text, query: query, offset: base}
	p := &extParser{src: text, st: st}
	p.toks = make([]token, 0, len(local))
	for _, t := range local {
		if t.kind != tokSpace {
			p.toks = append(p.toks, t)
		}
	}
	if ext {
		handled, err := p.parseExtension()
		if err != nil {
			return nil, err
		}
		if handled {
			return st, nil
		}
	}
	sql, m := rewriteSig(text, p.toks)
	if p.blank != nil {
		// CREATE TABLE with Databricks clauses: blank them out (same length,
		// so positions are unchanged) before the other rewrites.
		b := []byte(text)
		for _, r := range p.blank {
			for k := r[0]; k < r[1]; k++ {
				if b[k] != '\n' {
					b[k] = ' '
				}
			}
		}
		blanked := string(b)
		sql, m = applyRewrites(blanked, lex(blanked))
	}
	st.SQL = sql
	st.m = m
	if fast && m == nil && p.blank == nil {
		// No rewrite applied: sql is text and p.toks its tokens.
		if ast := insertFast(sql, p.toks); ast != nil {
			st.AST = ast
			return st, nil
		}
	}
	if err := st.checkNesting(p.toks); err != nil {
		return nil, err
	}
	tree, err := pgParse(sql)
	if err != nil {
		return nil, st.syntaxError(err)
	}
	if len(tree.Stmts) == 0 {
		return nil, nil
	}
	if len(tree.Stmts) > 1 {
		return nil, pgerror.New(pgerror.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	st.AST = tree.Stmts[0].Stmt
	if m != nil && len(m.joins) > 0 {
		if err := markJoins(st.AST, m.joins); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// trim drops the space tokens around one statement's tokens and returns
// where the rest starts in the query and the rest re-based onto the
// statement's text; nil for a statement of only space and comments.
func trim(toks []token) (int, []token) {
	for len(toks) > 0 && toks[0].kind == tokSpace {
		toks = toks[1:]
	}
	for len(toks) > 0 && toks[len(toks)-1].kind == tokSpace {
		toks = toks[:len(toks)-1]
	}
	if len(toks) == 0 {
		return 0, nil
	}
	base := toks[0].start
	local := make([]token, len(toks))
	for i, t := range toks {
		local[i] = token{t.kind, t.start - base, t.end - base}
	}
	return base, local
}

// pgParse is pg_query.Parse with the tree's depth checked (depth.go).
func pgParse(sql string) (*pg_query.ParseResult, error) {
	b, err := pgparser.ParseToProtobuf(sql)
	if err != nil {
		return nil, err
	}
	tree := &pg_query.ParseResult{}
	if err := (proto.UnmarshalOptions{RecursionLimit: unmarshalLimit}).Unmarshal(b, tree); err != nil {
		if isRecursionLimit(err) {
			return nil, depthError()
		}
		return nil, pgerror.Wrap(err, pgerror.InternalError, "reading the parse tree")
	}
	return tree, nil
}

// syntaxError converts a pg_query error into 42601 with the position mapped
// into the client's text.
func (s *Statement) syntaxError(err error) error {
	if pe, ok := err.(*pgerror.Error); ok {
		return pe
	}
	var pe *pgparser.Error
	if errors.As(err, &pe) {
		e := pgerror.New(pgerror.SyntaxError, "%s", pe.Message)
		if strings.Contains(pe.Message, "unterminated") {
			e.Code = pgerror.SyntaxError
		}
		if strings.HasPrefix(pe.Message, "frame start") || strings.HasPrefix(pe.Message, "frame end") {
			// The grammar's checks of a window frame (R-Q2) are
			// windowing errors in PostgreSQL.
			e.Code = pgerror.WindowingError
		}
		if pe.Cursorpos > 0 {
			// Cursorpos is a 1-based character position in s.SQL.
			byteOff := charToByte(s.SQL, pe.Cursorpos-1)
			e.Position = s.Position(int32(byteOff))
			if s.m != nil {
				if orig, ok := s.m.insertedAt(byteOff); ok {
					// The parser stopped at text a rewrite added: name
					// what the client wrote there instead.
					e.Message = "syntax error at end of input"
					if toks := lex(s.Text[orig:]); len(toks) > 0 {
						for _, t := range toks {
							if t.kind != tokSpace {
								e.Message = fmt.Sprintf("syntax error at or near \"%s\"", s.Text[orig+t.start:orig+t.end])
								break
							}
						}
					}
				}
			}
		}
		return e
	}
	return pgerror.New(pgerror.SyntaxError, "%s", err.Error())
}

func charToByte(s string, chars int) int {
	n := 0
	for i := range s {
		if n == chars {
			return i
		}
		n++
	}
	return len(s)
}
