package openapi

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/restmcp/restmcp/internal/yamltree"
	"gopkg.in/yaml.v3"
)

// Lenient loading. When kin-openapi refuses a document, the repairer
// walks the raw trees of the root document and of every file it
// references, checks every $ref itself, and repairs or drops what the
// loader cannot take, recording one Problem per defect:
//
//   - a $ref with no value, to a file that does not exist or lies outside
//     the spec root, or to a JSON pointer that does not resolve: the $ref
//     is removed (a schema becomes permissive, keeping its siblings such as
//     description); a parameter, request body or path item made of it is
//     dropped, a response keeps only a description;
//   - a local $ref ("#/components/…") in a referenced file that resolves
//     only in the root document (a common multi-file habit): rewritten to
//     point at the root document;
//   - OAS 3.1 references through a schema's $id or $anchor, which
//     kin-openapi does not resolve: rewritten to JSON pointers;
//   - "properties" holding a "$ref" entry (a misplaced reference): read as
//     allOf [{$ref}]; any other property that is not a schema is dropped;
//   - description, summary or title that is not a string: a $ref to text
//     is inlined, anything else is dropped.
//
// The repaired trees are then handed to kin-openapi as JSON, with the
// operations' shared response, parameter and request-body files each made
// one root component (hoist.go), so that the loader parses each once. Whatever it
// still refuses with a JSON pointer is dropped and the load retried, and
// operations that cannot be built are dropped by the builder.

// lenientFile is one document of a (multi-file) spec.
type lenientFile struct {
	abs  string // absolute path; "" for a root loaded from memory or a URL
	rel  string // name used in problems
	root *yaml.Node
	err  error // why the file could not be read or parsed
	// encoded is the repaired document as JSON, made once kin-openapi
	// first asks for it (it reads some files many times).
	encoded []byte
}

type idTarget struct {
	node *yaml.Node
	ptr  string
}

type repairer struct {
	mu           sync.Mutex // guards lenientFile.encoded during loading
	src          *source
	root         *lenientFile
	files        map[string]*lenientFile
	queue        []*lenientFile
	ids          map[string]idTarget
	fixups       []func()
	inlines      []func()
	inlined      map[*lenientFile][]string // operations inlined, by file, for one summary problem each
	inlinedOrder []*lenientFile
	inlinedLine  map[*lenientFile]int // line of the first inlined operation
	problems     []Problem
	// breaches are the references that leave the spec root (C02). Lenient
	// mode repairs nothing about them: they fail the load, as in strict
	// mode, since serving the operation with a permissive schema would hide
	// an attempt to read files or URLs the operator never exposed.
	breaches []error
}

// maxRefDepth bounds the chains of $refs followed while checking one pointer.
const maxRefDepth = 32

func newRepairer(src *source, tree *yaml.Node) *repairer {
	r := &repairer{src: src, files: map[string]*lenientFile{}, ids: map[string]idTarget{}}
	root := &lenientFile{rel: src.name, root: tree}
	if src.url != nil && src.dir != "" {
		root.abs = filepath.FromSlash(src.url.Path)
		root.rel = r.relName(root.abs)
		r.files[root.abs] = root
	}
	r.root = root
	return r
}

