package settings

import (
	"testing"

	"github.com/mvserver/mvserver/pgerror"
)

// The answers are PostgreSQL 15's: SET name = in; SHOW name.
func TestCheck(t *testing.T) {
	for _, c := range []struct{ name, in, show, code string }{
		{"client_min_messages", "WARNING", "warning", ""},
		{"client_min_messages", "bogus", "", pgerror.InvalidParameterValue},
		{"work_mem", "abc", "", pgerror.InvalidParameterValue},
		{"work_mem", "10", "", pgerror.InvalidParameterValue},
		{"work_mem", "8192", "8MB", ""},
		{"work_mem", "1.5MB", "1536kB", ""},
		{"work_mem", "2048kB", "2MB", ""},
		{"work_mem", "1TB", "1TB", ""},
		{"work_mem", "2 parsecs", "", pgerror.InvalidParameterValue},
		{"enable_seqscan", "maybe", "", pgerror.InvalidParameterValue},
		{"enable_seqscan", "yes", "on", ""},
		{"seq_page_cost", "x", "", pgerror.InvalidParameterValue},
		{"seq_page_cost", "2.50", "2.5", ""},
		{"synchronize_seqscans", "off", "off", ""},
		{"statement_timeout", "90s", "90s", ""},
		{"lock_timeout", "1h", "1h", ""},
		{"vacuum_cost_delay", "2ms", "2ms", ""},
		{"temp_buffers", "16MB", "16MB", ""},
		{"xmloption", "CONTENT", "content", ""},
		{"default_tablespace", "", "", ""},
		{"log_min_duration_statement", "-1", "-1", ""},
	} {
		p, ok := Lookup(c.name)
		if !ok {
			t.Fatalf("%s: not found", c.name)
		}
		got, err := p.Check(c.in)
		if code := pgerror.Code(err); code != c.code || (err == nil && got != c.show) {
			t.Errorf("SET %s = %q: got %q, %v; want %q, code %q", c.name, c.in, got, err, c.show, c.code)
		}
	}
}

func TestDefaultsAndContexts(t *testing.T) {
	if n := len(All()); n < 340 {
		t.Fatalf("%d parameters; PostgreSQL 15 has 353", n)
	}
	for _, c := range []struct{ name, show, setting string }{
		{"shared_buffers", "128MB", "16384"}, {"work_mem", "4MB", "4096"}, {"port", "5432", "5432"},
		{"checkpoint_timeout", "5min", "300"}, {"data_directory", "", ""},
	} {
		p, _ := Lookup(c.name)
		if p.Show != c.show || p.Setting != c.setting || p.SettingOf(p.Show) != c.setting {
			t.Errorf("%s: show %q setting %q (of show %q); want %q, %q", c.name, p.Show, p.Setting, p.SettingOf(p.Show), c.show, c.setting)
		}
	}
	for name, code := range map[string]string{"shared_buffers": pgerror.CantChangeRuntimeParam, "checkpoint_timeout": pgerror.CantChangeRuntimeParam,
		"server_version_num": pgerror.CantChangeRuntimeParam, "work_mem": ""} {
		p, _ := Lookup(name)
		if got := pgerror.Code(p.ChangeError()); got != code {
			t.Errorf("%s: %q, want %q", name, got, code)
		}
	}
}

// TestIntOf: a session's value, else the default.
func TestIntOf(t *testing.T) {
	if n := IntOf("max_parallel_workers_per_gather", "", false); n != 2 {
		t.Fatalf("default %d, want 2", n)
	}
	if n := IntOf("max_parallel_workers_per_gather", "0", true); n != 0 {
		t.Fatalf("set 0: %d", n)
	}
	if n := IntOf("no_such_parameter", "", false); n != 0 {
		t.Fatalf("unknown: %d", n)
	}
}
