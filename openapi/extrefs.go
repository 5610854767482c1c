package openapi

import (
	"encoding/json"
	"errors"
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/restmcp/restmcp/internal/jsonvalue"
	"github.com/restmcp/restmcp/internal/yamltree"
)

// External references, resolved once per target (OpenAPI 3.0 documents
// made of several files).
//
// kin-openapi resolves every occurrence of a $ref to another file on its
// own: it reads the target again, parses it again, and resolves everything
// below it again, so a schema file that forty others reference is parsed
// forty times, and each of those parses resolves the files it references
// again. On a document of a few thousand files (DigitalOcean's) that is
// most of the load time and memory, and the loaded document holds a copy
// of each schema per occurrence.
//
// shareExternalRefs resolves those references before the loader runs: it
// reads and decodes each target (file, or file#/pointer) once, through
// the document's own reader (C02 confinement, key order), gives every
// reference to it the same value, and resolves what the value holds in
// turn. A reference whose value is set is left alone by the loader
// (openapi3.Loader.ResolveRefsIn returns at once for it), which then only
// resolves the references within the root document. Each reference keeps
// its $ref, so schema names (the notes on omitted structure, $defs) do not
// change. Values decode with kin-openapi's own JSON decoding, as the
// loader would decode them.
//
// Anything it does not handle (OpenAPI 3.1 keywords, callbacks, path item
// references, a reference into the root document other than to one of its
// components, a target that does not read or decode) makes it give up
// before it has changed the document: the loader then resolves everything
// as before, and reports what is wrong.

// shareRefs turns shareExternalRefs on; tests turn it off to compare.
var shareRefs = true

// errNotShared makes shareExternalRefs give up; the loader resolves alone.
var errNotShared = errors.New("external references left to the loader")

// refSharer resolves a document's external references once per target.
type refSharer struct {
	doc  *openapi3.T
	root *url.URL
	read openapi3.ReadFromURIFunc
	// files holds each file read, as JSON; targets each target's value by
	// kind and absolute reference.
	files   map[string][]byte
	targets map[string]any
	// walked marks the values whose references are resolved (shared
	// values are walked once).
	walked map[any]bool
	// apply sets the root document's references, once all resolved.
	apply []func()
	// chain is how deep resolveRef is, bounded by maxRefChain.
	chain int
}

// maxRefChain bounds nested resolutions (a reference to a reference …,
// and values within values); past it the loader resolves alone.
const maxRefChain = 10000

// shareExternalRefs resolves doc's references to other files once per
// target (see above); doc is unchanged when it gives up.
func shareExternalRefs(doc *openapi3.T, root *url.URL, read openapi3.ReadFromURIFunc) {
	if !shareRefs || root == nil || read == nil || !strings.HasPrefix(doc.OpenAPI, "3.0") || len(doc.Webhooks) > 0 {
		return
	}
	r := &refSharer{doc: doc, root: root, read: read, files: map[string][]byte{}, targets: map[string]any{}, walked: map[any]bool{}}
	if err := r.document(); err != nil {
		return
	}
	for _, f := range r.apply {
		f()
	}
}

