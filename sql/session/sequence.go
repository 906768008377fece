package session

import (
	"fmt"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/sequence"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// Sequence DDL (CREATE/ALTER/DROP SEQUENCE, serial columns) and the
// sequence functions of a session. The counters are package sequence's.

// sequenceByOID finds the sequence a regclass names in the session's catalog.
func (s *Session) sequenceByOID(oid uint32) (*catalog.Table, error) {
	if s.cat != nil {
		if t, ok := s.cat.Table(oid); ok {
			if t.Kind == catalog.KindSequence {
				return t, nil
			}
			return nil, pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a sequence", t.Name)
		}
	}
	return nil, pgerror.New(pgerror.UndefinedTable, "could not open relation with OID %d", oid)
}

// A sequence read as a table is one row of its current state.
func init() {
	exec.RegisterRowSource(plan.GenSequence, func(c *exec.Ctx, arg any) ([]exec.Row, error) {
		o, ok := c.Funcs.Sequences.(seqOps)
		if !ok {
			return nil, pgerror.New(pgerror.FeatureNotSupported, "reading sequence \"%s\" as a table is not supported here", arg.(*catalog.Table).Name)
		}
		last, ahead, called, err := o.s.eng.seqs.Current(o.s.eng.DB, arg.(*catalog.Table))
		if err != nil {
			return nil, mapStorageErr(err)
		}
		return []exec.Row{{types.NewInt8(last), types.NewInt8(ahead), types.NewBool(called)}}, nil
	})
}

// seqOps implements funcs.Sequences for a session.
type seqOps struct{ s *Session }

// The sequence functions need PostgreSQL's privileges on the sequence:
// nextval USAGE or UPDATE (a serial column's INSERT too), currval and
// lastval SELECT or USAGE, setval UPDATE.

func (o seqOps) NextVal(oid uint32) (int64, error) {
	t, err := o.s.sequenceByOID(oid)
	if err != nil {
		return 0, err
	}
	if err := o.s.requireAny(t, catalog.PrivUsage, catalog.PrivUpdate); err != nil {
		return 0, err
	}
	v, err := o.s.eng.seqs.Next(o.s.eng.DB, t)
	if err != nil {
		return 0, mapStorageErr(err)
	}
	if o.s.seqLast == nil {
		o.s.seqLast = map[uint32]int64{}
	}
	o.s.seqLast[oid], o.s.lastSeq = v, oid
	return v, nil
}

func (o seqOps) CurrVal(oid uint32) (int64, error) {
	t, err := o.s.sequenceByOID(oid)
	if err != nil {
		return 0, err
	}
	if err := o.s.requireAny(t, catalog.PrivSelect, catalog.PrivUsage); err != nil {
		return 0, err
	}
	v, ok := o.s.seqLast[oid]
	if !ok {
		return 0, pgerror.New(pgerror.ObjectNotInPrerequisiteState, "currval of sequence \"%s\" is not yet defined in this session", t.Name)
	}
	return v, nil
}

func (o seqOps) LastVal() (int64, error) {
	if o.s.lastSeq == 0 {
		return 0, pgerror.New(pgerror.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
	}
	return o.CurrVal(o.s.lastSeq)
}

func (o seqOps) Written(oid uint32) (int64, bool, error) {
	t, err := o.s.sequenceByOID(oid)
	if err != nil {
		return 0, false, err
	}
	if o.s.requireAny(t, catalog.PrivSelect, catalog.PrivUsage) != nil {
		return 0, false, nil
	}
	last, _, called, err := o.s.eng.seqs.Current(o.s.eng.DB, t)
	return last, called, err
}

func (o seqOps) SetVal(oid uint32, v int64, called bool) (int64, error) {
	t, err := o.s.sequenceByOID(oid)
	if err != nil {
		return 0, err
	}
	if err := o.s.require(t, catalog.PrivUpdate); err != nil {
		return 0, err
	}
	if v < t.Sequence.Min || v > t.Sequence.Max {
		return 0, pgerror.New(pgerror.NumericValueOutOfRange, "setval: value %d is out of bounds for sequence \"%s\" (%d..%d)", v, t.Name, t.Sequence.Min, t.Sequence.Max)
	}
	if err := o.s.eng.seqs.Set(o.s.eng.DB, t, sequence.State{Last: v, Called: called}); err != nil {
		return 0, mapStorageErr(err)
	}
	return v, nil
}

// createSequence runs CREATE SEQUENCE.
func (s *Session) createSequence(st *parse.Statement, cs *pg_query.CreateSeqStmt) (string, error) {
	if cs.Sequence.Relpersistence == "t" {
		return "", pgerror.New(pgerror.FeatureNotSupported, "temporary sequences are not supported")
	}
	schema, name, err := s.cat.TargetSchema(parse.RangeVarParts(cs.Sequence), s.resolvePath())
	if err != nil {
		return "", withPosition(err, st, cs.Sequence.Location)
	}
	if s.cat.NameTaken(schema.ID, name) {
		if cs.IfNotExists {
			s.notice("relation \"%s\" already exists, skipping", name)
			return "CREATE SEQUENCE", nil
		}
		return "", st.Errorf(cs.Sequence.Location, pgerror.DuplicateTable, "relation \"%s\" already exists", name)
	}
	sq := &catalog.Sequence{Type: "bigint", Increment: 1, Cache: 1, Epoch: time.Now().UnixNano()}
	_, owned, err := sequence.ApplyOptions(sq, cs.Options, true)
	if err != nil {
		return "", err
	}
	c := s.cat.Clone()
	if err := s.requireCreate(schema); err != nil {
		return "", err
	}
	t := &catalog.Table{ID: c.AllocID(), SchemaID: schema.ID, Name: name, Kind: catalog.KindSequence, Sequence: sq, Owner: s.ownerID()}
	if err := s.ownSequence(c, t, owned); err != nil {
		return "", err
	}
	c.PutTable(t)
	return "CREATE SEQUENCE", s.persist(c, []uint32{t.ID}, nil)
}

// ownSequence applies OWNED BY table.col | NONE.
func (s *Session) ownSequence(c *catalog.Catalog, t *catalog.Table, owned []string) error {
	if len(owned) == 0 {
		return nil
	}
	if len(owned) == 1 && strings.EqualFold(owned[0], "none") {
		t.Sequence.OwnedBy, t.Sequence.OwnedCol = 0, 0
		return nil
	}
	if len(owned) < 2 {
		return pgerror.New(pgerror.SyntaxError, "invalid OWNED BY option").WithHint("Specify OWNED BY table.column or OWNED BY NONE.")
	}
	tbl, err := c.Resolve(owned[:len(owned)-1], s.resolvePath())
	if err != nil {
		return err
	}
	if tbl.Kind != catalog.KindTable {
		return pgerror.New(pgerror.WrongObjectType, "sequence cannot be owned by relation \"%s\"", tbl.Name)
	}
	if tbl.SchemaID != t.SchemaID {
		return pgerror.New(pgerror.ObjectNotInPrerequisiteState, "sequence must be in same schema as table it is linked to")
	}
	i := tbl.ColumnIndex(owned[len(owned)-1])
	if i < 0 {
		return pgerror.New(pgerror.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", owned[len(owned)-1], tbl.Name)
	}
	t.Sequence.OwnedBy, t.Sequence.OwnedCol = tbl.ID, tbl.Columns[i].ID
	return nil
}

// alterSequence runs ALTER SEQUENCE … options | RESTART [WITH n].
func (s *Session) alterSequence(as *pg_query.AlterSeqStmt) (string, error) {
	t, err := s.cat.Resolve(parse.RangeVarParts(as.Sequence), s.resolvePath())
	if err != nil {
		if as.MissingOk && pgerror.Code(err) == pgerror.UndefinedTable {
			s.notice("relation \"%s\" does not exist, skipping", as.Sequence.Relname)
			return "ALTER SEQUENCE", nil
		}
		return "", err
	}
	if t.Kind != catalog.KindSequence {
		return "", pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a sequence", t.Name)
	}
	if err := s.requireOwner(t); err != nil {
		return "", err
	}
	nt := t.Clone()
	restart, owned, err := sequence.ApplyOptions(nt.Sequence, as.Options, false)
	if err != nil {
		return "", err
	}
	c := s.cat.Clone()
	if err := s.ownSequence(c, nt, owned); err != nil {
		return "", err
	}
	c.PutTable(nt)
	if err := s.persist(c, []uint32{nt.ID}, nil); err != nil {
		return "", err
	}
	s.eng.seqs.Forget(nt)
	if restart != nil {
		// Like setval, the restart takes effect at once, outside the
		// transaction.
		if err := s.eng.seqs.Set(s.eng.DB, nt, sequence.State{Last: *restart}); err != nil {
			return "", mapStorageErr(err)
		}
	}
	return "ALTER SEQUENCE", nil
}

// dropSequences runs DROP SEQUENCE: a sequence a column default uses needs
// CASCADE, which drops the default too.
func (s *Session) dropSequences(ds *pg_query.DropStmt) (string, error) {
	c := s.cat.Clone()
	var changed, dropped []uint32
	for _, o := range ds.Objects {
		parts := listParts(o)
		t, err := c.Resolve(parts, s.resolvePath())
		if err != nil {
			if pgerror.Code(err) == pgerror.UndefinedTable {
				if ds.MissingOk {
					s.notice("sequence \"%s\" does not exist, skipping", strings.Join(parts, "."))
					continue
				}
				return "", pgerror.New(pgerror.UndefinedTable, "sequence \"%s\" does not exist", strings.Join(parts, "."))
			}
			return "", err
		}
		if t.Kind != catalog.KindSequence {
			return "", pgerror.New(pgerror.WrongObjectType, "\"%s\" is not a sequence", t.Name)
		}
		if err := s.requireOwner(t); err != nil {
			return "", err
		}
		for _, tbl := range c.Tables() {
			for i, col := range tbl.Columns {
				if !usesSequence(col.Default, t.Name) {
					continue
				}
				if ds.Behavior != pg_query.DropBehavior_DROP_CASCADE {
					return "", pgerror.New(pgerror.DependentObjectsStillExist, "cannot drop sequence %s because other objects depend on it", t.Name).
						WithDetail("default value for column %s of table %s depends on sequence %s", col.Name, tbl.Name, t.Name).
						WithHint("Use DROP ... CASCADE to drop the dependent objects too.")
				}
				nt := tbl.Clone()
				nt.Columns[i].Default = ""
				c.PutTable(nt)
				changed = append(changed, nt.ID)
				s.notice("drop cascades to default value for column %s of table %s", col.Name, tbl.Name)
			}
		}
		if err := s.dropSequence(c, t); err != nil {
			return "", err
		}
		dropped = append(dropped, t.ID)
	}
	if len(changed)+len(dropped) == 0 {
		return "DROP SEQUENCE", nil
	}
	return "DROP SEQUENCE", s.persist(c, changed, dropped)
}

// dropSequence removes a sequence and its counter.
func (s *Session) dropSequence(c *catalog.Catalog, t *catalog.Table) error {
	c.DropTable(t.ID)
	p := sequence.Prefix(t.ID)
	return s.txn.DeleteMetaRange(p, storage.PrefixEnd(p))
}

// usesSequence reports whether a column default calls nextval on seq.
func usesSequence(def, seq string) bool {
	return strings.Contains(def, "nextval(") && (strings.Contains(def, "'"+seq+"'") || strings.Contains(def, "."+seq+"'"))
}

// serialColumn sets up a serial column of t: a sequence t_col_seq owned by
// the column, and the column's default nextval('t_col_seq'::regclass).
func (s *Session) serialColumn(c *catalog.Catalog, t *catalog.Table, col *catalog.Column, typ string) (*catalog.Table, error) {
	base := t.Name + "_" + col.Name + "_seq"
	name := base
	for i := 1; ; i++ {
		if !c.NameTaken(t.SchemaID, name) {
			break
		}
		name = fmt.Sprintf("%s%d", base, i)
	}
	_, hi, _ := sequence.TypeBounds(typ)
	sq := &catalog.Sequence{Type: typ, Start: 1, Increment: 1, Min: 1, Max: hi, Cache: 1,
		OwnedBy: t.ID, OwnedCol: col.ID, Epoch: time.Now().UnixNano()}
	seq := &catalog.Table{ID: c.AllocID(), SchemaID: t.SchemaID, Name: name, Kind: catalog.KindSequence, Sequence: sq, Owner: t.Owner}
	c.PutTable(seq)
	// Outside public the name is qualified: the default resolves it
	// whatever the inserting session's search path (PostgreSQL keeps the
	// sequence's OID).
	qualified := name
	if sc, ok := c.SchemaByID(t.SchemaID); ok && sc.Name != "public" {
		qualified = funcs.QuoteIdent(sc.Name) + "." + funcs.QuoteIdent(name)
	}
	col.Default = "nextval('" + strings.ReplaceAll(qualified, "'", "''") + "'::regclass)"
	col.NotNull = true
	return seq, nil
}
