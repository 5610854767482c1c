package openapi

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/restmcp/restmcp/internal/yamltree"
	"github.com/speakeasy-api/jsonpath/pkg/jsonpath"
	"gopkg.in/yaml.v3"
)

// OpenAPI Overlay 1.0 (https://spec.openapis.org/overlay/v1.0.0.html):
// an overlay lists actions, each a JSONPath target plus an update to merge
// into every node the target selects or remove: true to delete them. They
// are applied in order to the raw document tree before it is loaded.
//
// Targets are RFC 9535 JSONPath (https://www.rfc-editor.org/rfc/rfc9535),
// evaluated by github.com/speakeasy-api/jsonpath on the yaml.Node tree, so
// key order and lines are kept; the parents remove and replace need come
// from one walk of the tree (parentIndex).

// overlayAction is one validated action.
type overlayAction struct {
	index  int
	line   int
	target string
	path   *jsonpath.JSONPath
	update *yaml.Node
	remove bool
}

// applyOverlays applies opts.Overlays in order to the document and returns
// it as JSON, with a warning for each action that matched nothing.
func applyOverlays(ctx context.Context, data []byte, src *source, opts LoadOptions) ([]byte, []Problem, error) {
	tree, err := yamltree.Parse(data)
	if err != nil {
		return nil, nil, err
	}
	var problems []Problem
	for _, name := range opts.Overlays {
		var od []byte
		if isHTTPURL(name) {
			od, err = fetch(ctx, httpClient(opts), name)
		} else {
			od, err = readFile(name)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("overlay %s: %w", name, err)
		}
		actions, err := parseOverlay(od)
		if err != nil {
			return nil, nil, fmt.Errorf("overlay %s: %w", name, err)
		}
		for _, a := range actions {
			if !a.apply(&tree) {
				problems = append(problems, Problem{Severity: SeverityWarning, File: name,
					Pointer: "/actions/" + strconv.Itoa(a.index), Line: a.line,
					Message: fmt.Sprintf("overlay action target %q matches nothing in %s", a.target, src.rootName())})
			}
		}
	}
	return yamltree.EncodeJSON(tree), problems, nil
}

// parseOverlay validates an overlay document and returns its actions.
func parseOverlay(data []byte) ([]overlayAction, error) {
	root, err := yamltree.Parse(data)
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, errors.New("not an overlay: the document is not an object")
	}
	v, _ := yamltree.Get(root, "overlay")
	if v == nil || v.Kind != yaml.ScalarNode || !strings.HasPrefix(v.Value, "1.") {
		got := "missing"
		if v != nil {
			got = strconv.Quote(v.Value)
		}
		return nil, fmt.Errorf("overlay: version %s; want 1.x (e.g. 1.0.0)", got)
	}
	info, _ := yamltree.Get(root, "info")
	if info == nil || info.Kind != yaml.MappingNode {
		return nil, errors.New("info: required object with title and version")
	}
	for _, k := range []string{"title", "version"} {
		if s, _ := yamltree.Get(info, k); s == nil || s.Kind != yaml.ScalarNode || s.Value == "" {
			return nil, fmt.Errorf("info.%s: required", k)
		}
	}
	acts, _ := yamltree.Get(root, "actions")
	if acts == nil || acts.Kind != yaml.SequenceNode || len(acts.Content) == 0 {
		return nil, errors.New("actions: required non-empty array")
	}
	var out []overlayAction
	for i, an := range acts.Content {
		an = yamltree.Deref(an)
		a := overlayAction{index: i, line: an.Line}
		if an.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("actions[%d] (line %d): not an object", i, an.Line)
		}
		t, _ := yamltree.Get(an, "target")
		if t == nil || t.Kind != yaml.ScalarNode || t.Value == "" {
			return nil, fmt.Errorf("actions[%d] (line %d): target: required JSONPath string", i, an.Line)
		}
		a.target = t.Value
		if a.path, err = jsonpath.NewPath(t.Value); err != nil {
			return nil, fmt.Errorf("actions[%d] (line %d): target %q: %s", i, t.Line, t.Value, jsonPathError(err))
		}
		if r, _ := yamltree.Get(an, "remove"); r != nil {
			if r.Kind != yaml.ScalarNode || r.ShortTag() != "!!bool" {
				return nil, fmt.Errorf("actions[%d] (line %d): remove: must be true or false", i, r.Line)
			}
			a.remove = r.Value == "true"
		}
		a.update, _ = yamltree.Get(an, "update")
		if !a.remove && a.update == nil {
			return nil, fmt.Errorf("actions[%d] (line %d): needs update or remove: true", i, an.Line)
		}
		out = append(out, a)
	}
	return out, nil
}

