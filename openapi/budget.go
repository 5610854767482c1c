package openapi

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
)

// schemaCache holds the builder's conversion memo and the per-subtree
// sizes the S2 budget fitting reads. Converted subtrees are shared between
// tools and never mutated, so sizes keyed by *obj stay valid.
type schemaCache struct {
	memo     map[memoKey]memoEntry
	sizes    map[*obj]int
	needs    map[*obj]int
	cutSizes map[sizeKey]int
	defs     map[defKey]*defEntry // $defs mode: one entry per named schema and mode
	defNames map[defNameKey]bool
	// nulls and nonNull are orNull's memo and its inverse (describe.go);
	// nullNode is the {"type":"null"} branch its wrappers share.
	nulls    map[*obj]*obj
	nonNull  map[*obj]*obj
	nullNode *obj
	// nullRefs holds, per OAS 3.0 reference, the schema it stands for when
	// nullable: true is written beside its $ref (S12), or nil.
	nullRefs map[*openapi3.SchemaRef]*openapi3.Schema
}

func newSchemaCache() schemaCache {
	return schemaCache{memo: map[memoKey]memoEntry{}, sizes: map[*obj]int{}, needs: map[*obj]int{}, cutSizes: map[sizeKey]int{},
		defs: map[defKey]*defEntry{}, defNames: map[defNameKey]bool{},
		nulls: map[*obj]*obj{}, nonNull: map[*obj]*obj{}, nullNode: &obj{k: []string{"type"}, v: []any{"null"}},
		nullRefs: map[*openapi3.SchemaRef]*openapi3.Schema{}}
}

// fit builds a schema with build and applies the S2 budget. The schema
// is built once without a depth limit (conversion is memoized, so this is
// linear in the document's schema graph); then the largest object depth
// whose serialization fits the budget is found from per-subtree sizes, and
// deeper object schemas are replaced by placeholders. When even depth 1
// does not fit, the depth-1 schema is returned as is.
func (b *builder) fit(build func(c *converter) *obj) []byte {
	return b.encode(b.fitTree(build))
}

// fitTree is fit before serialization: the schema tree that fit encodes.
func (b *builder) fitTree(build func(c *converter) *obj) *obj {
	if b.opts.SchemaDefs {
		if o := b.withDefs(build); o != nil {
			return o
		}
	}
	// The unlimited attempt gives up once its fresh (not memoized) output
	// passes twice the budget: on Stripe a quarter of the schemas are deep
	// mutual recursion where memoization cannot help, and a limit of 16x
	// the budget spent ~480 MB per load building trees that were then
	// thrown away (754 -> 274 MB allocated per load).
	c := &converter{b: b, memo: b.memo, maxDepth: unlimitedDepth, limit: 2 * max(b.budget, DefaultSchemaBudget), minHit: 1 << 30}
	o := build(c)
	if c.over {
		// Conversion that cannot be shared (deep mutual recursion) grew
		// past the safety limit: fall back to depth-limited conversion.
		return b.fitByDepth(build)
	}
	if b.budget < 0 {
		return o
	}
	need := b.need(o)
	if need <= 0 || b.sizeAt(o, need) <= b.budget {
		return b.shrink(o)
	}
	for d := min(need-1, maxFitDepth); d >= 1; d-- {
		if b.sizeAt(o, d) <= b.budget {
			return b.cutAt(o, d)
		}
	}
	return b.shrink(b.cutAt(o, 1))
}

const maxFitDepth = 32

// fitByDepth converts with increasing depth limits and keeps the deepest
// schema that fits. Each attempt gives up once its estimated size passes
// twice the budget, so the cost stays proportional to the budget even
// where mutual recursion defeats memoization.
func (b *builder) fitByDepth(build func(c *converter) *obj) *obj {
	limit := 2 * max(b.budget, DefaultSchemaBudget)
	var best *obj
	for d := 1; d <= maxFitDepth; d++ {
		c := &converter{b: b, memo: b.memo, maxDepth: d, limit: limit, minHit: 1 << 30}
		o := build(c)
		if c.over || (b.budget >= 0 && b.sizeOf(o) > b.budget) {
			break
		}
		best = o
		if !c.depthCut {
			break // nothing was cut; deeper limits give the same schema
		}
	}
	if best == nil {
		best = b.shrink(build(&converter{b: b, memo: b.memo, maxDepth: 1, minHit: 1 << 30}))
	}
	return best
}

