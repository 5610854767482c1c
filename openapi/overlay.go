package openapi

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// OpenAPI Overlay 1.0 (https://spec.openapis.org/overlay/v1.0.0.html):
// an overlay lists actions, each a JSONPath target plus an update to merge
// into every node the target selects or remove: true to delete them. They
// are applied in order to the raw document tree before it is loaded.
//
// The JSONPath subset is what published overlays use (RFC 9535 syntax):
// $ · .name · ['name'] / ["name"] · .* / [*] · [n] (negative from the end) ·
// ..name / ..* / ..[…] (descendants) · filters [?(@.a.b == 'v')] /
// [?@.a != 1] / [?@.a] (existence) with string, number, true, false and
// null literals. No Go JSONPath library was taken: the ones on the module
// proxy work on map[string]any (losing key order and line numbers) and
// none implements the node-location semantics remove needs.

// overlayAction is one validated action.
type overlayAction struct {
	index  int
	line   int
	target string
	path   []pathSegment
	update *yaml.Node
	remove bool
}

// applyOverlays applies opts.Overlays in order to the document and returns
// it as JSON, with a warning for each action that matched nothing.
func applyOverlays(ctx context.Context, data []byte, src *source, opts LoadOptions) ([]byte, []Problem, error) {
	tree, err := parseTree(data)
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
	return encodeJSON(tree), problems, nil
}

// parseOverlay validates an overlay document and returns its actions.
func parseOverlay(data []byte) ([]overlayAction, error) {
	root, err := parseTree(data)
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, errors.New("not an overlay: the document is not an object")
	}
	v, _ := mapGet(root, "overlay")
	if v == nil || v.Kind != yaml.ScalarNode || !strings.HasPrefix(v.Value, "1.") {
		got := "missing"
		if v != nil {
			got = strconv.Quote(v.Value)
		}
		return nil, fmt.Errorf("overlay: version %s; want 1.x (e.g. 1.0.0)", got)
	}
	info, _ := mapGet(root, "info")
	if info == nil || info.Kind != yaml.MappingNode {
		return nil, errors.New("info: required object with title and version")
	}
	for _, k := range []string{"title", "version"} {
		if s, _ := mapGet(info, k); s == nil || s.Kind != yaml.ScalarNode || s.Value == "" {
			return nil, fmt.Errorf("info.%s: required", k)
		}
	}
	acts, _ := mapGet(root, "actions")
	if acts == nil || acts.Kind != yaml.SequenceNode || len(acts.Content) == 0 {
		return nil, errors.New("actions: required non-empty array")
	}
	var out []overlayAction
	for i, an := range acts.Content {
		an = deref(an)
		a := overlayAction{index: i, line: an.Line}
		if an.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("actions[%d] (line %d): not an object", i, an.Line)
		}
		t, _ := mapGet(an, "target")
		if t == nil || t.Kind != yaml.ScalarNode || t.Value == "" {
			return nil, fmt.Errorf("actions[%d] (line %d): target: required JSONPath string", i, an.Line)
		}
		a.target = t.Value
		if a.path, err = parseJSONPath(t.Value); err != nil {
			return nil, fmt.Errorf("actions[%d] (line %d): target %q: %w", i, t.Line, t.Value, err)
		}
		if r, _ := mapGet(an, "remove"); r != nil {
			if r.Kind != yaml.ScalarNode || r.ShortTag() != "!!bool" {
				return nil, fmt.Errorf("actions[%d] (line %d): remove: must be true or false", i, r.Line)
			}
			a.remove = r.Value == "true"
		}
		a.update, _ = mapGet(an, "update")
		if !a.remove && a.update == nil {
			return nil, fmt.Errorf("actions[%d] (line %d): needs update or remove: true", i, an.Line)
		}
		out = append(out, a)
	}
	return out, nil
}

// apply runs the action on *root; it reports whether the target matched.
func (a overlayAction) apply(root **yaml.Node) bool {
	ms := evalPath(*root, a.path)
	if len(ms) == 0 {
		return false
	}
	for _, m := range ms {
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
			k, v := src.Content[i].Value, deref(src.Content[i+1])
			cur, _ := mapGet(dst, k)
			if cur != nil && (cur.Kind == yaml.MappingNode && v.Kind == yaml.MappingNode || cur.Kind == yaml.SequenceNode && v.Kind == yaml.SequenceNode) {
				mergeNode(cur, v)
				continue
			}
			mapSet(dst, k, v)
		}
	default:
		*dst = *src
	}
}

func cloneNode(n *yaml.Node) *yaml.Node {
	n = deref(n)
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
			if deref(parent.Content[i]) == child {
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
		if deref(parent.Content[i]) == child {
			parent.Content[i] = with
			return
		}
	}
}

// JSONPath subset.

