package openapi

import (
	"encoding/json"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// jsonUnmarshal is json.Unmarshal; named for symmetry with encode.
func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// validators compiles, once per tool, one validator per top-level input
// property from the emitted input schema (R7). Validating per property
// lets NewRequest name the offending argument exactly; required and
// unknown keys are checked by NewRequest itself from the plan.
//
// Compilation happens on the tool's first call rather than in Load: on
// large documents (Kubernetes: 1,100 tools with ~20 KiB schemas) compiling
// every schema up front costs seconds of startup for tools most
// deployments never call, and jsonschema-go's Resolve cannot fail on a
// schema we emitted except through patterns, which are handled here. A
// property schema that jsonschema-go cannot compile (typically an
// ECMA-only pattern) is compiled again without patterns, and left
// unvalidated if that fails too.
func (p *requestPlan) validators() map[string]*jsonschema.Resolved {
	p.compileOnce.Do(func() {
		p.compiled = map[string]*jsonschema.Resolved{}
		var root struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if json.Unmarshal(p.inputSchema, &root) != nil {
			return
		}
		for k, raw := range root.Properties {
			if r := compileSchema(raw); r != nil {
				p.compiled[k] = r
			}
		}
	})
	return p.compiled
}

func compileSchema(raw json.RawMessage) *jsonschema.Resolved {
	var s jsonschema.Schema
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	if r, err := s.Resolve(nil); err == nil {
		return r
	}
	stripPatterns(&s)
	if r, err := s.Resolve(nil); err == nil {
		return r
	}
	return nil
}

func stripPatterns(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	s.Pattern = ""
	s.PatternProperties = nil
	stripPatterns(s.Items)
	stripPatterns(s.AdditionalProperties)
	for _, p := range s.Properties {
		stripPatterns(p)
	}
	for _, l := range [][]*jsonschema.Schema{s.AnyOf, s.AllOf, s.OneOf, s.PrefixItems} {
		for _, p := range l {
			stripPatterns(p)
		}
	}
}

// validationReason shortens a jsonschema-go error to its innermost cause,
// e.g. `type: "1,2" has type "string", want "array"`.
func validationReason(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, "validating "); i >= 0 {
		if j := strings.Index(s[i:], ": "); j >= 0 {
			return s[i+j+2:]
		}
	}
	return s
}
