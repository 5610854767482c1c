package openapi

import (
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/restmcp/restmcp/internal/yamltree"
)

// s12Spec has a Person component referenced three ways: plainly, with
// nullable beside the $ref, and as nullable around an allOf of it (S12).
func s12Spec(version string) string {
	return `openapi: ` + version + `
info: {title: t, version: "1"}
servers: [{url: "http://upstream.test/v1"}]
paths:
  /p:
    patch:
      operationId: patchP
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                plain: {$ref: "#/components/schemas/Person"}
                sibling: {$ref: "#/components/schemas/Person", nullable: true}
                wrapped: {nullable: true, allOf: [{$ref: "#/components/schemas/Person"}]}
      responses: {"204": {description: ok}}
components:
  schemas:
    Person:
      type: object
      properties:
        name: {type: string}
`
}

// TestS12NullableBesideRef: in OAS 3.0, nullable: true beside a $ref is
// read, exactly like nullable around an allOf of the reference: both give
// anyOf [<Person>, {"type":"null"}], and a null argument is sent as null.
func TestS12NullableBesideRef(t *testing.T) {
	for _, src := range []string{"json", "yaml"} {
		t.Run(src, func(t *testing.T) {
			spec := []byte(s12Spec("3.0.3"))
			if src == "json" {
				tree, err := yamltree.Parse(spec)
				if err != nil {
					t.Fatal(err)
				}
				spec = yamltree.EncodeJSON(tree)
			}
			d, err := LoadData(context.Background(), spec, "", LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			tool := d.Tools[0]
			const want = `{"type":"object","properties":{"plain":{"type":"object","properties":{"name":{"type":"string"}}},` +
				`"sibling":{"anyOf":[{"type":"object","properties":{"name":{"type":"string"}}},{"type":"null"}]},` +
				`"wrapped":{"anyOf":[{"type":"object","properties":{"name":{"type":"string"}}},{"type":"null"}]}}}`
			if got := string(tool.InputSchema); got != want {
				t.Errorf("input schema\n%s\nwant\n%s", got, want)
			}
			req, err := tool.NewRequest(context.Background(), json.RawMessage(`{"sibling":null,"wrapped":null}`), "")
			if err != nil {
				t.Fatal(err)
			}
			if body, _ := io.ReadAll(req.Body); string(body) != `{"sibling":null,"wrapped":null}` {
				t.Errorf("body %s, want the nulls sent as null (Q8)", body)
			}
		})
	}
}
