package funcs

import (
	"math"
	"strconv"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/types"
)

// json and jsonb functions and the functions behind their operators
// (-> ->> #> #>>, bound by sql/plan). Values become JSON as PostgreSQL's
// to_json makes them: numbers and booleans as they are, json and jsonb
// embedded, arrays as arrays, dates and timestamps as ISO 8601 strings,
// everything else as the JSON string of its text.

// JSONOperatorFunc names the function of a JSON operator applied to
// left of kind k with a right operand that is an integer (index) or not;
// "" when there is none.
func JSONOperatorFunc(op string, k types.Kind, index bool) string {
	prefix := "json"
	switch k {
	case types.KindJSONB:
		prefix = "jsonb"
	case types.KindJSON:
	default:
		return ""
	}
	switch op {
	case "->":
		if index {
			return prefix + "_array_element"
		}
		return prefix + "_object_field"
	case "->>":
		if index {
			return prefix + "_array_element_text"
		}
		return prefix + "_object_field_text"
	case "#>":
		return prefix + " #>"
	case "#>>":
		return prefix + " #>>"
	}
	return ""
}

func init() {
	for _, jt := range []types.T{types.JSON, types.JSONB} {
		prefix := jt.String()
		// out is the json(b) result of a member, as the operand's type shows it.
		out := func(v *types.JSONValue) types.Datum {
			if jt.Kind == types.KindJSONB {
				return types.NewString(types.KindJSONB, types.NormalizeJSONB(v))
			}
			return types.NewString(types.KindJSON, v.Raw)
		}
		outText := func(v *types.JSONValue) types.Datum {
			switch v.Kind {
			case types.JSONNull:
				return types.NullDatum
			case types.JSONString:
				return types.NewText(v.Str)
			}
			return types.NewText(out(v).S)
		}
		member := func(text bool, get func(v *types.JSONValue, a types.Datum) (*types.JSONValue, bool)) func(c *Ctx, a []types.Datum) (types.Datum, error) {
			return func(c *Ctx, a []types.Datum) (types.Datum, error) {
				v, err := types.ParseJSON(a[0].S)
				if err != nil {
					return types.Datum{}, err
				}
				m, ok := get(v, a[1])
				if !ok {
					return types.NullDatum, nil
				}
				if text {
					return outText(m), nil
				}
				return out(m), nil
			}
		}
		field := func(v *types.JSONValue, a types.Datum) (*types.JSONValue, bool) { return v.Field(a.S) }
		elem := func(v *types.JSONValue, a types.Datum) (*types.JSONValue, bool) { return v.Index(int(a.I)) }
		path := func(v *types.JSONValue, a types.Datum) (*types.JSONValue, bool) {
			if a.A == nil {
				return nil, false
			}
			for _, p := range a.A.Elems {
				if p.IsNull() {
					return nil, false
				}
				var ok bool
				switch v.Kind {
				case types.JSONObject:
					v, ok = v.Field(p.S)
				case types.JSONArray:
					i, err := strconv.Atoi(strings.TrimSpace(p.S))
					if err != nil {
						return nil, false
					}
					v, ok = v.Index(i)
				}
				if !ok {
					return nil, false
				}
			}
			return v, true
		}
		textArr := types.ArrayOf(types.Text)
		reg := func(name string, arg types.T, ret types.T, fn func(c *Ctx, a []types.Datum) (types.Datum, error)) {
			register(&Func{Name: name, Deterministic: true, Overloads: []*Overload{{Params: []types.T{jt, arg}, Ret: func([]types.T) types.T { return ret }, NullStrict: true, Fn: fn}}})
		}
		reg(prefix+"_object_field", types.Text, jt, member(false, field))
		reg(prefix+"_object_field_text", types.Text, types.Text, member(true, field))
		reg(prefix+"_array_element", types.Int4, jt, member(false, elem))
		reg(prefix+"_array_element_text", types.Int4, types.Text, member(true, elem))
		reg(prefix+" #>", textArr, jt, member(false, path))
		reg(prefix+" #>>", textArr, types.Text, member(true, path))
		// json_extract_path(j, variadic text): the operators' functions.
		variadicPath := func(text bool) func(c *Ctx, a []types.Datum) (types.Datum, error) {
			f := member(text, path)
			return func(c *Ctx, a []types.Datum) (types.Datum, error) {
				return f(c, []types.Datum{a[0], types.NewArrayOf(a[1:]...)})
			}
		}
		register(&Func{Name: prefix + "_extract_path", Deterministic: true, Overloads: []*Overload{{Params: []types.T{jt, types.Text}, Variadic: true, Ret: ret(jt), NullStrict: true, Fn: variadicPath(false)}}})
		register(&Func{Name: prefix + "_extract_path_text", Deterministic: true, Overloads: []*Overload{{Params: []types.T{jt, types.Text}, Variadic: true, Ret: ret(types.Text), NullStrict: true, Fn: variadicPath(true)}}})
		register(&Func{Name: prefix + "_typeof", Deterministic: true, Overloads: []*Overload{{Params: []types.T{jt}, Ret: ret(types.Text), NullStrict: true,
			Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
				v, err := types.ParseJSON(a[0].S)
				if err != nil {
					return types.Datum{}, err
				}
				return types.NewText([]string{"null", "boolean", "number", "string", "array", "object"}[v.Kind]), nil
			}}}})
	}

	asJSONB := func(s string) (types.Datum, error) {
		v, err := types.ParseJSON(s)
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewString(types.KindJSONB, types.NormalizeJSONB(v)), nil
	}
	// to_json / to_jsonb.
	register(&Func{Name: "to_json", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyType}, Ret: ret(types.JSON), NullStrict: true,
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			return types.NewString(types.KindJSON, string(appendJSONValue(nil, a[0], c.Env, false))), nil
		}}}})
	register(&Func{Name: "to_jsonb", Deterministic: true, Overloads: []*Overload{{Params: []types.T{anyType}, Ret: ret(types.JSONB), NullStrict: true,
		Fn: func(c *Ctx, a []types.Datum) (types.Datum, error) {
			return asJSONB(string(appendJSONValue(nil, a[0], c.Env, false)))
		}}}})
	// json_build_object / jsonb_build_object, json_build_array / jsonb_build_array.
	buildObject := func(name string, b bool) func(c *Ctx, a []types.Datum) (types.Datum, error) {
		return func(c *Ctx, a []types.Datum) (types.Datum, error) {
			if len(a)%2 != 0 {
				return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "argument list must have even number of elements").
					WithHint("The arguments of %s() must consist of alternating keys and values.", name)
			}
			buf := []byte{'{'}
			for i := 0; i < len(a); i += 2 {
				if a[i].IsNull() {
					return types.Datum{}, pgerror.New(pgerror.InvalidParameterValue, "argument %d cannot be null", i+1).
						WithHint("Object keys should be text.")
				}
				if i > 0 {
					buf = append(buf, ", "...)
				}
				buf = types.AppendJSONString(buf, string(types.AppendText(nil, a[i], c.Env)))
				buf = append(buf, " : "...)
				buf = appendJSONValue(buf, a[i+1], c.Env, false)
			}
			buf = append(buf, '}')
			if b {
				return asJSONB(string(buf))
			}
			return types.NewString(types.KindJSON, string(buf)), nil
		}
	}
	buildArray := func(b bool) func(c *Ctx, a []types.Datum) (types.Datum, error) {
		return func(c *Ctx, a []types.Datum) (types.Datum, error) {
			buf := []byte{'['}
			for i, d := range a {
				if i > 0 {
					buf = append(buf, ", "...)
				}
				buf = appendJSONValue(buf, d, c.Env, false)
			}
			buf = append(buf, ']')
			if b {
				return asJSONB(string(buf))
			}
			return types.NewString(types.KindJSON, string(buf)), nil
		}
	}
	for _, b := range []bool{false, true} {
		prefix, t := "json", types.JSON
		if b {
			prefix, t = "jsonb", types.JSONB
		}
		register(&Func{Name: prefix + "_build_object", Deterministic: true, Overloads: []*Overload{
			{Ret: ret(t), Fn: buildObject(prefix+"_build_object", b)},
			{Params: []types.T{anyType}, Variadic: true, Ret: ret(t), Fn: buildObject(prefix+"_build_object", b)}}})
		register(&Func{Name: prefix + "_build_array", Deterministic: true, Overloads: []*Overload{
			{Ret: ret(t), Fn: buildArray(b)},
			{Params: []types.T{anyType}, Variadic: true, Ret: ret(t), Fn: buildArray(b)}}})
		// json_agg / jsonb_agg, json_object_agg / jsonb_object_agg.
		isB := b
		register(&Func{Name: prefix + "_agg", Deterministic: true, Agg: &AggDef{Ordered: true, Resolve: func(args []types.T) (types.T, func() AggState, bool) {
			if len(args) != 1 {
				return types.T{}, nil, false
			}
			return t, func() AggState { return &jsonAgg{jsonb: isB} }, true
		}}})
		register(&Func{Name: prefix + "_object_agg", Deterministic: true, Agg: &AggDef{Ordered: true, Resolve: func(args []types.T) (types.T, func() AggState, bool) {
			if len(args) != 2 {
				return types.T{}, nil, false
			}
			return t, func() AggState { return &jsonAgg{jsonb: isB, object: true} }, true
		}}})
	}
}

