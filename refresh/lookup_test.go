package refresh_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"
)

// TestJoinLookupSide: a change joined to a table on its primary key reads
// only the rows of the change's keys (lookup.go); the view still equals
// its query — NULL keys, repeated keys, keys with no partner, text keys,
// the keyed table changing too.
func TestJoinLookupSide(t *testing.T) {
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	c := connect(t, start(t))
	exec(t, c, `CREATE TABLE d (k INT PRIMARY KEY, name TEXT)`)
	exec(t, c, `CREATE TABLE s (code TEXT PRIMARY KEY, label TEXT)`)
	exec(t, c, `CREATE TABLE f (id INT PRIMARY KEY, k INT, code TEXT, v INT)`)
	var vals []string
	for i := 0; i < 300; i++ {
		vals = append(vals, fmt.Sprintf("(%d, 'n%d')", i, i))
	}
	exec(t, c, `INSERT INTO d VALUES `+strings.Join(vals, ","))
	vals = vals[:0]
	for i := 0; i < 300; i++ {
		vals = append(vals, fmt.Sprintf("('c%d', 'l%d')", i, i%7))
	}
	exec(t, c, `INSERT INTO s VALUES `+strings.Join(vals, ","))
	key := func() string {
		if rng.Intn(10) == 0 {
			return "NULL"
		}
		return fmt.Sprint(rng.Intn(320)) // some with no partner
	}
	code := func() string {
		if rng.Intn(10) == 0 {
			return "NULL"
		}
		return fmt.Sprintf("'c%d'", rng.Intn(320))
	}
	next := 0
	for i := 0; i < 200; i++ {
		exec(t, c, fmt.Sprintf(`INSERT INTO f VALUES (%d, %s, %s, %d)`, next, key(), code(), rng.Intn(9)))
		next++
	}
	views := map[string]string{
		"mv_int":  `SELECT f.id, f.v, d.name FROM f JOIN d ON f.k = d.k`,
		"mv_text": `SELECT f.id, s.label FROM f JOIN s ON f.code = s.code WHERE f.v > 2`,
		"mv_left": `SELECT f.id, d.name FROM f LEFT JOIN d ON f.k = d.k`,
	}
	for name, q := range views {
		exec(t, c, `CREATE MATERIALIZED VIEW `+name+` AS `+q)
	}
	for round := 0; round < 10; round++ {
		for i := 0; i < 1+rng.Intn(6); i++ {
			switch rng.Intn(5) {
			case 0, 1:
				exec(t, c, fmt.Sprintf(`INSERT INTO f VALUES (%d, %s, %s, %d)`, next, key(), code(), rng.Intn(9)))
				next++
			case 2:
				exec(t, c, fmt.Sprintf(`UPDATE f SET k = %s, code = %s WHERE id = %d`, key(), code(), rng.Intn(next)))
			case 3:
				exec(t, c, fmt.Sprintf(`DELETE FROM f WHERE id = %d`, rng.Intn(next)))
			default:
				exec(t, c, fmt.Sprintf(`UPDATE d SET name = 'x%d' WHERE k = %d`, rng.Intn(5), rng.Intn(300)))
			}
		}
		for name, q := range views {
			exec(t, c, `REFRESH MATERIALIZED VIEW `+name)
			if got, want := strings.Join(rows(t, c, `SELECT * FROM `+name), "\n"), strings.Join(rows(t, c, q), "\n"); got != want {
				t.Fatalf("round %d: %s differs from its query\nview:\n%s\nquery:\n%s", round, name, got, want)
			}
		}
	}
}
