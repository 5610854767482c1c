package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// loadFile reads the YAML file at path into c. Every error names the file.
func loadFile(path string, c *Config) []error {
	data, err := os.ReadFile(path)
	if err != nil {
		return []error{fmt.Errorf("reading config file: %w", err)}
	}
	errs := decodeFile(data, c)
	for i, e := range errs {
		errs[i] = fmt.Errorf("config file %s: %w", path, e)
	}
	return errs
}

// decodeFile reads one YAML document, a mapping of settings by their
// config file key, into c, and returns every problem: unknown keys (with
// their line and a suggestion), keys given twice, keys in another group's
// section, and values that do not fit their setting. It sets nothing when
// a key is unknown, misplaced or repeated.
//
// Settings may be given at the top level (flat, as they always could) or
// inside their group's section (SettingGroup.Section), e.g.
//
//	upstream:
//	  upstream: https://api.example.com
//	  upstream_timeout: 10s
//	oauth:
//	  oauth: true
//	  oauth_mcp_path: /oauth/mcp
//
// or both ways in one file.
func decodeFile(data []byte, c *Config) []error {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil // empty file or only comments
		}
		return []error{cleanYAMLError(err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return []error{errors.New("holds more than one YAML document (---); put every setting in one")}
	}
	if len(root.Content) == 0 {
		return nil
	}
	doc := root.Content[0]
	if doc.Kind == yaml.ScalarNode && doc.Tag == "!!null" {
		return nil
	}
	if doc.Kind != yaml.MappingNode {
		return []error{fmt.Errorf("line %d: the top level must be a mapping of settings (key: value)", doc.Line)}
	}
	byKey := fileSettings()
	var errs []error
	var pairs [][2]*yaml.Node
	seen := map[string]int{}
	add := func(k, v *yaml.Node, section string) {
		_, known := byKey[k.Value]
		switch {
		case !known && section != "":
			errs = append(errs, fmt.Errorf("line %d: unknown key %q in section %s%s", k.Line, k.Value, section, suggest(k.Value, byKey)))
		case !known:
			errs = append(errs, fmt.Errorf("line %d: unknown key %q%s", k.Line, k.Value, suggest(k.Value, byKey)))
		case section != "" && sectionOf[k.Value] != section:
			errs = append(errs, fmt.Errorf("line %d: %s belongs in section %s, not %s", k.Line, k.Value, sectionOf[k.Value], section))
		case seen[k.Value] > 0:
			errs = append(errs, fmt.Errorf("line %d: %s is given twice (first on line %d); keep one", k.Line, k.Value, seen[k.Value]))
		default:
			seen[k.Value] = k.Line
			pairs = append(pairs, [2]*yaml.Node{k, v})
		}
	}
	var apis *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		if k.Value == "apis" {
			// Several documents on one endpoint (apis.go).
			if apis != nil {
				errs = append(errs, fmt.Errorf("line %d: apis is given twice (first on line %d); keep one list", k.Line, apis.Line))
			}
			apis = v
			continue
		}
		if sections[k.Value] && v.Kind == yaml.MappingNode {
			// A group's section (SettingGroups): its settings by their
			// own keys. A key that is also a setting (upstream, oauth)
			// is a section when its value is a mapping.
			for j := 0; j+1 < len(v.Content); j += 2 {
				add(v.Content[j], v.Content[j+1], k.Value)
			}
			continue
		}
		add(k, v, "")
	}
	if apis != nil {
		list, apiErrs := decodeAPIs(apis)
		errs = append(errs, apiErrs...)
		c.APIs = list
	}
	if len(errs) > 0 {
		c.APIs = nil
		return errs
	}
	for _, kv := range pairs {
		k, v := kv[0], kv[1]
		if err := decodeNode(byKey[k.Value].field(c), v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k.Value, err))
		}
	}
	return errs
}

// fileSettings maps each config file key to its setting.
func fileSettings() map[string]setting {
	m := map[string]setting{}
	for _, s := range table() {
		if s.Key != "" {
			m[s.Key] = s
		}
	}
	return m
}

// suggest returns ` (did you mean "x"?)` for the closest known key, if any
// is close: same key once dashes, case and a RESTMCP_ prefix are ignored, or
// at most two edits away.
func suggest(key string, known map[string]setting) string {
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
