package openapi

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Tool annotations (MCP ToolAnnotations,
// https://modelcontextprotocol.io/specification/2025-06-18/schema#toolannotations):
// hints clients use to decide what needs the user's approval. The method
// gives the defaults (GET and HEAD read-only; DELETE destructive and
// idempotent; PUT idempotent); the document may set them per operation with
// an extension, and the operator with tool_annotations (Selection.Annotations),
// which wins.

const (
	// ExtensionAnnotations is the operation extension that sets a tool's
	// annotations: an object with any of readOnlyHint, destructiveHint,
	// idempotentHint, openWorldHint (booleans) and title (a string).
	ExtensionAnnotations = "x-mcp-annotations"
	// ExtensionAnnotationsOwn is the same under restmcp's own prefix; where
	// an operation has both, its members win.
	ExtensionAnnotationsOwn = "x-restmcp-annotations"
)

// Annotations sets some of a tool's hints; a nil member (an empty Title)
// leaves what the method, or an earlier source, gave.
type Annotations struct {
	Title                                    string
	ReadOnly, Destructive, Idempotent, World *bool
}

// annotationMembers are the extension's members, in the order errors name
// them.
var annotationMembers = []string{"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint", "title"}

// annotationsFromExtension reads an ExtensionAnnotations value: an object
// of the members above, nothing else.
func annotationsFromExtension(v any) (Annotations, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Annotations{}, fmt.Errorf("must be an object with %s, got %s", strings.Join(annotationMembers, ", "), jsonKind(v))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var a Annotations
	for _, k := range keys {
		x := m[k]
		if k == "title" {
			s, ok := x.(string)
			if !ok {
				return Annotations{}, fmt.Errorf("title: must be a string, got %s", jsonKind(x))
			}
			a.Title = s
			continue
		}
		p := a.hint(k)
		if p == nil {
			return Annotations{}, fmt.Errorf("unknown member %q (use %s)", k, strings.Join(annotationMembers, ", "))
		}
		b, ok := x.(bool)
		if !ok {
			return Annotations{}, fmt.Errorf("%s: must be true or false, got %s", k, jsonKind(x))
		}
		*p = &b
	}
	return a, nil
}

// hint is the field of a for the member named name (readOnlyHint, …, or
// the word readOnly, …); nil for another name.
func (a *Annotations) hint(name string) **bool {
	switch strings.TrimSuffix(name, "Hint") {
	case "readOnly":
		return &a.ReadOnly
	case "destructive":
		return &a.Destructive
	case "idempotent":
		return &a.Idempotent
	case "openWorld":
		return &a.World
	}
	return nil
}

// ParseAnnotations reads one tool_annotations value: words separated by
// spaces, each a hint (readOnly, destructive, idempotent, openWorld) that
// is true, or false after "!", and title="…" (double quotes; a title
// without spaces may go without them): `readOnly idempotent !openWorld
// title="Search items"`.
func ParseAnnotations(s string) (Annotations, error) {
	var a Annotations
	rest := strings.TrimSpace(s)
	if rest == "" {
		return a, fmt.Errorf("empty: give hints such as readOnly idempotent !destructive, or title=\"…\"")
	}
	for rest != "" {
		var word string
		if t, ok := strings.CutPrefix(rest, "title="); ok {
			if q, ok := strings.CutPrefix(t, `"`); ok {
				end := strings.IndexByte(q, '"')
				if end < 0 {
					return Annotations{}, fmt.Errorf("title: no closing quote")
				}
				a.Title, rest = q[:end], strings.TrimSpace(q[end+1:])
			} else {
				word, rest, _ = strings.Cut(t, " ")
				a.Title, rest = word, strings.TrimSpace(rest)
			}
			if a.Title == "" {
				return Annotations{}, fmt.Errorf("title: empty")
			}
			continue
		}
		word, rest, _ = strings.Cut(rest, " ")
		rest = strings.TrimSpace(rest)
		val := !strings.HasPrefix(word, "!")
		p := a.hint(strings.TrimPrefix(word, "!"))
		if p == nil {
			return Annotations{}, fmt.Errorf("unknown hint %q (use readOnly, destructive, idempotent, openWorld, each with ! for false, and title=\"…\")", word)
		}
		*p = &val
	}
	return a, nil
}

// apply sets t's hints and title from a.
func (a Annotations) apply(t *Tool) {
	if a.Title != "" {
		t.Title = a.Title
	}
	if a.ReadOnly != nil {
		t.ReadOnly = *a.ReadOnly
	}
	if a.Destructive != nil {
		t.Destructive = *a.Destructive
	}
	if a.Idempotent != nil {
		t.Idempotent = *a.Idempotent
	}
	if a.World != nil {
		t.OpenWorld = a.World
	}
}

// annotate applies the operation's annotation extensions, then the
// operator's tool_annotations entry (already parsed), to t. A defective
// extension is left out, whole, and returned as the error; the rest
// still applies.
func annotate(t *Tool, op *openapi3.Operation, config *Annotations) error {
	var errs []error
	for _, ext := range []string{ExtensionAnnotations, ExtensionAnnotationsOwn} {
		v, ok := op.Extensions[ext]
		if !ok || v == nil {
			continue
		}
		a, err := annotationsFromExtension(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", ext, err))
			continue
		}
		a.apply(t)
	}
	if config != nil {
		config.apply(t)
	}
	return errors.Join(errs...)
}

// jsonKind names the JSON type of a decoded value, for errors.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a number"
}
