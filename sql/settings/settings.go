package settings

import (
	_ "embed"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
)

//go:embed pg15.tsv
var table string

// Param is one PostgreSQL configuration parameter.
type Param struct {
	Name string
	// Show is the default as SHOW shows it ("4MB"); Setting as
	// pg_settings.setting shows it, in Unit ("4096").
	Show, Setting string
	VarType       string // bool, integer, real, enum, string
	Unit          string // "", kB, 8kB, MB, B, ms, s, min
	Context       string // internal, postmaster, sighup, superuser-backend, backend, superuser, user
	EnumVals      []string
	Min, Max      string
	Category      string
	Desc          string
}

var (
	params = map[string]*Param{}
	sorted []*Param
)

func init() {
	for _, line := range strings.Split(table, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 11 {
			panic("settings: bad line: " + line)
		}
		p := &Param{Name: f[0], Show: f[1], Setting: f[2], VarType: f[3], Unit: f[4], Context: f[5],
			Min: f[7], Max: f[8], Category: f[9], Desc: f[10]}
		if f[6] != "" {
			p.EnumVals = strings.Split(f[6], ",")
		}
		params[strings.ToLower(p.Name)] = p
		sorted = append(sorted, p)
	}
	sort.Slice(sorted, func(i, j int) bool { return strings.ToLower(sorted[i].Name) < strings.ToLower(sorted[j].Name) })
}

// Lookup finds a parameter by name, in any case.
func Lookup(name string) (*Param, bool) {
	p, ok := params[strings.ToLower(name)]
	return p, ok
}

// All lists every parameter by name.
func All() []*Param { return sorted }

// ChangeError is the error of SET in a session for a parameter of this
// context, nil where a session may change it (superuser: the caller
// checks the role).
func (p *Param) ChangeError() error {
	switch p.Context {
	case "internal":
		return pgerror.New(pgerror.CantChangeRuntimeParam, "parameter \"%s\" cannot be changed", p.Name)
	case "postmaster":
		return pgerror.New(pgerror.CantChangeRuntimeParam, "parameter \"%s\" cannot be changed without restarting the server", p.Name)
	case "sighup":
		return pgerror.New(pgerror.CantChangeRuntimeParam, "parameter \"%s\" cannot be changed now", p.Name)
	case "backend", "superuser-backend":
		return pgerror.New(pgerror.CantChangeRuntimeParam, "parameter \"%s\" cannot be set after connection start", p.Name)
	}
	return nil
}

// Check validates v as a value of p and returns it as SHOW shows it.
func (p *Param) Check(v string) (string, error) {
	switch p.VarType {
	case "bool":
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "on", "true", "yes", "1", "t", "y", "tr", "tru", "ye":
			return "on", nil
		case "off", "false", "no", "0", "f", "n", "fa", "fal", "fals", "of":
			return "off", nil
		}
		return "", pgerror.New(pgerror.InvalidParameterValue, "parameter \"%s\" requires a Boolean value", p.Name)
	case "enum":
		l := strings.ToLower(strings.TrimSpace(v))
		for _, e := range p.EnumVals {
			if l == strings.ToLower(e) {
				return e, nil
			}
		}
		return "", pgerror.New(pgerror.InvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", p.Name, v).
			WithHint("Available values: %s.", strings.Join(p.EnumVals, ", "))
	case "integer", "real":
		return p.checkNumber(v)
	}
	return v, nil
}

// units of memory (in bytes) and time (in milliseconds), largest first:
// how PostgreSQL reads and shows values of parameters with units.
var (
	memoryUnits = []unit{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}, {"B", 1}}
	timeUnits   = []unit{{"d", 86400000}, {"h", 3600000}, {"min", 60000}, {"s", 1000}, {"ms", 1}, {"us", 0.001}}
)

type unit struct {
	name string
	size float64
}

