//go:build clients

package clienttest

import (
	"regexp"
	"strings"
)

// normalizer rewrites the lines of the steps it applies to, on both
// servers' outputs alike, before they are compared. Each one covers a
// difference that is legitimate (a port, a version, a storage size), never
// one in what a client was answered. Keep them few; say why for each.
type normalizer struct {
	step  func(name string) bool // nil: every step
	apply func(lines []string) []string
}

// stepIs applies a normalizer to the named steps only.
func stepIs(names ...string) func(string) bool {
	return func(name string) bool {
		for _, n := range names {
			if n == name {
				return true
			}
		}
		return false
	}
}

// replaceRE rewrites every match of re.
func replaceRE(re *regexp.Regexp, repl string) func([]string) []string {
	return func(lines []string) []string {
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = re.ReplaceAllString(l, repl)
		}
		return out
	}
}

// dropRE removes the lines re matches.
func dropRE(re *regexp.Regexp) func([]string) []string {
	return func(lines []string) []string {
		var out []string
		for _, l := range lines {
			if !re.MatchString(l) {
				out = append(out, l)
			}
		}
		return out
	}
}

// maskPsqlColumn rewrites psql's aligned tables without their padding and
// with the named column's cells replaced by <name>: its values legitimately
// differ, and their widths would move every other column.
func maskPsqlColumn(col string) func([]string) []string {
	sepRE := regexp.MustCompile(`^-+(\+-+)*$`)
	return func(lines []string) []string {
		idx := -1
		var out []string
		for _, l := range lines {
			switch {
			case strings.Contains(l, "|"):
				cells := strings.Split(l, "|")
				for i := range cells {
					cells[i] = strings.TrimSpace(cells[i])
					if idx < 0 && cells[i] == col {
						idx = i
						continue
					}
					if i == idx {
						cells[i] = "<" + strings.ToLower(col) + ">"
					}
				}
				out = append(out, strings.Join(cells, " | "))
			case sepRE.MatchString(l):
				out = append(out, "-+-")
			default:
				out = append(out, strings.TrimSpace(l))
			}
		}
		return out
	}
}

// psqlNorms are the psql session's normalizations.
var psqlNorms = []normalizer{
	// Each server listens on a port picked for the run.
	{stepIs(`\conninfo`), replaceRE(regexp.MustCompile(`at port "\d+"`), `at port "PORT"`)},
	// Over TLS 1.3 each server picks the cipher: Go's crypto/tls prefers
	// AES-128-GCM where the CPU has AES instructions, OpenSSL AES-256-GCM.
	{stepIs(`\conninfo`), replaceRE(regexp.MustCompile(`cipher: [A-Z0-9_-]+`), `cipher: <cipher>`)},
	// \dt+'s Size is pg_table_size: PostgreSQL counts its heap pages,
	// mvserver reports Pebble's estimate of the table's key range.
	{stepIs(`\dt+`), maskPsqlColumn("Size")},
	// A view's definition: PostgreSQL prints the query it rebuilds from its
	// parse tree (columns qualified, casts spelled out, one clause a line);
	// mvserver keeps and prints the text the view was created with.
	{stepIs(`\d+ big_orders`, `\d+ sales_by_customer`), maskViewDefinition},
}

// maskViewDefinition replaces the lines of a \d+ "View definition:" block
// by one <definition> line.
func maskViewDefinition(lines []string) []string {
	var out []string
	in := false
	for _, l := range lines {
		switch {
		case l == "View definition:":
			in = true
			out = append(out, l, "<definition>")
			continue
		case in && (l == "" || strings.HasPrefix(l, "Access method:") || strings.HasPrefix(l, "Options:") || strings.HasPrefix(l, "(")):
			in = false
		case in:
			continue
		}
		out = append(out, l)
	}
	return out
}

// jdbcIndexStats: getIndexInfo's CARDINALITY and PAGES come from the
// planner statistics PostgreSQL's ANALYZE keeps, which mvserver has none of.
func jdbcIndexStats(lines []string) []string {
	re := regexp.MustCompile(`^(.*\| [AD] \| )-?\d+ \| \d+ (\| .*)$`)
	return replaceRE(re, "${1}<cardinality> | <pages> ${2}")(lines)
}

// pgbenchNorms are pgbench's: what it prints about time and versions.
var pgbenchNorms = []normalizer{
	// The banner names the server's version when it differs from pgbench's.
	{nil, dropRE(regexp.MustCompile(`^pgbench \(`))},
	// Speed is not under test.
	{nil, dropRE(regexp.MustCompile(`^(latency |initial connection time|tps = )`))},
	{nil, replaceRE(regexp.MustCompile(`\d+\.\d+ s\b`), "… s")},
}

// maskIsqlColumn replaces the cells of the named column in isql's boxed
// tables by <name>, padded to the cell's width (isql sizes cells by the
// column's display size, which is compared).
func maskIsqlColumn(col string) func([]string) []string {
	return func(lines []string) []string {
		idx := -1
		out := make([]string, len(lines))
		for i, l := range lines {
			out[i] = l
			if !strings.HasPrefix(l, "|") {
				continue
			}
			cells := strings.Split(l, "|")
			if idx < 0 {
				for j, c := range cells {
					if strings.TrimSpace(c) == col {
						idx = j
					}
				}
				continue
			}
			if idx < len(cells) {
				m := "<" + strings.ToLower(col) + ">"
				if w := len(cells[idx]); len(m) < w {
					m += strings.Repeat(" ", w-len(m))
				}
				cells[idx] = m
				out[i] = strings.Join(cells, "|")
			}
		}
		return out
	}
}

// dropIsqlRows removes the rows of isql's boxed table whose column col
// holds value, and isql's row counts (which counted them).
func dropIsqlRows(col, value string) func([]string) []string {
	countRE := regexp.MustCompile(`^(SQLRowCount returns \d+|\d+ rows fetched)$`)
	return func(lines []string) []string {
		idx := -1
		var out []string
		for _, l := range lines {
			if countRE.MatchString(l) {
				continue
			}
			if strings.HasPrefix(l, "|") {
				cells := strings.Split(l, "|")
				if idx < 0 {
					for j, c := range cells {
						if strings.TrimSpace(c) == col {
							idx = j
						}
					}
				} else if idx < len(cells) && strings.TrimSpace(cells[idx]) == value {
					continue
				}
			}
			out = append(out, l)
		}
		return out
	}
}

// jdbcNorms are the pgjdbc session's normalizations.
var jdbcNorms = []normalizer{
	// mvserver's default level is REPEATABLE READ (4), snapshot
	// isolation; PostgreSQL's is READ COMMITTED (2). A documented
	// difference, not a wrong answer.
	{stepIs("getTransactionIsolation"), replaceRE(regexp.MustCompile(`^isolation: [24]$`), "isolation: <default level>")},
	{stepIs("getIndexInfo(customers)"), jdbcIndexStats},
}

// odbcNorms are the psqlODBC session's normalizations.
var odbcNorms = []normalizer{
	// mvserver's schema "system" holds its own views (mv_insights,
	// refresh_history, …), which PostgreSQL lacks: SQLTables lists them
	// like any user's views. Their rows, and the counts, are not compared.
	{stepIs("help (SQLTables)"), dropIsqlRows("TABLE_OWNER", "system")},
	// SQLColumns returns psqlODBC's extra column "TABLE OID": relations'
	// OIDs are PostgreSQL's own on one side, mvserver's catalog ids on the
	// other.
	{func(name string) bool { return strings.HasPrefix(name, "help ") }, maskIsqlColumn("TABLE OID")},
}
