package openapi

// Output schemas describe; they do not constrain (docs/conventions.md R8).
// An API's responses drift from its document all the time (a field the
// document calls an object comes back null, a required field is missing, a
// string breaks its pattern), and MCP SDK clients validate structuredContent
// against the outputSchema and reject the whole call when it does not fit.
// So a response schema keeps what tells a model the shape of the data
// (types, properties, items, descriptions, composition) and drops what only
// constrains it, and every value below the root may be null.
//
// The converter applies R8 as it converts a response schema (request
// false), so that no second, described copy of each converted tree is
// built: constrain leaves out the keywords that constrain (required, enum,
// const, pattern, format, the length, size and numeric bounds, and a
// boolean additionalProperties), and orNull makes each schema below the
// root (a property, items, additionalProperties) accept null. A response
// schema's cut marks carry outCut, so that S2 puts the R8 placeholder in
// its place. The size estimate that S2's conversion limit reads counts
// what the request form would hold, so both forms are cut alike.

// constrain sets the constraint keyword k on o in a request schema; a
// response schema leaves it out (R8).
func (c *converter) constrain(o *obj, k string, v any) {
	if c.request {
		o.set(k, v)
	}
}

// orNull returns, in a response schema, a schema that accepts what o
// accepts and null (nullable), one per o so that subtrees stay shared; in
// a request schema, o itself.
func (c *converter) orNull(o *obj) *obj {
	if c.request || o == nil {
		return o
	}
	if n, ok := c.b.nulls[o]; ok {
		return n
	}
	n := c.b.nullable(o)
	c.b.nulls[o] = n
	if n != o {
		c.b.nonNull[n] = o
	}
	return n
}

// withoutNull returns the schema orNull wrapped to make o, or o itself.
func (c *converter) withoutNull(o *obj) *obj {
	if inner, ok := c.b.nonNull[o]; ok {
		return inner
	}
	return o
}

// nullable returns a schema that accepts what o accepts and null: o
// itself when it already does (no type or composition to refuse null, or a
// null branch), its anyOf with a null branch added when o is only a
// composition, else {"anyOf":[o,{"type":"null"}]} (S4: never a type array).
// The {"type":"null"} branch is one node shared by every schema of the
// builder: converted trees are never mutated.
func (b *builder) nullable(o *obj) *obj {
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
		for _, br := range branches {
			if bo, ok := br.(*obj); ok && (bo.str("type") == "null" || (!bo.has("type") && !bo.has("anyOf") && !bo.has("$ref"))) {
				return o
			}
		}
		n := o.clone()
		n.set("anyOf", append(append(make([]any, 0, len(branches)+1), branches...), b.nullNode))
		return n
	}
	return &obj{k: []string{"anyOf"}, v: []any{[]any{o, b.nullNode}}}
}
