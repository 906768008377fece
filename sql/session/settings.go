package session

import (
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mvserver/mvserver/catalog"
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/refresh"
	pgsettings "github.com/mvserver/mvserver/sql/settings"
	"github.com/mvserver/mvserver/sql/types"
)

// setting describes one configuration parameter.
type setting struct {
	name     string // canonical spelling
	def      string
	readOnly bool
	reported bool // sent as ParameterStatus when it changes
	// hidden: PostgreSQL's GUC_NO_SHOW_ALL, left out of SHOW ALL and
	// pg_settings (SHOW name still answers).
	hidden bool
	check  func(string) (string, error)
	desc   string
	// serverDefault, when set, is the default instead of def: a server
	// setting the session may override (RESET returns to it).
	serverDefault func(*Engine) string
	// authorize, when set, may refuse the session a value (42501).
	authorize func(s *Session, v string) error
	// pg is PostgreSQL's definition of the parameter (pg_settings' type,
	// unit, context), nil for mvserver's own.
	pg *pgsettings.Param
}

// noEffect ends the description of a PostgreSQL parameter mvserver
// accepts and ignores.
const noEffect = " (Accepted for compatibility with PostgreSQL; it has no effect in mvserver.)"

// pgSetting is a PostgreSQL parameter mvserver has no definition of: SET,
// SHOW and RESET take it as PostgreSQL does, and nothing reads it.
func pgSetting(p *pgsettings.Param) *setting {
	st := &setting{name: p.Name, def: p.Show, readOnly: p.ChangeError() != nil, check: p.Check, desc: p.Desc + noEffect, pg: p}
	if p.Context == "superuser" {
		st.authorize = func(s *Session, _ string) error {
			if _, super := s.eng.sessionRole(s.cat, s.currentUser()); !super {
				return pgerror.New(pgerror.InsufficientPrivilege, "permission denied to set parameter \"%s\"", p.Name)
			}
			return nil
		}
	}
	return st
}

// changeError is the error of SET for a read-only parameter.
func (st *setting) changeError() error {
	if st.pg != nil {
		if err := st.pg.ChangeError(); err != nil {
			return err
		}
	}
	return pgerror.New(pgerror.CantChangeRuntimeParam, "parameter \"%s\" cannot be changed", st.name)
}

// ServerVersion is reported as server_version; psql and drivers pick
// their catalog queries by it.
const ServerVersion = "15.0 (mvserver 0.1)"

var settings = map[string]*setting{}

func addSetting(s *setting) {
	if s.pg == nil {
		s.pg, _ = pgsettings.Lookup(s.name)
	}
	settings[strings.ToLower(s.name)] = s
}