func (r *repairer) relName(abs string) string {
	if r.src.dir != "" {
		if rel, err := filepath.Rel(r.src.dir, abs); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return abs
}

// run checks and repairs the root document and every file reached from it.
func (r *repairer) run() {
	r.collectIDs(r.root.root, nil)
	r.queue = append(r.queue, r.root)
	for len(r.queue) > 0 {
		f := r.queue[0]
		r.queue = r.queue[1:]
		r.walk(f, f.root, nil, false)
	}
	for _, fn := range r.fixups {
		fn()
	}
	for _, fn := range r.inlines {
		fn()
	}
	r.fixups, r.inlines = nil, nil
	r.hoist()
	for _, f := range r.inlinedOrder {
		ops := r.inlined[f]
		r.problems = append(r.problems, Problem{Severity: SeverityWarning, File: f.rel, Pointer: "/paths", Line: r.inlinedLine[f],
			Message: fmt.Sprintf("%d operation(s) are given as $refs, which OpenAPI does not allow and the loader ignores (first: %s); inlined", len(ops), ops[0])})
	}
}

// isOperation reports whether toks points at an operation of a path item.
func isOperation(toks []string) bool {
	return len(toks) == 3 && (toks[0] == "paths" || toks[0] == "webhooks") && operationOf([]string{"paths", toks[1], toks[2]}) != ""
}

// inlineOperation replaces an operation given as a $ref by a copy of its
// target, with the copy's references rebased onto f. The copy is taken
// after every file's repairs are done.
func (r *repairer) inlineOperation(f *lenientFile, parent *yaml.Node, res resolution, toks []string, line int) {
	if r.inlined == nil {
		r.inlined = map[*lenientFile][]string{}
		r.inlinedLine = map[*lenientFile]int{}
	}
	if _, ok := r.inlined[f]; !ok {
		r.inlinedOrder = append(r.inlinedOrder, f)
		r.inlinedLine[f] = line
	}
	r.inlined[f] = append(r.inlined[f], operationOf(toks))
	r.inlines = append(r.inlines, func() {
		c := cloneNode(res.node)
		if c.Kind != yaml.MappingNode {
			return
		}
		r.rebase(c, res.file, f)
		parent.Content = c.Content
	})
}

// rebaseRef rewrites one reference written in file from so that it
// resolves from file to.
func (r *repairer) rebaseRef(ref string, from, to *lenientFile) string {
	filePart, frag, _ := strings.Cut(ref, "#")
	if isHTTPURL(filePart) || strings.HasPrefix(filePart, "/") {
		return ref
	}
	target := from
	if filePart != "" {
		p := filePart
		if u, err := url.PathUnescape(p); err == nil {
			p = u
		}
		target = &lenientFile{abs: filepath.Join(filepath.Dir(from.abs), filepath.FromSlash(p))}
	}
	return r.refTo(to, target, frag)
}

// rebase rewrites the references in n, copied from file from, so that
// they resolve from file to.
func (r *repairer) rebase(n *yaml.Node, from, to *lenientFile) {
	if from == to || from.abs == "" || to.abs == "" {
		return
	}
	r.rebaseIn(n, from, to, false)
}

// rebaseIn is rebase below n; nameMap: n's keys are names chosen by the
// document (properties, headers, responses …), so one that starts with
// "x-" names an entry, not an extension.
func (r *repairer) rebaseIn(n *yaml.Node, from, to *lenientFile, nameMap bool) {
	switch n.Kind {
	case yaml.SequenceNode:
		for _, c := range n.Content {
			r.rebaseIn(c, from, to, false)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			switch {
			case nameMap:
				r.rebaseIn(v, from, to, false)
			case strings.HasPrefix(k, "x-") || k == "example" || k == "value":
				// data; "default" and "enum" are not skipped here: under
				// responses, "default" is a response.
			case k == "$ref" && v.Kind == yaml.ScalarNode:
				v.Value = r.rebaseRef(v.Value, from, to)
			case k == "mapping" && v.Kind == yaml.MappingNode:
				// discriminator mapping values may be references too
				// (or, for a property named "mapping", schemas)
				for j := 1; j < len(v.Content); j += 2 {
					switch m := v.Content[j]; {
					case m.Kind != yaml.ScalarNode:
						r.rebaseIn(m, from, to, false)
					case strings.ContainsAny(m.Value, "#/") || hasDocExt(m.Value):
						m.Value = r.rebaseRef(m.Value, from, to)
					}
				}
			default:
				r.rebaseIn(v, from, to, nameMapKeys[k] && k != "mapping" && v.Kind == yaml.MappingNode)
			}
		}
	}
}

// hasDocExt reports whether s names a JSON or YAML file.
func hasDocExt(s string) bool {
	switch strings.ToLower(path.Ext(s)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}

func (r *repairer) add(sev Severity, f *lenientFile, toks []string, line int, msg string) {
	r.problems = append(r.problems, Problem{Severity: sev, File: f.rel, Pointer: jsonPointer(toks),
		Line: line, Operation: operationOf(toks), Message: msg})
}

// file returns the parsed document at an absolute path, reading it once.
func (r *repairer) file(abs string) *lenientFile {
	if f, ok := r.files[abs]; ok {
		return f
	}
	f := &lenientFile{abs: abs, rel: r.relName(abs)}
	r.files[abs] = f
	data, err := readFile(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		f.err = errors.New("file " + f.rel + " does not exist")
	case err != nil:
		f.err = fmt.Errorf("reading %s: %w", f.rel, err)
	default:
		if f.root, err = yamltree.Parse(data); err != nil {
			f.err = fmt.Errorf("parsing %s: %w", f.rel, err)
		} else {
			r.queue = append(r.queue, f)
		}
	}
	return f
}

// Keys whose values are data, not OpenAPI objects: never walked.
var dataKeys = map[string]bool{"example": true, "examples": true, "default": true, "enum": true, "const": true, "value": true}

// Keys whose mapping values are keyed by user-chosen names.
var nameMapKeys = map[string]bool{
	"properties": true, "patternProperties": true, "paths": true, "schemas": true, "responses": true,
	"parameters": true, "requestBodies": true, "headers": true, "securitySchemes": true,
	"securityDefinitions": true, "links": true, "callbacks": true, "pathItems": true, "content": true,
	"encoding": true, "definitions": true, "webhooks": true, "$defs": true, "dependentSchemas": true,
	"variables": true, "mapping": true, "scopes": true,
}

// Keys whose values must be strings.
var textKeys = map[string]bool{"description": true, "summary": true, "title": true}

func with(toks []string, t ...string) []string {
	return append(toks[:len(toks):len(toks)], t...)
}

func (r *repairer) walk(f *lenientFile, n *yaml.Node, toks []string, nameMap bool) {
	n = yamltree.Deref(n)
	switch n.Kind {
	case yaml.SequenceNode:
		for i, c := range n.Content {
			r.walk(f, c, with(toks, strconv.Itoa(i)), false)
		}
	case yaml.MappingNode:
		if nameMap {
			for i := 0; i+1 < len(n.Content); i += 2 {
				r.walk(f, n.Content[i+1], with(toks, n.Content[i].Value), false)
			}
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, yamltree.Deref(n.Content[i+1])
			switch {
			case strings.HasPrefix(k, "x-") || dataKeys[k] && k != "examples":
			case k == "examples":
				// Example Objects may be references; their values are data.
				if v.Kind == yaml.MappingNode {
					r.walk(f, v, with(toks, k), true)
				}
			case k == "$ref":
				r.checkRef(f, n, v, toks)
			case k == "properties" && v.Kind == yaml.MappingNode:
				r.repairProperties(f, n, v, with(toks, k))
				r.walk(f, v, with(toks, k), true)
			case textKeys[k] && v.Kind != yaml.ScalarNode:
				r.repairText(f, n, k, v, with(toks, k))
			default:
				r.walk(f, v, with(toks, k), nameMapKeys[k] && v.Kind == yaml.MappingNode)
			}
		}
	}
}

// checkRef checks the $ref of mapping parent (at toks in f).
func (r *repairer) checkRef(f *lenientFile, parent, v *yaml.Node, toks []string) {
	switch {
	case v.Kind != yaml.ScalarNode:
		r.dropRef(f, parent, toks, v.Line, "$ref is "+yamltree.KindName(v)+", not a string")
		return
	case v.ShortTag() == "!!null" || v.Value == "":
		r.dropRef(f, parent, toks, v.Line, `$ref has no value (in YAML an unquoted "#" starts a comment: quote the reference)`)
		return
	}
	res := r.resolve(f, v.Value, 0)
	if res.err != "" {
		r.dropRef(f, parent, toks, v.Line, fmt.Sprintf("$ref %q: %s", v.Value, res.err))
		return
	}
	if isOperation(toks) && res.node != nil {
		r.inlineOperation(f, parent, res, toks, v.Line)
		return
	}
	if res.rewrite != "" && res.rewrite != v.Value {
		r.add(SeverityWarning, f, toks, v.Line, fmt.Sprintf("$ref %q %s; rewritten to %q", v.Value, res.why, res.rewrite))
		v.Value, v.Style, v.Tag = res.rewrite, 0, "!!str"
	}
}

// resolution is the outcome of resolving one $ref.
type resolution struct {
	file    *lenientFile
	node    *yaml.Node
	rewrite string // the reference kin-openapi should use instead; "" to keep it
	why     string // why it was rewritten
	err     string // why it does not resolve; "" when it does
}

func (r *repairer) resolve(f *lenientFile, ref string, depth int) resolution {
	if depth > maxRefDepth {
		return resolution{err: "reference chain too long or circular"}
	}
	filePart, frag, _ := strings.Cut(ref, "#")
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	tf := f
	if filePart != "" {
		if id, ok := r.ids[filePart]; ok {
			ptr, node := id.ptr, id.node
			switch {
			case frag == "":
			case frag[0] == '/':
				ptr += frag
				node = yamltree.Lookup(r.root.root, ptr)
			default:
				ptr, node = findAnchor(id.node, id.ptr, frag)
			}
			if node == nil {
				return resolution{err: fmt.Sprintf("the schema with $id %q has no %q", filePart, frag)}
			}
			return resolution{file: r.root, node: node, rewrite: r.refTo(f, r.root, ptr),
				why: fmt.Sprintf("goes through the OAS 3.1 $id %q, which the loader does not resolve", filePart)}
		}
		if isHTTPURL(filePart) {
			u, err := url.Parse(filePart)
			if err != nil {
				return resolution{err: err.Error()}
			}
			if err := r.src.confine(u); err != nil {
				r.breaches = append(r.breaches, err)
				return resolution{err: refReason(err)}
			}
			return resolution{} // left to the loader
		}
		if f.abs == "" {
			if r.src.httpDir != "" {
				return resolution{} // a document fetched over http(s): left to the loader
			}
			return resolution{err: "external references need a document location; none was given"}
		}
		p := filePart
		if u, err := url.Parse(filePart); err == nil && len(u.Scheme) > 1 {
			// file:// and other schemes: confined (or refused) as the
			// loader's reader would, by their path.
			if err := r.src.confine(u); err != nil {
				r.breaches = append(r.breaches, err)
				return resolution{err: refReason(err)}
			}
			p = filepath.FromSlash(u.Path)
		} else if u, err := url.PathUnescape(p); err == nil {
			p = u
		}
		p = filepath.FromSlash(p)
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(f.abs), p)
		}
		if _, seen := r.files[p]; !seen { // files already read passed this check
			if err := r.src.confine(&url.URL{Path: filepath.ToSlash(p)}); err != nil {
				r.breaches = append(r.breaches, err)
				return resolution{err: refReason(err)}
			}
		}
		tf = r.file(p)
		if tf.err != nil {
			return resolution{err: tf.err.Error()}
		}
	}
	switch {
	case frag == "":
		return resolution{file: tf, node: tf.root}
	case frag[0] == '/':
		if n := r.lookup(tf, frag, depth); n != nil {
			return resolution{file: tf, node: n}
		}
		if tf != r.root && filePart == "" && r.root.root != nil {
			if n := r.lookup(r.root, frag, depth); n != nil {
				return resolution{file: r.root, node: n, rewrite: r.refTo(f, r.root, frag),
					why: fmt.Sprintf("does not resolve in %s but does in the root document", tf.rel)}
			}
		}
		return resolution{err: fmt.Sprintf("%s has no %s", tf.rel, frag)}
	default:
		ptr, n := findAnchor(tf.root, "", frag)
		if n == nil {
			return resolution{err: fmt.Sprintf("%s has no $anchor %q", tf.rel, frag)}
		}
		return resolution{file: tf, node: n, rewrite: r.refTo(f, tf, ptr),
			why: "uses an OAS 3.1 $anchor, which the loader does not resolve"}
	}
}

