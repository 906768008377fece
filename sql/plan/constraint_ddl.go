package plan

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/funcs"
)

// Constraint DDL that needs the binder or the parse tree but no session:
// generation expressions checked, the columns a stored expression reads,
// column-constraint attributes, and stored expression texts renamed with
// their column.

// CheckGenerated checks the generation expressions of t's generated
// columns as PostgreSQL does: over the row, immutable, reading no other
// generated column.
func (b *Binder) CheckGenerated(t *catalog.Table) error {
	for _, col := range t.Columns {
		if col.Generated == "" {
			continue
		}
		typ := col.Type
		e, err := b.BindRowExpr(t, col.Generated, &typ)
		if err != nil {
			return err
		}
		var bad error
		Walk(e, func(x Expr) bool {
			if r, ok := x.(*ColRef); ok && r.Idx < len(t.Columns) && t.Columns[r.Idx].Generated != "" && bad == nil {
				bad = pgerror.New(pgerror.InvalidObjectDefinition, "cannot use generated column \"%s\" in column generation expression", t.Columns[r.Idx].Name).
					WithDetail("A generated column cannot reference another generated column.")
			}
			return true
		})
		if bad != nil {
			return bad
		}
		if !IsImmutable(e) {
			return pgerror.New(pgerror.InvalidObjectDefinition, "generation expression is not immutable")
		}
	}
	return nil
}

// ExprUsesColumn reports whether SQL text names column (a CHECK condition a
// dropped column goes with); it binds text over t to know.
func (b *Binder) ExprUsesColumn(t *catalog.Table, text string, col int) bool {
	e, err := b.BindRowExpr(t, text, nil)
	if err != nil {
		return strings.Contains(text, t.Columns[col].Name)
	}
	used := false
	Walk(e, func(x Expr) bool {
		if r, ok := x.(*ColRef); ok && r.Idx == col {
			used = true
		}
		return true
	})
	return used
}

// ApplyConstraintAttrs moves the [NOT] DEFERRABLE and INITIALLY
// DEFERRED/IMMEDIATE items of a column's constraint list into the
// constraint they follow, as PostgreSQL's parser does: only a foreign key
// can be deferrable here.
func ApplyConstraintAttrs(list []*pg_query.Node) error {
	var last *pg_query.Constraint
	for _, n := range list {
		con := n.GetConstraint()
		switch con.Contype {
		case pg_query.ConstrType_CONSTR_ATTR_DEFERRABLE, pg_query.ConstrType_CONSTR_ATTR_NOT_DEFERRABLE,
			pg_query.ConstrType_CONSTR_ATTR_DEFERRED, pg_query.ConstrType_CONSTR_ATTR_IMMEDIATE:
			if last == nil {
				return pgerror.New(pgerror.SyntaxError, "misplaced %s clause", attrName(con.Contype))
			}
			switch con.Contype {
			case pg_query.ConstrType_CONSTR_ATTR_DEFERRABLE:
				last.Deferrable = true
			case pg_query.ConstrType_CONSTR_ATTR_NOT_DEFERRABLE:
				if last.Initdeferred {
					return pgerror.New(pgerror.SyntaxError, "constraint declared INITIALLY DEFERRED must be DEFERRABLE")
				}
				last.Deferrable = false
			case pg_query.ConstrType_CONSTR_ATTR_DEFERRED:
				last.Initdeferred, last.Deferrable = true, true
			case pg_query.ConstrType_CONSTR_ATTR_IMMEDIATE:
				last.Initdeferred = false
			}
			if last.Contype != pg_query.ConstrType_CONSTR_FOREIGN && last.Deferrable {
				return pgerror.New(pgerror.FeatureNotSupported, "DEFERRABLE %s constraints are not supported", ConstraintKindName(last.Contype))
			}
		case pg_query.ConstrType_CONSTR_FOREIGN, pg_query.ConstrType_CONSTR_UNIQUE, pg_query.ConstrType_CONSTR_PRIMARY:
			last = con
		default:
			last = nil
		}
	}
	return nil
}

func attrName(t pg_query.ConstrType) string {
	switch t {
	case pg_query.ConstrType_CONSTR_ATTR_DEFERRABLE:
		return "DEFERRABLE"
	case pg_query.ConstrType_CONSTR_ATTR_NOT_DEFERRABLE:
		return "NOT DEFERRABLE"
	case pg_query.ConstrType_CONSTR_ATTR_DEFERRED:
		return "INITIALLY DEFERRED"
	}
	return "INITIALLY IMMEDIATE"
}

// ConstraintKindName names a constraint kind as PostgreSQL's messages do.
func ConstraintKindName(c pg_query.ConstrType) string {
	switch c {
	case pg_query.ConstrType_CONSTR_UNIQUE:
		return "UNIQUE"
	case pg_query.ConstrType_CONSTR_CHECK:
		return "CHECK"
	case pg_query.ConstrType_CONSTR_FOREIGN:
		return "FOREIGN KEY"
	case pg_query.ConstrType_CONSTR_EXCLUSION:
		return "EXCLUDE"
	case pg_query.ConstrType_CONSTR_IDENTITY:
		return "IDENTITY"
	case pg_query.ConstrType_CONSTR_GENERATED:
		return "GENERATED"
	}
	return "these"
}

// RenameColumnRefs rewrites the CHECK conditions and generation
// expressions of t after its column old became new: the catalog keeps
// them as SQL text. An identifier is renamed where it stands alone (not
// inside a string literal, not called as a function).
func RenameColumnRefs(t *catalog.Table, old, new string) {
	for i := range t.Checks {
		t.Checks[i].Expr = renameIdent(t.Checks[i].Expr, old, new)
	}
	for i := range t.Columns {
		if t.Columns[i].Generated != "" {
			t.Columns[i].Generated = renameIdent(t.Columns[i].Generated, old, new)
		}
	}
}

func renameIdent(s, old, new string) string {
	isID := func(b byte) bool {
		return b == '_' || b == '$' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
	}
	quoted := funcs.QuoteIdent(new)
	var out strings.Builder
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\'':
			j := i + 1
			for j < len(s) && (s[j] != '\'' || j+1 < len(s) && s[j+1] == '\'') {
				if s[j] == '\'' {
					j++
				}
				j++
			}
			out.WriteString(s[i:min(j+1, len(s))])
			i = j + 1
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				out.WriteString(s[i:])
				return out.String()
			}
			if s[i+1:i+1+j] == old {
				out.WriteString(quoted)
			} else {
				out.WriteString(s[i : i+j+2])
			}
			i += j + 2
		case isID(c):
			j := i
			for j < len(s) && isID(s[j]) {
				j++
			}
			word := s[i:j]
			k := j
			for k < len(s) && s[k] == ' ' {
				k++
			}
			if strings.ToLower(word) == old && (k >= len(s) || s[k] != '(') && (i == 0 || s[i-1] != '.' && s[i-1] != ':') {
				out.WriteString(quoted)
			} else {
				out.WriteString(word)
			}
			i = j
		default:
			out.WriteByte(c)
			i++
		}
	}
	return out.String()
}
