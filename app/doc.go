// Package app wires a running mvserver: it opens storage, loads the
// catalog, creates the SQL engine and starts the wire server. cmd/mvserver
// parses flags into a Config and calls Start; tests start real servers on
// loopback ports the same way.
//
// Imports: everything below it; nothing imports app but cmd/ and tests.
package app
