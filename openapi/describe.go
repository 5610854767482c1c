package openapi

// Output schemas describe; they do not constrain (docs/conventions.md R8).
// An API's responses drift from its document all the time (a field the
// document calls an object comes back null, a required field is missing, a
// string breaks its pattern), and MCP SDK clients validate structuredContent
// against the outputSchema and reject the whole call when it does not fit.
// So a response schema keeps what tells a model the shape of the data
// (types, properties, items, descriptions, composition) and drops what only
// constrains it, and every value below the root may be null.

// constraintKeywords are dropped from output schemas: they constrain
// values rather than describe them. "format" goes too: clients validate
// some formats strictly, and warn about every one they do not know.
var constraintKeywords = map[string]bool{
	"required": true, "enum": true, "const": true, "pattern": true, "format": true,
	"minLength": true, "maxLength": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minItems": true, "maxItems": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true,
}

// describer applies R8 to converted response schemas, memoized by node so
// that a subtree shared by many schemas is transformed once. It never
// changes its input: converted schemas are shared through the conversion
// memo.
type describer struct {
	done map[describeKey]*obj
}

type describeKey struct {
	o    *obj
	root bool
}

// describe returns the R8 form of o: constraint keywords and boolean
// additionalProperties dropped at every level, and (unless root) the schema
// made to accept null. The result keeps o's S2 cut marks.
func (d *describer) describe(o *obj, root bool) *obj {
	if o == nil {
		return nil
	}
	key := describeKey{o, root}
	if r, ok := d.done[key]; ok {
		return r
	}
	out := &obj{cut: o.cut, cutName: o.cutName, outCut: o.cut}
	for i, k := range o.k {
		v := o.v[i]
		switch {
		case constraintKeywords[k]:
			continue
		case k == "additionalProperties":
			ch, ok := v.(*obj)
			if !ok {
				continue // true or false: neither describes anything
			}
			v = d.describe(ch, false)
		case k == "properties":
			if p, ok := v.(*obj); ok {
				np := &obj{k: make([]string, 0, len(p.k)), v: make([]any, 0, len(p.v))}
				for j, pk := range p.k {
					ch, _ := p.v[j].(*obj)
					np.k = append(np.k, pk)
					np.v = append(np.v, d.describe(ch, false))
				}
				v = np
			}
		case k == "items":
			if ch, ok := v.(*obj); ok {
				v = d.describe(ch, false)
			}
		case k == "anyOf":
			if l, ok := v.([]any); ok {
				nl := make([]any, len(l))
				for j, e := range l {
					if ch, ok := e.(*obj); ok {
						nl[j] = d.describe(ch, true)
					} else {
						nl[j] = e
					}
				}
				v = nl
			}
		case k == "$defs":
			if defs, ok := v.(*obj); ok {
				nd := &obj{k: make([]string, 0, len(defs.k)), v: make([]any, 0, len(defs.v))}
				for j, dk := range defs.k {
					ch, _ := defs.v[j].(*obj)
					nd.k = append(nd.k, dk)
					nd.v = append(nd.v, d.describe(ch, true))
				}
				v = nd
			}
		}
		out.k = append(out.k, k)
		out.v = append(out.v, v)
	}
	if !root {
		out = nullable(out)
	}
	d.done[key] = out
	return out
}

// nullable returns a schema that accepts what o accepts and null: o
// itself when it already does (no type or composition to refuse null, or a
// null branch), its anyOf with a null branch added when o is only a
// composition, else {"anyOf":[o,{"type":"null"}]} (S4: never a type array).
func nullable(o *obj) *obj {
	t, hasType := o.get("type")
	l, hasAnyOf := o.get("anyOf")
	_, hasRef := o.get("$ref")
	switch {
	case t == "null":
		return o
	case !hasType && !hasAnyOf && !hasRef:
		return o // accepts anything, null included
	case hasAnyOf && !hasType && !hasRef:
		branches, _ := l.([]any)
		for _, b := range branches {
			if bo, ok := b.(*obj); ok && (bo.str("type") == "null" || (!bo.has("type") && !bo.has("anyOf") && !bo.has("$ref"))) {
				return o
			}
		}
		n := o.clone()
		n.set("anyOf", append(append([]any{}, branches...), nullSchema()))
		return n
	}
	w := &obj{}
	w.set("anyOf", []any{o, nullSchema()})
	return w
}

func nullSchema() *obj {
	n := &obj{}
	n.set("type", "null")
	return n
}