// jsonAgg is json_agg / json_object_agg (and the jsonb ones): the values
// in the order they arrive, NULLs as null.
type jsonAgg struct {
	jsonb, object bool
	buf           []byte
	n             int
}

func (s *jsonAgg) Add(c *Ctx, a []types.Datum) error {
	if s.object {
		if a[0].IsNull() {
			return pgerror.New(pgerror.InvalidParameterValue, "field name must not be null")
		}
		if s.n > 0 {
			s.buf = append(s.buf, ", "...)
		}
		s.buf = types.AppendJSONString(s.buf, string(types.AppendText(nil, a[0], c.Env)))
		s.buf = append(s.buf, " : "...)
		s.buf = appendJSONValue(s.buf, a[1], c.Env, false)
	} else {
		if s.n > 0 {
			s.buf = append(s.buf, ", "...)
		}
		s.buf = appendJSONValue(s.buf, a[0], c.Env, false)
	}
	s.n++
	if c.Mem != nil && len(s.buf) > 1<<30 {
		return pgerror.New(pgerror.ProgramLimitExceeded, "aggregate result is too large")
	}
	return nil
}

func (s *jsonAgg) Result(c *Ctx) (types.Datum, error) {
	if s.n == 0 {
		return types.NullDatum, nil
	}
	var text string
	if s.object {
		text = "{ " + string(s.buf) + " }"
	} else {
		text = "[" + string(s.buf) + "]"
	}
	if !s.jsonb {
		return types.NewString(types.KindJSON, text), nil
	}
	v, err := types.ParseJSON(text)
	if err != nil {
		return types.Datum{}, err
	}
	return types.NewString(types.KindJSONB, types.NormalizeJSONB(v)), nil
}

