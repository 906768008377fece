// Package vec holds columnar batches and the kernels that compute over
// them: the executor's vectorized path (sql/exec's vagg.go) decodes a
// scan's needed columns straight into typed vectors, filters them with
// selection vectors and aggregates them without building a Datum per
// value.
//
// Invariants:
//  1. A Vec is one type for all its values: Int (int2/int4/int8, date,
//     timestamps, bool as 0/1 in I), Decimal (a NUMERIC as an int64
//     scaled by 10^Scale, one Scale for the vector), Bytes (strings as
//     offsets into one byte slice). NULLs are a bitmap; nil = none.
//  2. Kernels compute only the rows of their selection vector (ascending
//     row indexes); other positions of their output are undefined.
//  3. Results equal the row path's exactly: integer errors are those of
//     sql/types (IntAdd, IntMod, …); a decimal result that would not fit
//     an int64 is ErrOverflow, on which the caller redoes the work row at
//     a time (never a rounded or wrapped value).
//  4. AND and OR evaluate an argument only on the rows the arguments
//     before it left undecided, as the row path's short circuit does, so
//     an error (division by zero) is raised on the same rows.
//
// Imports: sql/types, pgerror.
package vec
