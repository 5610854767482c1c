// Package yamltree works on YAML and JSON documents as yaml.v3 node
// trees, which keep key order and line numbers: parsing, members, JSON
// pointers, and encoding as JSON in the same order.
package yamltree

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Parse parses one JSON or YAML document into its root node, refusing one
// whose aliases expand past MaxAliasNodes ([CheckAliases]). JSON surrogate
// escapes are read as the characters they stand for (rewriteSurrogates).
func Parse(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(rewriteSurrogates(data), &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, errors.New("empty document")
	}
	if err := CheckAliases(doc.Content[0]); err != nil {
		return nil, err
	}
	return doc.Content[0], nil
}

// Deref follows YAML aliases.
func Deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// Get returns the value of key in mapping m and its key index in
// m.Content, or (nil, -1).
func Get(m *yaml.Node, key string) (*yaml.Node, int) {
	m = Deref(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return Deref(m.Content[i+1]), i
		}
	}
	return nil, -1
}

// Delete removes key from mapping m.
func Delete(m *yaml.Node, key string) bool {
	if _, i := Get(m, key); i >= 0 {
		m.Content = append(m.Content[:i:i], m.Content[i+2:]...)
		return true
	}
	return false
}

// Set sets key in mapping m, appending it when absent.
func Set(m *yaml.Node, key string, v *yaml.Node) {
	if _, i := Get(m, key); i >= 0 {
		m.Content[i+1] = v
		return
	}
	m.Content = append(m.Content, Str(key), v)
}

// Str returns a string scalar node.
func Str(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// KindName names n's kind for messages: "an object", "an array", "null",
// "a scalar".
func KindName(n *yaml.Node) string {
	switch Deref(n).Kind {
	case yaml.MappingNode:
		return "an object"
	case yaml.SequenceNode:
		return "an array"
	case yaml.ScalarNode:
		if n.ShortTag() == "!!null" {
			return "null"
		}
		return "a scalar"
	}
	return "a node"
}

// Lookup finds the node at an RFC 6901 pointer ("" or "/a/b").
func Lookup(root *yaml.Node, ptr string) *yaml.Node {
	n := Deref(root)
	for _, t := range PointerTokens(ptr) {
		if n = Child(n, t); n == nil {
			return nil
		}
	}
	return n
}

// PointerTokens splits an RFC 6901 pointer ("" or "/a/b") into its
// unescaped reference tokens (~1 is "/", ~0 is "~").
func PointerTokens(ptr string) []string {
	if ptr == "" {
		return nil
	}
	ts := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, t := range ts {
		ts[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
	}
	return ts
}

// Child returns the member of mapping n named t, or the element of sequence
// n at index t, or nil when there is none.
func Child(n *yaml.Node, t string) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		v, _ := Get(n, t)
		return v
	case yaml.SequenceNode:
		i, err := strconv.Atoi(t)
		if err != nil || i < 0 || i >= len(n.Content) {
			return nil
		}
		return Deref(n.Content[i])
	default:
		return nil
	}
}

// EncodeJSON serializes a node tree as JSON, keeping key order (aliases
// followed; scalars by their YAML tags).
func EncodeJSON(n *yaml.Node) []byte {
	var buf bytes.Buffer
	writeNodeJSON(&buf, n)
	return buf.Bytes()
}

func writeNodeJSON(buf *bytes.Buffer, n *yaml.Node) {
	n = Deref(n)
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			writeNodeJSON(buf, n.Content[0])
			return
		}
		buf.WriteString("null")
	case yaml.MappingNode:
		buf.WriteByte('{')
		first := true
		var pairs func(m *yaml.Node)
		pairs = func(m *yaml.Node) {
			for i := 0; i+1 < len(m.Content); i += 2 {
				k := Deref(m.Content[i])
				if k.ShortTag() == "!!merge" {
					if v := Deref(m.Content[i+1]); v.Kind == yaml.MappingNode {
						pairs(v)
					}
					continue
				}
				if !first {
					buf.WriteByte(',')
				}
				first = false
				writeNodeString(buf, k.Value)
				buf.WriteByte(':')
				writeNodeJSON(buf, m.Content[i+1])
			}
		}
		pairs(n)
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeNodeJSON(buf, c)
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			buf.WriteString("null")
		case "!!bool":
			var b bool
			if n.Decode(&b) == nil {
				buf.WriteString(strconv.FormatBool(b))
				return
			}
			writeNodeString(buf, n.Value)
		case "!!int", "!!float":
			if isJSONNumber(n.Value) {
				buf.WriteString(n.Value)
				return
			}
			var v any
			if n.Decode(&v) == nil {
				if b, err := json.Marshal(v); err == nil {
					buf.Write(b)
					return
				}
			}
			writeNodeString(buf, n.Value)
		default:
			writeNodeString(buf, n.Value)
		}
	default:
		buf.WriteString("null")
	}
}

func writeNodeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s)
	buf.Write(b)
}

func isJSONNumber(s string) bool {
	if s == "" || strings.ContainsAny(s, "_xXoObB") {
		return false
	}
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil
}
