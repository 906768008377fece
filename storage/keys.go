package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Key spaces of the one Pebble instance, by leading byte (doc.go lists them).
const (
	prefixGlobal  byte = 0x01 // 0x01 | name                               → global state
	prefixMeta    byte = 0x02 // 0x02 | caller key                         → caller value (catalog, refresh state)
	prefixState   byte = 0x03 // 0x03 | table id                           → per-table state
	prefixHistory byte = 0x04 // 0x04 | table id | version                 → history entry
	prefixCDF     byte = 0x05 // 0x05 | table id | version | seq-in-commit → change record
	prefixRows    byte = 0x06 // 0x06 | table id | row key                 → row header | caller value
	prefixIndex   byte = 0x07 // 0x07 | table id | index id | entry key     → row key
)

// formatVersion is the on-disk layout version kept in the global key space.
const formatVersion = "1"

var globalFormatKey = []byte{prefixGlobal, 'f', 'o', 'r', 'm', 'a', 't'}

// RowIDKey is the key of a row of a table without a primary key: the row id,
// 8 bytes big-endian (row ids are positive, so key order is row id order).
func RowIDKey(rowID int64) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 8), uint64(rowID))
}

func appendTablePrefix(dst []byte, prefix byte, tbl TableID) []byte {
	dst = append(dst, prefix)
	return binary.BigEndian.AppendUint32(dst, uint32(tbl))
}

// tableSpan is [start, end) of every key of tbl in one key space.
func tableSpan(prefix byte, tbl TableID) (start, end []byte) {
	start = appendTablePrefix(nil, prefix, tbl)
	return start, PrefixEnd(start)
}

func rowKey(dst []byte, tbl TableID, key []byte) []byte {
	return append(appendTablePrefix(dst, prefixRows, tbl), key...)
}

func metaKey(dst []byte, key []byte) []byte {
	return append(append(dst, prefixMeta), key...)
}

func stateKey(tbl TableID) []byte { return appendTablePrefix(nil, prefixState, tbl) }

func versionKey(prefix byte, tbl TableID, version int64) []byte {
	return binary.BigEndian.AppendUint64(appendTablePrefix(nil, prefix, tbl), uint64(version))
}

func cdfKey(dst []byte, tbl TableID, version int64, seq uint32) []byte {
	dst = binary.BigEndian.AppendUint64(appendTablePrefix(dst, prefixCDF, tbl), uint64(version))
	return binary.BigEndian.AppendUint32(dst, seq)
}

const tablePrefixLen = 5 // prefix byte + table id

// Row values: uvarint row id, uvarint commit version, then the caller's bytes.

var errBadRow = errors.New("storage: corrupt row header")

func rowHeaderLen(rowID, version int64) int {
	return uvarintLen(uint64(rowID)) + uvarintLen(uint64(version))
}

func putRowHeader(dst []byte, rowID, version int64) int {
	n := binary.PutUvarint(dst, uint64(rowID))
	return n + binary.PutUvarint(dst[n:], uint64(version))
}

func parseRowValue(v []byte) (rowID, version int64, value []byte, err error) {
	id, n := binary.Uvarint(v)
	if n <= 0 {
		return 0, 0, nil, errBadRow
	}
	ver, m := binary.Uvarint(v[n:])
	if m <= 0 {
		return 0, 0, nil, errBadRow
	}
	return int64(id), int64(ver), v[n+m:], nil
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// decoder reads the varint-framed values of history, state and change
// records; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("storage: corrupt %s", what)
	}
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail("byte")
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || uint64(len(d.b)) < n {
		d.fail("bytes")
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func appendBytes(dst, v []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(v)))
	return append(dst, v...)
}