func (r *refSharer) document() error {
	root := r.root
	if c := r.doc.Components; c != nil {
		if len(c.Callbacks) > 0 {
			return errNotShared
		}
		// The loader's order (ResolveRefsIn), so that files are first read,
		// and their key order scanned, in the same order as before.
		if err := firstError(
			func() error {
				return inOrder(c.Headers, func(x *openapi3.HeaderRef) error { return r.headerRef(x, root, true) })
			},
			func() error {
				return inOrder(c.Parameters, func(x *openapi3.ParameterRef) error { return r.parameterRef(x, root, true) })
			},
			func() error {
				return inOrder(c.RequestBodies, func(x *openapi3.RequestBodyRef) error { return r.requestBodyRef(x, root, true) })
			},
			func() error {
				return inOrder(c.Responses, func(x *openapi3.ResponseRef) error { return r.responseRef(x, root, true) })
			},
			func() error {
				return inOrder(c.Schemas, func(x *openapi3.SchemaRef) error { return r.schemaRef(x, root, true) })
			},
			func() error {
				return inOrder(c.Examples, func(x *openapi3.ExampleRef) error { return r.exampleRef(x, root, true) })
			},
			func() error {
				return inOrder(c.Links, func(x *openapi3.LinkRef) error { return r.linkRef(x, root, true) })
			},
		); err != nil {
			return err
		}
	}
	if r.doc.Paths == nil {
		return nil
	}
	return inOrder(r.doc.Paths.Map(), func(item *openapi3.PathItem) error {
		if item == nil {
			return nil
		}
		if item.Ref != "" {
			return errNotShared
		}
		for _, pr := range item.Parameters {
			if err := r.parameterRef(pr, root, true); err != nil {
				return err
			}
		}
		return inOrder(item.Operations(), func(op *openapi3.Operation) error {
			if op == nil {
				return nil
			}
			if len(op.Callbacks) > 0 {
				return errNotShared
			}
			for _, pr := range op.Parameters {
				if err := r.parameterRef(pr, root, true); err != nil {
					return err
				}
			}
			if err := r.requestBodyRef(op.RequestBody, root, true); err != nil {
				return err
			}
			if op.Responses == nil {
				return nil
			}
			return inOrder(op.Responses.Map(), func(x *openapi3.ResponseRef) error { return r.responseRef(x, root, true) })
		})
	})
}

// inOrder calls f with m's values in the byte order of their keys (as the
// loader walks maps, so that the walk is the same every load), up to the
// first error.
func inOrder[V any](m map[string]V, f func(V) error) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := f(m[k]); err != nil {
			return err
		}
	}
	return nil
}

