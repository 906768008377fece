package server

import (
	"context"
	"net"

	"github.com/mvserver/mvserver/pgerror"
)

// StartupInfo is what the wire layer learned from a connection's startup
// message and socket, handed to the Engine when the connection is accepted.
type StartupInfo struct {
	User            string
	Database        string
	ApplicationName string
	// Params holds every startup parameter as sent (user, database, options,
	// client_encoding, application_name, DateStyle, …).
	Params     map[string]string
	RemoteAddr net.Addr
	// ProcessID is the backend process id reported in BackendKeyData; the
	// session may expose it as pg_backend_pid().
	ProcessID uint32
	// Deallocate closes this connection's prepared statement name, or
	// every named one when name is "" (SQL DEALLOCATE, which psqlODBC
	// sends); it reports whether the statement existed. It may be called
	// only from the session's own calls (the connection's goroutine).
	Deallocate func(name string) bool
}

// Engine creates sessions. The SQL layer implements it; the wire layer knows
// nothing else of the engine.
type Engine interface {
	// Connect creates a session for an authenticated connection. An error
	// (for example 3D000 for an unknown database) is sent as FATAL and the
	// connection is closed.
	Connect(ctx context.Context, info StartupInfo) (Session, error)
}

// ParamStatus is one ParameterStatus message (name = value).
type ParamStatus struct {
	Name, Value string
}

// Column describes one result column of a RowDescription.
type Column struct {
	Name         string
	TableOID     uint32
	AttrNum      int16
	TypeOID      uint32
	TypeSize     int16
	TypeModifier int32
	// Format is 0 for text, 1 for binary. For a portal it is the format the
	// DataRow values are encoded in.
	Format int16
}

// ResultWriter receives the results of statements as they are produced. The
// wire layer turns each call into protocol messages and flushes as it sees fit
// (rows stream; nothing waits for the whole result).
type ResultWriter interface {
	// RowDescription announces the columns of a statement that returns rows
	// (simple query protocol only; in the extended protocol the description
	// comes from Describe and this is never called).
	RowDescription(cols []Column) error
	// DataRow sends one row; each value is already encoded in its column's
	// format; nil is SQL NULL.
	DataRow(values [][]byte) error
	// CommandComplete ends one statement's result with its tag (e.g. "INSERT 0 3").
	CommandComplete(tag string) error
	// EmptyQuery reports an empty statement.
	EmptyQuery() error
	// Notice sends a NoticeResponse.
	Notice(n *pgerror.Error) error
	// ParameterStatus tells the client a reported setting changed.
	ParameterStatus(name, value string) error
}

// Session is one client connection's state in the SQL engine.
type Session interface {
	// ParameterStatus lists the settings reported to the client after
	// authentication, in order.
	ParameterStatus() []ParamStatus
	// SimpleQuery runs every statement of a simple Query message in order,
	// with PostgreSQL's transaction semantics for multi-statement messages.
	// It stops at the first error and returns it; the wire layer sends the
	// ErrorResponse and then ReadyForQuery with TxStatus().
	SimpleQuery(ctx context.Context, sql string, w ResultWriter) error
	// Prepare parses and analyses one statement for the extended protocol.
	// paramOIDs are the types the client specified (0 = infer); the returned
	// statement reports every parameter's type, inferred ones included.
	Prepare(ctx context.Context, sql string, paramOIDs []uint32) (PreparedStatement, error)
	// Bind creates a portal from a prepared statement. params are the raw
	// parameter values (nil = NULL) in the given formats (PostgreSQL's rules:
	// zero formats = all text, one = all that one, else one per parameter);
	// resultFormats follow the same rule for the result columns.
	Bind(ctx context.Context, ps PreparedStatement, params [][]byte, paramFormats, resultFormats []int16) (Portal, error)
	// Sync ends an extended-protocol batch: outside an explicit transaction
	// block it commits the implicit transaction (or rolls it back when a
	// statement in it failed). An error is reported before ReadyForQuery.
	Sync(ctx context.Context) error
	// TxStatus is the ReadyForQuery status: 'I' idle, 'T' in a transaction
	// block, 'E' in a failed transaction block.
	TxStatus() byte
	// Close ends the session (rolls back any open transaction).
	Close()
}

// PreparedStatement is a parsed and analysed statement.
type PreparedStatement interface {
	// ParamOIDs returns the type of every parameter ($1 …).
	ParamOIDs() []uint32
	// Columns returns the result columns (text format), or nil when the
	// statement returns no rows (NoData).
	Columns() []Column
	// Close releases the statement.
	Close()
}

// Portal is a bound statement ready to execute.
type Portal interface {
	// Columns returns the result columns with their result formats, or nil
	// when the portal returns no rows.
	Columns() []Column
	// Execute runs the portal, sending at most maxRows rows (0 = all). It
	// returns suspended=true when rows remain (PortalSuspended is sent and a
	// later Execute continues); otherwise it has called CommandComplete.
	Execute(ctx context.Context, maxRows int, w ResultWriter) (suspended bool, err error)
	// Close releases the portal.
	Close()
}

// Notification is one NotificationResponse (LISTEN/NOTIFY).
type Notification struct {
	PID     uint32
	Channel string
	Payload string
}

// Notifier is implemented by sessions that receive asynchronous
// notifications (LISTEN). The wire layer sends what TakeNotifications
// returns right before ReadyForQuery when the session is idle ('I'), and
// while the connection waits for the client between transactions, when
// Notifications() signals — as PostgreSQL does.
type Notifier interface {
	// Notifications signals (coalesced) that notifications may be waiting.
	// It may be called from the connection's goroutine only; the channel it
	// returns is read there too. A nil channel means none will come.
	Notifications() <-chan struct{}
	// TakeNotifications returns and clears the waiting notifications.
	TakeNotifications() []Notification
}
