package main

import (
	"hash/fnv"

	"github.com/cockroachdb/apd/v3"
	"github.com/jackc/pgx/v5"
)

// resultPrint is a result's fingerprint: its row count, a hash of its
// rows in order and one of them as a bag. Both systems' answers to a
// query are the same when these are; a query without ORDER BY (and any
// view) is compared by the bag alone.
type resultPrint struct {
	rows      int64
	ordered   uint64
	unordered uint64
}

// Type OIDs of the numeric types: their text is normalized (numericKey)
// before it is hashed.
var numericOIDs = map[uint32]bool{20: true, 21: true, 23: true, 700: true, 701: true, 1700: true}

// fingerprintRows reads rows to the end.
func fingerprintRows(rows pgx.Rows) (resultPrint, error) {
	defer rows.Close()
	var p resultPrint
	var numeric []bool
	for rows.Next() {
		if numeric == nil {
			for _, f := range rows.FieldDescriptions() {
				numeric = append(numeric, numericOIDs[f.DataTypeOID])
			}
		}
		h := fnv.New64a()
		for i, v := range rows.RawValues() {
			switch {
			case v == nil:
				h.Write([]byte{1})
			case numeric[i]:
				h.Write([]byte(numericKey(string(v))))
			default:
				h.Write(v)
			}
			h.Write([]byte{0})
		}
		sum := h.Sum64()
		p.unordered += sum
		p.ordered = mix64(p.ordered + sum)
		p.rows++
	}
	return p, rows.Err()
}

// numericKey is a number's text rounded to 12 significant digits without
// trailing zeros: the two systems may carry a quotient or an average to
// different scales (PostgreSQL's numeric division picks its own), and an
// integer column may come back as numeric (extract). Sums and products of
// DECIMAL(15,2) values are exact on both and keep all their digits up to
// 12.
func numericKey(s string) string {
	var d apd.Decimal
	if _, _, err := d.SetString(s); err != nil {
		return s
	}
	c := apd.BaseContext.WithPrecision(12)
	c.Rounding = apd.RoundHalfEven
	if _, err := c.Round(&d, &d); err != nil {
		return s
	}
	d.Reduce(&d)
	if d.IsZero() {
		d.Negative = false
	}
	return d.Text('f')
}
