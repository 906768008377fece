// Package types owns SQL data types and values: the type descriptors (T), the
// value representation (Datum), text and binary input/output in PostgreSQL's
// formats, comparison, casts, arithmetic with PostgreSQL's errors, and the
// encoding of a row's values for storage.
//
// Invariants:
//  1. A Datum is a plain struct (no interface boxing): Kind says which fields
//     are meaningful; the zero Datum is SQL NULL.
//  2. DECIMAL/NUMERIC values are exact (apd), never converted through float.
//  3. Text output matches PostgreSQL 15's output functions for the same value.
//  4. Row encoding tags each value with its column id, so rows written under an
//     older table schema decode under a newer one (added columns read NULL,
//     dropped columns are skipped).
//
// It is a leaf: it imports no other mvserver package but pgerror.
package types
