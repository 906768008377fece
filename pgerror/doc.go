// Package pgerror is the one table of SQLSTATE codes and the error type every
// user-visible error of mvserver carries (STYLE.md "Errors").
//
// Invariants:
//  1. Every error that reaches a client is an *Error with a five-character
//     SQLSTATE; anything else is reported as XX000 (internal error).
//  2. Position, when set, is a 1-based character offset into the statement text
//     exactly as the client sent it.
//
// It is a leaf: it imports nothing of mvserver, so every package, the wire
// layer included, may use it.
package pgerror