// depthChildren calls f for each schema-valued member of o with the depth
// increment S2 applies to it: properties, items and additionalProperties
// are one level deeper; anyOf branches are at the same level.
func depthChildren(o *obj, f func(i int, child *obj, inc int)) {
	for i, k := range o.k {
		switch k {
		case "properties":
			if p, ok := o.v[i].(*obj); ok {
				for j, v := range p.v {
					if ch, ok := v.(*obj); ok {
						f(-1-j, ch, 1)
					}
				}
			}
		case "items", "additionalProperties":
			if ch, ok := o.v[i].(*obj); ok {
				f(i, ch, 1)
			}
		case "anyOf":
			if l, ok := o.v[i].([]any); ok {
				for _, v := range l {
					if ch, ok := v.(*obj); ok {
						f(i, ch, 0)
					}
				}
			}
		}
	}
}

// need returns the smallest remaining depth at which o is emitted without
// any placeholder (a negative value when o has no object-like schema).
func (b *builder) need(o *obj) int {
	if n, ok := b.needs[o]; ok {
		return n
	}
	n := -1 << 20
	if o.cut {
		n = 0
	}
	depthChildren(o, func(_ int, ch *obj, inc int) {
		n = max(n, b.need(ch)+inc)
	})
	b.needs[o] = n
	return n
}

type sizeKey struct {
	o *obj
	r int
}

// placeholderFor is what S2 puts in place of the cut schema o. In an input
// schema it asks for a JSON object. In an output schema it has no type, so
// it accepts whatever the schema it replaces accepted (an object, or the
// string id an expandable field usually is, or null): a placeholder that
// refused a value the full schema allows would make SDK clients reject a
// faithful response (R8).
func placeholderFor(o *obj) *obj {
	p := &obj{}
	if !o.outCut {
		p.set("type", "object")
		p.set("description", o.cutName+": nested structure omitted; pass it as a JSON object")
		return withScalarAlternatives(p, branchTypes(o))
	}
	p.set("description", o.cutName+": nested structure omitted; the text content has the whole response")
	return p
}

// branchTypes lists the non-object, non-null types of the anyOf branches of
// a converted schema, in order.
func branchTypes(o *obj) []string {
	l, _ := o.get("anyOf")
	branches, _ := l.([]any)
	var ts []string
	for _, b := range branches {
		bo, ok := b.(*obj)
		if !ok {
			continue
		}
		if t := bo.str("type"); t != "" && t != "object" && t != "null" && !slices.Contains(ts, t) {
			ts = append(ts, t)
		}
	}
	return ts
}

// sizeAt returns the serialized size of o when it has r levels of object
// nesting left (S2).
func (b *builder) sizeAt(o *obj, r int) int {
	if r >= b.need(o) {
		return b.sizeOf(o)
	}
	if r < 0 && o.cut {
		return b.sizeOf(placeholderFor(o))
	}
	k := sizeKey{o, r}
	if n, ok := b.cutSizes[k]; ok {
		return n
	}
	n := b.sizeOf(o)
	depthChildren(o, func(_ int, ch *obj, inc int) {
		n += b.sizeAt(ch, r-inc) - b.sizeOf(ch)
	})
	b.cutSizes[k] = n
	return n
}

// cutAt returns o with object-like schemas deeper than r levels replaced
// by placeholders; unchanged subtrees are shared.
func (b *builder) cutAt(o *obj, r int) *obj {
	if r >= b.need(o) {
		return o
	}
	if r < 0 && o.cut {
		return placeholderFor(o)
	}
	n := o.clone()
	for i, k := range n.k {
		switch k {
		case "properties":
			p := n.v[i].(*obj).clone()
			for j, v := range p.v {
				if ch, ok := v.(*obj); ok {
					p.v[j] = b.cutAt(ch, r-1)
				}
			}
			n.v[i] = p
		case "items", "additionalProperties":
			if ch, ok := n.v[i].(*obj); ok {
				n.v[i] = b.cutAt(ch, r-1)
			}
		case "anyOf":
			if l, ok := n.v[i].([]any); ok {
				nl := make([]any, len(l))
				for j, v := range l {
					if ch, ok := v.(*obj); ok {
						nl[j] = b.cutAt(ch, r)
					} else {
						nl[j] = v
					}
				}
				n.v[i] = nl
			}
		}
	}
	return n
}

// encode is encode(o) into a buffer of o's exact serialized length
// (sizeOf), which spares the buffer's repeated growth on large schemas.
func (b *builder) encode(o *obj) []byte {
	buf := bytes.NewBuffer(make([]byte, 0, b.sizeOf(o)))
	writeJSON(buf, o)
	return buf.Bytes()
}

