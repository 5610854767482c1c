package openapi

import (
	"fmt"
	"maps"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// mergeParams returns the operation's effective parameters in Q2 order:
// path-level ones first, an operation-level parameter replacing a
// path-level one with the same (name, in) in place, then the remaining
// operation-level ones.
func mergeParams(pathLevel, opLevel openapi3.Parameters) []*openapi3.Parameter {
	var out []*openapi3.Parameter
	idx := map[string]int{}
	add := func(p *openapi3.Parameter) {
		k := p.In + "\x00" + p.Name
		if p.In == "header" {
			k = p.In + "\x00" + strings.ToLower(p.Name)
		}
		if i, ok := idx[k]; ok {
			out[i] = p
			return
		}
		idx[k] = len(out)
		out = append(out, p)
	}
	for _, ps := range []openapi3.Parameters{pathLevel, opLevel} {
		for _, r := range ps {
			if r != nil && r.Value != nil {
				add(r.Value)
			}
		}
	}
	return out
}

// pathSeg is one piece of a parsed path template: a literal, or the index
// of the parameter whose value fills an {expression}.
type pathSeg struct {
	lit   string
	param int // -1 for a literal
}

// parsePath splits a path template into literal and {expression}
// segments (C08: each expression is filled from its own parameter; never
// a string replace of the name).
func parsePath(p string) []pathSeg {
	var segs []pathSeg
	for p != "" {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			segs = append(segs, pathSeg{lit: p, param: -1})
			break
		}
		j := strings.IndexByte(p[i:], '}')
		if j < 0 {
			segs = append(segs, pathSeg{lit: p, param: -1})
			break
		}
		if i > 0 {
			segs = append(segs, pathSeg{lit: p[:i], param: -1})
		}
		segs = append(segs, pathSeg{lit: p[i+1 : i+j], param: -2})
		p = p[i+j+1:]
	}
	return segs
}

var inRank = map[string]int{"path": 0, "query": 1, "header": 2, "cookie": 3}

// isCredentialParam reports whether p duplicates an apiKey security
// scheme; credentials are never model-visible arguments (C25).
func (b *builder) isCredentialParam(p *openapi3.Parameter) bool {
	if b.doc.Components == nil {
		return false
	}
	for _, s := range b.doc.Components.SecuritySchemes {
		if s == nil || s.Value == nil || s.Value.Type != "apiKey" || s.Value.In != p.In {
			continue
		}
		if s.Value.Name == p.Name || p.In == "header" && strings.EqualFold(s.Value.Name, p.Name) {
			return true
		}
	}
	return false
}

// styleOf returns the parameter's style and explode per OAS defaults, with
// the Swagger 2.0 collectionFormat taking precedence for converted
// documents (csv is the v2 default, so ids=1,2; C21).
func (b *builder) styleOf(method, path string, p *openapi3.Parameter) (string, bool) {
	style := p.Style
	if b.swagger2 {
		if f, ok := b.formats[paramKey(method, path, p.In, p.Name)]; ok {
			switch f {
			case "", "csv":
				return "form", false
			case "multi":
				return "form", true
			case "pipes":
				return "pipeDelimited", false
			case "ssv":
				return "spaceDelimited", false
			case "tsv":
				return "tabDelimited", false
			}
		}
	}
	if style == "" {
		switch p.In {
		case "query", "cookie":
			style = "form"
		default:
			style = "simple"
		}
	}
	explode := style == "form"
	if p.Explode != nil {
		explode = *p.Explode
	}
	return style, explode
}

// integerValued reports whether the parameter's values (or array items)
// are integers, for Q4.
func integerValued(sr *openapi3.SchemaRef) bool {
	switch schemaType(sr) {
	case "integer":
		return true
	case "array":
		return schemaType(sr.Value.Items) == "integer"
	}
	return false
}

// reservedHeader reports whether name is a header that HTTP itself owns
// (RFC 9110 §7.6.1 connection-specific fields, framing and routing:
// Host, Content-Length, Transfer-Encoding, Connection and the hop-by-hop
// fields it names, Cookie, which carries the caller's credential
// placement): a model must not set it, and the client would drop or
// rewrite it anyway. Compared case-insensitively.
func reservedHeader(name string) bool {
	switch strings.ToLower(name) {
	case "host", "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection",
		"te", "trailer", "upgrade", "proxy-authenticate", "proxy-authorization", "cookie", "expect":
		return true
	}
	return false
}

