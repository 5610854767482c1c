package openapi

import (
	"slices"
	"strings"
	"sync"

	"github.com/restmcp/restmcp/internal/jsonvalue"
	"github.com/restmcp/restmcp/internal/yamltree"
	"gopkg.in/yaml.v3"
)

// keyOrder remembers the order in which keys of "properties" and
// "mapping" objects are declared in the source documents, so that emitted
// schemas list properties in declaration order. kin-openapi keeps these
// objects as Go maps, which lose the order. An object is identified by its
// key set (sorted keys joined by NUL): where two objects have the same keys
// in different orders, the first one scanned wins. Objects not found fall
// back to byte order, so the output is deterministic either way.
type keyOrder struct {
	mu sync.Mutex
	m  map[string][]string
}

func newKeyOrder() *keyOrder { return &keyOrder{m: map[string][]string{}} }

func signature(keys []string) string {
	s := slices.Clone(keys)
	slices.Sort(s)
	return strings.Join(s, "\x00")
}

func (o *keyOrder) record(keys []string) {
	if len(keys) < 2 {
		return
	}
	sig := signature(keys)
	o.mu.Lock()
	if _, ok := o.m[sig]; !ok {
		o.m[sig] = keys
	}
	o.mu.Unlock()
}

// sorted returns keys in declaration order when known, byte order otherwise.
func (o *keyOrder) sorted(keys []string) []string {
	if len(keys) < 2 {
		return keys
	}
	o.mu.Lock()
	decl, ok := o.m[signature(keys)]
	o.mu.Unlock()
	if ok && len(decl) == len(keys) {
		return decl
	}
	s := slices.Clone(keys)
	slices.Sort(s)
	return s
}

// scan records key orders from one JSON or YAML document.
func (o *keyOrder) scan(data []byte) {
	if jsonvalue.LooksLikeObject(data) {
		o.walkJSON(&jsonvalue.Parser{B: data}, false, 0)
		return
	}
	o.scanYAML(data)
}

// maxScanDepth bounds walk's recursion (the loader refuses deeper
// documents anyway).
const maxScanDepth = 10000

// walkJSON reads the JSON value at p and records the keys of every object that
// is the value of a "properties" or "mapping" key (collect: this value is
// one). Malformed input just stops the walk, false; the loader reports the
// error.
func (o *keyOrder) walkJSON(p *jsonvalue.Parser, collect bool, depth int) bool {
	p.Space()
	if p.I >= len(p.B) || depth > maxScanDepth {
		return false
	}
	switch p.B[p.I] {
	case '{':
		var keys []string
		err := p.Object(func(k string) error {
			if collect {
				keys = append(keys, k)
			}
			if !o.walkJSON(p, k == "properties" || k == "mapping", depth+1) {
				return jsonvalue.ErrNotJSON
			}
			return nil
		})
		if err != nil {
			return false
		}
		if collect {
			o.record(keys)
		}
		return true
	case '[':
		return p.Array(func() error {
			if !o.walkJSON(p, false, depth+1) {
				return jsonvalue.ErrNotJSON
			}
			return nil
		}) == nil
	default:
		return p.Skip()
	}
}

// scanYAML records key orders from a YAML document's node tree: the keys
// of every mapping that is the value of a "properties" or "mapping" key, in
// block or flow style. A document that does not parse records nothing (the
// loader reports it).
func (o *keyOrder) scanYAML(data []byte) {
	root, err := yamltree.Parse(data)
	if err != nil {
		return
	}
	o.walk(root)
}

// walk records the orders below n. Aliases are not followed: their
// targets are walked where they are anchored.
func (o *keyOrder) walk(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if (k.Value == "properties" || k.Value == "mapping") && v.Kind == yaml.MappingNode {
				keys := make([]string, 0, len(v.Content)/2)
				for j := 0; j+1 < len(v.Content); j += 2 {
					keys = append(keys, v.Content[j].Value)
				}
				o.record(keys)
			}
			o.walk(v)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			o.walk(c)
		}
	}
}
