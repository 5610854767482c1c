package kindecode

import (
	"bytes"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// This file is the path item side of the one-pass decoder (fastdecode.go):
// PathItem, Operation, Parameter, RequestBody, Response, Responses,
// MediaType, Header and Example, with their Reference Objects.

// decodePathItem returns the path item that kin-openapi decodes from raw, a
// JSON value that json.Valid has accepted, with the same error. With canon
// false that is PathItem.UnmarshalJSON(raw); with canon true it is the path
// item that Paths.UnmarshalJSON gives for raw as a member of "paths" (which
// decodes the json.Marshal encoding of raw's map[string]any decoding). The
// usual shapes are decoded in one pass and any other node is handed to
// kin-openapi; on any error the whole value is decoded by kin-openapi
// again.
func decodePathItem(raw []byte, canon bool) (*openapi3.PathItem, error) {
	return decodePathItemCounting(raw, canon, nil)
}

func decodePathItemCounting(raw []byte, canon bool, fallbacks map[string]int) (*openapi3.PathItem, error) {
	d := fastDecoder{Parser: jsonvalue.Parser{B: raw}, canon: canon, fallbacks: fallbacks}
	d.Space()
	if d.peek() == '{' {
		it := &openapi3.PathItem{}
		if err := decodeFields(&d, it, pathItemField, &it.Extensions); err == nil {
			return it, nil
		}
	}
	if fallbacks != nil {
		fallbacks["pathItem"]++
	}
	// PathItem.UnmarshalJSON is called on a fresh value (Paths does so
	// directly, not through a pointer, so null gives an empty path item).
	if canon {
		c, err := reencodeJSON(raw)
		if err != nil {
			return nil, err
		}
		raw = c
	}
	it := &openapi3.PathItem{}
	err := it.UnmarshalJSON(raw)
	return it, err
}

// pathItemPart decodes the fields of path item types into ptr, as field
// does; ok is false for other field types.
func (d *fastDecoder) pathItemPart(ptr any) (ok bool, err error) {
	switch p := ptr.(type) {
	case *openapi3.Parameters:
		return true, decodeSlice(d, p, (*fastDecoder).parameterRef)
	case **openapi3.RequestBodyRef:
		v, err := d.requestBodyRef()
		*p = v
		return true, err
	case **openapi3.Responses:
		return true, d.responses(p)
	case *openapi3.Headers:
		return true, decodeMap(d, p, (*fastDecoder).headerRef)
	case *openapi3.Content:
		return true, decodeMap(d, p, (*fastDecoder).mediaType)
	case *openapi3.Examples:
		return true, decodeMap(d, p, (*fastDecoder).exampleRef)
	case **openapi3.Operation:
		v, err := d.operation()
		*p = v
		return true, err
	case **openapi3.SecurityRequirements:
		// Maps and slices of strings: the same in either mode.
		return true, d.plain(ptr)
	}
	return false, nil
}

// parameterRef, headerRef, requestBodyRef, responseRef and exampleRef
// decode a node as json.Unmarshal into a pointer to their Ref type does
// (see refNode).
func (d *fastDecoder) parameterRef() (*openapi3.ParameterRef, error) {
	return refNode(d, "parameter", parameterField,
		func(p *openapi3.Parameter) *map[string]any { return &p.Extensions },
		func(ref string) *openapi3.ParameterRef { return &openapi3.ParameterRef{Ref: ref} },
		func(p *openapi3.Parameter) *openapi3.ParameterRef { return &openapi3.ParameterRef{Value: p} })
}

func (d *fastDecoder) headerRef() (*openapi3.HeaderRef, error) {
	return refNode(d, "header", headerField,
		func(h *openapi3.Header) *map[string]any { return &h.Extensions },
		func(ref string) *openapi3.HeaderRef { return &openapi3.HeaderRef{Ref: ref} },
		func(h *openapi3.Header) *openapi3.HeaderRef { return &openapi3.HeaderRef{Value: h} })
}

func (d *fastDecoder) requestBodyRef() (*openapi3.RequestBodyRef, error) {
	return refNode(d, "requestBody", requestBodyField,
		func(r *openapi3.RequestBody) *map[string]any { return &r.Extensions },
		func(ref string) *openapi3.RequestBodyRef { return &openapi3.RequestBodyRef{Ref: ref} },
		func(r *openapi3.RequestBody) *openapi3.RequestBodyRef { return &openapi3.RequestBodyRef{Value: r} })
}

func (d *fastDecoder) responseRef() (*openapi3.ResponseRef, error) {
	return refNode(d, "response", responseField,
		func(r *openapi3.Response) *map[string]any { return &r.Extensions },
		func(ref string) *openapi3.ResponseRef { return &openapi3.ResponseRef{Ref: ref} },
		func(r *openapi3.Response) *openapi3.ResponseRef { return &openapi3.ResponseRef{Value: r} })
}

func (d *fastDecoder) exampleRef() (*openapi3.ExampleRef, error) {
	return refNode(d, "example", exampleField,
		func(e *openapi3.Example) *map[string]any { return &e.Extensions },
		func(ref string) *openapi3.ExampleRef { return &openapi3.ExampleRef{Ref: ref} },
		func(e *openapi3.Example) *openapi3.ExampleRef { return &openapi3.ExampleRef{Value: e} })
}

// node decodes an object that is not a Reference Object (Operation,
// MediaType) field by field, or hands it to kin-openapi.
func node[V any](d *fastDecoder, kind string, field func(*V, []byte) (uint, any), ext func(*V) *map[string]any) (*V, error) {
	start := d.I
	if d.peek() == '{' {
		v := new(V)
		err := decodeFields(d, v, field, ext(v))
		if err == nil {
			return v, nil
		}
		if err != errUnusual {
			return nil, err
		}
	}
	return fallback[*V](d, start, kind)
}

// operation and mediaType decode a node as json.Unmarshal into a pointer
// to their type does (see node).
func (d *fastDecoder) operation() (*openapi3.Operation, error) {
	return node(d, "operation", operationField,
		func(o *openapi3.Operation) *map[string]any { return &o.Extensions })
}

func (d *fastDecoder) mediaType() (*openapi3.MediaType, error) {
	return node(d, "mediaType", mediaTypeField,
		func(m *openapi3.MediaType) *map[string]any { return &m.Extensions })
}

// responses decodes an operation's responses as Responses.UnmarshalJSON
// does: x- members are extensions and every other member is a response
// decoded from its canonical encoding, hence in canonical mode. Null
// (which sets unexported state), null members (which Responses decodes
// as an empty ResponseRef, unlike a pointer field) and duplicate keys are
// errUnusual.
func (d *fastDecoder) responses(p **openapi3.Responses) error {
	if d.peek() != '{' {
		return errUnusual
	}
	canon := d.canon
	d.canon = true
	defer func() { d.canon = canon }()
	r := openapi3.NewResponsesWithCapacity(0)
	r.Extensions = map[string]any{}
	err := d.object(func(k []byte) error {
		key := string(k)
		if _, dup := r.Extensions[key]; dup || r.Value(key) != nil {
			return errUnusual
		}
		if bytes.HasPrefix(k, []byte("x-")) {
			v, err := d.any()
			r.Extensions[key] = v
			return err
		}
		if d.peek() == 'n' {
			return errUnusual
		}
		v, err := d.responseRef()
		r.Set(key, v)
		return err
	})
	*p = r
	return err
}

// The field functions of path item types, as schemaField for Schema.

func pathItemField(it *openapi3.PathItem, k []byte) (uint, any) {
	switch string(k) {
	case "$ref":
		return 0, &it.Ref
	case "summary":
		return 1, &it.Summary
	case "description":
		return 2, &it.Description
	case "connect":
		return 3, &it.Connect
	case "delete":
		return 4, &it.Delete
	case "get":
		return 5, &it.Get
	case "head":
		return 6, &it.Head
	case "options":
		return 7, &it.Options
	case "patch":
		return 8, &it.Patch
	case "post":
		return 9, &it.Post
	case "put":
		return 10, &it.Put
	case "trace":
		return 11, &it.Trace
	case "query":
		return 12, &it.Query
	case "servers":
		return 13, &it.Servers
	case "parameters":
		return 14, &it.Parameters
	case "additionalOperations":
		return 15, &it.AdditionalOperations
	}
	return 0, nil
}

func operationField(o *openapi3.Operation, k []byte) (uint, any) {
	switch string(k) {
	case "tags":
		return 0, &o.Tags
	case "summary":
		return 1, &o.Summary
	case "description":
		return 2, &o.Description
	case "operationId":
		return 3, &o.OperationID
	case "parameters":
		return 4, &o.Parameters
	case "requestBody":
		return 5, &o.RequestBody
	case "responses":
		return 6, &o.Responses
	case "callbacks":
		return 7, &o.Callbacks
	case "deprecated":
		return 8, &o.Deprecated
	case "security":
		return 9, &o.Security
	case "servers":
		return 10, &o.Servers
	case "externalDocs":
		return 11, &o.ExternalDocs
	}
	return 0, nil
}

func parameterField(p *openapi3.Parameter, k []byte) (uint, any) {
	switch string(k) {
	case "name":
		return 0, &p.Name
	case "in":
		return 1, &p.In
	case "description":
		return 2, &p.Description
	case "style":
		return 3, &p.Style
	case "explode":
		return 4, &p.Explode
	case "allowEmptyValue":
		return 5, &p.AllowEmptyValue
	case "allowReserved":
		return 6, &p.AllowReserved
	case "deprecated":
		return 7, &p.Deprecated
	case "required":
		return 8, &p.Required
	case "schema":
		return 9, &p.Schema
	case "example":
		return 10, &p.Example
	case "examples":
		return 11, &p.Examples
	case "content":
		return 12, &p.Content
	}
	return 0, nil
}

// headerField: Header.UnmarshalJSON is Parameter.UnmarshalJSON of the
// embedded Parameter.
func headerField(h *openapi3.Header, k []byte) (uint, any) {
	return parameterField(&h.Parameter, k)
}

func requestBodyField(r *openapi3.RequestBody, k []byte) (uint, any) {
	switch string(k) {
	case "description":
		return 0, &r.Description
	case "required":
		return 1, &r.Required
	case "content":
		return 2, &r.Content
	}
	return 0, nil
}

func responseField(r *openapi3.Response, k []byte) (uint, any) {
	switch string(k) {
	case "description":
		return 0, &r.Description
	case "headers":
		return 1, &r.Headers
	case "content":
		return 2, &r.Content
	case "links":
		return 3, &r.Links
	}
	return 0, nil
}

func mediaTypeField(m *openapi3.MediaType, k []byte) (uint, any) {
	switch string(k) {
	case "schema":
		return 0, &m.Schema
	case "itemSchema":
		return 1, &m.ItemSchema
	case "example":
		return 2, &m.Example
	case "examples":
		return 3, &m.Examples
	case "encoding":
		return 4, &m.Encoding
	}
	return 0, nil
}

func exampleField(e *openapi3.Example, k []byte) (uint, any) {
	switch string(k) {
	case "summary":
		return 0, &e.Summary
	case "description":
		return 1, &e.Description
	case "value":
		return 2, &e.Value
	case "externalValue":
		return 3, &e.ExternalValue
	}
	return 0, nil
}
