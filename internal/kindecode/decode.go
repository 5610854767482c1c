package kindecode

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// decodeV3JSON is json.Unmarshal(data, doc) for an OAS 3 JSON document,
// about twice as fast on large documents. kin-openapi's decoders read the
// document several times over: T.UnmarshalJSON decodes the whole document
// a second time into a map only to find its x- extensions, and
// Paths.UnmarshalJSON decodes every path item into map[string]any,
// re-encodes it and decodes it again. Here the top-level members are split
// without decoding, and "components", each component schema and each path
// item are decoded on their own, on GOMAXPROCS goroutines (they share
// nothing until ResolveRefsIn); schemas and path items go through the
// one-pass decoder of fastdecode.go, which gives kin-openapi's values
// without its repeated decoding of every subtree. The result is the same
// document; on any error, or on a shape this does not handle, the plain
// json.Unmarshal runs instead, so errors read exactly as before.
func decodeV3JSON(data []byte, doc *openapi3.T) error {
	if d, ok := decodeV3Split(data); ok {
		*doc = *d
		return nil
	}
	return json.Unmarshal(data, doc)
}

func decodeV3Split(data []byte) (*openapi3.T, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	rest, taken, ok := splitOut(data, "paths", "components")
	if !ok {
		return nil, false
	}
	pathsRaw, compRaw := taken[0], taken[1]
	if pathsRaw == nil || bytes.Equal(pathsRaw, []byte("null")) {
		return nil, false
	}
	paths, ok := jsonvalue.Members(pathsRaw)
	if !ok {
		return nil, false
	}

	doc := &openapi3.T{}
	var comp *openapi3.Components
	items := make([]*openapi3.PathItem, len(paths))
	exts := map[string]any{}
	var tasks []func() error
	tasks = append(tasks, func() error { return json.Unmarshal(rest, doc) })
	var compSchemas []jsonvalue.Member
	var compSchemaRefs []*openapi3.SchemaRef
	if compRaw != nil {
		// Component schemas are decoded one task each, like path items:
		// on Stripe they are most of the document.
		compRest, schemas, ok := splitComponents(compRaw)
		if ok {
			comp = &openapi3.Components{}
			compSchemas = schemas
			compSchemaRefs = make([]*openapi3.SchemaRef, len(schemas))
			tasks = append(tasks, func() error { return json.Unmarshal(compRest, comp) })
			for i, m := range schemas {
				tasks = append(tasks, func() error {
					sr, err := decodeSchemaRef(m.Raw)
					compSchemaRefs[i] = sr
					return err
				})
			}
		} else {
			tasks = append(tasks, func() error {
				if bytes.Equal(compRaw, []byte("null")) {
					return nil
				}
				comp = &openapi3.Components{}
				return json.Unmarshal(compRaw, comp)
			})
		}
	}
	for i, m := range paths {
		if strings.HasPrefix(m.Key, "x-") {
			var v any
			if err := json.Unmarshal(m.Raw, &v); err != nil {
				return nil, false
			}
			exts[m.Key] = v
			continue
		}
		tasks = append(tasks, func() error {
			// As Paths.UnmarshalJSON decodes it: from the json.Marshal
			// encoding of its map[string]any decoding.
			it, err := decodePathItem(m.Raw, true)
			if err != nil {
				return err
			}
			items[i] = it
			return nil
		})
	}
	if !runParallel(tasks) {
		return nil, false
	}
	if compSchemas != nil {
		comp.Schemas = make(openapi3.Schemas, len(compSchemas))
		for i, m := range compSchemas {
			comp.Schemas[m.Key] = compSchemaRefs[i]
		}
	}
	doc.Components = comp
	doc.Paths = openapi3.NewPathsWithCapacity(len(paths))
	doc.Paths.Extensions = exts
	for i, m := range paths {
		if items[i] != nil {
			doc.Paths.Set(m.Key, items[i])
		}
	}
	return doc, true
}

// decodeV2 is openapi2.UnmarshalFromData for a Swagger 2.0 document. For
// JSON it splits the document like decodeV3JSON: "paths" and
// "definitions" members are decoded one by one in parallel, with the
// one-pass decoder of fastdecode_swagger2.go, and the rest of the document
// without them, which spares kin-openapi's second, generic decode of the
// whole document for its x- extensions. Anything else, or any error, goes
// through openapi2.UnmarshalFromData.
func decodeV2(data []byte, doc *openapi2.T) error {
	if jsonvalue.LooksLikeObject(data) {
		if d, ok := decodeV2Split(data); ok {
			*doc = *d
			return nil
		}
	}
	return openapi2.UnmarshalFromData(data, doc)
}

