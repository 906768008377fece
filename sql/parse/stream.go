package parse

import (
	"cmp"
	"slices"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/mvserver/mvserver/pgerror"
)

// A streaming table's query names the relations it reads as streams with
// STREAM(name) in FROM (R-ST1). PostgreSQL's grammar reads `STREAM(orders) o`
// as a function in FROM whose one argument is a column reference, so the
// grammar itself decides where the spelling may appear (FROM items only,
// never a select-list call). ExtractStreams turns each such item back into
// the relation it names, so that binding, dependencies and the stored
// definition see an ordinary table reference; the caller keeps which ones
// were streams.

// StreamRef is one STREAM(name) item, now the RangeVar it names.
type StreamRef struct {
	RangeVar *pg_query.RangeVar
	// Location is the byte offset of STREAM in the statement's SQL.
	Location int32
}

// ExtractStreams rewrites every FROM item STREAM(name) [AS alias] of ast
// into name [AS alias] and returns them in the order they appear.
func ExtractStreams(st *Statement) ([]StreamRef, error) {
	if st == nil || st.AST == nil {
		return nil, nil
	}
	var refs []StreamRef
	var err error
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if err != nil {
			return
		}
		if n, ok := m.Interface().(*pg_query.Node); ok {
			if rf := n.GetRangeFunction(); rf != nil {
				if fn := streamCall(rf); fn != nil {
					var rv *pg_query.RangeVar
					if rv, err = streamRangeVar(st, rf, fn); err != nil {
						return
					}
					n.Node = &pg_query.Node_RangeVar{RangeVar: rv}
					refs = append(refs, StreamRef{RangeVar: rv, Location: fn.Location})
					return
				}
			}
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for k := 0; k < l.Len(); k++ {
					walk(l.Get(k).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				walk(v.Message())
			}
			return err == nil
		})
	}
	walk(st.AST.ProtoReflect())
	// In the statement's order: Range visits a message's fields in an
	// order protobuf leaves undefined (and varies from run to run), so a
	// UNION's arms came out either way round.
	slices.SortFunc(refs, func(a, b StreamRef) int { return cmp.Compare(a.Location, b.Location) })
	return refs, err
}

// streamCall returns the call of a FROM function item spelled stream(…).
func streamCall(rf *pg_query.RangeFunction) *pg_query.FuncCall {
	if len(rf.Functions) != 1 {
		return nil
	}
	l := rf.Functions[0].GetList()
	if l == nil || len(l.Items) == 0 {
		return nil
	}
	fn := l.Items[0].GetFuncCall()
	if fn == nil || len(fn.Funcname) != 1 || fn.Funcname[0].GetString_().GetSval() != "stream" {
		return nil
	}
	return fn
}

// streamRangeVar checks STREAM's argument is a relation name and returns
// the RangeVar it stands for.
func streamRangeVar(st *Statement, rf *pg_query.RangeFunction, fn *pg_query.FuncCall) (*pg_query.RangeVar, error) {
	bad := func() error {
		return st.Errorf(fn.Location, pgerror.FeatureNotSupported, "STREAM takes the name of a table: STREAM(name)").
			WithHint("A streaming table reads a table, a streaming table or a view of one as a stream, e.g. FROM STREAM(orders) o.")
	}
	if len(fn.Args) != 1 || fn.AggStar || fn.AggDistinct || fn.FuncVariadic || len(fn.AggOrder) > 0 || fn.AggFilter != nil || fn.Over != nil {
		return nil, bad()
	}
	if rf.Lateral || rf.Ordinality || len(rf.Coldeflist) > 0 {
		return nil, bad()
	}
	cr := fn.Args[0].GetColumnRef()
	if cr == nil || len(cr.Fields) == 0 || len(cr.Fields) > 3 {
		return nil, bad()
	}
	var parts []string
	for _, f := range cr.Fields {
		s := f.GetString_()
		if s == nil {
			return nil, bad()
		}
		parts = append(parts, s.Sval)
	}
	rv := &pg_query.RangeVar{Relname: parts[len(parts)-1], Inh: true, Relpersistence: "p", Alias: rf.Alias, Location: cr.Location}
	switch len(parts) {
	case 2:
		rv.Schemaname = parts[0]
	case 3:
		rv.Catalogname, rv.Schemaname = parts[0], parts[1]
	}
	return rv, nil
}

// StreamName is the name a StreamRef reads, as written (for messages).
func (r StreamRef) StreamName() string {
	var parts []string
	for _, p := range []string{r.RangeVar.Catalogname, r.RangeVar.Schemaname, r.RangeVar.Relname} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, ".")
}