// sizeOf returns the serialized length of v, caching per shared subtree.
func (b *builder) sizeOf(v any) int {
	switch x := v.(type) {
	case *obj:
		if n, ok := b.sizes[x]; ok {
			return n
		}
		n := 2 + max(len(x.k)-1, 0)
		for i, k := range x.k {
			n += jsonStringLen(k) + 1 + b.sizeOf(x.v[i])
		}
		b.sizes[x] = n
		return n
	case []any:
		n := 2 + max(len(x)-1, 0)
		for _, e := range x {
			n += b.sizeOf(e)
		}
		return n
	case []string:
		n := 2 + max(len(x)-1, 0)
		for _, e := range x {
			n += jsonStringLen(e)
		}
		return n
	case string:
		return jsonStringLen(x)
	}
	var buf bytes.Buffer
	writeJSON(&buf, v)
	return buf.Len()
}

// shrink makes a schema that is over the budget even with one level of
// object nesting fit (S2), in deterministic steps that each leave a mark in
// the schema text, stopping at the first that fits:
//
//  1. object-like top-level properties become the S2 placeholder (the
//     root keeps only its direct properties);
//  2. long descriptions are cut with a "[…]" marker and long enums are
//     replaced by a description naming their first values (an enum cut
//     short would reject valid values), first gently, then harder;
//  3. whole top-level property schemas, largest first (ties in property
//     order), become a placeholder of the same type that says the schema
//     was omitted.
//
// Sizes are measured incrementally from the cached per-subtree sizes, so
// no step serializes the schema again.
func (b *builder) shrink(o *obj) *obj {
	if b.budget < 0 || b.sizeOf(o) <= b.budget {
		return o
	}
	o = b.cutAt(o, 0)
	if b.sizeOf(o) <= b.budget {
		return o
	}
	for _, l := range []textLimits{{desc: 1000, enum: 64}, {desc: 300, enum: 16}, {desc: 100, enum: 8}} {
		o = b.shortenTexts(o, l)
		if b.sizeOf(o) <= b.budget {
			return o
		}
	}
	props := o.props()
	if props == nil {
		return o
	}
	total := b.sizeOf(o)
	order := make([]int, len(props.k))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return b.sizeOf(props.v[j]) - b.sizeOf(props.v[i]) })
	np := props.clone()
	for _, i := range order {
		if total <= b.budget {
			break
		}
		ch, ok := np.v[i].(*obj)
		if !ok {
			continue
		}
		r := omittedFor(np.k[i], ch)
		if d := b.sizeOf(ch) - b.sizeOf(r); d > 0 {
			total -= d
			np.v[i] = r
		}
	}
	n := o.clone()
	n.set("properties", np)
	return n
}

// omittedFor is the last-resort placeholder for a top-level property
// schema: the S2 object placeholder for objects, otherwise a schema of the
// same type saying the rest was omitted.
func omittedFor(key string, o *obj) *obj {
	typ := o.str("type")
	if typ == "object" || o.cut {
		name := o.cutName
		if name == "" {
			name = key
		}
		return placeholderFor(&obj{cutName: name})
	}
	p := &obj{}
	if typ != "" {
		p.set("type", typ)
	}
	if typ == "array" {
		p.set("items", &obj{})
	}
	p.set("description", key+": schema omitted to fit the size budget")
	return p
}

type textLimits struct {
	desc int // bytes of description kept
	enum int // enum values kept
}

// shortenTexts returns o with descriptions longer than l.desc cut at a
// UTF-8 boundary plus " […]", and enums longer than l.enum replaced by a
// description naming the count and the first three values. A node whose
// rewrite would not be smaller is kept. Unchanged subtrees are shared.
func (b *builder) shortenTexts(o *obj, l textLimits) *obj {
	var n *obj
	enumNote := ""
	mut := func() *obj {
		if n == nil {
			n = o.clone()
		}
		return n
	}
	for i, k := range o.k {
		switch v := o.v[i].(type) {
		case string:
			if k == "description" && len(v) > l.desc {
				mut().v[i] = cutText(v, l.desc) + " […]"
			}
		case []any:
			switch k {
			case "enum":
				if len(v) > l.enum {
					mut()
					enumNote = enumText(v)
				}
			case "anyOf":
				var nl []any
				for j, e := range v {
					if ch, ok := e.(*obj); ok {
						if s := b.shortenTexts(ch, l); s != ch {
							if nl == nil {
								nl = slices.Clone(v)
							}
							nl[j] = s
						}
					}
				}
				if nl != nil {
					mut().v[i] = nl
				}
			}
		case *obj:
			switch k {
			case "properties":
				var np *obj
				for j, e := range v.v {
					if ch, ok := e.(*obj); ok {
						if s := b.shortenTexts(ch, l); s != ch {
							if np == nil {
								np = v.clone()
							}
							np.v[j] = s
						}
					}
				}
				if np != nil {
					mut().v[i] = np
				}
			case "items", "additionalProperties", "not":
				if s := b.shortenTexts(v, l); s != v {
					mut().v[i] = s
				}
			}
		}
	}
	if enumNote != "" {
		d := n.str("description")
		if d != "" {
			d += " "
		}
		n.del("enum")
		n.set("description", d+enumNote)
	}
	if n == nil || b.sizeOf(n) >= b.sizeOf(o) {
		return o
	}
	return n
}

