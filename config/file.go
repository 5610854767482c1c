package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// fileConfig is the YAML file's shape. A nil field was not in the file. The
// yaml tags must match Setting.Key (a test checks it).
type fileConfig struct {
	Spec              *string        `yaml:"spec"`
	Upstream          *string        `yaml:"upstream"`
	Addr              *string        `yaml:"addr"`
	MCPPath           *string        `yaml:"mcp_path"`
	RedisURL          *string        `yaml:"redis_url"`
	RateLimit         *int           `yaml:"rate_limit"`
	RateWindow        *time.Duration `yaml:"rate_window"`
	UpstreamTimeout   *time.Duration `yaml:"upstream_timeout"`
	MeterTimeout      *time.Duration `yaml:"meter_timeout"`
	MaxBodyBytes      *int64         `yaml:"max_body_bytes"`
	MaxResponseBytes  *int64         `yaml:"max_response_bytes"`
	AllowedOrigins    *[]string      `yaml:"allowed_origins"`
	MaxToolNameLength *int           `yaml:"max_tool_name_length"`
	RequireKey        *bool          `yaml:"require_key"`
	PublicMode        *bool          `yaml:"public_mode"`
	PublicGlobalPlan  *string        `yaml:"public_global_plan"`
	TrustedProxies    *[]string      `yaml:"trusted_proxies"`
	LogLevel          *string        `yaml:"log_level"`
	LogFormat         *string        `yaml:"log_format"`
	ShutdownTimeout   *time.Duration `yaml:"shutdown_timeout"`
	ReadHeaderTimeout *time.Duration `yaml:"read_header_timeout"`
	ReadTimeout       *time.Duration `yaml:"read_timeout"`
	IdleTimeout       *time.Duration `yaml:"idle_timeout"`
	MaxHeaderBytes    *int           `yaml:"max_header_bytes"`
	MaxConnections    *int           `yaml:"max_connections"`
	UpstreamHosts     *[]string      `yaml:"upstream_hosts"`
	PlansFile         *string        `yaml:"plans_file"`
	ListByPlan        *bool          `yaml:"list_by_plan"`
	EventMaxLen       *int64         `yaml:"event_max_len"`
	Metrics           *bool          `yaml:"metrics"`

	Overlays           *[]string          `yaml:"overlay"`
	RefRoot            *string            `yaml:"ref_root"`
	Lenient            *bool              `yaml:"lenient"`
	IncludeTags        *[]string          `yaml:"include_tags"`
	ExcludeTags        *[]string          `yaml:"exclude_tags"`
	IncludeOperations  *[]string          `yaml:"include_operations"`
	ExcludeOperations  *[]string          `yaml:"exclude_operations"`
	IncludeMethods     *[]string          `yaml:"include_methods"`
	ExcludeMethods     *[]string          `yaml:"exclude_methods"`
	ToolNames          *map[string]string `yaml:"tool_names"`
	ServerVariables    *map[string]string `yaml:"server_variables"`
	DefaultSecurity    *string            `yaml:"default_security"`
	PublicURL          *string            `yaml:"public_url"`
	ErrorCodes         *map[string]string `yaml:"error_codes"`
	CredentialParams   *[]string          `yaml:"credential_parameters"`
	ReportMaxTools     *int               `yaml:"report_max_tools"`
	ReportMaxListBytes *int               `yaml:"report_max_list_bytes"`
	OutputSchemas      *bool              `yaml:"output_schemas"`
	OutputSchemaBudget *int               `yaml:"output_schema_budget"`
	MaxDescription     *int               `yaml:"max_description_length"`
}

// loadFile reads the YAML file at path into c. Every error names the file.
func loadFile(path string, c *Config) []error {
	data, err := os.ReadFile(path)
	if err != nil {
		return []error{fmt.Errorf("reading config file: %w", err)}
	}
	fc, errs := decodeFile(data)
	if len(errs) > 0 {
		for i, e := range errs {
			errs[i] = fmt.Errorf("config file %s: %w", path, e)
		}
		return errs
	}
	for _, e := range fc.apply(c) {
		errs = append(errs, fmt.Errorf("config file %s: %w", path, e))
	}
	return errs
}

