package openapi

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestSchemaDefs pins $defs mode (LoadOptions.SchemaDefs): named schemas
// once under $defs, recursion as a real $ref, the root still an inlined
// object (S1, S5), and the inlined schema when $defs would be over budget.
func TestSchemaDefs(t *testing.T) {
	c01, err := os.ReadFile(filepath.Join("testdata", "C01-circular-ref", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	allOf := []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://upstream.test"}]
paths:
  /pets:
    post:
      operationId: createPet
      parameters:
        - {name: owner, in: query, schema: {$ref: "#/components/schemas/Owner"}}
      requestBody:
        content:
          application/json:
            schema:
              allOf:
                - $ref: "#/components/schemas/Named"
                - type: object
                  properties:
                    id: {type: string, readOnly: true}
                    owner: {$ref: "#/components/schemas/Owner"}
      responses: {"201": {description: Created}}
components:
  schemas:
    Named:
      type: object
      required: [name]
      properties:
        name: {type: string}
    Owner:
      type: object
      properties:
        name: {type: string}
        pets: {type: array, items: {$ref: "#/components/schemas/Named"}}
`)
	tests := []struct {
		name   string
		spec   []byte
		tool   string
		budget int
		input  string
		output string
	}{
		{name: "C01 self-recursion", spec: c01, tool: "create_comment",
			input: `{"type":"object","properties":{"threadId":{"type":"string"},"text":{"type":"string"},"replies":{"type":"array","items":{"$ref":"#/$defs/Comment"}}},"required":["threadId","text"],"$defs":{"Comment":{"type":"object","properties":{"text":{"type":"string"},"replies":{"type":"array","items":{"$ref":"#/$defs/Comment"}}},"required":["text"]}}}`,
			// R8: the output schema describes (no required, every value
			// below the root may be null), in $defs too.
			output: `{"type":"object","properties":{"text":{"anyOf":[{"type":"string"},{"type":"null"}]},"replies":{"anyOf":[{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/Comment"},{"type":"null"}]}},{"type":"null"}]}},"$defs":{"Comment":{"type":"object","properties":{"text":{"anyOf":[{"type":"string"},{"type":"null"}]},"replies":{"anyOf":[{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/Comment"},{"type":"null"}]}},{"type":"null"}]}}}}}`},
		{name: "C01 indirect cycle", spec: c01, tool: "search_records",
			input: `{"type":"object","properties":{"filter":{"$ref":"#/$defs/Filter"}},"required":["filter"],"$defs":{"Filter":{"type":"object","properties":{"field":{"type":"string"},"equals":{"type":"string"},"group":{"$ref":"#/$defs/FilterGroup"}}},"FilterGroup":{"type":"object","properties":{"op":{"type":"string","enum":["and","or"]},"filters":{"type":"array","items":{"$ref":"#/$defs/Filter"}}}}}}`},
		{name: "allOf merged, readOnly dropped, defs shared (body under body: owner collides, B3)", spec: allOf, tool: "create_pet",
			input: `{"type":"object","properties":{"owner":{"$ref":"#/$defs/Owner"},"body":{"type":"object","properties":{"name":{"type":"string"},"owner":{"$ref":"#/$defs/Owner"}},"required":["name"]}},"$defs":{"Named":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]},"Owner":{"type":"object","properties":{"name":{"type":"string"},"pets":{"type":"array","items":{"$ref":"#/$defs/Named"}}}}}}`},
		{name: "over budget inlines", spec: c01, tool: "create_comment", budget: 200,
			input: `{"type":"object","properties":{"threadId":{"type":"string"},"text":{"type":"string"},"replies":{"type":"array","items":{},"description":"replies: schema omitted to fit the size budget"}},"required":["threadId","text"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := LoadData(context.Background(), tt.spec, "", LoadOptions{SchemaDefs: true, SchemaBudget: tt.budget})
			if err != nil {
				t.Fatal(err)
			}
			tool := findTool(t, d, tt.tool)
			if got := string(tool.InputSchema); got != tt.input {
				t.Errorf("input schema:\n got %s\nwant %s", got, tt.input)
			}
			if tt.output != "" {
				if got := string(tool.OutputSchema); got != tt.output {
					t.Errorf("output schema:\n got %s\nwant %s", got, tt.output)
				}
			}
		})
	}
}

func findTool(t *testing.T, d *Document, name string) *Tool {
	t.Helper()
	for _, tool := range d.Tools {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}

// TestSchemaDefsValidation checks that arguments are validated through
// $refs, including recursive ones (R7).
func TestSchemaDefsValidation(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join("testdata", "C01-circular-ref", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := LoadData(context.Background(), spec, "", LoadOptions{SchemaDefs: true})
	if err != nil {
		t.Fatal(err)
	}
	tool := findTool(t, d, "create_comment")
	ok := `{"threadId":"t","text":"a","replies":[{"text":"b","replies":[{"text":"c"}]}]}`
	if _, err := tool.NewRequest(context.Background(), []byte(ok), ""); err != nil {
		t.Fatalf("NewRequest(%s): %v", ok, err)
	}
	bad := `{"threadId":"t","text":"a","replies":[{"text":"b","replies":[{"text":3}]}]}`
	_, err = tool.NewRequest(context.Background(), []byte(bad), "")
	if err == nil || err.Error() != "invalid arguments: replies: [0].replies[0].text: has type integer, want string" {
		t.Fatalf("NewRequest(%s) = %v, want the nested type error", bad, err)
	}
}
