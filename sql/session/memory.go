package session

import (
	"strconv"
	"strings"

	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/exec"
)

// Memory budgets (R-X3). Each statement runs with a budget of
// query_memory_limit bytes (the server's --query-memory-limit unless the
// session sets it): sorts, hash aggregation, hash joins and DISTINCT past
// it spill to temporary files, and what else holds data past it (set
// operations' hash tables, window partitions, WITH queries, cross
// products' batches, large values functions build, aggregate states, COPY
// lines: sql/exec's memory.go) fails with 53200 instead of growing the
// process.
// Lowering the limit is open to everyone; raising it above the server's,
// or turning it off (0), needs a superuser.

const memorySetting = "query_memory_limit"

func init() {
	addSetting(&setting{name: memorySetting, check: checkMemory,
		serverDefault: func(e *Engine) string { return exec.FormatBytes(e.QueryMemoryLimit) },
		authorize:     (*Session).checkMemoryRaise,
		desc:          "Sets the most memory one statement's sorts, hash tables, buffered rows and large values may use; 0 means no limit."})
}

// ParseMemory reads a memory size as PostgreSQL's memory settings do: an
// integer with an optional unit B, kB, MB, GB or TB (a bare number is in
// kilobytes). 0 means no limit.
func ParseMemory(v string) (int64, error) {
	s := strings.TrimSpace(v)
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || i == 0 && s[i] == '-') {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil {
		return 0, pgerror.New(pgerror.InvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", memorySetting, v).
			WithHint("Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".")
	}
	unit := strings.TrimSpace(s[i:])
	mult := int64(1 << 10)
	switch unit {
	case "":
	case "B":
		mult = 1
	case "kB":
		mult = 1 << 10
	case "MB":
		mult = 1 << 20
	case "GB":
		mult = 1 << 30
	case "TB":
		mult = 1 << 40
	default:
		return 0, pgerror.New(pgerror.InvalidParameterValue, "invalid value for parameter \"%s\": \"%s\"", memorySetting, v).
			WithHint("Valid units for this parameter are \"B\", \"kB\", \"MB\", \"GB\", and \"TB\".")
	}
	if n < 0 || n > (1<<62)/mult {
		return 0, pgerror.New(pgerror.InvalidParameterValue, "%s must be between 0 and 4096TB, not \"%s\"", memorySetting, v)
	}
	return n * mult, nil
}

func checkMemory(v string) (string, error) {
	n, err := ParseMemory(v)
	if err != nil {
		return "", err
	}
	return exec.FormatBytes(n), nil
}

// memoryLimit is the session's query_memory_limit in bytes.
func (s *Session) memoryLimit() int64 {
	if v, ok := s.vals[memorySetting]; ok {
		if n, err := ParseMemory(v); err == nil {
			return n
		}
	}
	return s.eng.QueryMemoryLimit
}

// checkMemoryRaise refuses a non-superuser's SET that would lift the
// session's budget above the server's.
func (s *Session) checkMemoryRaise(v string) error {
	server := s.eng.QueryMemoryLimit
	n, err := ParseMemory(v)
	if err != nil || server <= 0 || n > 0 && n <= server {
		return err
	}
	if s.eng.IsSuperuser(s.currentUser()) {
		return nil
	}
	return pgerror.New(pgerror.InsufficientPrivilege, "permission denied to set parameter \"%s\" to %s", memorySetting, v).
		WithDetail("Only a superuser may raise it above the server's limit of %s.", exec.FormatBytes(server))
}

// budget is a new memory budget for one statement.
func (s *Session) budget() *exec.Memory {
	return &exec.Memory{Limit: s.memoryLimit(), Setting: memorySetting, TempDir: s.eng.TempDir}
}