type segKind int

const (
	segName segKind = iota
	segWild
	segIndex
	segFilter
)

type pathSegment struct {
	kind       segKind
	descendant bool
	name       string
	index      int
	filter     *filterExpr
}

type filterExpr struct {
	path  []string // @.a.b[0] → ["a","b","0"]
	index []bool   // path[i] is an array index
	op    string   // "==", "!=", "" (existence)
	lit   *yaml.Node
}

func parseJSONPath(s string) ([]pathSegment, error) {
	if !strings.HasPrefix(s, "$") {
		return nil, errors.New("must start with $")
	}
	var segs []pathSegment
	i := 1
	for i < len(s) {
		desc := false
		switch {
		case strings.HasPrefix(s[i:], ".."):
			desc = true
			i += 2
			if i < len(s) && s[i] == '[' {
				break
			}
			fallthrough
		case s[i] == '.':
			if !desc {
				i++
			}
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			name := s[i:j]
			if name == "" {
				return nil, fmt.Errorf("empty name at offset %d", i)
			}
			seg := pathSegment{kind: segName, name: name, descendant: desc}
			if name == "*" {
				seg.kind = segWild
			}
			segs = append(segs, seg)
			i = j
			continue
		case s[i] != '[':
			return nil, fmt.Errorf("unexpected %q at offset %d", s[i], i)
		}
		// bracket
		end, err := bracketEnd(s, i)
		if err != nil {
			return nil, err
		}
		seg, err := parseBracket(strings.TrimSpace(s[i+1 : end]))
		if err != nil {
			return nil, fmt.Errorf("%s at offset %d", err, i)
		}
		seg.descendant = desc
		segs = append(segs, seg)
		i = end + 1
	}
	return segs, nil
}

// bracketEnd finds the ']' closing the '[' at i, skipping quoted strings.
func bracketEnd(s string, i int) (int, error) {
	var quote byte
	depth := 0
	for j := i; j < len(s); j++ {
		c := s[j]
		switch {
		case quote != 0:
			if c == '\\' {
				j++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '[':
			depth++
		case c == ']':
			depth--
			if depth == 0 {
				return j, nil
			}
		}
	}
	return 0, fmt.Errorf("unclosed [ at offset %d", i)
}

func parseBracket(in string) (pathSegment, error) {
	switch {
	case in == "*":
		return pathSegment{kind: segWild}, nil
	case strings.HasPrefix(in, "?"):
		f, err := parseFilter(strings.TrimSpace(in[1:]))
		return pathSegment{kind: segFilter, filter: f}, err
	case strings.HasPrefix(in, "'") || strings.HasPrefix(in, `"`):
		name, rest, err := unquote(in)
		if err != nil || rest != "" {
			return pathSegment{}, fmt.Errorf("bad name selector [%s]", in)
		}
		return pathSegment{kind: segName, name: name}, nil
	default:
		n, err := strconv.Atoi(in)
		if err != nil {
			return pathSegment{}, fmt.Errorf("unsupported selector [%s]", in)
		}
		return pathSegment{kind: segIndex, index: n}, nil
	}
}

func unquote(s string) (string, string, error) {
	q := s[0]
	var sb strings.Builder
	for j := 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\\' && j+1 < len(s):
			j++
			sb.WriteByte(s[j])
		case c == q:
			return sb.String(), strings.TrimSpace(s[j+1:]), nil
		default:
			sb.WriteByte(c)
		}
	}
	return "", "", errors.New("unterminated string")
}

