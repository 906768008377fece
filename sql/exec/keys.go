package exec

import (
	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// appendKeyDatum appends the order-preserving key encoding of d.
func appendKeyDatum(b []byte, d types.Datum) ([]byte, error) {
	switch d.K {
	case types.KindNull:
		return storage.AppendNull(b), nil
	case types.KindBool:
		return storage.AppendBool(b, d.I != 0), nil
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindOid, types.KindRegclass, types.KindRegtype, types.KindRegproc, types.KindRegnamespace, types.KindRegrole, types.KindDate, types.KindTimestamp, types.KindTimestampTZ:
		return storage.AppendInt64(b, d.I), nil
	case types.KindFloat4, types.KindFloat8:
		return storage.AppendFloat64(b, d.F), nil
	case types.KindNumeric:
		return storage.AppendDecimal(b, d.D), nil
	case types.KindBytea:
		return storage.AppendBytes(b, []byte(d.S)), nil
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName, types.KindInternalChar, types.KindUnknown:
		return storage.AppendString(b, d.S), nil
	case types.KindArray, types.KindInt2Vector, types.KindOidVector:
		return appendArrayKey(b, d)
	case types.KindEnum:
		// Enum keys order by the label's sort order (declaration order).
		return storage.AppendFloat64(b, d.F), nil
	}
	return nil, pgerror.New(pgerror.FeatureNotSupported, "type %s cannot be part of a primary key", types.T{Kind: d.K}.String())
}

// tableCodec encodes and decodes one table's rows.
type tableCodec struct {
	t      *catalog.Table
	ids    []uint32
	pkCols []int // table column index of each primary-key column
}

func newTableCodec(t *catalog.Table) *tableCodec {
	c := &tableCodec{t: t}
	for _, col := range t.Columns {
		c.ids = append(c.ids, col.ID)
	}
	for _, id := range t.PrimaryKey {
		c.pkCols = append(c.pkCols, t.ColumnByID(id))
	}
	return c
}

// key returns the row's storage key (nil for tables keyed by row id).
func (c *tableCodec) key(row Row) ([]byte, error) {
	if len(c.pkCols) == 0 {
		return nil, nil
	}
	var b []byte
	var err error
	for _, i := range c.pkCols {
		if b, err = appendKeyDatum(b, row[i]); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// value encodes the table columns of row.
func (c *tableCodec) value(row Row) []byte {
	return types.AppendRowValue(nil, c.ids, row[:len(c.ids)])
}

// describeKey formats "(a, b)=(1, 2)" for a unique-violation detail.
func (c *tableCodec) describeKey(row Row) string {
	names, vals := "", ""
	for i, ci := range c.pkCols {
		if i > 0 {
			names += ", "
			vals += ", "
		}
		names += c.t.Columns[ci].Name
		vals += row[ci].String()
	}
	return "(" + names + ")=(" + vals + ")"
}
