package metering

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/restmcp/restmcp/internal/glob"
	"github.com/restmcp/restmcp/internal/yamltree"
	"gopkg.in/yaml.v3"
)

// KeyMode says which API keys are accepted, set by the plans file's
// key_mode.
type KeyMode string

const (
	// KeyModeRegistry (the default) accepts only keys of the plans file's
	// keys section and active keys of the [Registry]; an unknown or revoked
	// key is refused (the adapter answers 401).
	KeyModeRegistry KeyMode = "registry"
	// KeyModeOpen accepts any key: keys of the keys section and the registry
	// get their own plan (a revoked one is still refused), every other key
	// is metered under the default plan and the upstream decides whether it
	// is valid.
	KeyModeOpen KeyMode = "open"
)

// Counting says which calls count against quotas, set by the plans file's
// counting.
type Counting string

const (
	// CountAdmitted (the default) counts every admitted call.
	CountAdmitted Counting = "admitted"
	// CountSuccess counts admitted calls, then gives the cost back (see
	// RedisMeter.Refund) when the upstream answered 5xx or could not be
	// reached; see [Counting.Refunds].
	CountSuccess Counting = "success"
)

// Refunds reports whether a call admitted under counting policy c is to be
// refunded, given the upstream's HTTP status (0 when no response arrived)
// and whether the upstream request failed (timeout, refused connection,
// unreadable body). Under CountSuccess that is a failed request or a
// status of 500 or more; under CountAdmitted never.
func (c Counting) Refunds(upstreamStatus int, failed bool) bool {
	return c == CountSuccess && (failed || upstreamStatus >= 500)
}

// Outage is the policy for a metering store (Redis) that does not answer,
// set by the plans file's outage. The caller logs it at startup.
type Outage string

const (
	// OutageFailClosed (the default) refuses calls while the store is down:
	// the adapter answers 503 with Retry-After.
	OutageFailClosed Outage = "fail_closed"
	// OutageFailOpen serves calls while the store is down, without rate
	// limits or quotas, counts them in a bounded local buffer and replays
	// the counts into Redis when it answers again; see [OutageMeter].
	OutageFailOpen Outage = "fail_open"
)

// Names of the limits of a plan, as they appear in [Decision.Policy],
// [Decision.RefusedBy] and [Report]. The rate limits are those of the plans
// file's rate_limits, the quotas those of its quotas.
const (
	LimitPerSecond = "per_second"
	LimitPerMinute = "per_minute"
	LimitPerHour   = "per_hour"
	QuotaDay       = "day"
	QuotaMonth     = "month"
)

// The rate_limits algorithms: GCRA (the default, smooth with a burst of
// Limit) or a sliding-window log (exactly Limit calls in any Window).
const (
	AlgorithmGCRA          = "gcra"
	AlgorithmSlidingWindow = "sliding_window"
)

// Period is a calendar period (UTC) over which a quota applies.
type Period string

const (
	// PeriodDay runs from 00:00:00 UTC to the next midnight UTC.
	PeriodDay Period = "day"
	// PeriodMonth runs from the first of the month, 00:00:00 UTC, to the
	// first of the next month.
	PeriodMonth Period = "month"
)

// RateLimit is one GCRA rate limit of a plan: Limit calls per Window, with
// burst Limit (an idle key may spend Limit at once, then regains one call
// every Window/Limit). Every call counts 1 against rate limits, whatever
// its cost.
type RateLimit struct {
	// Name is LimitPerSecond, LimitPerMinute or LimitPerHour for plans read
	// from a file; [PlansFromRateLimit] names its single limit "rate".
	Name string
	// Limit is the number of calls per Window, at least 1.
	Limit int64
	// Window is the period over which Limit applies; a whole number of
	// milliseconds.
	Window time.Duration
	// Sliding counts calls with a sliding-window log instead of GCRA: at
	// most Limit calls in any Window, exactly, with no burst beyond it and
	// a call's slot coming back Window after the call. The plan's
	// rate_limits choose it with algorithm: sliding_window.
	Sliding bool

	p   params
	tag string // windowTag(Window); a sliding log's key is Key(keyID, "rl", tag)
	// field is GCRA's state's field in the month hash, "rl:" + tag, boxed
	// once as a script argument; nil for a sliding log.
	field any
}