func refReason(err error) string {
	var re *RefError
	if errors.As(err, &re) {
		return re.Reason
	}
	return err.Error()
}

// lookup resolves a JSON pointer in f, following $refs met on the way
// (a pointer into a schema that is itself a reference).
func (r *repairer) lookup(f *lenientFile, ptr string, depth int) *yaml.Node {
	n := yamltree.Deref(f.root)
	for _, t := range yamltree.PointerTokens(ptr) {
		for n.Kind == yaml.MappingNode {
			if v, _ := yamltree.Get(n, t); v != nil {
				break
			}
			ref, _ := yamltree.Get(n, "$ref")
			if ref == nil || ref.Kind != yaml.ScalarNode {
				return nil
			}
			res := r.resolve(f, ref.Value, depth+1)
			if res.node == nil {
				return nil
			}
			n, f = yamltree.Deref(res.node), res.file
		}
		if n = yamltree.Child(n, t); n == nil {
			return nil
		}
	}
	return n
}

// refTo returns a reference from file from to pointer ptr in file to.
func (r *repairer) refTo(from, to *lenientFile, ptr string) string {
	if from == to || to.abs == "" || from.abs == to.abs {
		return "#" + ptr
	}
	rel, err := filepath.Rel(filepath.Dir(from.abs), to.abs)
	if err != nil {
		rel = to.abs
	}
	return filepath.ToSlash(rel) + "#" + ptr
}

