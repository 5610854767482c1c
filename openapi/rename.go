package openapi

import (
	"bytes"

	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// renameTree maps the object keys of one argument's value back to the
// names the API uses, wherever the input schema renamed them (P2 applies
// at every level, C12; the request plan reverses it, P3). It follows the
// schema: properties by key, array items, additionalProperties, and the
// union of anyOf branches. A tree may be cyclic ($defs mode recursion).
type renameTree struct {
	wire  map[string]string      // emitted key → wire name
	props map[string]*renameTree // emitted key → the property's tree (nil: nothing renamed below)
	items *renameTree
	addl  *renameTree // additionalProperties, for keys not in props
}

// renameTreeOf returns the tree of the schema o, or nil when no key in it
// was renamed. defs holds the schema's "$defs" entries ($defs mode).
func renameTreeOf(o *obj, defs *obj) *renameTree {
	b := renameBuilder{defs: defs, memo: map[*obj]*renameTree{}}
	t := b.tree(o)
	if !b.renamed {
		return nil
	}
	return t
}

type renameBuilder struct {
	defs    *obj
	memo    map[*obj]*renameTree
	renamed bool // some properties object has a wire name
}

// tree returns o's tree, nil when nothing below o is renamed. A schema on
// the current path (recursion through $defs) gets its node before its
// children are walked, so cycles close on themselves.
func (b *renameBuilder) tree(o *obj) *renameTree {
	if o == nil {
		return nil
	}
	if t, ok := b.memo[o]; ok {
		return t
	}
	if ref := o.str("$ref"); ref != "" && b.defs != nil {
		const prefix = "#/$defs/"
		if len(ref) > len(prefix) && ref[:len(prefix)] == prefix {
			if d, ok := b.defs.get(ref[len(prefix):]); ok {
				if do, ok := d.(*obj); ok {
					t := b.tree(do)
					b.memo[o] = t
					return t
				}
			}
		}
		return nil
	}
	t := &renameTree{}
	b.memo[o] = t
	b.merge(t, o)
	if t.wire == nil && !anyTree(t.props) && t.items == nil && t.addl == nil {
		b.memo[o] = nil
		return nil
	}
	return t
}

// merge adds o's renames to t: its own keys, and those of its anyOf
// branches (a value is renamed by every branch that knows its keys).
func (b *renameBuilder) merge(t *renameTree, o *obj) {
	var addl *obj
	if ch, ok := o.get("additionalProperties"); ok {
		addl, _ = ch.(*obj)
	}
	if p := o.props(); p != nil {
		for k, w := range p.wire {
			if t.wire == nil {
				t.wire = map[string]string{}
			}
			t.wire[k] = w
			b.renamed = true
		}
		for i, k := range p.k {
			var ct *renameTree
			if ch, ok := p.v[i].(*obj); ok {
				ct = b.tree(ch)
			}
			// With additionalProperties, declared keys are listed even
			// without renames, so that they do not take its tree.
			if ct != nil || addl != nil {
				if t.props == nil {
					t.props = map[string]*renameTree{}
				}
				if t.props[k] == nil {
					t.props[k] = ct
				}
			}
		}
	}
	if ch, ok := o.get("items"); ok {
		if co, ok := ch.(*obj); ok && t.items == nil {
			t.items = b.tree(co)
		}
	}
	if addl != nil && t.addl == nil {
		t.addl = b.tree(addl)
	}
	if l, ok := o.get("anyOf"); ok {
		if branches, ok := l.([]any); ok {
			for _, br := range branches {
				if bo, ok := br.(*obj); ok {
					if bo.str("$ref") != "" {
						if bt := b.tree(bo); bt != nil {
							mergeTrees(t, bt)
						}
						continue
					}
					b.merge(t, bo)
				}
			}
		}
	}
}

func anyTree(m map[string]*renameTree) bool {
	for _, t := range m {
		if t != nil {
			return true
		}
	}
	return false
}

// mergeTrees adds what u maps and t does not to t.
func mergeTrees(t, u *renameTree) {
	for k, w := range u.wire {
		if t.wire == nil {
			t.wire = map[string]string{}
		}
		if _, ok := t.wire[k]; !ok {
			t.wire[k] = w
		}
	}
	for k, c := range u.props {
		if t.props == nil {
			t.props = map[string]*renameTree{}
		}
		if t.props[k] == nil {
			t.props[k] = c
		}
	}
	if t.items == nil {
		t.items = u.items
	}
	if t.addl == nil {
		t.addl = u.addl
	}
}

// apply returns the JSON value raw with every object key the tree renamed
// replaced by its wire name, at any depth. Everything else, numbers
// included (Q4), is copied byte for byte; raw must be valid JSON.
func (t *renameTree) apply(raw []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(raw) + 16)
	t.write(&out, bytes.TrimSpace(raw))
	return out.Bytes()
}

func (t *renameTree) write(out *bytes.Buffer, raw []byte) {
	if t == nil || len(raw) == 0 || raw[0] != '{' && raw[0] != '[' {
		out.Write(raw)
		return
	}
	if raw[0] == '[' {
		elems, ok := jsonvalue.Elements(raw)
		if !ok {
			out.Write(raw)
			return
		}
		out.WriteByte('[')
		for i, e := range elems {
			if i > 0 {
				out.WriteByte(',')
			}
			t.items.write(out, e)
		}
		out.WriteByte(']')
		return
	}
	members, ok := jsonvalue.Members(raw)
	if !ok {
		out.Write(raw)
		return
	}
	out.WriteByte('{')
	for i, m := range members {
		sub, ok := t.props[m.Key]
		if !ok {
			sub = t.addl
		}
		k := m.Key
		if w, ok := t.wire[k]; ok {
			k = w
		}
		jsonvalue.WriteKey(out, i, k)
		sub.write(out, m.Raw)
	}
	out.WriteByte('}')
}
