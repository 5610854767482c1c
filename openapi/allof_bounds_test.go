package openapi

import (
	"context"
	"encoding/json"
	"testing"
)

// TestAllOfBounds checks that merged allOf members, and OAS 3.1 keywords
// next to a $ref (kin-openapi turns them into one more allOf member),
// keep the tighter of two bounds: an instance must satisfy all of them.
// A member without "type" keeps its array bounds too.
func TestAllOfBounds(t *testing.T) {
	const spec = `openapi: 3.1.0
info: {title: bounds, version: "1"}
servers: [{url: "http://upstream.test"}]
paths:
  /pets:
    post:
      operationId: createPet
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                owner: {$ref: "#/components/schemas/Person", description: "The owner, overridden"}
                size: {$ref: "#/components/schemas/Size", maximum: 5, minimum: 0}
                name:
                  allOf:
                    - {type: string, minLength: 2, maxLength: 40}
                    - {minLength: 1, maxLength: 20}
                tags:
                  allOf:
                    - {type: array, items: {type: string}, maxItems: 3}
                    - {maxItems: 9, minItems: 1}
      responses: {"200": {description: ok}}
components:
  schemas:
    Person: {type: object, description: "A person", properties: {name: {type: string}}}
    Size: {type: integer, minimum: 1, maximum: 10}
`
	d, err := LoadData(context.Background(), []byte(spec), "", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tl := d.Tools[0]
	want := `{"type":"object","properties":{` +
		`"owner":{"type":"object","description":"The owner, overridden","properties":{"name":{"type":"string"}}},` +
		`"size":{"type":"integer","minimum":1,"maximum":5},` +
		`"name":{"type":"string","minLength":2,"maxLength":20},` +
		`"tags":{"type":"array","items":{"type":"string"},"maxItems":3,"minItems":1}}}`
	if got := string(tl.InputSchema); got != want {
		t.Errorf("inputSchema\n got %s\nwant %s", got, want)
	}
	for args, wantErr := range map[string]string{
		`{"size":5,"name":"ab","tags":["x"]}`: "",
		`{"size":6}`:                          "invalid arguments: size: 6 must be <= 5",
		`{"size":0}`:                          "invalid arguments: size: 0 must be >= 1",
		`{"name":"a"}`:                        "invalid arguments: name: length 1 is below minLength 2",
		`{"tags":[]}`:                         "invalid arguments: tags: has 0 items, fewer than minItems 1",
	} {
		_, err := tl.NewRequest(context.Background(), json.RawMessage(args), "")
		if got := errText(err); got != wantErr {
			t.Errorf("%s: error %q, want %q", args, got, wantErr)
		}
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