// collectIDs records the OAS 3.1 schema $ids of the root document.
func (r *repairer) collectIDs(n *yaml.Node, toks []string) {
	n = yamltree.Deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		if id, _ := yamltree.Get(n, "$id"); id != nil && id.Kind == yaml.ScalarNode && id.Value != "" {
			if _, dup := r.ids[id.Value]; !dup {
				r.ids[id.Value] = idTarget{node: n, ptr: jsonPointer(toks)}
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; !strings.HasPrefix(k, "x-") && !dataKeys[k] {
				r.collectIDs(n.Content[i+1], with(toks, k))
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			r.collectIDs(c, with(toks, strconv.Itoa(i)))
		}
	}
}

// findAnchor finds the schema with "$anchor: name" under n (at pointer base).
func findAnchor(n *yaml.Node, base, name string) (string, *yaml.Node) {
	n = yamltree.Deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		if a, _ := yamltree.Get(n, "$anchor"); a != nil && a.Value == name {
			return base, n
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			if strings.HasPrefix(k, "x-") || dataKeys[k] {
				continue
			}
			if p, m := findAnchor(n.Content[i+1], base+"/"+escapeToken(k), name); m != nil {
				return p, m
			}
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if p, m := findAnchor(c, base+"/"+strconv.Itoa(i), name); m != nil {
				return p, m
			}
		}
	}
	return "", nil
}

