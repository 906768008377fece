package copyfmt

// Options describe one COPY's text or CSV format, after PostgreSQL's
// defaults were applied and its option checks passed (the caller's job: the
// statement's option list is SQL, this package is not).
type Options struct {
	// CSV selects the CSV format; otherwise the text format.
	CSV bool
	// Delimiter separates fields: tab (text) or comma (CSV) by default.
	Delimiter byte
	// Null is the string that stands for SQL NULL: `\N` (text) or the empty
	// string (CSV) by default.
	Null string
	// Quote and Escape are CSV's quote character and the character that
	// escapes a quote inside a quoted field (both '"' by default).
	Quote, Escape byte

	// ForceNotNull[i] (CSV input): field i is never NULL; an unquoted null
	// string is read as that string.
	ForceNotNull []bool
	// ForceNull[i] (CSV input): field i is NULL also when it matches the
	// null string quoted.
	ForceNull []bool
	// ForceQuote[i] (CSV output): every non-NULL value of field i is
	// quoted; ForceQuoteAll quotes every column's.
	ForceQuote    []bool
	ForceQuoteAll bool
}

// TextOptions returns the text format's defaults.
func TextOptions() Options {
	return Options{Delimiter: '\t', Null: `\N`}
}

// CSVOptions returns the CSV format's defaults.
func CSVOptions() Options {
	return Options{CSV: true, Delimiter: ',', Quote: '"', Escape: '"'}
}

func flag(flags []bool, i int) bool {
	return i < len(flags) && flags[i]
}
