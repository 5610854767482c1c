package config

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// API is one OpenAPI document served on the MCP endpoint beside others: an
// entry of the config file's apis: list, or a --spec NAME=PATH flag. Its
// tools are named "<Name>_<tool>" (docs/apis.md).
//
// An API takes every setting of the whole configuration, except that the
// per-API settings it gives (APIKeys: its upstream, overlays, selections,
// credential placement, tool names …) replace the top-level ones for its
// document alone. [Config.ForAPI] is the configuration its document is
// loaded with.
type API struct {
	// Name prefixes the API's tool names and labels its usage, events and
	// metrics: 1 to MaxAPINameLength characters of a-z, 0-9 and "_",
	// starting with a letter ("checkout", "balance_platform").
	Name string
	// Spec is the API's OpenAPI document: a file path or an http(s) URL.
	Spec string

	// values holds the per-API settings as parsed; set names the config
	// file keys it gave (APIKeys).
	values Config
	set    map[string]bool
}

// MaxAPINameLength caps an API name, so that a tool name keeps room for
// the tool's own part within max_tool_name_length.
const MaxAPINameLength = 24

// APIKeys are the keys an apis: entry may give besides name: spec and the
// settings that may differ from one document to another, each meaning what
// the top-level setting of that key means.
var APIKeys = []string{
	"spec", "upstream", "overlay", "ref_root", "server_variables", "upstream_hosts",
	"include_tags", "exclude_tags", "include_operations", "exclude_operations",
	"include_methods", "exclude_methods", "default_security", "credential_parameters", "tool_names", "tool_annotations",
}

// ForAPI returns the configuration the API at index i of c.APIs is loaded
// with: c, with Spec the API's document and every per-API setting the API
// gives in place of the top-level one. It panics when i is out of range.
func (c Config) ForAPI(i int) Config {
	a := c.APIs[i]
	out := c
	out.APIs = nil
	out.Spec = a.Spec
	byKey := fileSettings()
	for k := range a.set {
		if k == "spec" {
			continue
		}
		f := byKey[k].field
		copyValue(f(&out), f(&a.values))
	}
	return out
}

// copyValue sets *dst to *src for the field kinds per-API settings have.
func copyValue(dst, src any) {
	switch d := dst.(type) {
	case *string:
		*d = *src.(*string)
	case *[]string:
		*d = slices.Clone(*src.(*[]string))
	case *map[string]string:
		*d = maps.Clone(*src.(*map[string]string)) // nil stays nil
	}
}