// escapeToken escapes one JSON pointer reference token (RFC 6901 §4).
func escapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// dropRef removes a $ref that cannot be resolved, choosing what replaces
// it from where it stands.
func (r *repairer) dropRef(f *lenientFile, parent *yaml.Node, toks []string, line int, msg string) {
	n := len(toks)
	inPaths := n > 0 && toks[0] == "paths"
	switch {
	case n >= 2 && toks[n-2] == "parameters" && isSeq(yamltree.Lookup(f.root, jsonPointer(toks[:n-1]))):
		container := yamltree.Lookup(f.root, jsonPointer(toks[:n-1]))
		r.fixups = append(r.fixups, func() { seqDelete(container, parent) })
		msg += "; parameter dropped"
	case n > 0 && toks[n-1] == "requestBody":
		container := yamltree.Lookup(f.root, jsonPointer(toks[:n-1]))
		r.fixups = append(r.fixups, func() { yamltree.Delete(container, "requestBody") })
		msg += "; request body dropped"
	case inPaths && n == 2:
		container := yamltree.Lookup(f.root, "/paths")
		key := toks[1]
		r.fixups = append(r.fixups, func() { yamltree.Delete(container, key) })
		msg += "; path item dropped"
	case n >= 2 && toks[n-2] == "responses":
		r.fixups = append(r.fixups, func() {
			yamltree.Delete(parent, "$ref")
			if d, _ := yamltree.Get(parent, "description"); d == nil {
				yamltree.Set(parent, "description", yamltree.Str("unresolved reference"))
			}
		})
		msg += "; response replaced by one without content"
	default:
		r.fixups = append(r.fixups, func() { yamltree.Delete(parent, "$ref") })
		msg += "; replaced by an empty (permissive) schema"
	}
	r.add(SeverityError, f, toks, line, msg)
}

func isSeq(n *yaml.Node) bool { return n != nil && n.Kind == yaml.SequenceNode }

func seqDelete(seq, elem *yaml.Node) {
	if !isSeq(seq) {
		return
	}
	for i, c := range seq.Content {
		if yamltree.Deref(c) == elem {
			seq.Content = append(seq.Content[:i:i], seq.Content[i+1:]...)
			return
		}
	}
}

