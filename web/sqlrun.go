package web

import (
	"context"
	"net"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/server"
)

// ApplicationName is the application_name of the console's sessions.
const ApplicationName = "mvserver console"

// statementResult is what one statement run by the console returned.
type statementResult struct {
	Tag     string
	Notices []string
	Err     *pgerror.Error
}

// runStatement runs sql in a new session of eng, as user, the way a client
// connected from remote would run it (invariant 2): the session's
// implicit transaction commits at the end, as for a simple Query message.
func runStatement(ctx context.Context, eng server.Engine, database, user string, remote net.Addr, sql string) statementResult {
	info := server.StartupInfo{User: user, Database: database, ApplicationName: ApplicationName, RemoteAddr: remote,
		Params: map[string]string{"user": user, "database": database, "application_name": ApplicationName}}
	var res statementResult
	sess, err := eng.Connect(ctx, info)
	if err != nil {
		res.Err = pgerror.Convert(err)
		return res
	}
	defer sess.Close()
	w := &collector{}
	err = sess.SimpleQuery(ctx, sql, w)
	res.Tag, res.Notices = w.tag, w.notices
	if err != nil {
		res.Err = pgerror.Convert(err)
	}
	return res
}

// collector is a server.ResultWriter that keeps the command tag and the
// notices; console statements return no rows.
type collector struct {
	tag     string
	notices []string
}

func (c *collector) RowDescription([]server.Column) error { return nil }
func (c *collector) DataRow([][]byte) error               { return nil }
func (c *collector) CommandComplete(tag string) error     { c.tag = tag; return nil }
func (c *collector) EmptyQuery() error                    { return nil }
func (c *collector) ParameterStatus(string, string) error {
	return nil
}
func (c *collector) Notice(n *pgerror.Error) error {
	msg := n.Message
	if n.Hint != "" {
		msg += " (hint: " + n.Hint + ")"
	}
	c.notices = append(c.notices, msg)
	return nil
}

// quoteIdent quotes an identifier as PostgreSQL does, always.
func quoteIdent(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// qualified is "schema"."name".
func qualified(schema, name string) string {
	return quoteIdent(schema) + "." + quoteIdent(name)
}
