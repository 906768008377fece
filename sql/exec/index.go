package exec

import (
	"errors"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
	"github.com/mvserver/mvserver/storage"
)

// StorageInfo is what storage needs for a row write of t: the table and
// the key functions of its secondary indexes, whose entries storage
// maintains with every write (storage/index.go). Every row write goes
// through it; storage refuses one that leaves out an index. The key
// functions share scratch space: the TableInfo belongs to one transaction.
func StorageInfo(t *catalog.Table) storage.TableInfo {
	info := t.StorageInfo()
	for i := range t.Indexes {
		info.Indexes = append(info.Indexes, IndexInfo(&t.Indexes[i]))
	}
	return info
}

// IndexInfo is storage's description of one index: its entries' key is
// the key encoding (appendKeyDatum) of its key columns, read from the row
// value. Entries are encoded ascending whatever ASC/DESC said.
func IndexInfo(ix *catalog.Index) storage.IndexInfo {
	dec := types.NewRowDecoder(ix.ColumnIDs())
	scratch := make([]types.Datum, len(ix.Columns))
	nullsDistinct := !ix.NullsNotDistinct
	return storage.IndexInfo{ID: storage.IndexID(ix.ID), Unique: ix.Unique,
		Key: func(dst, value []byte) ([]byte, bool, error) {
			if err := dec.Decode(value, scratch); err != nil {
				return nil, false, err
			}
			unique := true
			for _, d := range scratch {
				if d.IsNull() && nullsDistinct {
					unique = false
				}
				var err error
				if dst, err = appendKeyDatum(dst, d); err != nil {
					return nil, false, err
				}
			}
			return dst, unique, nil
		}}
}

// Indexable reports whether a column of type t can be an index key.
func Indexable(t types.T) bool {
	switch t.Kind {
	case types.KindInterval, types.KindJSON, types.KindJSONB, types.KindRecord:
		return false
	case types.KindArray:
		return Indexable(types.T{Kind: t.Elem})
	}
	return true
}

// keyText formats "(a, b)=(1, 2)" for a unique-violation detail.
func keyText(t *catalog.Table, ids []uint32, vals []types.Datum) string {
	names := make([]string, len(ids))
	texts := make([]string, len(ids))
	for i, id := range ids {
		names[i] = t.Columns[t.ColumnByID(id)].Name
		if vals[i].IsNull() {
			texts[i] = "null"
		} else {
			texts[i] = string(types.AppendText(nil, vals[i], nil))
		}
	}
	return "(" + strings.Join(names, ", ") + ")=(" + strings.Join(texts, ", ") + ")"
}

// uniqueViolation is PostgreSQL's 23505 for a key of index ix (nil: the
// primary key) taken by another row; vals are the key's values (nil: not
// known).
func uniqueViolation(t *catalog.Table, ix *catalog.Index, vals []types.Datum) *pgerror.Error {
	name, ids := t.PrimaryKeyName(), t.PrimaryKey
	if ix != nil {
		name, ids = ix.Name, ix.ColumnIDs()
	}
	e := pgerror.New(pgerror.UniqueViolation, "duplicate key value violates unique constraint \"%s\"", name)
	if vals != nil {
		e.Detail = "Key " + keyText(t, ids, vals) + " already exists."
	}
	e.Table, e.RelationID, e.Constraint = t.Name, t.ID, name
	return e
}

// IndexBuildError turns the duplicate key met while building unique index
// ix of t into PostgreSQL's 23505 (could not create unique index).
func IndexBuildError(t *catalog.Table, ix *catalog.Index, err error) error {
	var de *storage.DuplicateKeyError
	if !errors.As(err, &de) {
		return err
	}
	e := pgerror.New(pgerror.UniqueViolation, "could not create unique index \"%s\"", ix.Name)
	if vals := decodeKey(t, ix.ColumnIDs(), de.Key); vals != nil {
		e.Detail = "Key " + keyText(t, ix.ColumnIDs(), vals) + " is duplicated."
	}
	e.Table, e.RelationID, e.Constraint = t.Name, t.ID, ix.Name
	return e
}

// rowKeyValues picks the values of columns ids out of a table row.
func rowKeyValues(t *catalog.Table, ids []uint32, row Row) []types.Datum {
	vals := make([]types.Datum, len(ids))
	for i, id := range ids {
		vals[i] = row[t.ColumnByID(id)]
	}
	return vals
}

// UniqueViolation turns a storage duplicate-key error into PostgreSQL's
// 23505 naming the constraint and, when the key decodes, its values: for
// a commit that lost a race on a unique key (the row is not at hand).
// Other errors are returned as they are.
func UniqueViolation(cat *catalog.Catalog, err error) error {
	var de *storage.DuplicateKeyError
	if !errors.As(err, &de) {
		return err
	}
	t, ok := cat.Table(uint32(de.Table))
	if !ok {
		return err
	}
	var ix *catalog.Index
	ids := t.PrimaryKey
	if de.Index != 0 {
		if ix = t.IndexByID(uint32(de.Index)); ix == nil {
			return err
		}
		ids = ix.ColumnIDs()
	}
	if len(ids) == 0 {
		return err
	}
	return uniqueViolation(t, ix, decodeKey(t, ids, de.Key))
}

// decodeKey decodes a key of columns ids (appendKeyDatum's encoding); nil
// when a column does not decode (arrays are not decoded).
func decodeKey(t *catalog.Table, ids []uint32, b []byte) []types.Datum {
	vals := make([]types.Datum, len(ids))
	for i, id := range ids {
		ci := t.ColumnByID(id)
		if ci < 0 {
			return nil
		}
		var err error
		if b, vals[i], err = decodeKeyDatum(b, t.Columns[ci].Type); err != nil {
			return nil
		}
	}
	return vals
}

func decodeKeyDatum(b []byte, typ types.T) ([]byte, types.Datum, error) {
	if rest, null := storage.DecodeIfNull(b); null {
		return rest, types.Datum{}, nil
	}
	switch typ.Kind {
	case types.KindBool:
		rest, v, err := storage.DecodeBool(b)
		return rest, types.NewBool(v), err
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindOid, types.KindDate, types.KindTimestamp, types.KindTimestampTZ:
		rest, v, err := storage.DecodeInt64(b)
		return rest, types.Datum{K: typ.Kind, I: v}, err
	case types.KindFloat4, types.KindFloat8:
		rest, v, err := storage.DecodeFloat64(b)
		return rest, types.Datum{K: typ.Kind, F: v}, err
	case types.KindNumeric:
		d := new(apd.Decimal)
		rest, err := storage.DecodeDecimal(b, d)
		return rest, types.Datum{K: types.KindNumeric, D: d}, err
	case types.KindBytea:
		rest, v, err := storage.DecodeBytes(b, nil)
		return rest, types.Datum{K: types.KindBytea, S: string(v)}, err
	case types.KindText, types.KindVarchar, types.KindChar, types.KindName:
		rest, v, err := storage.DecodeString(b)
		return rest, types.Datum{K: typ.Kind, S: v}, err
	}
	return b, types.Datum{}, pgerror.New(pgerror.FeatureNotSupported, "cannot decode a key of type %s", typ.String())
}
