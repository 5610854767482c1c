package kindecode

import (
	"encoding/json"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// This file is the Swagger 2.0 side of the one-pass decoder (fastdecode.go):
// openapi2's PathItem, Operation, Parameter, Responses, Response, Header,
// Schema and SchemaRef. kin-openapi's openapi2 decoders read every subtree
// several times over like the OAS 3 ones, but none of them re-encodes its
// entries (Responses decodes each member's raw bytes), so only the
// additionalProperties schemas, which are openapi3 values, are decoded in
// canonical mode.

// decodeV2SchemaRef returns the *openapi2.SchemaRef and error that
// json.Unmarshal(raw, &sr) gives for a JSON value raw that json.Valid has
// accepted (nil for null), decoding the usual shapes in one pass and
// handing any other node to kin-openapi. On any error the whole value is
// decoded by json.Unmarshal again, so the error and the partial value are
// kin-openapi's.
func decodeV2SchemaRef(raw []byte) (*openapi2.SchemaRef, error) {
	return decodeV2SchemaRefCounting(raw, nil)
}

func decodeV2SchemaRefCounting(raw []byte, fallbacks map[string]int) (*openapi2.SchemaRef, error) {
	d := fastDecoder{Parser: jsonvalue.Parser{B: raw}, fallbacks: fallbacks}
	d.Space()
	if sr, err := d.v2SchemaRef(); err == nil {
		return sr, nil
	}
	var sr *openapi2.SchemaRef
	err := json.Unmarshal(raw, &sr)
	return sr, err
}

// decodeV2PathItem returns the *openapi2.PathItem and error that
// json.Unmarshal(raw, &it) gives for a JSON value raw that json.Valid has
// accepted (nil for null), decoding the usual shapes in one pass and
// handing any other node to kin-openapi. On any error the whole value is
// decoded by json.Unmarshal again.
func decodeV2PathItem(raw []byte) (*openapi2.PathItem, error) {
	return decodeV2PathItemCounting(raw, nil)
}

func decodeV2PathItemCounting(raw []byte, fallbacks map[string]int) (*openapi2.PathItem, error) {
	d := fastDecoder{Parser: jsonvalue.Parser{B: raw}, fallbacks: fallbacks}
	d.Space()
	if it, err := node(&d, "pathItem", v2PathItemField,
		func(it *openapi2.PathItem) *map[string]any { return &it.Extensions }); err == nil {
		return it, nil
	}
	var it *openapi2.PathItem
	err := json.Unmarshal(raw, &it)
	return it, err
}

// swagger2Part decodes the fields of openapi2 types into ptr, as field
// does; ok is false for other field types.
func (d *fastDecoder) swagger2Part(ptr any) (ok bool, err error) {
	switch p := ptr.(type) {
	case **openapi2.SchemaRef:
		v, err := d.v2SchemaRef()
		*p = v
		return true, err
	case *openapi2.SchemaRefs:
		return true, decodeSlice(d, p, (*fastDecoder).v2SchemaRef)
	case *openapi2.Schemas:
		return true, decodeMap(d, p, (*fastDecoder).v2SchemaRef)
	case *openapi2.Parameters:
		return true, decodeSlice(d, p, (*fastDecoder).v2Parameter)
	case **openapi2.Operation:
		v, err := node(d, "operation", v2OperationField,
			func(o *openapi2.Operation) *map[string]any { return &o.Extensions })
		*p = v
		return true, err
	case **openapi2.Responses:
		return true, d.v2Responses(p)
	case *map[string]*openapi2.Header:
		return true, decodeMap(d, p, (*fastDecoder).v2Header)
	case **openapi2.SecurityRequirements, *map[string]any:
		// Maps and slices of strings, and any values.
		return true, d.plain(ptr)
	}
	return false, nil
}

// v2SchemaRef decodes a schema or a reference to one, as json.Unmarshal
// into a *openapi2.SchemaRef does (see refNode).
func (d *fastDecoder) v2SchemaRef() (*openapi2.SchemaRef, error) {
	return refNode(d, "schema", v2SchemaField,
		func(s *openapi2.Schema) *map[string]any { return &s.Extensions },
		func(ref string) *openapi2.SchemaRef { return &openapi2.SchemaRef{Ref: ref} },
		func(s *openapi2.Schema) *openapi2.SchemaRef { return &openapi2.SchemaRef{Value: s} })
}

// v2Parameter and v2Header decode a node as json.Unmarshal into a pointer
// to their type does (see node); $ref is an ordinary field of both.
func (d *fastDecoder) v2Parameter() (*openapi2.Parameter, error) {
	return node(d, "parameter", v2ParameterField,
		func(p *openapi2.Parameter) *map[string]any { return &p.Extensions })
}

func (d *fastDecoder) v2Header() (*openapi2.Header, error) {
	return node(d, "header", v2HeaderField,
		func(h *openapi2.Header) *map[string]any { return &h.Extensions })
}

// v2Responses decodes an operation's responses as
// openapi2.Responses.UnmarshalJSON does: x- members are extensions (nil
// when there are none) and every other member is a *Response decoded from
// its own bytes. Null and duplicate keys are errUnusual.
func (d *fastDecoder) v2Responses(p **openapi2.Responses) error {
	if d.peek() != '{' {
		return errUnusual
	}
	r := openapi2.NewResponsesWithCapacity(0)
	seen := map[string]bool{}
	err := d.object(func(k []byte) error {
		key := string(k)
		if seen[key] {
			return errUnusual
		}
		seen[key] = true
		if len(key) >= 2 && key[:2] == "x-" {
			v, err := d.any()
			if r.Extensions == nil {
				r.Extensions = map[string]any{}
			}
			r.Extensions[key] = v
			return err
		}
		v, err := node(d, "response", v2ResponseField,
			func(r *openapi2.Response) *map[string]any { return &r.Extensions })
		r.Set(key, v)
		return err
	})
	*p = r
	return err
}

// The field functions of openapi2 types, as schemaField for Schema.

func v2SchemaField(s *openapi2.Schema, k []byte) (uint, any) {
	switch string(k) {
	case "allOf":
		return 0, &s.AllOf
	case "not":
		return 1, &s.Not
	case "type":
		return 2, &s.Type
	case "title":
		return 3, &s.Title
	case "format":
		return 4, &s.Format
	case "description":
		return 5, &s.Description
	case "enum":
		return 6, &s.Enum
	case "default":
		return 7, &s.Default
	case "example":
		return 8, &s.Example
	case "externalDocs":
		return 9, &s.ExternalDocs
	case "uniqueItems":
		return 10, &s.UniqueItems
	case "exclusiveMinimum":
		return 11, &s.ExclusiveMin
	case "exclusiveMaximum":
		return 12, &s.ExclusiveMax
	case "readOnly":
		return 13, &s.ReadOnly
	case "writeOnly":
		return 14, &s.WriteOnly
	case "allowEmptyValue":
		return 15, &s.AllowEmptyValue
	case "deprecated":
		return 16, &s.Deprecated
	case "xml":
		return 17, &s.XML
	case "minimum":
		return 18, &s.Min
	case "maximum":
		return 19, &s.Max
	case "multipleOf":
		return 20, &s.MultipleOf
	case "minLength":
		return 21, &s.MinLength
	case "maxLength":
		return 22, &s.MaxLength
	case "pattern":
		return 23, &s.Pattern
	case "minItems":
		return 24, &s.MinItems
	case "maxItems":
		return 25, &s.MaxItems
	case "items":
		return 26, &s.Items
	case "required":
		return 27, &s.Required
	case "properties":
		return 28, &s.Properties
	case "minProperties":
		return 29, &s.MinProps
	case "maxProperties":
		return 30, &s.MaxProps
	case "additionalProperties":
		return 31, &s.AdditionalProperties
	case "discriminator":
		return 32, &s.Discriminator
	}
	return 0, nil
}

func v2PathItemField(it *openapi2.PathItem, k []byte) (uint, any) {
	switch string(k) {
	case "$ref":
		return 0, &it.Ref
	case "delete":
		return 1, &it.Delete
	case "get":
		return 2, &it.Get
	case "head":
		return 3, &it.Head
	case "options":
		return 4, &it.Options
	case "patch":
		return 5, &it.Patch
	case "post":
		return 6, &it.Post
	case "put":
		return 7, &it.Put
	case "parameters":
		return 8, &it.Parameters
	}
	return 0, nil
}

func v2OperationField(o *openapi2.Operation, k []byte) (uint, any) {
	switch string(k) {
	case "summary":
		return 0, &o.Summary
	case "description":
		return 1, &o.Description
	case "deprecated":
		return 2, &o.Deprecated
	case "externalDocs":
		return 3, &o.ExternalDocs
	case "tags":
		return 4, &o.Tags
	case "operationId":
		return 5, &o.OperationID
	case "parameters":
		return 6, &o.Parameters
	case "responses":
		return 7, &o.Responses
	case "consumes":
		return 8, &o.Consumes
	case "produces":
		return 9, &o.Produces
	case "schemes":
		return 10, &o.Schemes
	case "security":
		return 11, &o.Security
	}
	return 0, nil
}

func v2ParameterField(p *openapi2.Parameter, k []byte) (uint, any) {
	switch string(k) {
	case "$ref":
		return 0, &p.Ref
	case "in":
		return 1, &p.In
	case "name":
		return 2, &p.Name
	case "description":
		return 3, &p.Description
	case "collectionFormat":
		return 4, &p.CollectionFormat
	case "type":
		return 5, &p.Type
	case "format":
		return 6, &p.Format
	case "pattern":
		return 7, &p.Pattern
	case "allowEmptyValue":
		return 8, &p.AllowEmptyValue
	case "required":
		return 9, &p.Required
	case "uniqueItems":
		return 10, &p.UniqueItems
	case "exclusiveMinimum":
		return 11, &p.ExclusiveMin
	case "exclusiveMaximum":
		return 12, &p.ExclusiveMax
	case "schema":
		return 13, &p.Schema
	case "items":
		return 14, &p.Items
	case "enum":
		return 15, &p.Enum
	case "multipleOf":
		return 16, &p.MultipleOf
	case "minimum":
		return 17, &p.Minimum
	case "maximum":
		return 18, &p.Maximum
	case "maxLength":
		return 19, &p.MaxLength
	case "maxItems":
		return 20, &p.MaxItems
	case "minLength":
		return 21, &p.MinLength
	case "minItems":
		return 22, &p.MinItems
	case "default":
		return 23, &p.Default
	}
	return 0, nil
}

// v2HeaderField: Header.UnmarshalJSON is Parameter.UnmarshalJSON of the
// embedded Parameter.
func v2HeaderField(h *openapi2.Header, k []byte) (uint, any) {
	return v2ParameterField(&h.Parameter, k)
}

func v2ResponseField(r *openapi2.Response, k []byte) (uint, any) {
	switch string(k) {
	case "$ref":
		return 0, &r.Ref
	case "description":
		return 1, &r.Description
	case "schema":
		return 2, &r.Schema
	case "headers":
		return 3, &r.Headers
	case "examples":
		return 4, &r.Examples
	}
	return 0, nil
}