func init() {
	for _, s := range []*setting{
		{name: "server_version", def: ServerVersion, readOnly: true, reported: true, desc: "Shows the server version."},
		{name: "server_version_num", def: "150000", readOnly: true, desc: "Shows the server version as an integer."},
		{name: "server_encoding", def: "UTF8", readOnly: true, reported: true, desc: "Shows the server (database) character set encoding."},
		{name: "client_encoding", def: "UTF8", reported: true, check: checkEncoding, desc: "Sets the client's character set encoding."},
		{name: "DateStyle", def: "ISO, MDY", reported: true, check: checkDateStyle, desc: "Sets the display format for date and time values."},
		{name: "IntervalStyle", def: "postgres", reported: true, check: checkOneOf("postgres"), desc: "Sets the display format for interval values."},
		{name: "TimeZone", def: "UTC", reported: true, check: checkTimeZone, desc: "Sets the time zone for displaying and interpreting time stamps."},
		{name: "integer_datetimes", def: "on", readOnly: true, reported: true, desc: "Shows whether datetimes are integer based."},
		{name: "standard_conforming_strings", def: "on", reported: true, check: checkOneOf("on"), desc: "Causes '...' strings to treat backslashes literally."},
		{name: "application_name", def: "", reported: true, desc: "Sets the application name to be reported in statistics and logs."},
		{name: "is_superuser", def: "on", readOnly: true, reported: true, hidden: true, desc: "Shows whether the current user is a superuser."},
		{name: "session_authorization", def: "", readOnly: true, reported: true, hidden: true, desc: "Sets the session user name."},
		{name: "role", def: "none", readOnly: true, hidden: true, desc: "Sets the current role."}, // identity.go
		{name: "default_transaction_read_only", def: "off", reported: true, check: checkBool, desc: "Sets the default read-only status of new transactions."},
		{name: "in_hot_standby", def: "off", readOnly: true, reported: true, desc: "Shows whether hot standby is currently active."},
		{name: "search_path", def: `"$user", public`, desc: "Sets the schema search order for names that are not schema-qualified."},
		{name: "statement_timeout", def: "0", check: checkDuration, desc: "Sets the maximum allowed duration of any statement."},
		{name: "lock_timeout", def: "0", check: checkDuration, desc: "Sets the maximum allowed duration of any wait for a lock."},
		{name: "idle_in_transaction_session_timeout", def: "0", check: checkDuration, desc: "Sets the maximum allowed idle time between queries, when in a transaction."},
		{name: "extra_float_digits", def: "1", check: checkInt, desc: "Sets the number of digits displayed for floating-point values."},
		{name: "default_transaction_isolation", def: "repeatable read", check: checkIsolationOf("default_transaction_isolation"), desc: "Sets the transaction isolation level of each new transaction."},
		{name: "transaction_isolation", def: "repeatable read", desc: "Sets the current transaction's isolation level."}, // isolation.go
		{name: "max_identifier_length", def: "63", readOnly: true, desc: "Shows the maximum identifier length."},
		{name: "transaction_read_only", def: "off", readOnly: true, desc: "Shows whether the current transaction is read-only (BEGIN READ ONLY, SET TRANSACTION READ ONLY)."},
		{name: "max_index_keys", def: "32", readOnly: true, desc: "Shows the maximum number of index keys."},
		{name: "block_size", def: "8192", readOnly: true, desc: "Shows the size of a disk block."},
		{name: "lc_collate", def: "C.UTF-8", readOnly: true, desc: "Shows the collation order locale."},
		{name: "lc_ctype", def: "C.UTF-8", readOnly: true, desc: "Shows the character classification and case conversion locale."},
		{name: "row_security", def: "on", check: checkBool, desc: "Enable row security."},
		{name: "bytea_output", def: "hex", check: checkOneOf("hex"), desc: "Sets the output format for bytea."},
		{name: "optimal_refresh", def: "on", check: checkBool, desc: "When off, every refresh of every materialized view is a full recompute (R-I7)."},
	} {
		addSetting(s)
	}
	// Every other PostgreSQL 15 parameter; a definition of the session's
	// own (here or in another file's init) replaces it.
	for _, p := range pgsettings.All() {
		if _, ok := settings[strings.ToLower(p.Name)]; !ok {
			addSetting(pgSetting(p))
		}
	}
}

func lookupSetting(name string) (*setting, error) {
	s, ok := settings[strings.ToLower(name)]
	if !ok {
		return nil, pgerror.New(pgerror.UndefinedObject, "unrecognized configuration parameter \"%s\"", name)
	}
	return s, nil
}

func checkOneOf(vals ...string) func(string) (string, error) {
	return func(v string) (string, error) {
		for _, x := range vals {
			if strings.EqualFold(v, x) {
				return x, nil
			}
		}
		return "", pgerror.New(pgerror.InvalidParameterValue, "invalid value \"%s\"; supported: %s", v, strings.Join(vals, ", "))
	}
}

func checkEncoding(v string) (string, error) {
	switch strings.ToUpper(strings.ReplaceAll(v, "-", "")) {
	case "UTF8", "UNICODE":
		return "UTF8", nil
	}
	return "", pgerror.New(pgerror.FeatureNotSupported, "client encoding \"%s\" is not supported; mvserver speaks UTF8 only", v)
}

func checkDateStyle(v string) (string, error) {
	u := strings.ToUpper(v)
	if strings.Contains(u, "ISO") || u == "MDY" || u == "DMY" || u == "YMD" {
		if strings.Contains(u, "DMY") {
			return "ISO, DMY", nil
		}
		if strings.Contains(u, "YMD") {
			return "ISO, YMD", nil
		}
		return "ISO, MDY", nil
	}
	return "", pgerror.New(pgerror.FeatureNotSupported, "DateStyle \"%s\" is not supported; only ISO output is", v)
}