// apply runs the action on *root; it reports whether the target matched.
func (a overlayAction) apply(root **yaml.Node) bool {
	nodes := a.path.Query(*root)
	if len(nodes) == 0 {
		return false
	}
	parents := parentIndex(*root)
	for _, n := range nodes {
		m := struct{ parent, node *yaml.Node }{parents[yamltree.Deref(n)], yamltree.Deref(n)}
		switch {
		case a.remove:
			if m.parent == nil {
				*root = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
				continue
			}
			removeChild(m.parent, m.node)
		default:
			upd := cloneNode(a.update)
			if m.node.Kind == yaml.ScalarNode || m.node.Kind != upd.Kind && m.node.Kind != yaml.SequenceNode {
				if m.parent == nil {
					*root = upd
				} else {
					replaceChild(m.parent, m.node, upd)
				}
				continue
			}
			mergeNode(m.node, upd)
		}
	}
	return true
}

// mergeNode merges src into dst: objects recursively, arrays appended,
// anything else replaced.
func mergeNode(dst, src *yaml.Node) {
	switch {
	case dst.Kind == yaml.SequenceNode:
		if src.Kind == yaml.SequenceNode {
			dst.Content = append(dst.Content, src.Content...)
		} else {
			dst.Content = append(dst.Content, src)
		}
	case dst.Kind == yaml.MappingNode && src.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(src.Content); i += 2 {
			k, v := src.Content[i].Value, yamltree.Deref(src.Content[i+1])
			cur, _ := yamltree.Get(dst, k)
			if cur != nil && (cur.Kind == yaml.MappingNode && v.Kind == yaml.MappingNode || cur.Kind == yaml.SequenceNode && v.Kind == yaml.SequenceNode) {
				mergeNode(cur, v)
				continue
			}
			yamltree.Set(dst, k, v)
		}
	default:
		*dst = *src
	}
}

func cloneNode(n *yaml.Node) *yaml.Node {
	n = yamltree.Deref(n)
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = cloneNode(x)
	}
	return &c
}

func removeChild(parent, child *yaml.Node) {
	switch parent.Kind {
	case yaml.MappingNode:
		for i := 1; i < len(parent.Content); i += 2 {
			if yamltree.Deref(parent.Content[i]) == child {
				parent.Content = append(parent.Content[:i-1:i-1], parent.Content[i+1:]...)
				return
			}
		}
	case yaml.SequenceNode:
		seqDelete(parent, child)
	}
}

func replaceChild(parent, child, with *yaml.Node) {
	start, step := 0, 1
	if parent.Kind == yaml.MappingNode {
		start, step = 1, 2
	}
	for i := start; i < len(parent.Content); i += step {
		if yamltree.Deref(parent.Content[i]) == child {
			parent.Content[i] = with
			return
		}
	}
}

// jsonPathError is the first line of the JSONPath parser's error, which
// goes on to draw the target with a caret: "column 12: unexpected token".
func jsonPathError(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	msg = strings.TrimPrefix(msg, "Error at line 1, ")
	return strings.TrimSpace(msg)
}

// parentIndex maps every node below root to the mapping or sequence that
// holds it, for the actions that replace or remove what a target selects.
func parentIndex(root *yaml.Node) map[*yaml.Node]*yaml.Node {
	parents := map[*yaml.Node]*yaml.Node{}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		n = yamltree.Deref(n)
		for _, c := range n.Content {
			c = yamltree.Deref(c)
			if _, seen := parents[c]; !seen {
				parents[c] = n
				walk(c)
			}
		}
	}
	walk(root)
	return parents
}
