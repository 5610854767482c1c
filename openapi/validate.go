package openapi

import (
	"encoding/json"
	"runtime"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// jsonUnmarshal is json.Unmarshal; named for symmetry with encode.
func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// compileValidators compiles, once at load, one validator per top-level
// input property from the emitted input schema (R7). Validating per
// property lets NewRequest name the offending argument exactly; required
// and unknown keys are checked by NewRequest itself. A property schema
// that jsonschema-go cannot compile (typically an ECMA-only pattern) is
// compiled again without patterns, and left unvalidated if that fails too.
func compileValidators(tools []*Tool) error {
	work := make(chan *Tool)
	var wg sync.WaitGroup
	n := min(runtime.GOMAXPROCS(0), 8)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				compileTool(t)
			}
		}()
	}
	for _, t := range tools {
		work <- t
	}
	close(work)
	wg.Wait()
	return nil
}

func compileTool(t *Tool) {
	var root struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(t.InputSchema, &root) != nil {
		return
	}
	for k, raw := range root.Properties {
		pp := t.plan.props[k]
		if pp == nil {
			continue
		}
		pp.validator = compileSchema(raw)
	}
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
