package session

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
	"github.com/mvserver/mvserver/sql/funcs"
	"github.com/mvserver/mvserver/sql/parse"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// Sequences (CREATE SEQUENCE, serial columns). A sequence's value lives
// outside transactions, as in PostgreSQL: nextval commits its own small
// storage transaction that reserves a block of values, hands them out from
// memory, and a rollback of the caller gives none back. A crash loses at
// most the rest of a block (a gap, never a repeat).

// seqBlock is how many values one reservation takes at least.
const seqBlock = 32

// seqState is a sequence's persisted counter: the last value handed out
// (or reserved) and whether it was (setval's is_called).
type seqState struct {
	last   int64
	called bool
}

func (s seqState) encode() []byte {
	b := binary.BigEndian.AppendUint64(nil, uint64(s.last))
	if s.called {
		return append(b, 1)
	}
	return append(b, 0)
}

func decodeSeqState(b []byte) (seqState, error) {
	if len(b) != 9 {
		return seqState{}, fmt.Errorf("sequence state: %d bytes", len(b))
	}
	return seqState{last: int64(binary.BigEndian.Uint64(b)), called: b[8] == 1}, nil
}

// seqKey is the meta key of a sequence's counter: its id and epoch.
func seqKey(t *catalog.Table) []byte {
	k := append([]byte("seq/"), binary.BigEndian.AppendUint32(nil, t.ID)...)
	return binary.BigEndian.AppendUint64(k, uint64(t.Sequence.Epoch))
}

// seqPrefix is the prefix of every counter key of sequence id.
func seqPrefix(id uint32) []byte {
	return append([]byte("seq/"), binary.BigEndian.AppendUint32(nil, id)...)
}

// sequences hands out sequence values for an engine.
type sequences struct {
	mu     sync.Mutex
	blocks map[string]*seqRange // by seqKey: values reserved, not yet handed out
}

type seqRange struct{ next, limit int64 } // next … limit (inclusive), by the increment

// next returns the next value of t.
func (m *sequences) next(db *storage.DB, t *catalog.Table) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := string(seqKey(t))
	sq := t.Sequence
	if m.blocks == nil {
		m.blocks = map[string]*seqRange{}
	}
	if r := m.blocks[key]; r != nil {
		v := r.next
		if v == r.limit {
			delete(m.blocks, key)
		} else {
			r.next += sq.Increment
		}
		return v, nil
	}
	var first, limit int64
	err := m.update(db, t, func(st seqState) (seqState, error) {
		var err error
		first, err = nextValue(t, st)
		if err != nil {
			return st, err
		}
		n := max(sq.Cache, seqBlock)
		limit = first
		for i := int64(1); i < n; i++ {
			v, ok := step(limit, sq.Increment)
			if !ok || v > sq.Max || v < sq.Min {
				break
			}
			limit = v
		}
		return seqState{last: limit, called: true}, nil
	})
	if err != nil {
		return 0, err
	}
	if first != limit {
		m.blocks[key] = &seqRange{next: first + sq.Increment, limit: limit}
	}
	return first, nil
}

// step adds inc to v, reporting overflow.
func step(v, inc int64) (int64, bool) {
	r := v + inc
	if (inc > 0 && r < v) || (inc < 0 && r > v) {
		return 0, false
	}
	return r, true
}

// nextValue is the value after st: past the bound, the other bound when
// the sequence cycles, else 2200H.
func nextValue(t *catalog.Table, st seqState) (int64, error) {
	sq := t.Sequence
	if !st.called {
		return st.last, nil
	}
	v, ok := step(st.last, sq.Increment)
	if ok && v <= sq.Max && v >= sq.Min {
		return v, nil
	}
	if sq.Cycle {
		if sq.Increment > 0 {
			return sq.Min, nil
		}
		return sq.Max, nil
	}
	if sq.Increment > 0 {
		return 0, pgerror.New(pgerror.SequenceGeneratorLimitExceeded, "nextval: reached maximum value of sequence \"%s\" (%d)", t.Name, sq.Max)
	}
	return 0, pgerror.New(pgerror.SequenceGeneratorLimitExceeded, "nextval: reached minimum value of sequence \"%s\" (%d)", t.Name, sq.Min)
}

// set stores a new state (setval, ALTER SEQUENCE RESTART) and forgets the
// values reserved in memory.
func (m *sequences) set(db *storage.DB, t *catalog.Table, st seqState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.blocks, string(seqKey(t)))
	return m.update(db, t, func(seqState) (seqState, error) { return st, nil })
}

