package exec

import "github.com/mvserver/mvserver/sql/exec/vec"

// likeMatcher compiles a LIKE (ci false) or ILIKE (ci true) pattern for
// the row path. LIKE is vec's matcher, the one the vector kernel runs
// (vec/like.go), so both paths match alike; ILIKE keeps the regexp (case
// folding is the regexp engine's).
func likeMatcher(p string, ci bool) (func(string) bool, error) {
	if ci {
		re, err := likeToRegexp(p, true)
		if err != nil {
			return nil, err
		}
		return re.MatchString, nil
	}
	lp, err := vec.CompileLike(p)
	if err != nil {
		return nil, err
	}
	return lp.MatchString, nil
}