func schemaType(sr *openapi3.SchemaRef) string {
	if sr == nil || sr.Value == nil {
		return ""
	}
	ts, _ := nonNullTypes(sr.Value)
	if len(ts) == 1 {
		return ts[0]
	}
	return ""
}

func (b *builder) inputs(path string, item *openapi3.PathItem, method string, op *openapi3.Operation, sec *securityPlan) (*requestPlan, []byte, error) {
	ps := b.argumentParams(mergeParams(item.Parameters, op.Parameters), sec)
	plan := &requestPlan{props: map[string]*propPlan{}}
	ps = b.bindPath(plan, path, ps)
	in := &inputSchema{b: b, plan: plan, ps: ps}
	in.keys, in.paramKeys = b.paramPlans(plan, ps, method, path)
	in.body, in.media = b.bodyOf(op)
	tree := b.fitTree(in.build)
	// Keys renamed below the top level (P2 at any level, C12) are mapped
	// back to their wire names before the request is built (P3).
	if props := tree.props(); props != nil && b.renamedKeys {
		defs, _ := tree.get("$defs")
		defsObj, _ := defs.(*obj)
		for i, k := range props.k {
			if pp := plan.props[k]; pp != nil {
				if ch, ok := props.v[i].(*obj); ok {
					pp.rename = renameTreeOf(ch, defsObj)
				}
			}
		}
	}
	plan.body = in.body
	return plan, b.encode(tree), nil
}

// argumentParams returns the parameters that become arguments: not the
// headers the document may not define (Accept, Content-Type,
// Authorization) or HTTP sets, not the credential parameters (those of a
// security scheme, and credential_parameters, which are added to sec),
// not those of an unknown location.
func (b *builder) argumentParams(params []*openapi3.Parameter, sec *securityPlan) []*openapi3.Parameter {
	var ps []*openapi3.Parameter
	for _, p := range params {
		if p.In == "header" && (strings.EqualFold(p.Name, "Accept") || strings.EqualFold(p.Name, "Content-Type") || strings.EqualFold(p.Name, "Authorization")) {
			continue // OAS 3.1 §4.8.12.1: such a definition "SHALL be ignored"
		}
		if p.In == "header" && reservedHeader(p.Name) {
			b.warn("header parameter " + strconv.Quote(p.Name) + " skipped: HTTP itself sets this header; it is not an argument")
			continue
		}
		if b.isCredentialParam(p) {
			continue
		}
		if p.In != "path" && slices.Contains(b.opts.CredentialParameters, p.Name) {
			// The operator names this parameter as the credential: it is
			// filled from the caller's key, never asked of the model.
			c := credential{kind: p.In, name: p.Name}
			if !slices.Contains(sec.withKey, c) {
				sec.withKey = append(sec.withKey, c)
				sec.schemes = append(sec.schemes, "credential_parameters "+p.Name+" (in "+p.In+")")
				label := c.label() + " (credential_parameters)"
				if strings.HasPrefix(sec.placement, "none") {
					sec.placement = label
				} else {
					sec.placement += " and " + label
				}
			}
			sec.keyRequired = sec.keyRequired || p.Required
			continue
		}
		if _, ok := inRank[p.In]; !ok {
			b.warn("parameter " + strconv.Quote(p.Name) + " skipped: location " + strconv.Quote(p.In) + " is not path, query, header or cookie")
			continue
		}
		ps = append(ps, p)
	}
	return ps
}

// bindPath parses the path template into plan and points each of its
// parameters at ps, declaring a required string for one the document does
// not; it returns ps with those added.
func (b *builder) bindPath(plan *requestPlan, path string, ps []*openapi3.Parameter) []*openapi3.Parameter {
	plan.path = parsePath(path)
	for i, s := range plan.path {
		if s.param != -2 {
			continue
		}
		found := slices.IndexFunc(ps, func(p *openapi3.Parameter) bool { return p.In == "path" && p.Name == s.lit })
		if found < 0 {
			b.warn("path parameter " + strconv.Quote(s.lit) + " is not declared; assuming a required string")
			ps = append(ps, &openapi3.Parameter{Name: s.lit, In: "path", Required: true,
				Schema: &openapi3.SchemaRef{Value: &openapi3.Schema{Type: &openapi3.Types{"string"}}}})
			found = len(ps) - 1
		}
		plan.path[i].param = found
	}
	return ps
}