func decodeV2Split(data []byte) (*openapi2.T, bool) {
	if !json.Valid(data) {
		return nil, false
	}
	rest, taken, ok := splitOut(data, "paths", "definitions")
	if !ok {
		return nil, false
	}
	pathsRaw, defsRaw := taken[0], taken[1]
	var paths, defs []jsonvalue.Member
	if pathsRaw != nil {
		if paths, ok = jsonvalue.Members(pathsRaw); !ok {
			return nil, false
		}
	}
	if defsRaw != nil {
		if defs, ok = jsonvalue.Members(defsRaw); !ok {
			return nil, false
		}
	}
	doc := &openapi2.T{}
	items := make([]*openapi2.PathItem, len(paths))
	schemas := make([]*openapi2.SchemaRef, len(defs))
	tasks := []func() error{func() error { return json.Unmarshal(rest, doc) }}
	for i, m := range paths {
		tasks = append(tasks, func() error {
			it, err := decodeV2PathItem(m.Raw)
			items[i] = it
			return err
		})
	}
	for i, m := range defs {
		tasks = append(tasks, func() error {
			sr, err := decodeV2SchemaRef(m.Raw)
			schemas[i] = sr
			return err
		})
	}
	if !runParallel(tasks) {
		return nil, false
	}
	if pathsRaw != nil && !bytes.Equal(pathsRaw, []byte("null")) {
		doc.Paths = make(map[string]*openapi2.PathItem, len(paths))
		for i, m := range paths {
			doc.Paths[m.Key] = items[i]
		}
	}
	if defsRaw != nil && !bytes.Equal(defsRaw, []byte("null")) {
		doc.Definitions = make(map[string]*openapi2.SchemaRef, len(defs))
		for i, m := range defs {
			doc.Definitions[m.Key] = schemas[i]
		}
	}
	return doc, true
}

// splitComponents splits a components object into the object without its
// "schemas" member and that member's entries. ok is false (decode it whole)
// unless "schemas" occurs once, spelled exactly, and is an object.
func splitComponents(raw []byte) (rest []byte, schemas []jsonvalue.Member, ok bool) {
	rest, taken, ok := splitOut(raw, "schemas")
	if !ok {
		return nil, nil, false
	}
	schemasRaw := taken[0]
	if schemasRaw == nil {
		return nil, nil, false
	}
	if schemas, ok = jsonvalue.Members(schemasRaw); !ok {
		return nil, nil, false
	}
	if schemas == nil {
		schemas = []jsonvalue.Member{}
	}
	return rest, schemas, true
}

// splitOut parses the JSON object raw and takes out the members named in
// names: it returns the object without them and their raw values, in the
// order of names (nil for an absent member). ok is false (the caller then
// decodes the whole document the ordinary way) when raw is not an object,
// or when a name occurs twice or in another letter case, where
// encoding/json's case-insensitive, last-wins field matching would differ.
func splitOut(raw []byte, names ...string) (rest []byte, taken [][]byte, ok bool) {
	members, ok := jsonvalue.Members(raw)
	if !ok {
		return nil, nil, false
	}
	taken = make([][]byte, len(names))
	var buf bytes.Buffer
	buf.WriteByte('{')
members:
	for _, m := range members {
		for i, name := range names {
			if !strings.EqualFold(m.Key, name) {
				continue
			}
			if m.Key != name || taken[i] != nil {
				return nil, nil, false
			}
			taken[i] = m.Raw
			continue members
		}
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		jsonvalue.WriteString(&buf, m.Key)
		buf.WriteByte(':')
		buf.Write(m.Raw)
	}
	buf.WriteByte('}')
	return buf.Bytes(), taken, true
}

// runParallel runs tasks on GOMAXPROCS goroutines and reports whether all
// succeeded.
func runParallel(tasks []func() error) bool {
	workers := min(runtime.GOMAXPROCS(0), len(tasks))
	var mu sync.Mutex
	ok := true
	var wg sync.WaitGroup
	// Tasks are taken in order as workers free up: their sizes vary a lot
	// (components is one large task), so a fixed split leaves a core idle.
	var next atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(tasks) {
					return
				}
				if err := tasks[i](); err != nil {
					mu.Lock()
					ok = false
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return ok
}
