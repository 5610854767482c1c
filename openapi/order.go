package openapi

import (
	"encoding/json"
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
		s := jsonScanner{b: data, o: o}
		s.value(false)
		return
	}
	o.scanYAML(data)
}

// jsonScanner is a minimal recursive-descent JSON walker that records the
// keys of objects that are the value of a "properties" or "mapping" key.
// Malformed input just stops the scan; the loader reports the error.
type jsonScanner struct {
	b     []byte
	i     int
	o     *keyOrder
	depth int
}

func (s *jsonScanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// str reads a JSON string at s.i and returns its decoded value.
func (s *jsonScanner) str() (string, bool) {
	start := s.i
	s.i++
	esc := false
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '\\':
			esc = true
			s.i += 2
			continue
		case c == '"':
			s.i++
			raw := s.b[start:s.i]
			if !esc {
				return string(raw[1 : len(raw)-1]), true
			}
			var v string
			if json.Unmarshal(raw, &v) != nil {
				return "", false
			}
			return v, true
		}
		s.i++
	}
	return "", false
}

func (s *jsonScanner) value(collect bool) bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	s.depth++
	defer func() { s.depth-- }()
	if s.depth > 10000 {
		return false
	}
	switch s.b[s.i] {
	case '{':
		s.i++
		var keys []string
		for {
			s.ws()
			if s.i >= len(s.b) {
				return false
			}
			if s.b[s.i] == '}' {
				s.i++
				break
			}
			if s.b[s.i] == ',' {
				s.i++
				continue
			}
			if s.b[s.i] != '"' {
				return false
			}
			k, ok := s.str()
			if !ok {
				return false
			}
			if collect {
				keys = append(keys, k)
			}
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] != ':' {
				return false
			}
			s.i++
			if !s.value(k == "properties" || k == "mapping") {
				return false
			}
		}
		if collect {
			s.o.record(keys)
		}
		return true
	case '[':
		s.i++
		for {
			s.ws()
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case ']':
				s.i++
				return true
			case ',':
				s.i++
				continue
			}
			if !s.value(false) {
				return false
			}
		}
	case '"':
		_, ok := s.str()
		return ok
	default:
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return true
			}
			s.i++
		}
		return true
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