// windowTag names a rate limit's window in its Redis key: whole seconds
// as "60s", anything else in milliseconds as "1500ms". Limits of the same
// window share their state across plans, so a key that changes plan keeps
// its spent allowance.
func windowTag(w time.Duration) string {
	if w%time.Second == 0 {
		return fmt.Sprintf("%ds", w/time.Second)
	}
	return fmt.Sprintf("%dms", w/time.Millisecond)
}

// Quota is a plan's allowance of cost units per calendar period (UTC).
type Quota struct {
	// Period is PeriodDay or PeriodMonth.
	Period Period
	// Limit is the number of cost units allowed in one period, at least 0.
	// A call is refused when the units already used plus its cost would
	// exceed Limit; tools that cost 0 are never refused by a quota.
	Limit int64
}

// Plan is one plan of a plans file: what a key on this plan may call, how
// often, and at what cost. Plans are built by [ParsePlans] (or
// [PlansFromRateLimit]) and must not be modified afterwards; they are safe
// for concurrent use.
type Plan struct {
	// Name is the plan's key in the plans file's plans section.
	Name string
	// RateLimits are checked together on every call, shortest window
	// first; empty means no rate limit.
	RateLimits []RateLimit
	// Quotas are checked together on every call, day before month; empty
	// means no quota.
	Quotas []Quota
	// Tools are the allowed-tools rules as written (see [Plan.Allows]);
	// nil allows every tool.
	Tools []string
	// Costs maps exact tool names to their cost in units (0 = free); see
	// [Plan.Cost].
	Costs map[string]int64
	// UpgradeMessage and UpgradeURL tell a caller refused by this plan how
	// to get more; both may be empty.
	UpgradeMessage string
	UpgradeURL     string

	rules []toolRule
}

// toolRule is one compiled entry of Plan.Tools.
type toolRule struct {
	negate  bool
	tag     bool   // pattern applies to the tool's tags, not its name
	pattern string // internal/glob syntax
}

func (r toolRule) matches(tool string, tags []string) bool {
	if !r.tag {
		return glob.Match(r.pattern, tool)
	}
	for _, t := range tags {
		if glob.Match(r.pattern, t) {
			return true
		}
	}
	return false
}

// Allows reports whether plan p lets a key call tool, whose OpenAPI tags
// are tags.
//
// A plan without a tools list allows every tool. Otherwise the rules are
// evaluated in order, starting from "not allowed", and the last rule that
// matches wins: a pattern allows, the same pattern preceded by '!' forbids.
// A pattern is a glob on the tool name (restmcp's one dialect, package
// internal/glob, as in include_operations: '*' any run of characters, '?'
// one character, no classes), or "tag:" followed by a
// glob on the tool's tags (it matches when any tag matches). So
// ["*", "!admin_*", "tag:public"] allows everything except the admin_
// tools, unless they are tagged public.
func (p *Plan) Allows(tool string, tags []string) bool {
	if p.rules == nil {
		return true
	}
	allowed := false
	for _, r := range p.rules {
		if r.matches(tool, tags) {
			allowed = !r.negate
		}
	}
	return allowed
}

// Cost returns the units one call of tool costs under plan p: the plan's
// costs entry for the tool when there is one (it may be 0: free), else
// specCost when it is positive (the operation's x-restmcp-cost extension,
// supplied by the caller; 0 or negative means the operation sets none),
// else 1.
func (p *Plan) Cost(tool string, specCost int64) int64 {
	if c, ok := p.Costs[tool]; ok {
		return c
	}
	if specCost > 0 {
		return specCost
	}
	return 1
}

// DeniedMessage is the tool-error text for a call of tool outside plan p:
// it names the tool and the plan and, when the plan has them, the upgrade
// message and URL.
func (p *Plan) DeniedMessage(tool string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "tool %q is not included in plan %q", tool, p.Name)
	// Each part ends with exactly one period, whether or not the plans file
	// wrote one at the end of the upgrade message.
	if msg := strings.TrimRight(strings.TrimSpace(p.UpgradeMessage), "."); msg != "" {
		b.WriteString(". ")
		b.WriteString(msg)
	}
	if p.UpgradeURL != "" {
		b.WriteString(". Upgrade: ")
		b.WriteString(p.UpgradeURL)
	}
	return b.String()
}

