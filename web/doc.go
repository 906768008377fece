// Package web is mvserver's HTTP side: the console (server-rendered pages
// over the catalog, the refresh history and the event log, with actions
// that run the same SQL a client would), /metrics in Prometheus text format
// (R-O4), /healthz and /readyz.
//
// Invariants:
//
//  1. Every action is a POST carrying a CSRF token (an HMAC of the session
//     cookie under a per-process secret); a GET changes nothing.
//  2. An action runs its SQL statement in an internal session opened through
//     the same server.Engine the wire server uses, as the console's user:
//     REFRESH, CANCEL REFRESH and ALTER … ENABLE INCREMENTAL take the paths,
//     checks and event-log entries they take for psql. The console has no
//     refresh logic of its own.
//  3. Pages read one storage snapshot each: the catalog, the run history and
//     the event log a page shows agree with each other.
//  4. Until password authentication exists (R-P2), only loopback clients are
//     served, as the SQL port admits only loopback clients; an
//     Authenticator decides who a request is, so a login page can plug in.
//  5. Nothing is loaded from outside the binary: templates, styles and
//     scripts are embedded.
//
// Imports: server (its Engine and Session interfaces), sql/session (the
// same analysis and texts as DESCRIBE EXTENDED and mv_insights), sql/parse
// (policy names), refresh, catalog, storage, sql/types, pgerror. Nothing
// imports web but app.
package web
