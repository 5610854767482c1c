package config

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSettingsNaming(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Settings() {
		for _, id := range []string{"key:" + s.Key, "flag:" + s.Flag, "env:" + s.Env} {
			if !strings.HasSuffix(id, ":") && seen[id] {
				t.Errorf("duplicate %s", id)
			}
			seen[id] = true
		}
		if s.Usage == "" || s.Type == "" {
			t.Errorf("setting %q: Usage and Type must be set", s.Env)
		}
		if s.Key == "" {
			if s.Flag != FlagConfig || s.Env != EnvConfig {
				t.Errorf("only the config file setting may lack a key; got %+v", s)
			}
			continue
		}
		if want := "RESTMCP_" + strings.ToUpper(s.Key); s.Env != want {
			t.Errorf("setting %q: Env = %q, want %q", s.Key, s.Env, want)
		}
		wantFlag := strings.ReplaceAll(s.Key, "_", "-")
		if s.Key == "redis_url" || s.Key == "oauth_encryption_key" {
			wantFlag = "" // secrets stay off the command line
		}
		if s.Flag != wantFlag {
			t.Errorf("setting %q: Flag = %q, want %q", s.Key, s.Flag, wantFlag)
		}
	}
}

// TestSettingsFieldsDistinct checks that no two settings set the same
// Config field.
func TestSettingsFieldsDistinct(t *testing.T) {
	var c Config
	seen := map[any]string{}
	for _, s := range table() {
		if s.field == nil {
			continue
		}
		p := s.field(&c)
		addr := reflect.ValueOf(p).Pointer()
		if prev, dup := seen[addr]; dup {
			t.Errorf("%s and %s set the same field", prev, s.Env)
		}
		seen[addr] = s.Env
	}
}

// TestSettingsDefaults checks that each Setting.Default, parsed the way an
// environment variable is, yields the field of Default(): starting from the
// zero Config, applying every documented default must give Default().
func TestSettingsDefaults(t *testing.T) {
	var c Config
	settings := Settings()
	for i, s := range table() {
		if s.field == nil || settings[i].Default == "" {
			continue // the zero value
		}
		if err := parseValue(s.field(&c), settings[i].Default); err != nil {
			t.Errorf("%s: documented default %q does not parse: %v", s.Env, settings[i].Default, err)
		}
	}
	if diff := cmp.Diff(Default(), c); diff != "" {
		t.Errorf("documented defaults differ from Default() (-Default() +documented):\n%s", diff)
	}
}

// TestSettingsCoverConfig checks that every Config field but the
// informational ones can be set: setting each env var to a non-default value
// must change every field.
func TestSettingsCoverConfig(t *testing.T) {
	m := map[string]string{}
	for k, v := range fullEnv {
		m[k] = v
	}
	// fullEnv sets these two to their defaults, to override the file.
	m["RESTMCP_REQUIRE_KEY"], m["RESTMCP_LOG_FORMAT"] = "false", "json"
	got, err := Load(nil, env(m))
	if err != nil {
		t.Fatal(err)
	}
	def := Default()
	gv, dv := reflect.ValueOf(got), reflect.ValueOf(def)
	for i := range gv.NumField() {
		name := gv.Type().Field(i).Name
		if name == "ConfigFile" || name == "Args" || name == "APIs" {
			continue // APIs: the apis list and named --spec flags (TestAPIs)
		}
		if reflect.DeepEqual(gv.Field(i).Interface(), dv.Field(i).Interface()) {
			t.Errorf("field %s: no env var in fullEnv changes it (or no setting exists)", name)
		}
	}
	for _, s := range Settings() {
		if _, ok := fullEnv[s.Env]; !ok && s.Env != EnvConfig {
			t.Errorf("fullEnv lacks %s", s.Env)
		}
	}
}