// quota returns p's quota for period, or -1 when it has none.
func (p *Plan) quota(period Period) int64 {
	for _, q := range p.Quotas {
		if q.Period == period {
			return q.Limit
		}
	}
	return -1
}

// StaticKey is an entry of the plans file's keys section. Only the key's
// SHA-256 is kept, even when the file gave the key in plain text.
type StaticKey struct {
	// SHA256 is the lower-case hex SHA-256 of the key.
	SHA256 string
	// KeyID is [KeyID] of the key: the first 12 hex digits of SHA256.
	KeyID string
	// Plan names the key's plan.
	Plan string
	// Label is a free-form note (customer, purpose).
	Label string
}

// Plans is a parsed plans file: the plans, the key policy and the static
// keys. It is read-only after [ParsePlans] and safe for concurrent use.
type Plans struct {
	// DefaultPlan names the plan of keys that have no plan of their own
	// (KeyModeOpen) and of new registry keys created without one.
	DefaultPlan string
	// KeyMode is KeyModeRegistry (default) or KeyModeOpen.
	KeyMode KeyMode
	// Counting is CountAdmitted (default) or CountSuccess.
	Counting Counting
	// Outage is OutageFailClosed (default) or OutageFailOpen.
	Outage Outage

	plans  map[string]*Plan
	static map[string]StaticKey // by SHA256
}

// Plan returns the plan named name, or nil when there is none.
func (ps *Plans) Plan(name string) *Plan { return ps.plans[name] }

// Default returns the plan named by DefaultPlan (never nil for Plans built
// by this package).
func (ps *Plans) Default() *Plan { return ps.plans[ps.DefaultPlan] }

// Names returns the plan names, sorted.
func (ps *Plans) Names() []string {
	names := make([]string, 0, len(ps.plans))
	for n := range ps.plans {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// StaticKeys returns the keys section, sorted by KeyID.
func (ps *Plans) StaticKeys() []StaticKey {
	keys := make([]StaticKey, 0, len(ps.static))
	for _, k := range ps.static {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b StaticKey) int { return strings.Compare(a.KeyID, b.KeyID) })
	return keys
}

// staticKey returns the static key whose SHA-256 is sum (lower-case hex).
func (ps *Plans) staticKey(sum string) (StaticKey, bool) {
	k, ok := ps.static[sum]
	return k, ok
}

// PlansFromRateLimit returns what a deployment without a plans file
// runs: a single plan "default" with one rate limit named "rate" of limit
// calls per window (0 means DefaultLimit, a negative limit means no rate
// limit; a window of 0 or less means DefaultWindow), no quota, every tool
// allowed at cost 1; key mode open, counting admitted, fail closed.
func PlansFromRateLimit(limit int64, window time.Duration) *Plans {
	p := &Plan{Name: "default"}
	if limit == 0 {
		limit = DefaultLimit
	}
	if window <= 0 {
		window = DefaultWindow
	}
	if limit > 0 {
		tag := windowTag(window)
		p.RateLimits = []RateLimit{{Name: "rate", Limit: limit, Window: window, p: gcra(limit, window), tag: tag, field: "rl:" + tag}}
	}
	return &Plans{
		DefaultPlan: p.Name,
		KeyMode:     KeyModeOpen,
		Counting:    CountAdmitted,
		Outage:      OutageFailClosed,
		plans:       map[string]*Plan{p.Name: p},
		static:      map[string]StaticKey{},
	}
}

// The YAML shapes of a plans file. Decoded with KnownFields, so a
// misspelt key is an error.
type (
	plansYAML struct {
		DefaultPlan string              `yaml:"default_plan"`
		KeyMode     string              `yaml:"key_mode"`
		Counting    string              `yaml:"counting"`
		Outage      string              `yaml:"outage"`
		Plans       map[string]planYAML `yaml:"plans"`
		Keys        []keyYAML           `yaml:"keys"`
	}
	planYAML struct {
		RateLimits *ratesYAML       `yaml:"rate_limits"`
		Quotas     *quotasYAML      `yaml:"quotas"`
		Tools      *[]string        `yaml:"tools"`
		Costs      map[string]int64 `yaml:"costs"`
		Upgrade    *upgradeYAML     `yaml:"upgrade"`
	}
	ratesYAML struct {
		PerSecond *int64 `yaml:"per_second"`
		PerMinute *int64 `yaml:"per_minute"`
		PerHour   *int64 `yaml:"per_hour"`
		Algorithm string `yaml:"algorithm"`
	}
	quotasYAML struct {
		Day   *int64 `yaml:"day"`
		Month *int64 `yaml:"month"`
	}
	upgradeYAML struct {
		Message string `yaml:"message"`
		URL     string `yaml:"url"`
	}
	keyYAML struct {
		SHA256 string `yaml:"sha256"`
		Key    string `yaml:"key"`
		Plan   string `yaml:"plan"`
		Label  string `yaml:"label"`
	}
)

// LoadPlans reads and parses the plans file at path; see [ParsePlans].
func LoadPlans(path string) (*Plans, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading plans file: %w", err)
	}
	return ParsePlans(data, path)
}