// LoadZone resolves a time-zone setting value.
func LoadZone(v string) (*time.Location, string, error) {
	switch strings.ToUpper(v) {
	case "UTC", "GMT", "Z", "ZULU", "UCT", "ETC/UTC":
		return time.UTC, "UTC", nil
	}
	if loc, err := time.LoadLocation(v); err == nil {
		return loc, v, nil
	}
	// POSIX-style offsets such as +02 or -05:30 (PostgreSQL: east is positive
	// in ISO 8601 form).
	if len(v) >= 2 && (v[0] == '+' || v[0] == '-') {
		body := strings.ReplaceAll(v[1:], ":", "")
		h, err1 := strconv.Atoi(body[:min(2, len(body))])
		m := 0
		var err2 error
		if len(body) > 2 {
			m, err2 = strconv.Atoi(body[2:])
		}
		if err1 == nil && err2 == nil && h <= 15 && m < 60 {
			off := h*3600 + m*60
			if v[0] == '-' {
				off = -off
			}
			return time.FixedZone(v, off), v, nil
		}
	}
	return nil, "", pgerror.New(pgerror.InvalidParameterValue, "invalid value for parameter \"TimeZone\": \"%s\"", v)
}

func checkTimeZone(v string) (string, error) {
	_, name, err := LoadZone(v)
	return name, err
}

func checkBool(v string) (string, error) {
	switch strings.ToLower(v) {
	case "on", "true", "yes", "1":
		return "on", nil
	case "off", "false", "no", "0":
		return "off", nil
	}
	return "", pgerror.New(pgerror.InvalidParameterValue, "parameter requires a Boolean value")
}

func checkInt(v string) (string, error) {
	if _, err := strconv.Atoi(v); err != nil {
		return "", pgerror.New(pgerror.InvalidParameterValue, "invalid value \"%s\": an integer is required", v)
	}
	return v, nil
}

// ParseDuration parses a PostgreSQL time setting: a number of
// milliseconds, or a number with a unit (us, ms, s, min, h, d).
func ParseDuration(v string) (time.Duration, error) {
	s := strings.TrimSpace(strings.ToLower(v))
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || num < 0 {
		return 0, pgerror.New(pgerror.InvalidParameterValue, "invalid value for a time setting: \"%s\"", v)
	}
	unit := strings.TrimSpace(s[i:])
	var d float64
	switch unit {
	case "", "ms":
		d = num * float64(time.Millisecond)
	case "us":
		d = num * float64(time.Microsecond)
	case "s", "sec", "secs", "second", "seconds":
		d = num * float64(time.Second)
	case "min", "mins", "minute", "minutes":
		d = num * float64(time.Minute)
	case "h", "hr", "hrs", "hour", "hours":
		d = num * float64(time.Hour)
	case "d", "day", "days":
		d = num * 24 * float64(time.Hour)
	default:
		return 0, pgerror.New(pgerror.InvalidParameterValue, "invalid value for a time setting: \"%s\"", v).WithHint("Valid units for this parameter are \"us\", \"ms\", \"s\", \"min\", \"h\", and \"d\".")
	}
	return time.Duration(d), nil
}

// checkDuration validates a time setting and shows it as PostgreSQL does:
// in the largest unit that keeps it whole (5000 → 5s, 120s → 2min).
func checkDuration(v string) (string, error) {
	d, err := ParseDuration(v)
	if err != nil {
		return "", err
	}
	ms := d.Milliseconds()
	if ms == 0 {
		return "0", nil
	}
	for _, u := range []struct {
		name string
		ms   int64
	}{{"d", 86400000}, {"h", 3600000}, {"min", 60000}, {"s", 1000}} {
		if ms%u.ms == 0 {
			return strconv.FormatInt(ms/u.ms, 10) + u.name, nil
		}
	}
	return strconv.FormatInt(ms, 10) + "ms", nil
}

var (
	sortedOnce sync.Once
	sorted     []*setting
)

// sortedSettings lists settings by name (SHOW ALL). The table is complete
// once the package's init functions ran.
func sortedSettings() []*setting {
	sortedOnce.Do(func() {
		sorted = make([]*setting, 0, len(settings))
		for _, s := range settings {
			sorted = append(sorted, s)
		}
		sort.Slice(sorted, func(i, j int) bool { return strings.ToLower(sorted[i].name) < strings.ToLower(sorted[j].name) })
	})
	return sorted
}

// A view's query is evaluated in the time zone in force at its CREATE,
// whoever refreshes it and from wherever (a session in another zone, the
// scheduler): refresh.DatasetEnv.
func init() {
	refresh.DatasetEnv = func(v *catalog.Table) *types.Env {
		if v.Dataset == nil || v.Dataset.TimeZone == "" {
			return nil
		}
		loc, _, err := LoadZone(v.Dataset.TimeZone)
		if err != nil {
			return nil
		}
		return &types.Env{Loc: loc}
	}
}