// appendJSONValue appends d as to_json makes it (inArray: an element of
// an SQL array, whose own arrays nest).
func appendJSONValue(buf []byte, d types.Datum, env *types.Env, inArray bool) []byte {
	switch d.K {
	case types.KindNull:
		return append(buf, "null"...)
	case types.KindBool:
		if d.I != 0 {
			return append(buf, "true"...)
		}
		return append(buf, "false"...)
	case types.KindInt2, types.KindInt4, types.KindInt8, types.KindNumeric, types.KindOid:
		return types.AppendText(buf, d, env)
	case types.KindFloat4, types.KindFloat8:
		if math.IsInf(d.F, 0) || math.IsNaN(d.F) {
			return types.AppendJSONString(buf, string(types.AppendText(nil, d, env)))
		}
		return types.AppendText(buf, d, env)
	case types.KindJSON, types.KindJSONB:
		return append(buf, d.S...)
	case types.KindArray:
		buf = append(buf, '[')
		if d.A != nil {
			for i, e := range d.A.Elems {
				if i > 0 {
					buf = append(buf, ',')
				}
				buf = appendJSONValue(buf, e, env, true)
			}
		}
		return append(buf, ']')
	case types.KindTimestamp, types.KindTimestampTZ:
		s := strings.Replace(string(types.AppendText(nil, d, env)), " ", "T", 1)
		if d.K == types.KindTimestampTZ {
			// ISO 8601's offset has minutes: +00 → +00:00.
			if k := strings.LastIndexAny(s, "+-"); k > 10 && len(s)-k == 3 {
				s += ":00"
			}
		}
		return types.AppendJSONString(buf, s)
	}
	return types.AppendJSONString(buf, string(types.AppendText(nil, d, env)))
}
