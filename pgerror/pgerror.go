package pgerror

import (
	"context"
	"errors"
	"fmt"
)

// Severity levels as PostgreSQL spells them.
const (
	SeverityError   = "ERROR"
	SeverityFatal   = "FATAL"
	SeverityNotice  = "NOTICE"
	SeverityWarning = "WARNING"
)

// Error is an error with a SQLSTATE and the optional fields of PostgreSQL's
// ErrorResponse / NoticeResponse.
type Error struct {
	Severity string // empty means ERROR
	Code     string
	Message  string
	Detail   string
	Hint     string
	Position int32 // 1-based character position in the statement, 0 if none
	// Where, Schema, Table, Column, Constraint map to the matching
	// ErrorResponse fields. Where is PostgreSQL's CONTEXT line (e.g. `COPY
	// t, line 2, column a: "x"`).
	Where      string
	Schema     string
	Table      string
	Column     string
	Constraint string
	// RelationID is the catalog id of the relation Table names, when the
	// error is about one: the session fills Schema from it (ORMs read
	// schema, table and constraint to tell which constraint failed).
	RelationID uint32
	cause      error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// New returns an error with the given SQLSTATE and message.
func New(code, format string, args ...any) *Error {
	if len(args) == 0 {
		return &Error{Code: code, Message: format}
	}
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error with the given SQLSTATE whose message is msg: cause.
func Wrap(cause error, code, msg string) *Error {
	m := cause.Error()
	if msg != "" {
		m = msg + ": " + m
	}
	return &Error{Code: code, Message: m, cause: cause}
}

// WithDetail sets Detail and returns e.
func (e *Error) WithDetail(format string, args ...any) *Error {
	e.Detail = fmt.Sprintf(format, args...)
	return e
}

// WithHint sets Hint and returns e.
func (e *Error) WithHint(format string, args ...any) *Error {
	e.Hint = fmt.Sprintf(format, args...)
	return e
}

// WithPosition sets Position (1-based) and returns e.
func (e *Error) WithPosition(pos int32) *Error {
	e.Position = pos
	return e
}

// Notice returns a NOTICE-severity message with code 00000.
func Notice(format string, args ...any) *Error {
	return &Error{Severity: SeverityNotice, Code: SuccessfulCompletion, Message: fmt.Sprintf(format, args...)}
}

// Convert turns any error into an *Error: an *Error in the chain is returned
// as is, context cancellation becomes 57014, a deadline becomes 57014 with the
// statement-timeout message, anything else becomes XX000.
func Convert(err error) *Error {
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) {
		return pe
	}
	if errors.Is(err, context.Canceled) {
		return &Error{Code: QueryCanceled, Message: "canceling statement due to user request", cause: err}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: QueryCanceled, Message: "canceling statement due to statement timeout", cause: err}
	}
	return &Error{Code: InternalError, Message: err.Error(), cause: err}
}

// Code returns the SQLSTATE of err (XX000 for errors without one, "" for nil).
func Code(err error) string {
	if err == nil {
		return ""
	}
	return Convert(err).Code
}
