package types

import (
	"strconv"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
)

// parseOidAlias reads a regclass, regtype, … literal: a number is the OID
// itself, "-" is 0, anything else a name looked up through env.Names.
func parseOidAlias(s string, t T, env *Env) (Datum, error) {
	str := strings.TrimSpace(s)
	if str == "-" {
		return NewInt(t.Kind, 0), nil
	}
	if v, err := strconv.ParseUint(str, 10, 32); err == nil {
		return NewInt(t.Kind, int64(v)), nil
	}
	if env == nil || env.Names == nil {
		return Datum{}, invalidInput(t, s)
	}
	oid, err := env.Names.NameOID(t.Kind, str)
	if err != nil {
		return Datum{}, err
	}
	return NewInt(t.Kind, int64(oid)), nil
}

// appendOidAlias writes a regclass, regtype, … value: the object's name, "-"
// for 0 and the number for an OID no object has, as PostgreSQL does.
func appendOidAlias(buf []byte, d Datum, env *Env) []byte {
	if d.I == 0 {
		return append(buf, '-')
	}
	if env != nil && env.Names != nil {
		if name, ok := env.Names.OIDName(d.K, uint32(d.I)); ok {
			return append(buf, name...)
		}
	}
	return strconv.AppendInt(buf, d.I, 10)
}

// ErrUndefinedObject is the error a Names.NameOID returns for a name that
// has no object of the alias type k.
func ErrUndefinedObject(k Kind, name string) error {
	switch k {
	case KindRegclass:
		return pgerror.New(pgerror.UndefinedTable, "relation \"%s\" does not exist", name)
	case KindRegnamespace:
		return pgerror.New(pgerror.UndefinedSchema, "schema \"%s\" does not exist", name)
	case KindRegproc:
		return pgerror.New(pgerror.UndefinedFunction, "function \"%s\" does not exist", name)
	}
	return pgerror.New(pgerror.UndefinedObject, "%s \"%s\" does not exist", map[Kind]string{KindRegtype: "type", KindRegrole: "role"}[k], name)
}
