package main

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// colType is a column's SQL type, as the generators produce it: the Go value
// a row generator returns for the column and how it is written as a SQL
// literal (INSERT … VALUES) follow from it.
type colType int

const (
	tInt         colType = iota // INT: int32
	tBigint                     // BIGINT: int64
	tMoney                      // DECIMAL(p,2): cents
	tText                       // TEXT: string
	tDate                       // DATE: time.Time (UTC midnight)
	tTimestamptz                // TIMESTAMPTZ: time.Time
)

// column is one column of a generated table.
type column struct {
	name string
	typ  colType
	sql  string // the column's type in CREATE TABLE
}

// cents is a DECIMAL(p,2) value in hundredths. COPY sends it as a binary
// numeric (pgtype.NumericValuer); INSERT writes it as a numeric literal.
type cents int64

// NumericValue implements pgtype.NumericValuer.
func (c cents) NumericValue() (pgtype.Numeric, error) {
	return pgtype.Numeric{Int: big.NewInt(int64(c)), Exp: -2, Valid: true}, nil
}

func (c cents) String() string {
	v := int64(c)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	return fmt.Sprintf("%s%d.%02d", sign, v/100, v%100)
}

// appendLiteral writes v, a value of type t, as a SQL literal both
// PostgreSQL and mvserver read as that type.
func appendLiteral(sb *strings.Builder, t colType, v any) {
	switch t {
	case tInt:
		sb.WriteString(strconv.FormatInt(int64(v.(int32)), 10))
	case tBigint:
		sb.WriteString(strconv.FormatInt(v.(int64), 10))
	case tMoney:
		sb.WriteString(v.(cents).String())
	case tText:
		sb.WriteByte('\'')
		sb.WriteString(strings.ReplaceAll(v.(string), "'", "''"))
		sb.WriteByte('\'')
	case tDate:
		sb.WriteString("DATE '")
		sb.WriteString(v.(time.Time).Format("2006-01-02"))
		sb.WriteByte('\'')
	case tTimestamptz:
		sb.WriteString("TIMESTAMPTZ '")
		sb.WriteString(v.(time.Time).UTC().Format("2006-01-02 15:04:05.999999"))
		sb.WriteString("+00'")
	default:
		panic(fmt.Sprintf("mvbench: no literal for column type %d", t))
	}
}

// mix64 is SplitMix64's finalizer: the generators derive every column of
// row i from i alone, so COPY, INSERT and both servers see the same data
// in any order.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// pick returns a value in [0, n) for row i and column salt.
func pick(seed uint64, i int64, salt uint64, n int64) int64 {
	return int64(mix64(seed^mix64(uint64(i)^salt*0x632be59bd9b4e019)) % uint64(n))
}
