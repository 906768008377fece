package exec

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
	"github.com/mvserver/mvserver/storage"
)

// AddPrimaryKey moves every row of old, a table keyed by row id, to its key
// in nt, the same table with a primary key (ALTER TABLE … ADD PRIMARY KEY).
// A NULL key column fails with 23502 and a duplicated key with 23505, both
// before anything is written. Rows keep their row ids; the change data feed
// sees each move as an update that changes no value.
func AddPrimaryKey(c *Ctx, old, nt *catalog.Table) error {
	scan := plan.NewScan(old)
	for i := range scan.Needed {
		scan.Needed[i] = true
	}
	rows, err := collect(c, scan)
	if err != nil {
		return err
	}
	codec := newTableCodec(nt)
	n := len(nt.Columns)
	keys := make([][]byte, len(rows))
	seen := make(map[string]bool, len(rows))
	// NULLs first, as PostgreSQL sets NOT NULL before it builds the index.
	for _, ci := range codec.pkCols {
		for _, row := range rows {
			if row[ci].IsNull() {
				return pgerror.New(pgerror.NotNullViolation, "column \"%s\" of relation \"%s\" contains null values", nt.Columns[ci].Name, nt.Name)
			}
		}
	}
	for r, row := range rows {
		key, err := codec.key(row)
		if err != nil {
			return err
		}
		if seen[string(key)] {
			e := pgerror.New(pgerror.UniqueViolation, "could not create unique index \"%s_pkey\"", nt.Name)
			e.Detail = "Key " + codec.describeKey(row) + " is duplicated."
			e.Table, e.RelationID, e.Constraint = nt.Name, nt.ID, nt.Name+"_pkey"
			return e
		}
		seen[string(key)] = true
		keys[r] = key
	}
	info := StorageInfo(nt)
	for r, row := range rows {
		if err := c.Txn.Update(info, storage.RowIDKey(row[n].I), keys[r], codec.value(row)); err != nil {
			return err
		}
		if r%1024 == 0 {
			if err := c.Context.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckNotNull fails with 23502 when column col of t holds a NULL (ALTER
// TABLE … SET NOT NULL).
func CheckNotNull(c *Ctx, t *catalog.Table, col int) error {
	scan := plan.NewScan(t)
	scan.Needed[col] = true
	op, err := Build(c, scan)
	if err != nil {
		return err
	}
	return Drain(op, func(rows []Row) error {
		for _, r := range rows {
			if r[col].IsNull() {
				return pgerror.New(pgerror.NotNullViolation, "column \"%s\" of relation \"%s\" contains null values", t.Columns[col].Name, t.Name)
			}
		}
		return c.Context.Err()
	})
}