func parseFilter(in string) (*filterExpr, error) {
	if strings.HasPrefix(in, "(") && strings.HasSuffix(in, ")") {
		in = strings.TrimSpace(in[1 : len(in)-1])
	}
	if strings.Contains(in, "&&") || strings.Contains(in, "||") {
		return nil, errors.New("filters with && or || are not supported")
	}
	if !strings.HasPrefix(in, "@") {
		return nil, fmt.Errorf("unsupported filter %q (want @.key == value)", in)
	}
	f := &filterExpr{}
	lhs, rhs := in, ""
	for _, op := range []string{"==", "!="} {
		if l, r, ok := strings.Cut(in, op); ok {
			lhs, rhs, f.op = strings.TrimSpace(l), strings.TrimSpace(r), op
			break
		}
	}
	rest := lhs[1:]
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "."):
			j := 1
			for j < len(rest) && rest[j] != '.' && rest[j] != '[' {
				j++
			}
			f.path = append(f.path, rest[1:j])
			f.index = append(f.index, false)
			rest = rest[j:]
		case strings.HasPrefix(rest, "[") && len(rest) > 1 && rest[1] != '\'' && rest[1] != '"':
			j := strings.IndexByte(rest, ']')
			if j < 0 {
				return nil, fmt.Errorf("bad filter path %q", lhs)
			}
			if _, err := strconv.Atoi(rest[1:j]); err != nil {
				return nil, fmt.Errorf("bad filter path %q", lhs)
			}
			f.path = append(f.path, rest[1:j])
			f.index = append(f.index, true)
			rest = rest[j+1:]
			continue
		case strings.HasPrefix(rest, "['") || strings.HasPrefix(rest, `["`):
			name, r, err := unquote(rest[1:])
			if err != nil || !strings.HasPrefix(r, "]") {
				return nil, fmt.Errorf("bad filter path %q", lhs)
			}
			f.path = append(f.path, name)
			f.index = append(f.index, false)
			rest = r[1:]
		default:
			return nil, fmt.Errorf("bad filter path %q", lhs)
		}
	}
	if f.op == "" {
		return f, nil
	}
	if strings.HasPrefix(rhs, "'") || strings.HasPrefix(rhs, `"`) {
		s, r, err := unquote(rhs)
		if err != nil || r != "" {
			return nil, fmt.Errorf("bad literal %s", rhs)
		}
		f.lit = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
		return f, nil
	}
	var lit yaml.Node
	if err := yaml.Unmarshal([]byte(rhs), &lit); err != nil || len(lit.Content) != 1 || lit.Content[0].Kind != yaml.ScalarNode || lit.Content[0].ShortTag() == "!!str" {
		return nil, fmt.Errorf("bad literal %s (want a quoted string, number, true, false or null)", rhs)
	}
	f.lit = lit.Content[0]
	return f, nil
}

func (f *filterExpr) match(n *yaml.Node) bool {
	v := deref(n)
	for i, k := range f.path {
		if f.index[i] {
			j, _ := strconv.Atoi(k)
			if v.Kind == yaml.SequenceNode && j < 0 {
				j += len(v.Content)
			}
			if v.Kind != yaml.SequenceNode || j < 0 || j >= len(v.Content) {
				return f.op == "!="
			}
			v = deref(v.Content[j])
			continue
		}
		v, _ = mapGet(v, k)
		if v == nil {
			return f.op == "!="
		}
	}
	if f.op == "" {
		return true
	}
	eq := v.Kind == yaml.ScalarNode && scalarEqual(v, f.lit)
	return eq == (f.op == "==")
}

func scalarEqual(a, b *yaml.Node) bool {
	at, bt := a.ShortTag(), b.ShortTag()
	if (at == "!!int" || at == "!!float") && (bt == "!!int" || bt == "!!float") {
		x, err1 := strconv.ParseFloat(a.Value, 64)
		y, err2 := strconv.ParseFloat(b.Value, 64)
		return err1 == nil && err2 == nil && x == y
	}
	if at == "!!bool" && bt == "!!bool" {
		var x, y bool
		return a.Decode(&x) == nil && b.Decode(&y) == nil && x == y
	}
	return at == bt && a.Value == b.Value
}

// pathMatch is one node selected by a path, with its parent for removal.
type pathMatch struct {
	parent, node *yaml.Node
}

func evalPath(root *yaml.Node, segs []pathSegment) []pathMatch {
	cur := []pathMatch{{node: deref(root)}}
	for _, s := range segs {
		var next []pathMatch
		seen := map[*yaml.Node]bool{}
		for _, m := range cur {
			bases := []*yaml.Node{m.node}
			if s.descendant {
				bases = descendants(m.node, nil)
			}
			for _, b := range bases {
				for _, c := range s.children(b) {
					if !seen[c.node] {
						seen[c.node] = true
						next = append(next, c)
					}
				}
			}
		}
		cur = next
	}
	return cur
}

func descendants(n *yaml.Node, out []*yaml.Node) []*yaml.Node {
	out = append(out, n)
	switch n.Kind {
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			out = descendants(deref(n.Content[i]), out)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			out = descendants(deref(c), out)
		}
	}
	return out
}

func (s pathSegment) children(n *yaml.Node) []pathMatch {
	var out []pathMatch
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			c := deref(n.Content[i+1])
			switch s.kind {
			case segName:
				if n.Content[i].Value == s.name {
					out = append(out, pathMatch{n, c})
				}
			case segWild:
				out = append(out, pathMatch{n, c})
			case segFilter:
				if s.filter.match(c) {
					out = append(out, pathMatch{n, c})
				}
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			c = deref(c)
			switch s.kind {
			case segWild:
				out = append(out, pathMatch{n, c})
			case segIndex:
				if i == s.index || s.index < 0 && i == len(n.Content)+s.index {
					out = append(out, pathMatch{n, c})
				}
			case segFilter:
				if s.filter.match(c) {
					out = append(out, pathMatch{n, c})
				}
			}
		}
	}
	return out
}
