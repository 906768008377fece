package catalog

import (
	"sort"

	"github.com/mvserver/mvserver/sql/types"
)

// Function is a SQL-language function (CREATE FUNCTION … LANGUAGE sql,
// R-Q7): its pg_proc row, and a body that is one expression over its
// arguments, which the binder inlines into every call (as PostgreSQL
// inlines simple SQL functions). A materialized view that calls it is
// fingerprinted with its body, so CREATE OR REPLACE of the function
// forces the view's next refresh to be full (R-M8).
type Function struct {
	ID       uint32    `json:"id"` // the pg_proc OID
	SchemaID uint32    `json:"schema_id"`
	Name     string    `json:"name"`
	Owner    uint32    `json:"owner,omitempty"`
	Args     []FuncArg `json:"args"`
	Returns  types.T   `json:"returns"`
	// Body is the SQL text of the expression (arguments by name or $n);
	// Source the body as written (pg_proc.prosrc).
	Body   string `json:"body"`
	Source string `json:"source"`
	// Volatility is pg_proc.provolatile: 'i', 's' or 'v' (the default).
	Volatility byte `json:"volatility"`
	// Version counts CREATE OR REPLACE (R-Q7: the function's version).
	Version int    `json:"version"`
	Comment string `json:"comment,omitempty"`
}

// FuncArg is one argument: its name ("" for none) and type.
type FuncArg struct {
	Name string  `json:"name,omitempty"`
	Type types.T `json:"type"`
}

// Clone returns a copy of f for modification.
func (f *Function) Clone() *Function {
	c := *f
	c.Args = append([]FuncArg(nil), f.Args...)
	return &c
}

// Function returns the function with pg_proc OID id.
func (c *Catalog) Function(id uint32) (*Function, bool) {
	f, ok := c.funcs[id]
	return f, ok
}

// Functions lists the SQL functions by OID.
func (c *Catalog) Functions() []*Function {
	out := make([]*Function, 0, len(c.funcs))
	for _, f := range c.funcs {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// FunctionsNamed lists the functions called name in the schemas of the
// search path (or in the one schema of a qualified name), first schema
// first.
func (c *Catalog) FunctionsNamed(parts []string, searchPath []string) []*Function {
	if len(c.funcs) == 0 {
		return nil
	}
	name, schemas, err := c.qualify(parts, searchPath)
	if err != nil {
		return nil
	}
	var out []*Function
	for _, sn := range schemas {
		s, ok := c.schemas[sn]
		if !ok {
			continue
		}
		for _, f := range c.Functions() {
			if f.SchemaID == s.ID && f.Name == name {
				out = append(out, f)
			}
		}
	}
	return out
}

// PutFunction adds or replaces a function in a clone.
func (c *Catalog) PutFunction(f *Function) {
	if c.funcs == nil {
		c.funcs = map[uint32]*Function{}
	}
	c.funcs[f.ID] = f
}

// DropFunction removes a function from a clone.
func (c *Catalog) DropFunction(id uint32) { delete(c.funcs, id) }

// relinkFunction points the enum types of a loaded function's arguments
// and result at the catalog's definitions (descriptors name them by OID).
func (c *Catalog) relinkFunction(f *Function) {
	link := func(t *types.T) {
		if t.Kind == types.KindEnum && t.Enum != nil {
			if e, ok := c.enums[t.Enum.OID]; ok {
				t.Enum = e.Def()
			}
		}
	}
	link(&f.Returns)
	for i := range f.Args {
		link(&f.Args[i].Type)
	}
}