// repairProperties handles a "properties" object whose entries are not
// schemas: a "$ref" entry becomes allOf [{$ref}] on the schema, anything
// else is dropped.
func (r *repairer) repairProperties(f *lenientFile, schema, props *yaml.Node, toks []string) {
	kept := props.Content[:0:0]
	for i := 0; i+1 < len(props.Content); i += 2 {
		k, v := props.Content[i], yamltree.Deref(props.Content[i+1])
		if v.Kind == yaml.MappingNode || v.Kind == yaml.ScalarNode && v.ShortTag() == "!!bool" {
			kept = append(kept, props.Content[i], props.Content[i+1])
			continue
		}
		if k.Value == "$ref" && v.Kind == yaml.ScalarNode && v.Value != "" {
			ref := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{yamltree.Str("$ref"), yamltree.Str(v.Value)}}
			all, _ := yamltree.Get(schema, "allOf")
			if all == nil || all.Kind != yaml.SequenceNode {
				all = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
				yamltree.Set(schema, "allOf", all)
			}
			all.Content = append(all.Content, ref)
			r.add(SeverityError, f, with(toks, "$ref"), k.Line,
				fmt.Sprintf(`"properties" holds a "$ref" entry (%q) instead of property schemas; read as allOf: [{$ref: %q}]`, v.Value, v.Value))
			continue
		}
		r.add(SeverityError, f, with(toks, k.Value), k.Line,
			fmt.Sprintf("property %q is %s, not a schema; dropped", k.Value, yamltree.KindName(v)))
	}
	props.Content = kept
}

// repairText handles a description, summary or title that is not a
// string: a $ref to a string is inlined, anything else dropped.
func (r *repairer) repairText(f *lenientFile, parent *yaml.Node, key string, v *yaml.Node, toks []string) {
	if ref, _ := yamltree.Get(v, "$ref"); ref != nil && ref.Kind == yaml.ScalarNode && len(v.Content) == 2 {
		res := r.resolve(f, ref.Value, 0)
		if res.err == "" && res.node != nil && yamltree.Deref(res.node).Kind == yaml.ScalarNode {
			yamltree.Set(parent, key, yamltree.Str(yamltree.Deref(res.node).Value))
			r.add(SeverityWarning, f, toks, v.Line,
				fmt.Sprintf("%s is a $ref (%q), not a string; the referenced text was inlined", key, ref.Value))
			return
		}
	}
	r.fixups = append(r.fixups, func() { yamltree.Delete(parent, key) })
	r.add(SeverityError, f, toks, v.Line, fmt.Sprintf("%s is %s, not a string; dropped", key, yamltree.KindName(v)))
}

// loaderPointerRE matches what kin-openapi's YAML errors say about one
// node: "line N: <reason> in /tags/0/description". The line refers to the
// JSON the repairer handed over, so only the pointer is used.
var loaderPointerRE = regexp.MustCompile(`line \d+: ([^;]*?) in (/[^\s;]*)`)

// dropLoaderErrors removes, from the root document, every node a loader
// error names; it reports whether anything was removed.
func (r *repairer) dropLoaderErrors(err error) bool {
	removed := false
	for _, m := range loaderPointerRE.FindAllStringSubmatch(err.Error(), -1) {
		ptr := m[2]
		toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
		for i, t := range toks {
			toks[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
		}
		parent := yamltree.Lookup(r.root.root, jsonPointer(toks[:len(toks)-1]))
		if parent == nil {
			continue
		}
		last := toks[len(toks)-1]
		line := 0
		if n := yamltree.Lookup(r.root.root, jsonPointer(toks)); n != nil {
			line = n.Line // the tree keeps the source document's lines
		}
		ok := false
		switch parent.Kind {
		case yaml.MappingNode:
			ok = yamltree.Delete(parent, last)
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(last); err == nil && i < len(parent.Content) {
				parent.Content = append(parent.Content[:i:i], parent.Content[i+1:]...)
				ok = true
			}
		}
		if ok {
			removed = true
			r.root.encoded = nil
			r.add(SeverityError, r.root, toks, line, "the loader refuses this node ("+m[1]+"); dropped")
		}
	}
	return removed
}

// serve returns the repaired bytes of an external file, or nil when the
// repairer never read it.
func (r *repairer) serve(u *url.URL) []byte {
	if u.Scheme != "" && u.Scheme != "file" {
		return nil
	}
	f, ok := r.files[filepath.Clean(filepath.FromSlash(u.Path))]
	if !ok || f.root == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if f.encoded == nil {
		f.encoded = yamltree.EncodeJSON(f.root)
	}
	return f.encoded
}
