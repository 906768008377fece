package plan

import (
	"strings"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// scopeCol is a column visible to expressions: its relation alias, name,
// type and whether * expands to it.
type scopeCol struct {
	rel     string
	name    string
	t       types.T
	hidden  bool
	table   uint32
	attnum  int16
	scanIdx int   // index within its scan (for marking Needed), -1 if none
	scan    *Scan // the scan that produces it, if any
}

// scope is the list of columns of the current FROM clause, in row order.
type scope struct {
	cols []scopeCol
	rels []string // relation aliases in order (for missing FROM-entry errors)
}

func (s *scope) hasRel(rel string) bool {
	for _, r := range s.rels {
		if r == rel {
			return true
		}
	}
	return false
}

// resolve finds the row index of a column reference.
func (s *scope) resolve(parts []string, b *Binder, loc int32) (int, error) {
	var rel, name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		rel, name = parts[0], parts[1]
	case 3:
		rel, name = parts[1], parts[2]
	default:
		return 0, b.errAt(loc, pgerror.SyntaxError, "improper qualified name (too many dotted names): %s", strings.Join(parts, "."))
	}
	found := -1
	for i, c := range s.cols {
		if c.name != name || (rel != "" && c.rel != rel) {
			continue
		}
		if found >= 0 {
			return 0, b.errAt(loc, pgerror.AmbiguousColumn, "column reference \"%s\" is ambiguous", strings.Join(parts, "."))
		}
		found = i
	}
	if found < 0 {
		if rel != "" && !s.hasRel(rel) {
			return 0, b.errAt(loc, pgerror.UndefinedTable, "missing FROM-clause entry for table \"%s\"", rel)
		}
		var e *pgerror.Error
		if len(parts) > 1 {
			e = b.errAt(loc, pgerror.UndefinedColumn, "column %s does not exist", strings.Join(parts, "."))
		} else {
			e = b.errAt(loc, pgerror.UndefinedColumn, "column \"%s\" does not exist", name)
		}
		if (name == HiddenRowID || name == HiddenCommitVersion) && s.hasUntrackedScan() {
			e.Hint = "Row tracking is off for this table: ALTER TABLE … SET TBLPROPERTIES (delta.enableRowTracking = true)."
		}
		return 0, e
	}
	c := s.cols[found]
	if c.scan != nil && c.scanIdx >= 0 {
		c.scan.Needed[c.scanIdx] = true
	}
	return found, nil
}

// hasUntrackedScan reports whether a table in scope has row tracking off
// (its hidden columns occupy unnamed slots).
func (s *scope) hasUntrackedScan() bool {
	for _, c := range s.cols {
		if c.hidden && c.name == "" {
			return true
		}
	}
	return false
}

func (s *scope) add(o *scope) *scope {
	return &scope{cols: append(append([]scopeCol(nil), s.cols...), o.cols...), rels: append(append([]string(nil), s.rels...), o.rels...)}
}

// scanScope builds the scope of a table scan under alias rel.
func scanScope(sc *Scan, rel string, rowTracking bool) *scope {
	s := &scope{rels: []string{rel}}
	for i, c := range sc.Columns() {
		hidden := i >= len(sc.Table.Columns)
		if hidden && !rowTracking {
			// still occupies a slot in the row, but cannot be referenced
			s.cols = append(s.cols, scopeCol{rel: "", name: "", t: c.T, hidden: true, scanIdx: -1})
			continue
		}
		s.cols = append(s.cols, scopeCol{rel: rel, name: c.Name, t: c.T, hidden: hidden, table: c.Table, attnum: c.AttrNum, scanIdx: i, scan: sc})
	}
	return s
}