// decodeFile decodes one YAML document. Unknown keys are reported one by one
// with their line and a suggestion; the typed decode then runs with
// KnownFields, so nothing unknown can slip through.
func decodeFile(data []byte) (*fileConfig, []error) {
	var fc fileConfig
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, []error{cleanYAMLError(err)}
	}
	if len(root.Content) == 0 {
		return &fc, nil // empty file or only comments
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return nil, []error{fmt.Errorf("line %d: the top level must be a mapping of settings (key: value)", doc.Line)}
	}
	known := fileKeys()
	var errs []error
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k := doc.Content[i]
		if !known[k.Value] {
			errs = append(errs, fmt.Errorf("line %d: unknown key %q%s", k.Line, k.Value, suggest(k.Value, known)))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}

	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&fc); err != nil && !errors.Is(err, io.EOF) {
		return nil, []error{cleanYAMLError(err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, []error{errors.New("holds more than one YAML document (---); put every setting in one")}
	}
	return &fc, nil
}

// apply copies the settings present in the file into c.
func (f *fileConfig) apply(c *Config) []error {
	var errs []error
	setStr := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	setStr(&c.Spec, f.Spec)
	setStr(&c.Upstream, f.Upstream)
	setStr(&c.Addr, f.Addr)
	setStr(&c.MCPPath, f.MCPPath)
	if f.RedisURL != nil {
		c.RedisURL = Secret(strings.TrimSpace(*f.RedisURL))
	}
	if f.RateLimit != nil {
		c.RateLimit = *f.RateLimit
	}
	if f.RateWindow != nil {
		c.RateWindow = *f.RateWindow
	}
	if f.UpstreamTimeout != nil {
		c.UpstreamTimeout = *f.UpstreamTimeout
	}
	if f.MeterTimeout != nil {
		c.MeterTimeout = *f.MeterTimeout
	}
	if f.MaxBodyBytes != nil {
		c.MaxBodyBytes = *f.MaxBodyBytes
	}
	if f.MaxResponseBytes != nil {
		c.MaxResponseBytes = *f.MaxResponseBytes
	}
	if f.AllowedOrigins != nil {
		c.AllowedOrigins = append([]string{}, *f.AllowedOrigins...)
	}
	if f.MaxToolNameLength != nil {
		c.MaxToolNameLength = *f.MaxToolNameLength
	}
	if f.RequireKey != nil {
		c.RequireKey = *f.RequireKey
	}
	if f.PublicMode != nil {
		c.PublicMode = *f.PublicMode
	}
	setStr(&c.PublicGlobalPlan, f.PublicGlobalPlan)
	if f.TrustedProxies != nil {
		c.TrustedProxies = nil // "trusted_proxies: []" equals leaving it out
		if len(*f.TrustedProxies) > 0 {
			c.TrustedProxies = append([]string{}, *f.TrustedProxies...)
		}
	}
	if f.LogLevel != nil {
		if err := parseLevel(strings.TrimSpace(*f.LogLevel), &c.LogLevel); err != nil {
			errs = append(errs, fmt.Errorf("log_level: %w", err))
		}
	}
	if f.LogFormat != nil {
		if err := parseFormat(strings.TrimSpace(*f.LogFormat), &c.LogFormat); err != nil {
			errs = append(errs, fmt.Errorf("log_format: %w", err))
		}
	}
	if f.ShutdownTimeout != nil {
		c.ShutdownTimeout = *f.ShutdownTimeout
	}
	for dst, v := range map[*time.Duration]*time.Duration{&c.ReadHeaderTimeout: f.ReadHeaderTimeout, &c.ReadTimeout: f.ReadTimeout, &c.IdleTimeout: f.IdleTimeout} {
		if v != nil {
			*dst = *v
		}
	}
	for dst, v := range map[*int]*int{&c.MaxHeaderBytes: f.MaxHeaderBytes, &c.MaxConnections: f.MaxConnections} {
		if v != nil {
			*dst = *v
		}
	}
	if f.UpstreamHosts != nil {
		c.UpstreamHosts = nil // "upstream_hosts: []" equals leaving it out
		if len(*f.UpstreamHosts) > 0 {
			c.UpstreamHosts = append([]string{}, *f.UpstreamHosts...)
		}
	}
	setStr(&c.PlansFile, f.PlansFile)
	if f.ListByPlan != nil {
		c.ListByPlan = *f.ListByPlan
	}
	if f.EventMaxLen != nil {
		c.EventMaxLen = *f.EventMaxLen
	}
	if f.Metrics != nil {
		c.Metrics = *f.Metrics
	}
	setList := func(dst *[]string, v *[]string) {
		if v != nil {
			*dst = nil // "[]" equals leaving the key out
			for _, s := range *v {
				if s = strings.TrimSpace(s); s != "" {
					*dst = append(*dst, s)
				}
			}
		}
	}
	setList(&c.Overlays, f.Overlays)
	if f.RefRoot != nil {
		c.RefRoot = *f.RefRoot
	}
	if f.Lenient != nil {
		c.Lenient = *f.Lenient
	}
	setList(&c.IncludeTags, f.IncludeTags)
	setList(&c.ExcludeTags, f.ExcludeTags)
	setList(&c.IncludeOperations, f.IncludeOperations)
	setList(&c.ExcludeOperations, f.ExcludeOperations)
	setList(&c.IncludeMethods, f.IncludeMethods)
	setList(&c.ExcludeMethods, f.ExcludeMethods)
	setStr(&c.DefaultSecurity, f.DefaultSecurity)
	setStr(&c.PublicURL, f.PublicURL)
	if f.ErrorCodes != nil {
		c.ErrorCodes = nil
		for k, v := range *f.ErrorCodes {
			if c.ErrorCodes == nil {
				c.ErrorCodes = map[string]string{}
			}
			c.ErrorCodes[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if f.CredentialParams != nil {
		c.CredentialParameters = nil
		if len(*f.CredentialParams) > 0 {
			c.CredentialParameters = append([]string{}, *f.CredentialParams...)
		}
	}
	if f.ServerVariables != nil {
		c.ServerVariables = trimmedMap(*f.ServerVariables)
	}
	if f.ToolNames != nil {
		c.ToolNames = trimmedMap(*f.ToolNames)
	}
	if f.ReportMaxTools != nil {
		c.ReportMaxTools = *f.ReportMaxTools
	}
	if f.ReportMaxListBytes != nil {
		c.ReportMaxListBytes = *f.ReportMaxListBytes
	}
	if f.OutputSchemas != nil {
		c.OutputSchemas = *f.OutputSchemas
	}
	if f.OutputSchemaBudget != nil {
		c.OutputSchemaBudget = *f.OutputSchemaBudget
	}
	if f.MaxDescription != nil {
		c.MaxDescriptionLength = *f.MaxDescription
	}
	return errs
}

// fileKeys is the set of YAML keys fileConfig accepts.
func fileKeys() map[string]bool {
	t := reflect.TypeFor[fileConfig]()
	keys := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		keys[strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]] = true
	}
	return keys
}

// suggest returns ` (did you mean "x"?)` for the closest known key, if any
// is close: same key once dashes, case and a RESTMCP_ prefix are ignored, or
// at most two edits away.
func suggest(key string, known map[string]bool) string {
	norm := strings.ToLower(strings.ReplaceAll(key, "-", "_"))
	norm = strings.TrimPrefix(norm, "restmcp_")
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names)
	best, bestD := "", 3
	for _, k := range names {
		if k == norm {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
		if d := editDistance(norm, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return " (known keys: " + strings.Join(names, ", ") + ")"
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// cleanYAMLError turns yaml.v3's "yaml: unmarshal errors:\n  line 3: …" into
// "line 3: …; line 5: …".
func cleanYAMLError(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return errors.New(strings.Join(te.Errors, "; "))
	}
	return errors.New(strings.TrimPrefix(err.Error(), "yaml: "))
}

// trimmedMap copies m with white space trimmed from every key and value;
// an empty m gives nil, so "{}" in the file equals leaving the key out.
func trimmedMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out
}