// forget drops the values of t reserved in memory (ALTER SEQUENCE changed
// its step or bounds); they are a gap.
func (m *sequences) forget(t *catalog.Table) {
	m.mu.Lock()
	delete(m.blocks, string(seqKey(t)))
	m.mu.Unlock()
}

// peek reads the persisted state (pg_sequences.last_value).
func (m *sequences) peek(txn *storage.Txn, t *catalog.Table) (seqState, bool, error) {
	b, ok, err := txn.GetMeta(seqKey(t))
	if err != nil || !ok {
		return seqState{}, ok, err
	}
	st, err := decodeSeqState(b)
	return st, err == nil, err
}

// current is the state a sequence read as a table shows (SELECT * FROM
// seq): the last value handed out by any session, how many values are
// reserved beyond it (PostgreSQL's log_cnt: values logged ahead, which
// varies with its checkpoints too), and whether nextval has handed it out.
func (m *sequences) current(db *storage.DB, t *catalog.Table) (last, ahead int64, called bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.blocks[string(seqKey(t))]; r != nil {
		return r.next - t.Sequence.Increment, (r.limit-r.next)/t.Sequence.Increment + 1, true, nil
	}
	txn := db.Begin()
	defer txn.Rollback()
	st, ok, err := m.peek(txn, t)
	if err != nil {
		return 0, 0, false, err
	}
	if !ok {
		return t.Sequence.Start, 0, false, nil
	}
	return st.last, 0, st.called, nil
}

// update runs fn on the persisted state in its own transaction, retrying
// when another commit races it.
func (m *sequences) update(db *storage.DB, t *catalog.Table, fn func(seqState) (seqState, error)) error {
	key := seqKey(t)
	for attempt := 0; ; attempt++ {
		txn := db.Begin()
		st := seqState{last: t.Sequence.Start}
		b, ok, err := txn.GetMeta(key)
		if err == nil && ok {
			st, err = decodeSeqState(b)
		}
		if err != nil {
			txn.Rollback()
			return err
		}
		nst, err := fn(st)
		if err != nil {
			txn.Rollback()
			return err
		}
		if err := txn.PutMeta(key, nst.encode()); err != nil {
			txn.Rollback()
			return err
		}
		err = txn.Commit()
		if err == nil {
			return nil
		}
		if !errors.Is(err, storage.ErrSerialization) || attempt >= 20 {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * time.Millisecond)
	}
}

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
		last, ahead, called, err := o.s.eng.seqs.current(o.s.eng.DB, arg.(*catalog.Table))
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
	v, err := o.s.eng.seqs.next(o.s.eng.DB, t)
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
	if err := o.s.eng.seqs.set(o.s.eng.DB, t, seqState{last: v, called: called}); err != nil {
		return 0, mapStorageErr(err)
	}
	return v, nil
}

// seqTypeBounds are the value range of a sequence type.
func seqTypeBounds(typ string) (int64, int64, bool) {
	switch typ {
	case "smallint":
		return math.MinInt16, math.MaxInt16, true
	case "integer":
		return math.MinInt32, math.MaxInt32, true
	case "bigint":
		return math.MinInt64, math.MaxInt64, true
	}
	return 0, 0, false
}