// base is the size of one p.Unit in its family's units, and the family.
func (p *Param) base() (float64, []unit) {
	switch p.Unit {
	case "B":
		return 1, memoryUnits
	case "kB":
		return 1 << 10, memoryUnits
	case "8kB":
		return 8 << 10, memoryUnits
	case "MB":
		return 1 << 20, memoryUnits
	case "ms":
		return 1, timeUnits
	case "s":
		return 1000, timeUnits
	case "min":
		return 60000, timeUnits
	}
	return 0, nil
}

func (p *Param) checkNumber(v string) (string, error) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == '-' || s[i] == '+' || s[i] == 'e' || s[i] == 'E') {
		i++
	}
	num, err := strconv.ParseFloat(s[:i], 64)
	invalid := pgerror.New(pgerror.InvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", p.Name, v)
	if err != nil {
		return "", invalid
	}
	suffix := strings.TrimSpace(s[i:])
	size, family := p.base()
	if suffix != "" {
		if family == nil {
			return "", invalid
		}
		found := false
		for _, u := range family {
			if u.name == suffix {
				num, found = num*u.size/size, true
				break
			}
		}
		if !found {
			hint := "Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\"."
			if family[0].name == "d" {
				hint = "Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\"."
			}
			return "", invalid.WithHint("%s", hint)
		}
	}
	if p.VarType == "integer" {
		num = math.Round(num)
	}
	lo, _ := strconv.ParseFloat(p.Min, 64)
	hi, _ := strconv.ParseFloat(p.Max, 64)
	if p.Min != "" && (num < lo || num > hi) {
		shown := strconv.FormatFloat(num, 'g', -1, 64)
		if p.Unit != "" {
			shown += " " + p.Unit
		}
		return "", pgerror.New(pgerror.InvalidParameterValue, "%s is outside the valid range for parameter \"%s\" (%s .. %s)", shown, p.Name, p.Min, p.Max)
	}
	if p.VarType == "real" {
		if p.Unit != "" && num == math.Trunc(num) && math.Abs(num) < 1<<53 {
			return p.show(int64(num)), nil
		}
		return strconv.FormatFloat(num, 'g', -1, 64) + p.Unit, nil
	}
	return p.show(int64(num)), nil
}

// show is an integer value in p.Unit as SHOW shows it: in the largest
// unit of its family that keeps it whole (8192 kB → 8MB), as PostgreSQL.
func (p *Param) show(n int64) string {
	size, family := p.base()
	if family == nil || n == 0 || n == -1 {
		return strconv.FormatInt(n, 10)
	}
	total := float64(n) * size
	for _, u := range family {
		if u.size < size || u.size < 1 {
			break
		}
		if q := total / u.size; q == math.Trunc(q) {
			return strconv.FormatInt(int64(q), 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + p.Unit
}

// SettingOf is a value as SHOW shows it in pg_settings.setting's form: an
// integer with a unit in that unit (8MB → 8192 for kB), others as they are.
func (p *Param) SettingOf(shown string) string {
	size, family := p.base()
	if p.VarType != "integer" || family == nil {
		return shown
	}
	i := 0
	for i < len(shown) && (shown[i] >= '0' && shown[i] <= '9' || shown[i] == '-') {
		i++
	}
	n, err := strconv.ParseFloat(shown[:i], 64)
	if err != nil {
		return shown
	}
	for _, u := range family {
		if u.name == shown[i:] {
			return strconv.FormatInt(int64(math.Round(n*u.size/size)), 10)
		}
	}
	return shown
}

// IntOf returns integer parameter name's value: v when the session set
// it (set), else the parameter's default; 0 for a parameter without an
// integer value.
func IntOf(name, v string, set bool) int {
	if !set {
		p, ok := Lookup(name)
		if !ok {
			return 0
		}
		v = p.Setting
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0
	}
	return n
}

// OnOff is a boolean as PostgreSQL shows a boolean parameter: "on" or "off".
func OnOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
