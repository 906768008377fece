package ddl

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// Env is what a statement runs against.
type Env struct {
	// Cat is a clone of the session's catalog, modified in place.
	Cat        *catalog.Catalog
	SearchPath []string
	// Subject is the role whose rights apply; Owner the owner new
	// objects get.
	Subject, Owner uint32
	// Notice sends a NOTICE to the client.
	Notice func(format string, args ...any)
	// Types is the session's type environment (time zone, OID names),
	// for binding stored queries.
	Types *types.Env
	// Position maps a location in the parse tree to the client's text
	// (for error positions); nil for none.
	Position func(loc int32) int32
}

// Result is what a statement changed.
type Result struct {
	Tag              string
	Changed, Dropped []uint32
	// Versions are the tables the statement gives a new version (R-T4),
	// recorded with Operation.
	Versions  []uint32
	Operation string
	// SameQueries: the stored queries the statement rewrote compute what
	// they computed (a renamed or moved relation named anew), so the
	// materialized views' refresh checkpoints still hold.
	SameQueries bool
}

// Action runs one statement.
type Action func(*Env) (Result, error)

// Statement returns the action for the statements this package owns
// (false for every other statement).
func Statement(n *pg_query.Node) (Action, bool) {
	switch x := n.Node.(type) {
	case *pg_query.Node_CreateEnumStmt:
		return func(e *Env) (Result, error) { return createEnum(e, x.CreateEnumStmt) }, true
	case *pg_query.Node_AlterEnumStmt:
		return func(e *Env) (Result, error) { return alterEnum(e, x.AlterEnumStmt) }, true
	case *pg_query.Node_DropStmt:
		switch x.DropStmt.RemoveType {
		case pg_query.ObjectType_OBJECT_TYPE:
			return func(e *Env) (Result, error) { return dropTypes(e, x.DropStmt) }, true
		case pg_query.ObjectType_OBJECT_FUNCTION:
			return func(e *Env) (Result, error) { return dropFunctions(e, x.DropStmt) }, true
		}
	case *pg_query.Node_RenameStmt:
		if _, ok := relationKinds[x.RenameStmt.RenameType]; ok {
			return func(e *Env) (Result, error) { return renameRelation(e, x.RenameStmt) }, true
		}
	case *pg_query.Node_AlterObjectSchemaStmt:
		if _, ok := relationKinds[x.AlterObjectSchemaStmt.ObjectType]; ok {
			return func(e *Env) (Result, error) { return setRelationSchema(e, x.AlterObjectSchemaStmt) }, true
		}
	case *pg_query.Node_CommentStmt:
		return func(e *Env) (Result, error) { return comment(e, x.CommentStmt) }, true
	case *pg_query.Node_CreateFunctionStmt:
		return func(e *Env) (Result, error) { return createFunction(e, x.CreateFunctionStmt) }, true
	}
	return nil, false
}

// requireCreate fails with 42501 unless the subject may create in sc.
func (e *Env) requireCreate(sc *catalog.Schema) error {
	if catalog.IsTempSchema(sc.Name) || e.Cat.SchemaHolds(e.Subject, sc, catalog.PrivCreate) {
		return nil
	}
	return pgerror.New(pgerror.InsufficientPrivilege, "permission denied for schema %s", sc.Name)
}

// owns reports whether the subject may act as the owner of an object
// owned by owner.
func (e *Env) owns(owner uint32) bool {
	if e.Subject == catalog.NoRole {
		return false
	}
	return e.Cat.IsSuperuserID(e.Subject) || owner != 0 && e.Cat.HasPrivsOfRole(e.Subject, owner)
}

func (e *Env) notice(format string, args ...any) {
	if e.Notice != nil {
		e.Notice(format, args...)
	}
}

func (e *Env) errAt(loc int32, code, format string, args ...any) error {
	err := pgerror.New(code, format, args...)
	if e.Position != nil && loc >= 0 {
		err.Position = e.Position(loc)
	}
	return err
}

// names reads a list of String nodes (a qualified name).
func names(ns []*pg_query.Node) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		if s := n.GetString_(); s != nil {
			out = append(out, s.Sval)
		}
	}
	return out
}
