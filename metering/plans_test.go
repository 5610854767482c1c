package metering

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustParsePlans(t *testing.T, yaml string) *Plans {
	t.Helper()
	ps, err := ParsePlans([]byte(yaml), "plans.yaml")
	if err != nil {
		t.Fatalf("ParsePlans:\n%v", err)
	}
	return ps
}

func TestLoadPlansExample(t *testing.T) {
	ps, err := LoadPlans(filepath.Join("testdata", "plans.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if ps.DefaultPlan != "free" || ps.KeyMode != KeyModeRegistry || ps.Counting != CountSuccess || ps.Outage != OutageFailOpen {
		t.Errorf("top level = %q %q %q %q", ps.DefaultPlan, ps.KeyMode, ps.Counting, ps.Outage)
	}
	if got, want := ps.Names(), []string{"free", "internal", "pro"}; !cmp.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	if ps.Default() != ps.Plan("free") || ps.Plan("gold") != nil {
		t.Errorf("Default()/Plan() mismatch")
	}

	type limit struct {
		Name   string
		Limit  int64
		Window time.Duration
	}
	limits := func(p *Plan) []limit {
		var out []limit
		for _, l := range p.RateLimits {
			out = append(out, limit{l.Name, l.Limit, l.Window})
		}
		return out
	}
	free, pro, internal := ps.Plan("free"), ps.Plan("pro"), ps.Plan("internal")
	if diff := cmp.Diff([]limit{{"per_second", 2, time.Second}, {"per_minute", 30, time.Minute}}, limits(free)); diff != "" {
		t.Errorf("free rate limits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]limit{{"per_second", 20, time.Second}, {"per_minute", 600, time.Minute}, {"per_hour", 10000, time.Hour}}, limits(pro)); diff != "" {
		t.Errorf("pro rate limits (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Quota{{PeriodDay, 100}, {PeriodMonth, 1000}}, free.Quotas); diff != "" {
		t.Errorf("free quotas (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Quota{{PeriodMonth, 100000}}, pro.Quotas); diff != "" {
		t.Errorf("pro quotas (-want +got):\n%s", diff)
	}
	if len(internal.RateLimits)+len(internal.Quotas) != 0 || internal.Tools != nil {
		t.Errorf("internal = %+v, want no limits and all tools", internal)
	}
	if free.UpgradeMessage != "Pro plans include ETF data" || free.UpgradeURL != "https://example.com/pricing" {
		t.Errorf("free upgrade = %q %q", free.UpgradeMessage, free.UpgradeURL)
	}
	want := []StaticKey{
		{SHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", KeyID: "9f86d081884c", Plan: "pro", Label: "acme"},
		{SHA256: devKeySum, KeyID: devKeySum[:12], Plan: "free", Label: "local development"},
	}
	if want[0].KeyID > want[1].KeyID {
		want[0], want[1] = want[1], want[0]
	}
	if diff := cmp.Diff(want, ps.StaticKeys()); diff != "" {
		t.Errorf("StaticKeys (-want +got):\n%s", diff)
	}
}

// devKeySum is the SHA-256 of "dev-key" (sha256sum).
const devKeySum = "7e9f8fd111802be56c379d597842e29b2cebd35ff2133d431a49fa556a18704e"

func TestPlanAllows(t *testing.T) {
	ps := mustParsePlans(t, `
default_plan: free
plans:
  free:
    tools: ["*", "!etfs_*", "tag:public", "!tag:beta"]
  only:
    tools: ["equities_profile", "fx_?ates", "tag:fx*"]
  all: {}
`)
	tests := []struct {
		plan string
		tool string
		tags []string
		want bool
	}{
		{"free", "equities_quote", nil, true},
		{"free", "etfs_top_holdings", nil, false},
		{"free", "etfs_top_holdings", []string{"public"}, true},
		{"free", "etfs_top_holdings", []string{"public", "beta"}, false},
		{"free", "equities_quote", []string{"beta"}, false},
		{"only", "equities_profile", nil, true},
		{"only", "equities_quote", nil, false},
		{"only", "fx_rates", nil, true},
		{"only", "fx_crates", nil, false},
		{"only", "anything", []string{"fx-extra"}, true},
		{"only", "anything", []string{"forex"}, false},
		{"all", "anything_at_all", nil, true},
	}
	for _, tt := range tests {
		if got := ps.Plan(tt.plan).Allows(tt.tool, tt.tags); got != tt.want {
			t.Errorf("%s.Allows(%q, %q) = %v, want %v", tt.plan, tt.tool, tt.tags, got, tt.want)
		}
	}
}

func TestPlanCost(t *testing.T) {
	p := mustParsePlans(t, `
default_plan: free
plans:
  free:
    costs: {free_tool: 0, heavy: 7}
`).Plan("free")
	tests := []struct {
		tool     string
		specCost int64
		want     int64
	}{
		{"free_tool", 0, 0},
		{"free_tool", 5, 0}, // the plans file wins over x-restmcp-cost
		{"heavy", 0, 7},
		{"heavy", 2, 7},
		{"other", 0, 1},  // default
		{"other", 4, 4},  // x-restmcp-cost
		{"other", -3, 1}, // nonsense from the spec is ignored
	}
	for _, tt := range tests {
		if got := p.Cost(tt.tool, tt.specCost); got != tt.want {
			t.Errorf("Cost(%q, %d) = %d, want %d", tt.tool, tt.specCost, got, tt.want)
		}
	}
}

func TestPlanDeniedMessage(t *testing.T) {
	ps := mustParsePlans(t, `
default_plan: free
plans:
  free:
    tools: ["equities_*"]
    upgrade: {message: "Pro includes ETF data", url: "https://example.com/pricing"}
  bare:
    tools: ["x"]
  dotted:
    tools: ["x"]
    upgrade: {message: "Pro includes ETF data. "}
`)
	if got, want := ps.Plan("free").DeniedMessage("etfs_top_holdings"),
		`tool "etfs_top_holdings" is not included in plan "free". Pro includes ETF data. Upgrade: https://example.com/pricing`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := ps.Plan("bare").DeniedMessage("y"), `tool "y" is not included in plan "bare"`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := ps.Plan("dotted").DeniedMessage("y"), `tool "y" is not included in plan "dotted". Pro includes ETF data`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestPlansDefaults(t *testing.T) {
	ps := mustParsePlans(t, "default_plan: a\nplans: {a: {}}\n")
	if ps.KeyMode != KeyModeRegistry || ps.Counting != CountAdmitted || ps.Outage != OutageFailClosed {
		t.Errorf("defaults = %q %q %q, want registry admitted fail_closed", ps.KeyMode, ps.Counting, ps.Outage)
	}
}

// TestParsePlansErrors checks that every problem is reported at once, by
// line, with the key path, in these exact words.
func TestParsePlansErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want string
	}{
		{"everything at once", `default_plan: gold
key_mode: closed
counting: maybe
outage: shrug
plans:
  free:
    rate_limits: {per_second: 0, per_minute: 30, per_day: 5}
    quotas:
      day: -5
      month: abc
    tools: ["equities_*", "[bad", "!", "tag:"]
    costs: {"etfs_*": 2, etfs_top_holdings: -1}
    upgrade: {message: hi, url: "ftp://x"}
    extra: 1
  "bad name":
    tools: ["!a"]
  empty:
    tools: []
keys:
  - sha256: abc
    plan: free
  - key: k1
    plan: nope
  - key: k2
    sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
    plan: free
  - key: k3
  - plan: free
  - key: k4
    plan: free
  - key: k4
    plan: free
`, `plans.yaml:1: default_plan: unknown plan "gold"
plans.yaml:2: key_mode: want registry or open, got "closed"
plans.yaml:3: counting: want admitted or success, got "maybe"
plans.yaml:4: outage: want fail_closed or fail_open, got "shrug"
plans.yaml:7: plans.free.rate_limits.per_day: unknown key
plans.yaml:7: plans.free.rate_limits.per_second: must be at least 1, got 0 (leave it out for no limit)
plans.yaml:9: plans.free.quotas.day: must not be negative, got -5
plans.yaml:10: plans.free.quotas.month: want an integer, got "abc"
plans.yaml:11: plans.free.tools[1]: bad glob pattern "[bad": a tool-name glob has tool-name characters (A-Z a-z 0-9 _ -), * and ? only
plans.yaml:11: plans.free.tools[2]: empty pattern in "!"
plans.yaml:11: plans.free.tools[3]: empty pattern in "tag:"
plans.yaml:12: plans.free.costs.etfs_*: costs are per exact tool name; patterns are not supported
plans.yaml:12: plans.free.costs.etfs_top_holdings: must not be negative, got -1
plans.yaml:13: plans.free.upgrade.url: want an absolute http(s) URL, got "ftp://x"
plans.yaml:14: plans.free.extra: unknown key
plans.yaml:15: plans.bad name: a plan name is 1 to 64 letters, digits, '_' or '-', starting with a letter or digit
plans.yaml:16: plans.bad name.tools: only negations: nothing is allowed; start the list with "*" to allow all but these
plans.yaml:18: plans.empty.tools: an empty list allows no tool; leave tools out to allow every tool
plans.yaml:20: keys[0].sha256: want 64 hex digits (the key's SHA-256), got 3 characters
plans.yaml:23: keys[1].plan: unknown plan "nope"
plans.yaml:24: keys[2]: give either sha256 or key, not both
plans.yaml:27: keys[3].plan: required
plans.yaml:28: keys[4]: sha256 (or key, for development) is required
plans.yaml:31: keys[6]: the same key as an earlier entry (key_id 94091dd64a21)`},
		{"no plans, no default", "key_mode: open\n", `plans.yaml:1: plans: at least one plan is required
plans.yaml:1: default_plan: required: the plan of keys without one`},
		{"plans of the wrong type", "default_plan: x\nplans: [1, 2]\n", `plans.yaml:2: plans: want a mapping, got a list`},
		{"values of the wrong kind", "default_plan: a\nplans:\n  a:\n    tools: {x: 1}\n    costs: {t: 1.5}\nkeys: [7]\n", `plans.yaml:4: plans.a.tools: want a list, got a mapping
plans.yaml:5: plans.a.costs.t: want an integer, got "1.5"
plans.yaml:6: keys[0]: want a mapping, got "7"`},
		{"unknown top-level key", "default_plan: a\nplans: {a: {}}\nplan_file: x\n", `plans.yaml:3: plan_file: unknown key`},
		{"syntax error", "plans:\n  a: {\n", `plans.yaml:2: did not find expected node content`},
		{"empty file", "", `plans.yaml: empty plans file`},
		{"two documents", "default_plan: a\nplans: {a: {}}\n---\nx: 1\n", `plans.yaml:3: a plans file holds one YAML document; found another`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps, err := ParsePlans([]byte(tt.yaml), "plans.yaml")
			if err == nil {
				t.Fatalf("ParsePlans = %+v, want an error", ps)
			}
			if diff := cmp.Diff(strings.Split(tt.want, "\n"), strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("error lines (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadPlansMissingFile(t *testing.T) {
	_, err := LoadPlans(filepath.Join(t.TempDir(), "nope.yaml"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("error = %v, want os.ErrNotExist", err)
	}
}

func TestCountingRefunds(t *testing.T) {
	tests := []struct {
		c      Counting
		status int
		failed bool
		want   bool
	}{
		{CountAdmitted, 500, false, false},
		{CountAdmitted, 0, true, false},
		{CountSuccess, 200, false, false},
		{CountSuccess, 404, false, false},
		{CountSuccess, 429, false, false},
		{CountSuccess, 500, false, true},
		{CountSuccess, 503, false, true},
		{CountSuccess, 0, true, true},
	}
	for _, tt := range tests {
		if got := tt.c.Refunds(tt.status, tt.failed); got != tt.want {
			t.Errorf("%s.Refunds(%d, %v) = %v, want %v", tt.c, tt.status, tt.failed, got, tt.want)
		}
	}
}

// TestPlansFromRateLimit checks the implicit plan and its precomputed GCRA
// integers: defaults, a disabled limit, rounding of the emission interval.
func TestPlansFromRateLimit(t *testing.T) {
	ps := PlansFromRateLimit(10, time.Second)
	if p := ps.Default(); p == nil || p.Name != "default" || ps.KeyMode != KeyModeOpen || ps.Counting != CountAdmitted || ps.Outage != OutageFailClosed {
		t.Fatalf("PlansFromRateLimit(10, 1s) = %+v / %+v", ps, p)
	}
	tests := []struct {
		name   string
		limit  int64
		window time.Duration
		want   []RateLimit
	}{
		{"zero is 100 per 60 s", 0, 0, []RateLimit{{Name: "rate", Limit: 100, Window: time.Minute, p: params{limit: 100, interval: 600_000, tau: 60_000_000}, tag: "60s", field: "rl:60s"}}},
		{"negative window is the default", 100, -time.Second, []RateLimit{{Name: "rate", Limit: 100, Window: time.Minute, p: params{limit: 100, interval: 600_000, tau: 60_000_000}, tag: "60s", field: "rl:60s"}}},
		{"-1 disables", -1, 0, nil},
		{"any negative disables", -7, time.Second, nil},
		{"2 per second", 2, time.Second, []RateLimit{{Name: "rate", Limit: 2, Window: time.Second, p: params{limit: 2, interval: 500_000, tau: 1_000_000}, tag: "1s", field: "rl:1s"}}},
		{"uneven division rounds the interval down", 7, 0, []RateLimit{{Name: "rate", Limit: 7, Window: time.Minute, p: params{limit: 7, interval: 8_571_428, tau: 59_999_996}, tag: "60s", field: "rl:60s"}}},
		{"interval at least 1 µs", 2000, time.Millisecond, []RateLimit{{Name: "rate", Limit: 2000, Window: time.Millisecond, p: params{limit: 2000, interval: 1, tau: 2000}, tag: "1ms", field: "rl:1ms"}}},
	}
	for _, tt := range tests {
		got := PlansFromRateLimit(tt.limit, tt.window).Default().RateLimits
		if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(RateLimit{}, params{})); diff != "" {
			t.Errorf("%s: RateLimits (-want +got):\n%s", tt.name, diff)
		}
	}
}
