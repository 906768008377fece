// Package types owns SQL data types and values: the type descriptors (T), the
// value representation (Datum), text and binary input/output in PostgreSQL's
// formats, comparison, casts, arithmetic with PostgreSQL's errors, and the
// encoding of a row's values for storage.
//
// Invariants:
//  1. A Datum is a plain struct (no interface boxing): Kind says which fields
//     are meaningful; the zero Datum is SQL NULL.
//  2. DECIMAL/NUMERIC values are exact (apd), never converted through float.
//     Only a cast or an assignment applies NUMERIC(p,s) (ApplyNumericTypmod:
//     round half away from zero, 22003 past p); an operator's result type
//     is plain numeric (T.Unmodified), as PostgreSQL's typmod -1.
//  3. Text output matches PostgreSQL 15's output functions for the same value.
//  4. Row encoding tags each value with its column id, so rows written under an
//     older table schema decode under a newer one (added columns read NULL,
//     dropped columns are skipped).
//  5. Dates and timestamps stay in their ranges (timerange.go); every path
//     that makes one checks it with PostgreSQL's 22008 errors.
//
// It is a leaf: it imports no other mvserver package but pgerror.
package types
