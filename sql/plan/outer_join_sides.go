package plan

// Outer joins' build side. The executor's hash join builds its right side,
// and a LEFT JOIN is bound with its preserved table on the left, so the
// hash table is made of the other one: TPC-H-derived Q13's customer LEFT
// JOIN orders hashed 150k orders to probe them with 15k customers. When the
// right side is estimated outerBuildGain times the left or more, the join
// becomes the same join written as a RIGHT JOIN with the sides exchanged:
// the executor builds the small preserved side, marks the rows that found a
// match and emits the others padded with NULLs at the end (PostgreSQL's
// Hash Right Join, its plan of Q13). A Project puts the columns back in
// their order. The rule runs after index-join, so a left join that looks
// its right side up through a key keeps doing so.

// outerBuildGain is how many times the left side's estimated rows the
// right side must hold for the sides to be exchanged.
const outerBuildGain = 4

func outerJoinSides(o *Optimizer, n Node) (Node, bool, error) {
	if o.est == nil || o.est.Stats == nil {
		return n, false, nil // without statistics the sizes are guesses
	}
	return transformUp(n, func(x Node) (Node, bool, error) {
		j, ok := x.(*Join)
		if !ok || j.Kind != JoinLeft || len(j.LeftKeys) == 0 {
			return x, false, nil
		}
		if o.est.Rows(j.Right) < outerBuildGain*o.est.Rows(j.Left) {
			return x, false, nil
		}
		nl, nr := len(j.Left.Columns()), len(j.Right.Columns())
		swapped := &Join{Kind: JoinRight, Left: j.Right, Right: j.Left, LeftKeys: j.RightKeys, RightKeys: j.LeftKeys,
			Residual: swappedRefs(j.Residual, nl, nr)}
		return unswapped(swapped, j.Columns(), nl, nr), true, nil
	})
}
