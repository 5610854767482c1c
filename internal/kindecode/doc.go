// Package kindecode decodes OpenAPI documents into kin-openapi's types
// (github.com/getkin/kin-openapi openapi3.T and openapi2.T) about twice as
// fast as kin-openapi's own decoders, and falls back to them for any shape
// or error it does not handle, so the result and the errors are
// kin-openapi's.
package kindecode

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// Decode decodes data into doc, an *openapi3.T (data is JSON) or an
// *openapi2.T (JSON or YAML), exactly as json.Unmarshal or
// openapi2.UnmarshalFromData would: through the one-pass decoder where it
// applies, through kin-openapi otherwise. TestDecodeV3JSONCorpus and
// TestDecodeV2Corpus check the equivalence on every corpus document.
func Decode(data []byte, doc any) error {
	switch d := doc.(type) {
	case *openapi3.T:
		return decodeV3JSON(data, d)
	case *openapi2.T:
		return decodeV2(data, d)
	}
	return fmt.Errorf("kindecode: cannot decode into %T", doc)
}

// IsSwagger2 reports whether the document's top level has a "swagger" key.
func IsSwagger2(data []byte) bool {
	if jsonvalue.LooksLikeObject(data) {
		var v struct {
			Swagger json.RawMessage `json:"swagger"`
		}
		if json.Unmarshal(data, &v) == nil {
			return len(v.Swagger) > 0
		}
	}
	for line := range bytes.Lines(data) {
		if bytes.HasPrefix(line, []byte("swagger:")) || bytes.HasPrefix(line, []byte(`"swagger":`)) || bytes.HasPrefix(line, []byte(`'swagger':`)) {
			return true
		}
	}
	return false
}