// paramPlans gives each parameter its argument key (B4, P1–P2) and its
// plan, adding them to plan; taken holds the keys used.
func (b *builder) paramPlans(plan *requestPlan, ps []*openapi3.Parameter, method, path string) (keys []string, taken map[string]bool) {
	// B4, then P1–P2.
	cands := make([]string, len(ps))
	for i, p := range ps {
		cands[i] = p.Name
		for _, q := range ps {
			if q != p && q.Name == p.Name && inRank[q.In] < inRank[p.In] {
				cands[i] = p.Name + "__" + p.In
				break
			}
		}
	}
	taken = map[string]bool{}
	keys = propertyKeys(cands, taken)
	for i, p := range ps {
		style, explode := b.styleOf(method, path, p)
		pp := &paramPlan{key: keys[i], wire: p.Name, in: p.In, style: style, explode: explode,
			required: p.Required || p.In == "path", integer: integerValued(p.Schema)}
		if p.Schema == nil && len(p.Content) > 0 {
			pp.jsonContent = true
		}
		if p.In == "header" {
			pp.canon = textproto.CanonicalMIMEHeaderKey(p.Name)
		}
		plan.params = append(plan.params, pp)
		plan.props[pp.key] = &propPlan{param: pp}
		if pp.required {
			plan.required = append(plan.required, pp.key)
		}
	}
	return keys, taken
}

// bodyOf plans the operation's request body, if it has one, and returns
// its chosen media type's schema (an empty object or string schema when
// the document gives none).
func (b *builder) bodyOf(op *openapi3.Operation) (body *bodyPlan, media *openapi3.MediaType) {
	if rb := op.RequestBody; rb != nil && rb.Value != nil && len(rb.Value.Content) > 0 {
		var mt string
		mt, media = pickMedia(rb.Value.Content)
		body = &bodyPlan{mediaType: mt, kind: bodyKindOf(mt), required: rb.Value.Required}
		if b.swagger2 && (body.kind == bodyForm || body.kind == bodyMultipart) && media != nil && media.Schema != nil &&
			media.Schema.Value != nil && len(media.Schema.Value.Required) > 0 {
			// openapi2conv does not carry formData "required" over to the
			// request body; a required formData field makes the body required.
			body.required = true
		}
		if body.kind == bodyMultipart && media != nil {
			body.partTypes = map[string]string{}
			for k, e := range media.Encoding {
				if e != nil && e.ContentType != "" {
					body.partTypes[k] = e.ContentType
				}
			}
		}
		if media == nil || media.Schema == nil || media.Schema.Value == nil {
			media = &openapi3.MediaType{Schema: &openapi3.SchemaRef{Value: &openapi3.Schema{}}}
			if body.kind <= bodyJSON {
				media.Schema.Value.Type = &openapi3.Types{"object"}
			} else {
				media.Schema.Value.Type = &openapi3.Types{"string"}
				if body.kind == bodyBinary {
					media.Schema.Value.Format = "binary"
				}
			}
		}
	}
	return body, media
}

// inputSchema builds an operation's input schema, once per budget attempt
// of fitTree; the first attempt also completes the body's plan.
type inputSchema struct {
	b         *builder
	plan      *requestPlan
	ps        []*openapi3.Parameter
	keys      []string // ps's argument keys
	paramKeys map[string]bool
	body      *bodyPlan
	media     *openapi3.MediaType
	decided   bool // the body's plan is complete
}

// build is fitTree's build function.
func (in *inputSchema) build(c *converter) *obj {
	root := &obj{}
	root.set("type", "object")
	props := &obj{}
	root.set("properties", props)
	req := slices.Clone(in.plan.required)
	for i, p := range in.ps {
		props.set(in.keys[i], in.paramSchema(c, i, p))
	}
	if in.body != nil {
		req = in.bodySchema(c, props, req)
	}
	if len(req) > 0 {
		root.set("required", req)
	}
	return root
}

// paramSchema is the schema of parameter p, the i-th: its own, or that of
// its content; described with its location when its key is not its name.
func (in *inputSchema) paramSchema(c *converter, i int, p *openapi3.Parameter) *obj {
	c.request, c.base64 = true, false
	sr := p.Schema
	if sr == nil {
		for _, mt := range slices.Sorted(maps.Keys(p.Content)) {
			if m := p.Content[mt]; m != nil && m.Schema != nil {
				sr = m.Schema
				break
			}
		}
	}
	s := c.ref(sr, 1, p.Name, false)
	desc := p.Description
	if in.keys[i] != p.Name {
		note := fmt.Sprintf("%s parameter `%s`.", strings.ToUpper(p.In[:1])+p.In[1:], p.Name)
		if desc != "" {
			desc = note + " " + desc
		} else {
			desc = note
		}
	}
	if desc != "" {
		s = s.clone()
		s.set("description", desc)
	}
	return s
}