// seqOptions applies CREATE/ALTER SEQUENCE options to sq; restart is set
// by RESTART [WITH n] (ALTER only).
func seqOptions(sq *catalog.Sequence, opts []*pg_query.Node, create bool) (restart *int64, ownedBy []string, err error) {
	var minSet, maxSet, startSet bool
	seen := map[string]bool{}
	for _, o := range opts {
		d := o.GetDefElem()
		if seen[d.Defname] {
			return nil, nil, pgerror.New(pgerror.SyntaxError, "conflicting or redundant options")
		}
		seen[d.Defname] = true
		num := func() (int64, error) {
			switch a := d.Arg.GetNode().(type) {
			case *pg_query.Node_Integer:
				return int64(a.Integer.Ival), nil
			case *pg_query.Node_Float:
				v, err := strconv.ParseInt(a.Float.Fval, 10, 64)
				if err != nil {
					return 0, pgerror.New(pgerror.NumericValueOutOfRange, "value \"%s\" is out of range for type bigint", a.Float.Fval)
				}
				return v, nil
			}
			return 0, pgerror.New(pgerror.SyntaxError, "%s requires a numeric value", d.Defname)
		}
		switch d.Defname {
		case "as":
			tn := d.Arg.GetTypeName()
			name := strings.ToLower(tn.Names[len(tn.Names)-1].GetString_().GetSval())
			switch name {
			case "int2", "smallint":
				sq.Type = "smallint"
			case "int4", "integer", "int":
				sq.Type = "integer"
			case "int8", "bigint":
				sq.Type = "bigint"
			default:
				return nil, nil, pgerror.New(pgerror.InvalidParameterValue, "sequence type must be smallint, integer, or bigint")
			}
		case "increment":
			if sq.Increment, err = num(); err != nil {
				return nil, nil, err
			}
			if sq.Increment == 0 {
				return nil, nil, pgerror.New(pgerror.InvalidParameterValue, "INCREMENT must not be zero")
			}
		case "minvalue":
			if d.Arg != nil {
				if sq.Min, err = num(); err != nil {
					return nil, nil, err
				}
				minSet = true
			}
		case "maxvalue":
			if d.Arg != nil {
				if sq.Max, err = num(); err != nil {
					return nil, nil, err
				}
				maxSet = true
			}
		case "start":
			if sq.Start, err = num(); err != nil {
				return nil, nil, err
			}
			startSet = true
		case "restart":
			if create {
				return nil, nil, pgerror.New(pgerror.SyntaxError, "RESTART is only for ALTER SEQUENCE")
			}
			v := sq.Start
			if d.Arg != nil {
				if v, err = num(); err != nil {
					return nil, nil, err
				}
			}
			restart = &v
		case "cache":
			if sq.Cache, err = num(); err != nil {
				return nil, nil, err
			}
			if sq.Cache < 1 {
				return nil, nil, pgerror.New(pgerror.InvalidParameterValue, "CACHE (%d) must be greater than zero", sq.Cache)
			}
		case "cycle":
			sq.Cycle = d.Arg.GetBoolean().GetBoolval()
		case "owned_by":
			for _, n := range d.Arg.GetList().GetItems() {
				ownedBy = append(ownedBy, n.GetString_().GetSval())
			}
		default:
			return nil, nil, pgerror.New(pgerror.FeatureNotSupported, "sequence option %s is not supported", d.Defname)
		}
	}
	lo, hi, _ := seqTypeBounds(sq.Type)
	if create || seen["as"] || seen["increment"] {
		if !minSet && (create || seen["increment"]) {
			sq.Min = 1
			if sq.Increment < 0 {
				sq.Min = lo
			}
		}
		if !maxSet && (create || seen["increment"] || seen["as"]) {
			sq.Max = hi
			if sq.Increment < 0 {
				sq.Max = -1
			}
		}
	}
	if !startSet && create {
		sq.Start = sq.Min
		if sq.Increment < 0 {
			sq.Start = sq.Max
		}
	}
	switch {
	case sq.Min < lo || sq.Max > hi:
		return nil, nil, pgerror.New(pgerror.InvalidParameterValue, "MINVALUE and MAXVALUE must fit type %s", sq.Type)
	case sq.Min >= sq.Max:
		return nil, nil, pgerror.New(pgerror.InvalidParameterValue, "MINVALUE (%d) must be less than MAXVALUE (%d)", sq.Min, sq.Max)
	case sq.Start < sq.Min:
		return nil, nil, pgerror.New(pgerror.InvalidParameterValue, "START value (%d) cannot be less than MINVALUE (%d)", sq.Start, sq.Min)
	case sq.Start > sq.Max:
		return nil, nil, pgerror.New(pgerror.InvalidParameterValue, "START value (%d) cannot be greater than MAXVALUE (%d)", sq.Start, sq.Max)
	case restart != nil && (*restart < sq.Min || *restart > sq.Max):
		return nil, nil, pgerror.New(pgerror.InvalidParameterValue, "RESTART value (%d) is out of range (%d..%d)", *restart, sq.Min, sq.Max)
	}
	return restart, ownedBy, nil
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
	_, owned, err := seqOptions(sq, cs.Options, true)
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
	restart, owned, err := seqOptions(nt.Sequence, as.Options, false)
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
	s.eng.seqs.forget(nt)
	if restart != nil {
		// Like setval, the restart takes effect at once, outside the
		// transaction.
		if err := s.eng.seqs.set(s.eng.DB, nt, seqState{last: *restart}); err != nil {
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
	p := seqPrefix(t.ID)
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
	_, hi, _ := seqTypeBounds(typ)
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
