package parse

// rewriteArrayCall: Databricks' array(a, b) → ARRAY[a, b]. PostgreSQL's
// grammar reads ARRAY( as the start of ARRAY(subquery), so the call form
// is rewritten unless its parentheses hold a query: one starting with
// SELECT, VALUES, WITH or TABLE, or a parenthesized one with no comma at
// their level.
func rewriteArrayCall(src string, sig []token, i int, b *builder) int {
	if !isWord(src, sig[i], "array") || i+1 >= len(sig) || sig[i+1].text(src) != "(" {
		return 0
	}
	if i > 0 && sig[i-1].text(src) == "." {
		return 0
	}
	// Find the closing parenthesis and whether a comma sits at depth 1.
	depth, end, comma := 0, -1, false
scan:
	for j := i + 1; j < len(sig); j++ {
		switch sig[j].text(src) {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				end = j
				break scan
			}
		case ",":
			comma = comma || depth == 1
		}
	}
	if end < 0 {
		return 0
	}
	if end > i+2 {
		first := sig[i+2]
		if isWord(src, first, "select") || isWord(src, first, "values") || isWord(src, first, "with") || isWord(src, first, "table") ||
			first.text(src) == "(" && !comma {
			return 0 // ARRAY(subquery)
		}
	}
	b.copy(src, sig[i].start, sig[i].end)
	b.replace(sig[i+1].start, "[")
	b.inserts = append(b.inserts, insertion{at: end, text: "]", consume: true})
	return 2
}
