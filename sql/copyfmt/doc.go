// Package copyfmt reads and writes the data of COPY … FROM STDIN and COPY …
// TO STDOUT in PostgreSQL's text and CSV formats (R-T2), byte for byte as
// PostgreSQL 15 does: the same line splitting, end-of-line detection, the old
// `\.` end-of-data marker, backslash escapes, CSV quoting, NULL strings and
// FORCE_NULL / FORCE_NOT_NULL / FORCE_QUOTE.
//
// A Decoder pulls the client's data from an io.Reader and hands out one
// record (line) at a time; an Encoder appends one row at a time to a byte
// slice. Neither knows about tables or types: field values are bytes, and
// the caller converts them with the types' text input and output functions.
//
// Invariants:
//  1. Memory is bounded by the longest line (plus the read buffer): input is
//     never gathered whole.
//  2. No input makes a Decoder panic or loop forever (FuzzCopyText,
//     FuzzCopyCSV); malformed input is an error with PostgreSQL's SQLSTATE
//     (22P04 bad_copy_file_format, 22021 for invalid UTF-8).
//  3. Decode(Encode(row)) == row for every row and every valid Options.
//
// Imports: pgerror only.
package copyfmt