// firstError runs fs in order up to the first error.
func firstError(fs ...func() error) error {
	for _, f := range fs {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// resolveRef is the common part of every kind: it returns the value of
// the reference ref written in the file base (decode decodes a target's
// JSON into a new reference of the kind, walk resolves a value's own
// references), or nil and no error when ref is the root document's own
// and inRoot (the loader resolves those). set, when not nil, gives the
// reference its value: at once in a decoded value, after the whole walk
// in the root document.
func resolveRef[V any](r *refSharer, kind, ref string, base *url.URL, inRoot bool,
	decode func(raw []byte) (string, *V, error), component func(name string) (string, *V, bool),
	walk func(v *V, base *url.URL, inRoot bool) error, set func(v *V)) error {
	filePart, frag, _ := strings.Cut(ref, "#")
	if filePart == "" && inRoot {
		return nil // within the root document: the loader's
	}
	if strings.Contains(frag, "%") {
		// A fragment is percent-encoded (RFC 3986 §3.5), as the loader reads it.
		f, err := url.PathUnescape(frag)
		if err != nil {
			return errNotShared
		}
		frag = f
	}
	if frag == "/" {
		frag = "" // the whole document
	}
	if r.chain++; r.chain > maxRefChain {
		return errNotShared
	}
	defer func() { r.chain-- }()
	target, err := r.targetURL(filePart, base)
	if err != nil {
		return err
	}
	if target.Path == r.root.Path {
		// A file referring back to one of the root document's components.
		toks := yamltree.PointerTokens(frag)
		if r.doc.Components == nil || len(toks) != 3 || toks[0] != "components" || toks[1] != kind {
			return errNotShared
		}
		cref, v, ok := component(toks[2])
		if !ok {
			return errNotShared
		}
		if v == nil {
			if cref == "" {
				return errNotShared
			}
			// The component is itself a reference: follow it from the root.
			var got *V
			if err := resolveRef(r, kind, cref, r.root, false, decode, component, walk, func(x *V) { got = x }); err != nil {
				return err
			}
			v = got
		}
		if v == nil {
			return errNotShared
		}
		r.assign(inRoot, func() { set(v) })
		return nil
	}
	key := kind + " " + target.Path + "#" + frag
	if v, ok := r.targets[key]; ok {
		vv := v.(*V)
		r.assign(inRoot, func() { set(vv) })
		return nil
	}
	raw, err := r.at(target, frag)
	if err != nil {
		return err
	}
	next, v, err := decode(raw)
	if err != nil {
		return errNotShared
	}
	if v == nil {
		// The target is itself a reference: follow it from the target's file.
		if next == "" {
			return errNotShared
		}
		var got *V
		if err := resolveRef(r, kind, next, target, false, decode, component, walk, func(x *V) { got = x }); err != nil {
			return err
		}
		if got == nil {
			return errNotShared
		}
		r.targets[key] = got
		r.assign(inRoot, func() { set(got) })
		return nil
	}
	r.targets[key] = v
	if err := walk(v, target, false); err != nil {
		return err
	}
	r.assign(inRoot, func() { set(v) })
	return nil
}

// assign runs f now, or after the walk when it sets a reference of the
// root document (so that giving up leaves the document as it was).
func (r *refSharer) assign(inRoot bool, f func()) {
	if inRoot {
		r.apply = append(r.apply, f)
		return
	}
	f()
}

// targetURL resolves a reference's file part against the file it is
// written in, as the loader does (relative to that file's folder).
func (r *refSharer) targetURL(filePart string, base *url.URL) (*url.URL, error) {
	if filePart == "" {
		return base, nil
	}
	u, err := url.Parse(filePart)
	if err != nil || u.Scheme != "" || u.Host != "" || (base.Scheme != "" && base.Scheme != "file") {
		return nil, errNotShared
	}
	t := *base
	t.RawQuery, t.Fragment, t.RawFragment = "", "", ""
	if path.IsAbs(u.Path) {
		t.Path = path.Clean(u.Path)
	} else {
		t.Path = path.Join(path.Dir(base.Path), u.Path)
	}
	t.RawPath = ""
	return &t, nil
}

// at returns the JSON of the value at the JSON pointer frag in the file
// target, reading the file once.
func (r *refSharer) at(target *url.URL, frag string) ([]byte, error) {
	data, ok := r.files[target.Path]
	if !ok {
		b, err := r.read(nil, target)
		if err != nil {
			return nil, errNotShared
		}
		if !jsonvalue.LooksLikeObject(b) {
			tree, err := yamltree.Parse(b)
			if err != nil {
				return nil, errNotShared
			}
			b = yamltree.EncodeJSON(tree)
		}
		data = b
		r.files[target.Path] = data
	}
	for _, tok := range yamltree.PointerTokens(frag) {
		ms, ok := jsonvalue.Members(data)
		if !ok {
			return nil, errNotShared
		}
		found := false
		for _, m := range ms {
			if m.Key == tok {
				data, found = m.Raw, true
				break
			}
		}
		if !found {
			return nil, errNotShared
		}
	}
	return data, nil
}

// decodeRef decodes one reference-or-value of a kind with kin-openapi's
// JSON decoding; it returns the $ref when raw is a reference, else the
// value.
func decodeRef[R any, V any](raw []byte, ref func(*R) (string, *V)) (string, *V, error) {
	var x R
	if err := json.Unmarshal(raw, &x); err != nil {
		return "", nil, err
	}
	s, v := ref(&x)
	if s != "" {
		return s, nil, nil
	}
	return "", v, nil
}

// shareRef resolves one reference of a kind: a value given inline is
// walked; a reference already resolved is left; any other reference is
// resolved (resolveRef) and given its value with set. components picks the
// kind's map from the root document's components; parts reads a
// reference's $ref and value.
func shareRef[R any, V any](r *refSharer, kind, ref string, value *V, base *url.URL, inRoot bool,
	components func(*openapi3.Components) map[string]*R, parts func(*R) (string, *V),
	walk func(v *V, base *url.URL, inRoot bool) error, set func(v *V)) error {
	if ref == "" {
		return walk(value, base, inRoot)
	}
	if value != nil {
		return nil
	}
	return resolveRef(r, kind, ref, base, inRoot,
		func(raw []byte) (string, *V, error) { return decodeRef(raw, parts) },
		func(name string) (string, *V, bool) {
			c, ok := components(r.doc.Components)[name]
			if !ok || c == nil {
				return "", nil, false
			}
			ref, v := parts(c)
			return ref, v, true
		},
		walk, set)
}

// noWalk is the walk of a value that holds no references.
func noWalk[V any](*V, *url.URL, bool) error { return nil }

func (r *refSharer) schemaRef(sr *openapi3.SchemaRef, base *url.URL, inRoot bool) error {
	if sr == nil {
		return nil
	}
	return shareRef(r, "schemas", sr.Ref, sr.Value, base, inRoot,
		func(c *openapi3.Components) map[string]*openapi3.SchemaRef { return c.Schemas },
		func(x *openapi3.SchemaRef) (string, *openapi3.Schema) { return x.Ref, x.Value },
		r.schema, func(v *openapi3.Schema) { sr.Value = v })
}

func (r *refSharer) schema(s *openapi3.Schema, base *url.URL, inRoot bool) error {
	if s == nil || r.walked[s] {
		return nil
	}
	r.walked[s] = true
	if len(s.PrefixItems) > 0 || s.Contains != nil || len(s.PatternProperties) > 0 || len(s.DependentSchemas) > 0 ||
		s.PropertyNames != nil || s.If != nil || s.Then != nil || s.Else != nil || len(s.Defs) > 0 || s.ContentSchema != nil ||
		s.DynamicRef != "" {
		return errNotShared // OpenAPI 3.1 keywords: left to the loader
	}
	// The loader's order (resolveSchemaRef).
	if err := r.schemaRef(s.Items, base, inRoot); err != nil {
		return err
	}
	if err := inOrder(s.Properties, func(x *openapi3.SchemaRef) error { return r.schemaRef(x, base, inRoot) }); err != nil {
		return err
	}
	for _, c := range []*openapi3.SchemaRef{s.AdditionalProperties.Schema, s.Not} {
		if err := r.schemaRef(c, base, inRoot); err != nil {
			return err
		}
	}
	for _, l := range []openapi3.SchemaRefs{s.AllOf, s.AnyOf, s.OneOf} {
		for _, c := range l {
			if err := r.schemaRef(c, base, inRoot); err != nil {
				return err
			}
		}
	}
	return nil
}

func (r *refSharer) parameterRef(pr *openapi3.ParameterRef, base *url.URL, inRoot bool) error {
	if pr == nil {
		return nil
	}
	return shareRef(r, "parameters", pr.Ref, pr.Value, base, inRoot,
		func(c *openapi3.Components) map[string]*openapi3.ParameterRef { return c.Parameters },
		func(x *openapi3.ParameterRef) (string, *openapi3.Parameter) { return x.Ref, x.Value },
		r.parameter, func(v *openapi3.Parameter) { pr.Value = v })
}

func (r *refSharer) parameter(p *openapi3.Parameter, base *url.URL, inRoot bool) error {
	if p == nil || r.walked[p] {
		return nil
	}
	r.walked[p] = true
	// The loader's order (resolveParameterRef).
	if err := r.content(p.Content, base, inRoot); err != nil {
		return err
	}
	if err := r.schemaRef(p.Schema, base, inRoot); err != nil {
		return err
	}
	return r.examples(p.Examples, base, inRoot)
}

func (r *refSharer) headerRef(hr *openapi3.HeaderRef, base *url.URL, inRoot bool) error {
	if hr == nil {
		return nil
	}
	return shareRef(r, "headers", hr.Ref, hr.Value, base, inRoot,
		func(c *openapi3.Components) map[string]*openapi3.HeaderRef { return c.Headers },
		func(x *openapi3.HeaderRef) (string, *openapi3.Header) { return x.Ref, x.Value },
		r.header, func(v *openapi3.Header) { hr.Value = v })
}

func (r *refSharer) header(h *openapi3.Header, base *url.URL, inRoot bool) error {
	if h == nil {
		return nil
	}
	return r.parameter(&h.Parameter, base, inRoot)
}

func (r *refSharer) requestBodyRef(br *openapi3.RequestBodyRef, base *url.URL, inRoot bool) error {
	if br == nil {
		return nil
	}
	return shareRef(r, "requestBodies", br.Ref, br.Value, base, inRoot,
		func(c *openapi3.Components) map[string]*openapi3.RequestBodyRef { return c.RequestBodies },
		func(x *openapi3.RequestBodyRef) (string, *openapi3.RequestBody) { return x.Ref, x.Value },
		r.requestBody, func(v *openapi3.RequestBody) { br.Value = v })
}

func (r *refSharer) requestBody(b *openapi3.RequestBody, base *url.URL, inRoot bool) error {
	if b == nil || r.walked[b] {
		return nil
	}
	r.walked[b] = true
	return r.content(b.Content, base, inRoot)
}

func (r *refSharer) responseRef(rr *openapi3.ResponseRef, base *url.URL, inRoot bool) error {
	if rr == nil {
		return nil
	}
	return shareRef(r, "responses", rr.Ref, rr.Value, base, inRoot,
		func(c *openapi3.Components) map[string]*openapi3.ResponseRef { return c.Responses },
		func(x *openapi3.ResponseRef) (string, *openapi3.Response) { return x.Ref, x.Value },
		r.response, func(v *openapi3.Response) { rr.Value = v })
}

func (r *refSharer) response(resp *openapi3.Response, base *url.URL, inRoot bool) error {
	if resp == nil || r.walked[resp] {
		return nil
	}
	r.walked[resp] = true
	return firstError(
		func() error {
			return inOrder(resp.Headers, func(x *openapi3.HeaderRef) error { return r.headerRef(x, base, inRoot) })
		},
		func() error { return r.content(resp.Content, base, inRoot) },
		func() error {
			return inOrder(resp.Links, func(x *openapi3.LinkRef) error { return r.linkRef(x, base, inRoot) })
		},
	)
}

func (r *refSharer) content(c openapi3.Content, base *url.URL, inRoot bool) error {
	return inOrder(c, func(m *openapi3.MediaType) error {
		if m == nil {
			return nil
		}
		if m.ItemSchema != nil {
			return errNotShared // OpenAPI 3.2
		}
		if err := r.schemaRef(m.Schema, base, inRoot); err != nil {
			return err
		}
		// The loader resolves no encoding headers; neither does this.
		return r.examples(m.Examples, base, inRoot)
	})
}

func (r *refSharer) examples(ex openapi3.Examples, base *url.URL, inRoot bool) error {
	return inOrder(ex, func(x *openapi3.ExampleRef) error { return r.exampleRef(x, base, inRoot) })
}

func (r *refSharer) exampleRef(er *openapi3.ExampleRef, base *url.URL, inRoot bool) error {
	if er == nil {
		return nil
	}
	return shareRef(r, "examples", er.Ref, er.Value, base, inRoot,
		func(c *openapi3.Components) map[string]*openapi3.ExampleRef { return c.Examples },
		func(x *openapi3.ExampleRef) (string, *openapi3.Example) { return x.Ref, x.Value },
		noWalk[openapi3.Example], func(v *openapi3.Example) { er.Value = v })
}

func (r *refSharer) linkRef(lr *openapi3.LinkRef, base *url.URL, inRoot bool) error {
	if lr == nil {
		return nil
	}
	return shareRef(r, "links", lr.Ref, lr.Value, base, inRoot,
		func(c *openapi3.Components) map[string]*openapi3.LinkRef { return c.Links },
		func(x *openapi3.LinkRef) (string, *openapi3.Link) { return x.Ref, x.Value },
		noWalk[openapi3.Link], func(v *openapi3.Link) { lr.Value = v })
}
