// Package copyfmt reads and writes the data of COPY … FROM STDIN and COPY …
// TO STDOUT in PostgreSQL's text, CSV and binary formats (R-T2), byte for
// byte as PostgreSQL 15 does: the same line splitting, end-of-line
// detection, the old `\.` end-of-data marker, backslash escapes, CSV
// quoting, NULL strings and FORCE_NULL / FORCE_NOT_NULL / FORCE_QUOTE; the
// binary signature, header and field framing (binary.go).
//
// A Decoder (BinaryDecoder) pulls the client's data from an io.Reader and
// hands out one record at a time; an Encoder (the AppendBinary functions)
// appends one row at a time to a byte slice. None knows about tables or
// types: field values are bytes, and the caller converts them with the
// types' text or binary input and output functions.
//
// Invariants:
//  1. Memory is bounded by the longest line or row (plus the read buffer):
//     input is never gathered whole, and binary fields grow with the bytes
//     that arrive, not with the lengths they announce. Every growth of a
//     decoder's buffers passes its Grow hook first, so the caller can bound
//     a line by a memory budget.
//  2. No input makes a decoder panic or loop forever (FuzzCopyText,
//     FuzzCopyCSV, FuzzCopyBinary); malformed input is an error with
//     PostgreSQL's SQLSTATE (22P04 bad_copy_file_format, 22021 for
//     invalid UTF-8).
//  3. Decode(Encode(row)) == row for every row and every valid Options.
//
// Imports: pgerror only.
package copyfmt