// planName is what a plan name may look like: it is stored in registry
// records and shown in errors.
var planName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ParsePlans parses a plans file (YAML); name is the file's name for error
// messages. Every problem is reported at once, in one errors.Join of lines
// "name:line: path: problem", ordered by line: unknown keys, values of the
// wrong type, missing or unknown plan references, bad glob patterns,
// negative numbers, malformed keys.
//
// The format (every key but plans and default_plan optional):
//
//	default_plan: free            # required; must name a plan
//	key_mode: registry            # registry (default) | open
//	counting: admitted            # admitted (default) | success
//	outage: fail_closed           # fail_closed (default) | fail_open
//	plans:
//	  free:
//	    rate_limits: {per_second: 2, per_minute: 30}   # and/or per_hour; each ≥ 1
//	    quotas: {day: 100, month: 1000}                # cost units per UTC day/month; each ≥ 0
//	    tools: ["*", "!admin_*", "tag:public"]         # see Plan.Allows; absent = all
//	    costs: {etfs_top_holdings: 5}                  # exact tool names; each ≥ 0
//	    upgrade: {message: "Pro has ETF data", url: "https://example.com/pricing"}
//	keys:
//	  - sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//	    plan: free
//	    label: acme
//	  - key: dev-key              # plain text, for development; kept hashed
//	    plan: free
func ParsePlans(data []byte, name string) (*Plans, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil && err != io.EOF {
		return nil, yamlSyntaxError(name, err)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: empty plans file", name)
	}
	if err := yamltree.CheckAliases(root.Content[0]); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	pr := &plansParser{name: name, root: root.Content[0]}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		pr.errorAt(extra.Line, "", "a plans file holds one YAML document; found another")
	}

	// Unknown keys and values of the wrong type are found on the node
	// tree, with their lines and key paths; the decode then fills in what
	// fits, so that the checks below report the rest at once.
	pr.checkShape(pr.root, reflect.TypeFor[plansYAML](), "")
	var raw plansYAML
	_ = pr.root.Decode(&raw) // its type errors are checkShape's, reported above
	ps := pr.build(&raw)
	if err := pr.err(); err != nil {
		return nil, err
	}
	return ps, nil
}

// plansParser collects the problems of one plans file.
type plansParser struct {
	name string
	root *yaml.Node
	errs []lineError
	// shapeBad are the key paths checkShape refused; later checks of the
	// same value say nothing more about it.
	shapeBad map[string]bool
}

type lineError struct {
	line int
	msg  string
}

func (pr *plansParser) err() error {
	if len(pr.errs) == 0 {
		return nil
	}
	sort.SliceStable(pr.errs, func(i, j int) bool { return pr.errs[i].line < pr.errs[j].line })
	errs := make([]error, len(pr.errs))
	for i, e := range pr.errs {
		errs[i] = errors.New(e.msg)
	}
	return errors.Join(errs...)
}