// bodySchema adds the body's properties to props (its fields, or the body
// under one key) and returns req with the required ones added; the first
// call completes the body's plan.
func (in *inputSchema) bodySchema(c *converter, props *obj, req []string) []string {
	c.request = true
	c.base64 = in.body.kind == bodyMultipart || in.body.kind == bodyBinary
	bs := c.ref(in.media.Schema, 0, "", true)
	if !in.decided {
		in.decided = true
		in.completeBody(bs)
	}
	if in.body.whole != "" {
		ws := c.ref(in.media.Schema, 1, "body", false)
		props.set(in.body.whole, ws)
		if in.body.required && !slices.Contains(req, in.body.whole) {
			req = append(req, in.body.whole) // S9: once, on every budget attempt
		}
	} else {
		bp := bs.props()
		for _, f := range in.body.fields {
			v, _ := bp.get(f.bkey)
			props.set(f.key, v)
		}
		if in.body.required {
			for _, r := range bs.required() {
				for _, f := range in.body.fields {
					if f.bkey == r && !slices.Contains(req, f.key) {
						req = append(req, f.key)
					}
				}
			}
		}
	}
	return req
}

// completeBody decides how the body's schema bs is sent (B2/B3) and adds
// its arguments to the plan.
func (in *inputSchema) completeBody(bs *obj) {
	in.b.decideBody(in.body, bs, in.paramKeys)
	setEncodings(in.body, in.media)
	if in.body.whole != "" {
		in.plan.props[in.body.whole] = &propPlan{body: true}
		if in.body.required {
			in.plan.required = append(in.plan.required, in.body.whole)
		}
	} else {
		for i := range in.body.fields {
			f := &in.body.fields[i]
			in.plan.props[f.key] = &propPlan{field: f}
		}
		if in.body.required {
			for _, r := range bs.required() {
				for _, f := range in.body.fields {
					if f.bkey == r {
						in.plan.required = append(in.plan.required, f.key)
					}
				}
			}
		}
	}
}

// decideBody applies B2/B3: an object body whose property keys do not
// collide with parameter keys is flattened; anything else goes under
// "body" ("request_body" when a parameter already has that key).
func (b *builder) decideBody(body *bodyPlan, bs *obj, paramKeys map[string]bool) {
	bp := bs.props()
	flatten := body.kind <= bodyMultipart && bp != nil && len(bp.k) > 0 && !bs.has("anyOf") &&
		(bs.str("type") == "object" || bs.str("type") == "")
	if flatten {
		for _, w := range bp.k {
			k := propertyKeys([]string{w}, map[string]bool{})[0]
			if paramKeys[k] {
				flatten = false
				break
			}
		}
	}
	if flatten {
		taken := maps.Clone(paramKeys)
		keys := propertyKeys(bp.k, taken)
		for i, w := range bp.k {
			f := bodyField{key: keys[i], wire: w, bkey: w}
			if ow, ok := bp.wire[w]; ok {
				f.wire = ow // renamed in the body schema (P2)
			}
			if v, ok := bp.get(w); ok {
				if o, ok := v.(*obj); ok && o.str("contentEncoding") == "base64" {
					f.binary = true
				}
			}
			body.fields = append(body.fields, f)
		}
		return
	}
	name := "body"
	if paramKeys[name] {
		name = "request_body"
	}
	body.whole = uniqueName(name, maps.Clone(paramKeys), 64)
}

// setEncodings copies each form field's Encoding Object style and explode
// into its plan (Q10; OAS 3.1 §4.8.15 Encoding Object:
// https://spec.openapis.org/oas/v3.1.0#encoding-object).
func setEncodings(body *bodyPlan, media *openapi3.MediaType) {
	for i := range body.fields {
		f := &body.fields[i]
		f.explode = true
		e := media.Encoding[f.wire]
		if e == nil {
			continue
		}
		f.style = e.Style
		if e.Explode != nil {
			f.explode = *e.Explode
		} else if e.Style != "" && e.Style != "form" {
			f.explode = false
		}
	}
}
