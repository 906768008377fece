package sequence

import (
	"math"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
)

// TypeBounds are the value range of a sequence type.
func TypeBounds(typ string) (int64, int64, bool) {
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

// ApplyOptions applies CREATE/ALTER SEQUENCE options to sq; restart is set
// by RESTART [WITH n] (ALTER only).
func ApplyOptions(sq *catalog.Sequence, opts []*pg_query.Node, create bool) (restart *int64, ownedBy []string, err error) {
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
	lo, hi, _ := TypeBounds(sq.Type)
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
