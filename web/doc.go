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
//  4. Only loopback peers are served (the connection's address, checked on
//     every request, with or without a login, whatever address --http
//     listens on: the console has no HTTPS, so passwords and session
//     cookies never cross the network in clear), through loopback host
//     names only (DNS rebinding). An Authenticator decides who a request
//     is: the bootstrap superuser without authentication configured, the
//     role a password login checked with it (login.go).
//  5. Nothing is loaded from outside the binary: templates, styles and
//     scripts are embedded.
//  6. The server keeps state only for logged-in sessions (session.go): an
//     anonymous visit's CSRF token is an HMAC of its cookie, so no number
//     of anonymous requests can evict a logged-in session. Password
//     guessing is bounded per user name and slowed per address
//     (throttle.go), so no client can lock out another user name. A
//     dataset's page and overview line are shown only to users who may
//     read it (owner, superuser, SELECT).
//
// Imports: server (its Engine and Session interfaces), sql/session (the
// same analysis and texts as DESCRIBE EXTENDED and mv_insights), sql/parse
// (policy names), refresh, catalog, storage, sql/types, pgerror. Nothing
// imports web but app.
package web