// validAPIName reports whether s may name an API.
func validAPIName(s string) bool {
	if s == "" || len(s) > MaxAPINameLength || !(s[0] >= 'a' && s[0] <= 'z') || strings.HasSuffix(s, "_") {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// splitNamed splits "NAME=VALUE" (--spec checkout=checkout.json, --upstream
// checkout=http://…) when the part before the first "=" is a valid API
// name. A file path or URL that happens to contain "=" after something
// else ("https://x/?v=2") is not named; a file called "a=b.yaml" is written
// "./a=b.yaml".
func splitNamed(v string) (name, value string, ok bool) {
	name, value, ok = strings.Cut(v, "=")
	if !ok || !validAPIName(name) {
		return "", v, false
	}
	return name, strings.TrimSpace(value), true
}

// decodeAPIs reads the config file's apis: list: a sequence of mappings,
// each with name, spec and any of APIKeys. Errors name the line.
func decodeAPIs(n *yaml.Node) ([]API, []error) {
	if n.Kind != yaml.SequenceNode {
		return nil, []error{fmt.Errorf("line %d: apis must be a list of APIs (- name: …, spec: …)", n.Line)}
	}
	byKey := fileSettings()
	var apis []API
	var errs []error
	for i, e := range n.Content {
		at := fmt.Sprintf("apis[%d]", i)
		if e.Kind != yaml.MappingNode {
			errs = append(errs, fmt.Errorf("line %d: %s must be a mapping (name: …, spec: …)", e.Line, at))
			continue
		}
		a := API{values: Default(), set: map[string]bool{}}
		for j := 0; j+1 < len(e.Content); j += 2 {
			k, v := e.Content[j], e.Content[j+1]
			switch {
			case k.Value == "name":
				if err := v.Decode(&a.Name); err != nil {
					errs = append(errs, fmt.Errorf("line %d: %s.name: %w", v.Line, at, cleanYAMLError(err)))
				}
				a.Name = strings.TrimSpace(a.Name)
			case !slices.Contains(APIKeys, k.Value):
				errs = append(errs, fmt.Errorf("line %d: %s: unknown key %q (an API takes name, %s)", k.Line, at, k.Value, strings.Join(APIKeys, ", ")))
			case a.set[k.Value]:
				errs = append(errs, fmt.Errorf("line %d: %s: %s is given twice; keep one", k.Line, at, k.Value))
			default:
				a.set[k.Value] = true
				if err := decodeNode(byKey[k.Value].field(&a.values), v); err != nil {
					errs = append(errs, fmt.Errorf("%s.%s: %w", at, k.Value, err))
				}
			}
		}
		a.Spec = a.values.Spec
		apis = append(apis, a)
	}
	return apis, errs
}

// applyAPIFlags applies the named --spec and --upstream flags (NAME=VALUE)
// to c.APIs: a named --spec adds an API, or replaces the document of the
// config file's API of that name; a named --upstream sets the upstream of
// the API of that name. Unnamed values are returned for the single-document
// settings. Mixing named and unnamed --spec flags is an error.
func applyAPIFlags(c *Config, specs, upstreams []string) (spec, upstream []string, errs []error) {
	var named bool
	flagSpec := map[string]string{} // name → the path its --spec gave
	for _, v := range specs {
		name, path, ok := splitNamed(v)
		if !ok {
			spec = append(spec, v)
			continue
		}
		named = true
		if earlier, twice := flagSpec[name]; twice {
			errs = append(errs, fmt.Errorf("--spec %s=…: the API %q is given twice (%s and %s); give each API one document", name, name, earlier, path))
			continue
		}
		flagSpec[name] = path
		i := c.apiIndex(name)
		if i < 0 {
			c.APIs = append(c.APIs, API{Name: name, values: Default(), set: map[string]bool{}})
			i = len(c.APIs) - 1
		}
		c.APIs[i].Spec, c.APIs[i].values.Spec = path, path
		c.APIs[i].set["spec"] = true
	}
	if named && len(spec) > 0 {
		errs = append(errs, fmt.Errorf("--spec: name every document (--spec NAME=PATH) when serving several; %q has no name", spec[0]))
		spec = nil
	}
	if len(spec) > 1 {
		errs = append(errs, fmt.Errorf("--spec is given %d times without names; serve several documents as --spec NAME=PATH each", len(spec)))
		spec = spec[len(spec)-1:]
	}
	flagUpstream := map[string]string{} // name → the URL its --upstream gave
	for _, v := range upstreams {
		name, u, ok := splitNamed(v)
		if !ok {
			upstream = append(upstream, v)
			continue
		}
		if earlier, twice := flagUpstream[name]; twice {
			errs = append(errs, fmt.Errorf("--upstream %s=…: the API %q is given two upstreams (%s and %s); give each API one", name, name, earlier, u))
			continue
		}
		flagUpstream[name] = u
		i := c.apiIndex(name)
		if i < 0 {
			errs = append(errs, fmt.Errorf("--upstream %s=…: no API is named %q (APIs: %s)", name, name, strings.Join(c.apiNames(), ", ")))
			continue
		}
		c.APIs[i].values.Upstream = u
		c.APIs[i].set["upstream"] = true
	}
	if len(upstream) > 1 {
		errs = append(errs, fmt.Errorf("--upstream is given %d times without names; name the API of each (--upstream NAME=URL)", len(upstream)))
		upstream = upstream[len(upstream)-1:]
	}
	return spec, upstream, errs
}

func (c Config) apiIndex(name string) int {
	return slices.IndexFunc(c.APIs, func(a API) bool { return a.Name == name })
}

func (c Config) apiNames() []string {
	names := make([]string, len(c.APIs))
	for i, a := range c.APIs {
		names[i] = a.Name
	}
	return names
}

// checkAPIs checks the apis list: each API has a valid, unique name that
// leaves room in a tool name, and a document; a single spec or a top-level
// upstream beside it is refused (each API names its own); and each API's
// configuration (ForAPI) passes the document and selection checks, its
// errors prefixed "apis[i] (name)".
func (c Config) checkAPIs(bad problemFunc) {
	if len(c.APIs) == 0 {
		return
	}
	if c.Spec != "" {
		bad("spec", "is set beside apis (%s): serve one document with spec, or several with apis, each with its own spec", strings.Join(c.apiNames(), ", "))
	}
	if c.Upstream != "" {
		bad("upstream", "is set beside apis: give each API its own upstream (apis[i].upstream, or --upstream NAME=URL)")
	}
	seen := map[string]int{}
	for i, a := range c.APIs {
		at := fmt.Sprintf("apis[%d]", i)
		switch {
		case !validAPIName(a.Name):
			bad(at+".name", "%q must be 1 to %d characters of a-z, 0-9 and _, starting with a letter and not ending with _", a.Name, MaxAPINameLength)
		case len(a.Name)+11 > c.MaxToolNameLength:
			bad(at+".name", "%q leaves no room for tool names within max_tool_name_length %d", a.Name, c.MaxToolNameLength)
		}
		if j, dup := seen[a.Name]; dup {
			bad(at+".name", "%q is also the name of apis[%d]; API names must differ", a.Name, j)
		}
		for j, b := range c.APIs[:i] {
			// Tools are served as "<api>_<tool>": with API names "a" and
			// "a_b", API a's tool b_list and API a_b's tool list would share
			// a prefix, and a plan pattern written for one API (a_*) would
			// grant the other's tools.
			short, long, si, li := b.Name, a.Name, j, i
			if len(short) > len(long) {
				short, long, si, li = long, short, li, si
			}
			if short != long && strings.HasPrefix(long, short+"_") {
				bad(at+".name", "%q (apis[%d]) begins with %q (apis[%d]) and _: their tools' names would share the prefix %s_, so a plan pattern such as %s_* would grant both APIs' tools; rename one", long, li, short, si, short, short)
			}
		}
		seen[a.Name] = i
		if a.Spec == "" {
			bad(at+".spec", "is required (a file path or an http(s) URL)")
			continue
		}
		sub := c.ForAPI(i)
		var errs []error
		sub.checkSources(func(key, format string, args ...any) {
			if key == "spec" || key == "upstream" {
				errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
			}
		})
		sub.checkSelection(func(key, format string, args ...any) {
			if a.set[key] {
				errs = append(errs, fmt.Errorf("%s: "+format, append([]any{key}, args...)...))
			}
		})
		for _, err := range errs {
			bad(fmt.Sprintf("%s (%s)", at, a.Name), "%v", err)
		}
	}
	if c.Watch {
		for i, a := range c.APIs {
			if strings.Contains(a.Spec, "://") {
				bad(fmt.Sprintf("apis[%d] (%s)", i, a.Name), "%v", errors.New("watch watches spec files; for a spec URL set reload_interval instead"))
			}
		}
	}
}