func TestWriteUsage(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteUsage(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, s := range Settings() {
		for _, want := range []string{s.Env, s.Usage} {
			if !strings.Contains(out, want) {
				t.Errorf("usage lacks %q", want)
			}
		}
		if s.Flag != "" && !strings.Contains(out, "--"+s.Flag+" ") {
			t.Errorf("usage lacks --%s", s.Flag)
		}
	}
	for _, want := range []string{
		"  --rate-window duration\n",
		"(env RESTMCP_RATE_WINDOW, config file key rate_window; default 60s)",
		"(env RESTMCP_REDIS_URL, config file key redis_url; default \"\")",
		"(env RESTMCP_REQUIRE_KEY, config file key require_key; default true)",
		"(env RESTMCP_MAX_BODY_BYTES, config file key max_body_bytes; default 1048576)",
		"(env RESTMCP_LOG_LEVEL, config file key log_level; default info)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("usage lacks %q:\n%s", want, out)
		}
	}
}

var updateSettings = flag.Bool("update-settings", false, "rewrite docs/settings.md from the settings table")

// TestSettingsDocument keeps docs/settings.md exactly what WriteMarkdown
// writes from the settings table; -update-settings rewrites it.
func TestSettingsDocument(t *testing.T) {
	path := filepath.Join("..", "docs", "settings.md")
	var want bytes.Buffer
	if err := WriteMarkdown(&want); err != nil {
		t.Fatal(err)
	}
	if *updateSettings {
		if err := os.WriteFile(path, want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, want.Bytes()) {
		t.Errorf("docs/settings.md is not what WriteMarkdown writes; run go test ./config -run TestSettingsDocument -update-settings")
	}
}

// TestSettingGroups: every setting is in exactly one group, and every
// group names only settings that exist.
func TestSettingGroups(t *testing.T) {
	seen := map[string]string{}
	known := map[string]bool{}
	for _, s := range Settings() {
		known[s.Key] = true
	}
	for _, g := range settingGroups {
		for _, k := range g.keys {
			if !known[k] {
				t.Errorf("group %q names %q, which is no setting", g.Name, k)
			}
			if other, dup := seen[k]; dup {
				t.Errorf("%q is in groups %q and %q", k, other, g.Name)
			}
			seen[k] = g.Name
		}
	}
	for k := range known {
		if _, ok := seen[k]; !ok {
			t.Errorf("setting %q is in no group", k)
		}
	}
	n := 0
	for _, g := range SettingGroups() {
		n += len(g.Settings)
	}
	if n != len(Settings()) {
		t.Errorf("the groups hold %d settings, the table %d", n, len(Settings()))
	}
}

func TestWriteMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf); err != nil {
		t.Fatal(err)
	}
	rows := 0
	for i, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if !strings.HasPrefix(l, "|") {
			continue
		}
		if n := strings.Count(strings.ReplaceAll(l, `\|`, ""), "|"); n != 6 {
			t.Errorf("line %d has %d cell separators, want 6: %s", i, n, l)
		}
		if !strings.HasPrefix(l, "| env var") && !strings.HasPrefix(l, "|---") {
			rows++
		}
	}
	if rows != len(Settings()) {
		t.Errorf("%d setting rows, want %d", rows, len(Settings()))
	}
	for _, want := range []string{
		"## Keys and plans\n\nWho may call",
		"| `RESTMCP_RATE_WINDOW` | `--rate-window` | `rate_window` | `60s` | Length of the rate-limit window. |",
		"| `RESTMCP_REDIS_URL` |  | `redis_url` |  | Redis for metering",
		"| `RESTMCP_LOG_LEVEL` | `--log-level` | `log_level` | `info` |",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, buf.String())
		}
	}
}

// TestExampleConfigFile loads the sample config file shipped in examples/:
// it must parse and hold exactly the defaults.
func TestExampleConfigFile(t *testing.T) {
	path := filepath.Join("..", "examples", "restmcp.yaml")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no sample config: %v", err)
	}
	got, err := Load([]string{"--config", path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.ConfigFile = path
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s differs from the defaults (-want +got):\n%s", path, diff)
	}
	data, _ := os.ReadFile(path)
	for _, s := range Settings() {
		if s.Key != "" && !bytes.Contains(data, []byte("\n"+s.Key+":")) {
			t.Errorf("%s does not set %s", path, s.Key)
		}
	}
}
