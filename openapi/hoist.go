package openapi

import (
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/restmcp/restmcp/internal/yamltree"
	"gopkg.in/yaml.v3"
)

// Hoisting shared components (lenient multi-file documents).
//
// kin-openapi resolves every occurrence of an external $ref on its own: it
// reads and parses the target file again each time. A multi-file document
// whose hundreds of operations each reference the same shared response
// files (unauthorized.yml, too_many_requests.yml, …) costs seconds that
// way. Once the repairer has read every file, hoist gives each distinct
// target of an operation's external response, parameter or request-body
// reference one component in the root document, which is that reference
// itself ({"$ref": "shared/unauthorized.yml"}, the loader resolves it
// once), and points every such reference at the component
// (#/components/responses/unauthorized). What a reference resolves to does
// not change. Schema references are left as they are: schema names ($defs,
// the notes on omitted structure) come from their references.

// hoistComponents turns hoisting on; tests turn it off to compare.
var hoistComponents = true

// hoistKinds are the components hoist moves, by the key that holds them.
var hoistKinds = map[string]string{"parameters": "parameters", "requestBody": "requestBodies", "responses": "responses"}

// componentNameStrip matches what a component name may not hold
// (OAS 3.x §4.8.7: ^[a-zA-Z0-9.\-_]+$).
var componentNameStrip = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

type hoister struct {
	r     *repairer
	kinds map[string]*yaml.Node      // components/<kind>, made when first needed
	homes map[*yaml.Node]string      // target node → its reference in the root
	names map[string]map[string]bool // names taken, by kind
}

// hoist moves the shared components of the root document's operations
// (see above). It runs after every repair and operation inline.
func (r *repairer) hoist() {
	root := r.root
	doc := yamltree.Deref(root.root)
	if !hoistComponents || root.abs == "" || doc == nil || doc.Kind != yaml.MappingNode {
		return
	}
	h := &hoister{r: r, kinds: map[string]*yaml.Node{}, homes: map[*yaml.Node]string{}, names: map[string]map[string]bool{}}
	paths, _ := yamltree.Get(doc, "paths")
	if paths == nil || paths.Kind != yaml.MappingNode {
		return
	}
	for i := 1; i < len(paths.Content); i += 2 {
		item := yamltree.Deref(paths.Content[i])
		if item == nil || item.Kind != yaml.MappingNode {
			continue
		}
		h.each(item, "parameters")
		for j := 0; j+1 < len(item.Content); j += 2 {
			if operationOf([]string{"paths", "", item.Content[j].Value}) == "" {
				continue
			}
			op := yamltree.Deref(item.Content[j+1])
			for _, k := range []string{"parameters", "requestBody", "responses"} {
				h.each(op, k)
			}
		}
	}
}

// each hoists what key of mapping n holds: a list of parameters, a
// request body, or a map of responses.
func (h *hoister) each(n *yaml.Node, key string) {
	v, _ := yamltree.Get(n, key)
	if v == nil {
		return
	}
	kind := hoistKinds[key]
	switch {
	case key == "requestBody":
		h.one(v, kind)
	case v.Kind == yaml.SequenceNode && key == "parameters":
		for _, c := range v.Content {
			h.one(c, kind)
		}
	case v.Kind == yaml.MappingNode && key == "responses":
		for i := 1; i < len(v.Content); i += 2 {
			h.one(v.Content[i], kind)
		}
	}
}

// one points n, when it is a reference to another file, at the target's
// component in the root document's components/<kind>, adding it first.
func (h *hoister) one(n *yaml.Node, kind string) {
	n = yamltree.Deref(n)
	ref, _ := yamltree.Get(n, "$ref")
	if ref == nil || ref.Kind != yaml.ScalarNode {
		return
	}
	filePart, frag, _ := strings.Cut(ref.Value, "#")
	if filePart == "" || isHTTPURL(filePart) {
		return // within the root document, or left to the loader
	}
	res := h.r.resolve(h.r.root, ref.Value, 0)
	if res.err != "" || res.node == nil || res.file == nil || res.file.abs == "" {
		return
	}
	target := yamltree.Deref(res.node)
	if home, ok := h.homes[target]; ok {
		ref.Value = home
		return
	}
	if target.Kind != yaml.MappingNode {
		return
	}
	name := h.name(kind, filePart, frag)
	home := "#/components/" + kind + "/" + name
	h.homes[target] = home
	// The component is the reference itself: the loader reads the target
	// once, for the component, from its own file.
	yamltree.Set(h.components(kind), name, &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map",
		Content: []*yaml.Node{yamltree.Str("$ref"), yamltree.Str(ref.Value)}})
	ref.Value = home
}

// name is a component name for a target, from its file name or the last
// token of its fragment, not yet taken in components/<kind>.
func (h *hoister) name(kind, filePart, frag string) string {
	taken := h.names[kind]
	if taken == nil {
		taken = map[string]bool{}
		comps := h.components(kind)
		for i := 0; i < len(comps.Content); i += 2 {
			taken[comps.Content[i].Value] = true
		}
		h.names[kind] = taken
	}
	base := strings.TrimSuffix(path.Base(filePart), path.Ext(filePart))
	if toks := yamltree.PointerTokens(frag); len(toks) > 0 && toks[len(toks)-1] != "" {
		base = toks[len(toks)-1]
	}
	base = componentNameStrip.ReplaceAllString(base, "_")
	if base == "" {
		base = kind
	}
	name := base
	for i := 2; taken[name]; i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	taken[name] = true
	return name
}

// components returns the root document's components/<kind> mapping,
// adding it (and components) when absent.
func (h *hoister) components(kind string) *yaml.Node {
	if m := h.kinds[kind]; m != nil {
		return m
	}
	doc := yamltree.Deref(h.r.root.root)
	comps, _ := yamltree.Get(doc, "components")
	if comps == nil || comps.Kind != yaml.MappingNode {
		comps = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		yamltree.Set(doc, "components", comps)
	}
	m, _ := yamltree.Get(comps, kind)
	if m == nil || m.Kind != yaml.MappingNode {
		m = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		yamltree.Set(comps, kind, m)
	}
	h.kinds[kind] = m
	return m
}
