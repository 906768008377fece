// Package server speaks the PostgreSQL frontend/backend protocol (version 3.0)
// on behalf of mvserver. It owns sockets, startup, authentication, the simple
// and extended query protocols, cancel requests, statement contexts and
// shutdown. Everything SQL is behind one interface: the wire layer hands text,
// parameters and a ResultWriter to a Session and turns what comes back into
// protocol messages.
//
// # A connection's life
//
//  1. Accept. Serve accepts a socket and starts one goroutine for it
//     (conn.serve). The goroutine owns the socket: it alone reads and writes,
//     so no lock guards the protocol state. Other goroutines (cancel requests,
//     Shutdown) only cancel contexts and set socket deadlines.
//  2. Negotiation. The first packet has no type byte. An SSLRequest is
//     answered 'S' when Config.TLS is set: the TLS handshake (TLS 1.2 at
//     least) runs on the socket at once and everything after it, the
//     startup packet included, goes through TLS (tls.go); a failed
//     handshake ends that connection only. Without Config.TLS the answer
//     is 'N', and to a GSSENCRequest always (no GSS encryption), and the
//     real startup packet is read from the same socket in plain text, as
//     libpq expects. A CancelRequest, plain or inside TLS (libpq 17 and
//     pgx encrypt the cancel connection of an encrypted session), is
//     handled (step 8) and the socket closed without a reply.
//  3. Startup. The StartupMessage must ask for protocol 3.x; a later minor
//     version or unknown "_pq_." options get a NegotiateProtocolVersion
//     down to 3.0, anything else is FATAL 0A000. "user" is required (FATAL
//     28000); "database" defaults to the user name. Steps 2–5 must finish
//     within Config.StartupTimeout, so a silent client costs nothing for long.
//  4. Authentication. Config.Authenticator decides; it may exchange
//     messages with the client through an AuthExchange, which also tells
//     whether the connection is encrypted. The default, TrustLoopback,
//     trusts loopback and unix-socket clients and refuses others with
//     FATAL 28000, as a pg_hba.conf without a matching line would.
//     NewAuthenticator follows pg_hba.conf-style rules (hba.go: local,
//     host, hostssl, hostnossl; trust, reject, password, md5,
//     scram-sha-256) and checks passwords against stored verifiers it
//     looks up through a function (the role catalog is not ours):
//     SCRAM-SHA-256 (scram.go; SCRAM-SHA-256-PLUS with tls-server-end-point
//     channel binding over TLS), MD5 and cleartext (auth_methods.go). A
//     wrong password, an unknown role and a role without a password fail
//     alike, 28P01, after a complete exchange (an unknown role's salt
//     derives from AuthConfig.MockSecret, kept across restarts) and after
//     AuthConfig.FailureDelay, queued per user name (auth_delay.go); an
//     admitted user that is no role, or one without LOGIN, gets 28000.
//     Then a connection slot is taken (more than MaxConnections
//     authenticated sessions: FATAL 53300, R-X3; the last
//     ReservedConnections slots only for users Config.Superuser names)
//     and AuthenticationOk is sent.
//  5. Session. Engine.Connect creates the Session (its error, e.g. 3D000,
//     is sent as FATAL). The client then gets one ParameterStatus per
//     Session.ParameterStatus entry, BackendKeyData (process id from a
//     counter, secret from crypto/rand) and ReadyForQuery('I').
//  6. Query loop. Query runs Session.SimpleQuery; Parse, Bind, Describe,
//     Execute, Close, Sync and Flush drive prepared statements and portals
//     (extended.go). After an error in the extended protocol every message
//     but Sync and Terminate is discarded until Sync, as PostgreSQL does.
//     Results stream through the ResultWriter into an output buffer that is
//     written out whenever it exceeds 64 KiB, at ReadyForQuery, on Flush
//     and after errors and notices. A Session that implements Notifier
//     (LISTEN/NOTIFY) gets its notifications sent as NotificationResponse
//     right before a ReadyForQuery('I') and, while the client is idle
//     after one, as soon as they arrive: for such sessions a reader
//     goroutine does the blocking Receive, one message per request from
//     the connection's goroutine, which alone still writes (notify.go).
//     COPY runs inside the statement that starts it (copy.go): the session
//     sends CopyInResponse and reads the client's CopyData through a
//     reader that receives one message at a time (through the reader
//     goroutine when there is one), ignoring Flush and Sync, up to
//     CopyDone or CopyFail; or it sends CopyOutResponse, CopyData and
//     CopyDone. After a COPY FROM STDIN fails, the rest of the client's
//     copy data is dropped as it arrives; another message in the middle
//     of the data ends the connection (08P01), as in PostgreSQL.
//     A Session that implements IdleTimeouter bounds how long the client
//     may stay silent after a ReadyForQuery inside a transaction
//     (idle_in_transaction_session_timeout): past it the connection ends
//     with FATAL 25P03, which rolls the transaction back.
//  7. End. Terminate or EOF closes quietly. A malformed, unknown or too
//     large message is FATAL 08P01. A panic anywhere in the connection is
//     logged and reported as FATAL XX000. In every case open portals,
//     statements and the Session are closed, and the connection slot is
//     released, by the connection's own goroutine.
//  8. Cancel. A CancelRequest naming a live connection's (process id,
//     secret) cancels the context of the statement running on it, if any;
//     the Session returns an error wrapping context.Canceled, which is
//     reported as 57014. This is psql's Ctrl-C, and how a manual REFRESH
//     stops (R-S5).
//  9. Shutdown. Listeners close; idle connections get FATAL 57P01 at once
//     (their pending read is interrupted by a past read deadline); busy ones
//     finish what the client already sent and then get it. When the caller's
//     context ends first, every statement context is canceled and the rest
//     are terminated the same way.
//
// # Invariants
//
//  1. Only a connection's goroutine touches its socket's data and its
//     protocol state (statements, portals, output buffer).
//  2. Every statement (SimpleQuery, Prepare, Bind, Execute, Sync) runs under a
//     fresh context that is canceled by a matching CancelRequest, by a
//     forced Shutdown, or when the statement ends.
//  3. Every ReadyForQuery reports Session.TxStatus() as it is after the
//     message that produced it, and when that status is 'I' no portal
//     survives: PostgreSQL destroys portals at transaction end.
//  4. A message the client sends can end its own connection, never the
//     server or another connection.
//  5. Memory per connection is bounded by MaxMessageSize for input and by the
//     largest single message plus 64 KiB for output; results are never
//     gathered whole, and COPY data is received only as the session reads
//     it.
//
// # What a Session can rely on
//
//   - Every call on a Session, its statements and portals comes from the
//     connection's goroutine, one at a time; only ctx is canceled from
//     elsewhere.
//   - Bind parameters are copied out of the read buffer (the session may keep
//     them); their count matches ParamOIDs and the format lists have PostgreSQL's
//     0/1/n shape with codes 0 or 1.
//   - Sync is called for every Sync message, also after a failed batch and
//     when nothing ran since the last one.
//   - After a ReadyForQuery with status 'I' every portal has been closed; a
//     simple Query closes the unnamed statement and portal first.
//   - In the extended protocol RowDescription calls on the writer are
//     dropped (Describe sent it); EmptyQuery is the session's to report.
//   - Errors the wire layer raises itself in the extended protocol reach a
//     session that implements Aborter, so they can fail the transaction.
//   - The ResultWriter given to SimpleQuery and Portal.Execute is also a
//     Copier (copy.go), for COPY FROM STDIN and COPY TO STDOUT: CopyIn
//     sends CopyInResponse and returns an io.Reader of the client's data
//     (io.EOF at CopyDone; a 57014 error after CopyFail; 08P01 after a
//     message out of place, which also ends the connection after the
//     statement's error); CopyOut, CopyData and CopyDone send the
//     output. The statement then ends with CommandComplete("COPY n") or an
//     error, as any other. A failed read from the client ends the
//     connection after the statement returns; data the session leaves
//     unread is dropped. Wrappers of ResultWriter (tests, the console)
//     need not implement Copier.
//
// # Imports
//
// server imports only pgerror, pgproto3 and the standard library. It knows
// the engine only through its own Engine and Session interfaces: never sql/,
// catalog/ or storage/.
package server