// errorAt records a problem at line for the key path p ("" for none).
func (pr *plansParser) errorAt(line int, p, format string, args ...any) {
	if pr.shapeBad[p] {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if p != "" {
		msg = p + ": " + msg
	}
	pr.errs = append(pr.errs, lineError{line, fmt.Sprintf("%s:%d: %s", pr.name, line, msg)})
}

// errorf records a problem about the value at key path p (dot-separated;
// list indexes as [i]), located through the YAML node tree. When the path
// does not exist (a missing key), the line of its deepest existing parent
// is used.
func (pr *plansParser) errorf(p string, format string, args ...any) {
	pr.errorAt(pr.line(p), p, format, args...)
}

// line returns the line of the node at key path p: of the key, for a
// mapping entry.
func (pr *plansParser) line(p string) int {
	n := pr.root
	line := n.Line
	for _, part := range splitPath(p) {
		at, v := child(n, part)
		if v == nil {
			break
		}
		n, line = v, at.Line
	}
	return line
}

// splitPath splits "plans.free.tools[2]" into "plans", "free", "tools", "[2]".
func splitPath(p string) []string {
	var parts []string
	for _, s := range strings.Split(p, ".") {
		if s == "" {
			continue
		}
		if i := strings.IndexByte(s, '['); i > 0 {
			parts = append(parts, s[:i], s[i:])
			continue
		}
		parts = append(parts, s)
	}
	return parts
}

// child returns the key node and the value node under key part of mapping
// n, or element [i] of sequence n twice; nil when there is none.
func child(n *yaml.Node, part string) (at, val *yaml.Node) {
	if strings.HasPrefix(part, "[") {
		i, err := strconv.Atoi(strings.Trim(part, "[]"))
		if err != nil || n.Kind != yaml.SequenceNode || i >= len(n.Content) {
			return nil, nil
		}
		return n.Content[i], n.Content[i]
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == part {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// yamlLine matches the "line N: " that yaml.v3 puts in its syntax errors,
// the only errors that come without a node tree to locate them on.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlSyntaxError turns a yaml.v3 parse error into "name:line: problem".
func yamlSyntaxError(name string, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		return fmt.Errorf("%s:%s: %s", name, m[1], m[2])
	}
	return fmt.Errorf("%s: %s", name, strings.TrimPrefix(err.Error(), "yaml: "))
}

// checkShape records every mapping key of n that t (a struct, map,
// slice, pointer, string or int64 type of the plans file's YAML shape)
// does not have, and every value of the wrong kind, at its node's line and
// key path. A null value is always allowed (the key is left out).
func (pr *plansParser) checkShape(n *yaml.Node, t reflect.Type, path string) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want, ok := "", false
	switch t.Kind() {
	case reflect.Struct:
		if want, ok = "a mapping", n.Kind == yaml.MappingNode; ok {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				f, known := yamlField(t, k.Value)
				if !known {
					pr.errorAt(k.Line, joinPath(path, k.Value), "unknown key")
					continue
				}
				pr.checkShape(v, f.Type, joinPath(path, k.Value))
			}
		}
	case reflect.Map:
		if want, ok = "a mapping", n.Kind == yaml.MappingNode; ok {
			for i := 0; i+1 < len(n.Content); i += 2 {
				pr.checkShape(n.Content[i+1], t.Elem(), joinPath(path, n.Content[i].Value))
			}
		}
	case reflect.Slice:
		if want, ok = "a list", n.Kind == yaml.SequenceNode; ok {
			for i, c := range n.Content {
				pr.checkShape(c, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
			}
		}
	case reflect.String:
		want, ok = "a string", n.Kind == yaml.ScalarNode
	case reflect.Int64:
		want, ok = "an integer", n.Kind == yaml.ScalarNode && n.Tag == "!!int"
	default:
		panic(fmt.Sprintf("metering: checkShape of %v", t))
	}
	if !ok {
		pr.errorAt(n.Line, path, "want %s, got %s", want, nodeKind(n))
		if pr.shapeBad == nil {
			pr.shapeBad = map[string]bool{}
		}
		pr.shapeBad[path] = true
	}
}

// yamlField returns the field of struct t whose yaml tag is key.
func yamlField(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if strings.Split(f.Tag.Get("yaml"), ",")[0] == key {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// nodeKind describes a YAML value in an error: a scalar by its text.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	return strconv.Quote(n.Value)
}

func joinPath(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// build validates raw and turns it into Plans, recording every problem.
func (pr *plansParser) build(raw *plansYAML) *Plans {
	ps := &Plans{
		DefaultPlan: raw.DefaultPlan,
		KeyMode:     KeyMode(raw.KeyMode),
		Counting:    Counting(raw.Counting),
		Outage:      Outage(raw.Outage),
		plans:       make(map[string]*Plan, len(raw.Plans)),
		static:      make(map[string]StaticKey, len(raw.Keys)),
	}
	if ps.KeyMode == "" {
		ps.KeyMode = KeyModeRegistry
	}
	if ps.Counting == "" {
		ps.Counting = CountAdmitted
	}
	if ps.Outage == "" {
		ps.Outage = OutageFailClosed
	}
	switch ps.KeyMode {
	case KeyModeRegistry, KeyModeOpen:
	default:
		pr.errorf("key_mode", "want registry or open, got %q", raw.KeyMode)
	}
	switch ps.Counting {
	case CountAdmitted, CountSuccess:
	default:
		pr.errorf("counting", "want admitted or success, got %q", raw.Counting)
	}
	switch ps.Outage {
	case OutageFailClosed, OutageFailOpen:
	default:
		pr.errorf("outage", "want fail_closed or fail_open, got %q", raw.Outage)
	}

	if len(raw.Plans) == 0 {
		pr.errorf("plans", "at least one plan is required")
	}
	for _, name := range slices.Sorted(maps.Keys(raw.Plans)) {
		if p := pr.plan(name, raw.Plans[name]); p != nil {
			ps.plans[name] = p
		}
	}
	switch {
	case raw.DefaultPlan == "":
		pr.errorf("default_plan", "required: the plan of keys without one")
	case len(raw.Plans) > 0:
		if _, ok := raw.Plans[raw.DefaultPlan]; !ok {
			pr.errorf("default_plan", "unknown plan %q", raw.DefaultPlan)
		}
	}

	for i, k := range raw.Keys {
		pr.key(ps, fmt.Sprintf("keys[%d]", i), k, raw.Plans)
	}
	return ps
}

// plan validates one plan.
func (pr *plansParser) plan(name string, raw planYAML) *Plan {
	at := "plans." + name
	if !planName.MatchString(name) {
		pr.errorf(at, "a plan name is 1 to 64 letters, digits, '_' or '-', starting with a letter or digit")
	}
	p := &Plan{Name: name}
	if raw.RateLimits != nil {
		p.RateLimits = pr.rateLimits(at, raw.RateLimits)
	}
	if q := raw.Quotas; q != nil {
		for _, l := range []struct {
			period Period
			limit  *int64
		}{{PeriodDay, q.Day}, {PeriodMonth, q.Month}} {
			if l.limit == nil {
				continue
			}
			if *l.limit < 0 {
				pr.errorf(at+".quotas."+string(l.period), "must not be negative, got %d", *l.limit)
				continue
			}
			p.Quotas = append(p.Quotas, Quota{Period: l.period, Limit: *l.limit})
		}
	}
	if raw.Tools != nil {
		tools := *raw.Tools
		if len(tools) == 0 {
			pr.errorf(at+".tools", "an empty list allows no tool; leave tools out to allow every tool")
		}
		allows := false
		p.rules = make([]toolRule, 0, len(tools))
		for i, t := range tools {
			r, err := parseToolRule(t)
			if err != nil {
				pr.errorf(fmt.Sprintf("%s.tools[%d]", at, i), "%v", err)
				continue
			}
			allows = allows || !r.negate
			p.rules = append(p.rules, r)
		}
		if len(tools) > 0 && !allows && len(p.rules) == len(tools) {
			pr.errorf(at+".tools", "only negations: nothing is allowed; start the list with \"*\" to allow all but these")
		}
		p.Tools = slices.Clone(tools)
	}
	if len(raw.Costs) > 0 {
		p.Costs = make(map[string]int64, len(raw.Costs))
		for _, tool := range slices.Sorted(maps.Keys(raw.Costs)) {
			c := raw.Costs[tool]
			switch {
			case tool == "" || strings.ContainsAny(tool, "*?[]!"):
				pr.errorf(at+".costs."+tool, "costs are per exact tool name; patterns are not supported")
			case c < 0:
				pr.errorf(at+".costs."+tool, "must not be negative, got %d", c)
			default:
				p.Costs[tool] = c
			}
		}
	}
	if u := raw.Upgrade; u != nil {
		p.UpgradeMessage = strings.TrimSpace(u.Message)
		p.UpgradeURL = u.URL
		if u.URL != "" {
			if parsed, err := url.Parse(u.URL); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
				pr.errorf(at+".upgrade.url", "want an absolute http(s) URL, got %q", u.URL)
			}
		}
	}
	return p
}

// rateLimits reads a plan's rate_limits (at names it in errors).
func (pr *plansParser) rateLimits(at string, r *ratesYAML) []RateLimit {
	var out []RateLimit
	sliding := false
	switch r.Algorithm {
	case "", AlgorithmGCRA:
	case AlgorithmSlidingWindow:
		sliding = true
	default:
		pr.errorf(at+".rate_limits.algorithm", "must be %s or %s, got %q", AlgorithmGCRA, AlgorithmSlidingWindow, r.Algorithm)
	}
	for _, l := range []struct {
		name   string
		limit  *int64
		window time.Duration
	}{
		{LimitPerSecond, r.PerSecond, time.Second},
		{LimitPerMinute, r.PerMinute, time.Minute},
		{LimitPerHour, r.PerHour, time.Hour},
	} {
		if l.limit == nil {
			continue
		}
		if *l.limit < 1 {
			pr.errorf(at+".rate_limits."+l.name, "must be at least 1, got %d (leave it out for no limit)", *l.limit)
			continue
		}
		rl := RateLimit{
			Name: l.name, Limit: *l.limit, Window: l.window,
			p: gcra(*l.limit, l.window), tag: windowTag(l.window),
		}
		if sliding {
			// Its own key: a log (a sorted set), never a GCRA state.
			rl.Sliding, rl.tag = true, "sw"+rl.tag
		} else {
			rl.field = "rl:" + rl.tag
		}
		out = append(out, rl)
	}
	return out
}

// parseToolRule compiles one entry of a plan's tools list.
func parseToolRule(s string) (toolRule, error) {
	var r toolRule
	rest := s
	if strings.HasPrefix(rest, "!") {
		r.negate, rest = true, rest[1:]
	}
	if strings.HasPrefix(rest, "tag:") {
		r.tag, rest = true, rest[len("tag:"):]
	}
	if rest == "" {
		return r, fmt.Errorf("empty pattern in %q", s)
	}
	if !r.tag && strings.Trim(rest, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-*?") != "" {
		return r, fmt.Errorf("bad glob pattern %q: a tool-name glob has tool-name characters (A-Z a-z 0-9 _ -), * and ? only", s)
	}
	r.pattern = rest
	return r, nil
}

// key validates one entry of the keys section and adds it to ps.
func (pr *plansParser) key(ps *Plans, at string, k keyYAML, plans map[string]planYAML) {
	var hash string
	switch {
	case k.SHA256 != "" && k.Key != "":
		pr.errorf(at, "give either sha256 or key, not both")
		return
	case k.Key != "":
		hash = sum(k.Key)
	case k.SHA256 != "":
		hash = strings.ToLower(k.SHA256)
		if b, err := hex.DecodeString(hash); err != nil || len(b) != sha256.Size {
			pr.errorf(at+".sha256", "want 64 hex digits (the key's SHA-256), got %d characters", len(k.SHA256))
			return
		}
	default:
		pr.errorf(at, "sha256 (or key, for development) is required")
		return
	}
	switch {
	case k.Plan == "":
		pr.errorf(at+".plan", "required")
		return
	case len(plans) > 0:
		if _, ok := plans[k.Plan]; !ok {
			pr.errorf(at+".plan", "unknown plan %q", k.Plan)
			return
		}
	}
	if prev, dup := ps.static[hash]; dup {
		pr.errorf(at, "the same key as an earlier entry (key_id %s)", prev.KeyID)
		return
	}
	ps.static[hash] = StaticKey{SHA256: hash, KeyID: keyIDOf(hash), Plan: k.Plan, Label: k.Label}
}