// enumText describes an enum that is left out to fit the budget.
func enumText(v []any) string {
	var sb strings.Builder
	sb.WriteString("One of ")
	sb.WriteString(strconv.Itoa(len(v)))
	sb.WriteString(" values (list shortened to fit the size budget), e.g. ")
	for j, e := range v[:min(3, len(v))] {
		if j > 0 {
			sb.WriteString(", ")
		}
		sb.Write(encode(e))
	}
	sb.WriteByte('.')
	return sb.String()
}

// cutText returns the longest prefix of s that is at most n bytes and ends
// on a UTF-8 boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimRight(s[:n], " ")
}

// jsonStringLen is the length of writeString's output for s.
func jsonStringLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n += 2
		case c < 0x20:
			n += 6
		case c >= utf8.RuneSelf:
			r, w := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && w == 1 {
				n += len("\uFFFD")
			} else {
				n += w
			}
			i += w
			continue
		default:
			n++
		}
		i++
	}
	return n
}

// defKey identifies one $defs entry: a named schema converted for
// requests or responses, with or without base64 file fields.
type defKey struct {
	s       *openapi3.Schema
	request bool
	base64  bool
}

type defNameKey struct {
	name    string
	request bool
}

// defEntry is one schema under $defs. Entries are converted once per
// document and shared by every tool that uses them; refs lists the
// entries its body references, for each tool's closure.
type defEntry struct {
	name string
	body *obj
	refs []*defEntry
}

// defRef returns {"$ref":"#/$defs/<name>"} for a named schema, converting
// the schema into its entry on first use. The entry is registered before
// its body is converted, so recursion ends in a $ref (S3 with $defs).
func (c *converter) defRef(s *openapi3.Schema, name string) *obj {
	k := defKey{s, c.request, c.base64}
	e := c.b.defs[k]
	if e == nil {
		e = &defEntry{name: c.b.defName(name, k)}
		c.b.defs[k] = e
		stack, uses := c.stack, c.uses
		c.stack, c.uses = nil, &e.refs
		e.body = c.schema(s, 1, name, false)
		c.stack, c.uses = stack, uses
	}
	if c.uses != nil {
		*c.uses = append(*c.uses, e)
	}
	return &obj{k: []string{"$ref"}, v: []any{"#/$defs/" + e.name}}
}

// defName returns a $defs key for a component name: characters outside
// [A-Za-z0-9._-] become "_" (so the $ref needs no escaping), base64
// variants get "_base64", and a key taken by another schema gets _2, _3, …
func (b *builder) defName(name string, k defKey) string {
	bs := []byte(name)
	for i, ch := range bs {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '.' || ch == '_' || ch == '-') {
			bs[i] = '_'
		}
	}
	base := string(bs)
	if base == "" {
		base = "schema"
	}
	if k.base64 {
		base += "_base64"
	}
	n := base
	for i := 2; b.defNames[defNameKey{n, k.request}]; i++ {
		n = base + "_" + strconv.Itoa(i)
	}
	b.defNames[defNameKey{n, k.request}] = true
	return n
}

// withDefs builds the schema in $defs mode and returns it, or nil when it
// is over the budget (the caller then inlines, S2).
func (b *builder) withDefs(build func(c *converter) *obj) *obj {
	var uses []*defEntry
	c := &converter{b: b, maxDepth: unlimitedDepth, defs: true, uses: &uses}
	o := build(c)
	seen := map[*defEntry]bool{}
	var all []*defEntry
	var walk func(l []*defEntry)
	walk = func(l []*defEntry) {
		for _, e := range l {
			if !seen[e] {
				seen[e] = true
				all = append(all, e)
				walk(e.refs)
			}
		}
	}
	walk(uses)
	if len(all) > 0 {
		slices.SortFunc(all, func(x, y *defEntry) int { return strings.Compare(x.name, y.name) })
		defs := &obj{}
		for _, e := range all {
			defs.set(e.name, e.body)
		}
		o = o.clone()
		o.set("$defs", defs)
	}
	if b.budget >= 0 && b.sizeOf(o) > b.budget {
		return nil
	}
	return o
}
