package catalog

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mvserver/mvserver/storage"
)

// Metadata keys of the catalog.
var (
	keyGen     = []byte("c/gen")
	keyNextID  = []byte("c/next_id")
	prefixDesc = []byte("c/d/")
)

func descKey(id uint32) []byte {
	return binary.BigEndian.AppendUint32(append([]byte(nil), prefixDesc...), id)
}

// DescriptorKey is the metadata key of object id's descriptor; a DML
// transaction validates it (storage.Txn.CheckUnchanged) so it conflicts with
// concurrent DDL of the table it writes.
func DescriptorKey(id uint32) []byte { return descKey(id) }

// descriptor is the persisted form of an object.
type descriptor struct {
	Kind   string    `json:"kind"`
	Schema *Schema   `json:"schema,omitempty"`
	Table  *Table    `json:"table,omitempty"`
	Role   *Role     `json:"role,omitempty"`
	Enum   *EnumType `json:"enum,omitempty"`
	Func   *Function `json:"function,omitempty"`
}

// Manager caches the latest catalog and loads the one matching a
// transaction's snapshot.
type Manager struct {
	db       *storage.DB
	database string
	mu       sync.Mutex
	cur      *Catalog
	// curSeq is a storage state (Txn.StateSeq) whose generation is cur's,
	// valid when curSeqOK: a snapshot of that same state gets cur without
	// reading the generation key. Between commits (every point read of a
	// read-only workload) that saves a storage read per statement.
	curSeq   uint64
	curSeqOK bool
}

// Open loads the catalog, creating the database's initial schema on first use.
func Open(db *storage.DB, database string) (*Manager, error) {
	m := &Manager{db: db, database: database}
	txn := db.Begin()
	c, err := m.load(txn)
	txn.Rollback()
	if err != nil {
		return nil, err
	}
	if c.Gen == 0 {
		txn := db.Begin()
		nc := c.Clone()
		s := &Schema{ID: nc.AllocID(), Name: "public"}
		nc.PutSchema(s)
		if err := m.Persist(txn, nc, []uint32{s.ID}, nil); err != nil {
			txn.Rollback()
			return nil, err
		}
		if err := txn.Commit(); err != nil {
			return nil, fmt.Errorf("bootstrap catalog: %w", err)
		}
		txn = db.Begin()
		c, err = m.load(txn)
		txn.Rollback()
		if err != nil {
			return nil, err
		}
	}
	m.cur = c
	return m, nil
}

// Snapshot returns the catalog as of txn's snapshot (plus nothing of txn's
// own uncommitted DDL, which its reads of the metadata see).
func (m *Manager) Snapshot(txn *storage.Txn) (*Catalog, error) {
	// Only a committed catalog may be shared: a transaction that wrote
	// descriptors sees its own uncommitted ones.
	shared := !txn.WroteMeta()
	seq, seqOK := txn.StateSeq()
	seqOK = seqOK && shared
	if seqOK {
		m.mu.Lock()
		cur, hit := m.cur, m.curSeqOK && m.curSeq == seq
		m.mu.Unlock()
		if hit {
			return cur, nil
		}
	}
	gen, err := readGen(txn)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	cur := m.cur
	if cur != nil && cur.Gen == gen {
		m.noteSeq(seq, seqOK)
		m.mu.Unlock()
		return cur, nil
	}
	m.mu.Unlock()
	c, err := m.load(txn)
	if err != nil {
		return nil, err
	}
	if shared {
		m.mu.Lock()
		if m.cur == nil || c.Gen > m.cur.Gen {
			m.cur, m.curSeqOK = c, false
			m.noteSeq(seq, seqOK)
		}
		m.mu.Unlock()
	}
	return c, nil
}

// noteSeq records that storage state seq has cur's generation. The latest
// state is kept: later transactions begin at it. Called with mu held.
func (m *Manager) noteSeq(seq uint64, ok bool) {
	if ok && (!m.curSeqOK || seq > m.curSeq) {
		m.curSeq, m.curSeqOK = seq, true
	}
}

func readGen(txn *storage.Txn) (uint64, error) {
	v, ok, err := txn.GetMeta(keyGen)
	if err != nil || !ok {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("catalog: corrupt generation")
	}
	return binary.BigEndian.Uint64(v), nil
}

func (m *Manager) load(txn *storage.Txn) (*Catalog, error) {
	c := newCatalog(m.database)
	gen, err := readGen(txn)
	if err != nil {
		return nil, err
	}
	c.Gen = gen
	if v, ok, err := txn.GetMeta(keyNextID); err != nil {
		return nil, err
	} else if ok && len(v) == 4 {
		c.nextID = binary.BigEndian.Uint32(v)
	}
	it := txn.ScanMeta(prefixDesc)
	defer it.Close()
	var tables []*Table
	var funcs []*Function
	for it.Next() {
		var d descriptor
		if err := json.Unmarshal(it.Row().Value, &d); err != nil {
			return nil, fmt.Errorf("catalog: corrupt descriptor: %w", err)
		}
		switch {
		case d.Schema != nil:
			c.PutSchema(d.Schema)
		case d.Table != nil:
			tables = append(tables, d.Table)
		case d.Role != nil:
			c.PutRole(d.Role)
		case d.Enum != nil:
			c.PutEnum(d.Enum)
		case d.Func != nil:
			funcs = append(funcs, d.Func)
		}
	}
	if err := it.Err(); err != nil {
		return nil, err
	}
	for _, t := range tables {
		c.PutTable(t)
	}
	for _, f := range funcs {
		c.relinkFunction(f)
		c.PutFunction(f)
	}
	return c, nil
}

// Persist writes the descriptors of the changed objects of c (a clone), deletes
// the dropped ones, and bumps the generation, all in txn.
func (m *Manager) Persist(txn *storage.Txn, c *Catalog, changed, dropped []uint32) error {
	for _, id := range changed {
		var d descriptor
		if t, ok := c.tables[id]; ok {
			d = descriptor{Kind: string(t.Kind), Table: t}
		} else if s, ok := c.SchemaByID(id); ok {
			d = descriptor{Kind: "schema", Schema: s}
		} else if r, ok := c.RoleByID(id); ok {
			d = descriptor{Kind: "role", Role: r}
		} else if e, ok := c.Enum(id); ok {
			d = descriptor{Kind: "enum", Enum: e}
		} else if f, ok := c.Function(id); ok {
			d = descriptor{Kind: "function", Func: f}
		} else {
			return fmt.Errorf("catalog: object %d not in catalog", id)
		}
		b, err := json.Marshal(d)
		if err != nil {
			return err
		}
		if err := txn.PutMeta(descKey(id), b); err != nil {
			return err
		}
	}
	for _, id := range dropped {
		if err := txn.DeleteMeta(descKey(id)); err != nil {
			return err
		}
		if err := deleteStats(txn, id); err != nil {
			return err
		}
	}
	c.Gen++
	if err := txn.PutMeta(keyGen, binary.BigEndian.AppendUint64(nil, c.Gen)); err != nil {
		return err
	}
	return txn.PutMeta(keyNextID, binary.BigEndian.AppendUint32(nil, c.nextID))
}
