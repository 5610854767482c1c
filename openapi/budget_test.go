package openapi

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/restmcp/restmcp/internal/corpustest"
)

// TestSchemaBudgetCorpus loads every corpus document that loads (leniently) and checks
// that no tool's input or output schema is over the default budget (S2).
func TestSchemaBudgetCorpus(t *testing.T) {
	corpustest.Require(t)
	entries := corpustest.Entries(t)
	folders := make([]string, 0, len(entries))
	for f := range entries {
		folders = append(folders, f)
	}
	slices.Sort(folders)
	for _, folder := range folders {
		t.Run(folder, func(t *testing.T) {
			p := filepath.Join(corpusDir, folder, entries[folder])
			// Lenient, so that documents that only load leniently count too;
			// the ref root is the corpus folder, as in TestCorpusAll.
			d, err := Load(context.Background(), p, LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}, Lenient: true, RefRoot: filepath.Join(corpusDir, folder)})
			if err != nil {
				t.Fatalf("does not load: %v", errHead(err.Error()))
			}
			largest, name := 0, ""
			for _, tool := range d.Tools {
				for _, s := range []json.RawMessage{tool.InputSchema, tool.OutputSchema} {
					if len(s) > largest {
						largest, name = len(s), tool.Name
					}
					if len(s) > DefaultSchemaBudget {
						t.Errorf("%s: schema is %d bytes, over the %d budget", tool.Name, len(s), DefaultSchemaBudget)
					}
					if len(s) > 0 && !json.Valid(s) {
						t.Errorf("%s: schema is not valid JSON", tool.Name)
					}
				}
			}
			t.Logf("%s: %d tools; largest schema %d bytes (%s)", folder, len(d.Tools), largest, name)
		})
	}
}

func errHead(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// TestSchemaBudgetShrink pins each step S2 takes when one level of object
// nesting is still over the budget.
func TestSchemaBudgetShrink(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: t, version: "1"}
paths:
  /things:
    post:
      operationId: createThing
      parameters:
        - name: color
          in: query
          description: The colour of the thing, which matters a great deal to everyone who will ever look at it, and which the factory paints before the thing is shipped to its new owner.
          schema: {type: string, enum: [red, green, blue, cyan, magenta, yellow, black, white, grey, orange]}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [name]
              properties:
                name: {type: string, description: Name.}
                owner:
                  type: object
                  properties:
                    id: {type: string}
                    address:
                      type: object
                      properties:
                        street: {type: string, description: Street and number.}
                        city: {type: string, description: City or town.}
                        postcode: {type: string, description: Postal code.}
                        country: {type: string, description: ISO 3166-1 alpha-2 country code.}
      responses: {"201": {description: Created}}
`
	tests := []struct {
		name   string
		budget int
		want   string
	}{
		{name: "fits", budget: 0, want: `{"type":"object","properties":{"color":{"type":"string","enum":["red","green","blue","cyan","magenta","yellow","black","white","grey","orange"],"description":"The colour of the thing, which matters a great deal to everyone who will ever look at it, and which the factory paints before the thing is shipped to its new owner."},"name":{"type":"string","description":"Name."},"owner":{"type":"object","properties":{"id":{"type":"string"},"address":{"type":"object","properties":{"street":{"type":"string","description":"Street and number."},"city":{"type":"string","description":"City or town."},"postcode":{"type":"string","description":"Postal code."},"country":{"type":"string","description":"ISO 3166-1 alpha-2 country code."}}}}}},"required":["name"]}`},
		{name: "depth 1", budget: 570, want: `{"type":"object","properties":{"color":{"type":"string","enum":["red","green","blue","cyan","magenta","yellow","black","white","grey","orange"],"description":"The colour of the thing, which matters a great deal to everyone who will ever look at it, and which the factory paints before the thing is shipped to its new owner."},"name":{"type":"string","description":"Name."},"owner":{"type":"object","properties":{"id":{"type":"string"},"address":{"type":"object","description":"address: nested structure omitted; pass it as a JSON object"}}}},"required":["name"]}`},
		{name: "root properties only", budget: 500, want: `{"type":"object","properties":{"color":{"type":"string","enum":["red","green","blue","cyan","magenta","yellow","black","white","grey","orange"],"description":"The colour of the thing, which matters a great deal to everyone who will ever look at it, and which the factory paints before the thing is shipped to its new owner."},"name":{"type":"string","description":"Name."},"owner":{"type":"object","description":"owner: nested structure omitted; pass it as a JSON object"}},"required":["name"]}`},
		{name: "texts shortened", budget: 460, want: `{"type":"object","properties":{"color":{"type":"string","description":"The colour of the thing, which matters a great deal to everyone who will ever look at it, and which […] One of 10 values (list shortened to fit the size budget), e.g. \"red\", \"green\", \"blue\"."},"name":{"type":"string","description":"Name."},"owner":{"type":"object","description":"owner: nested structure omitted; pass it as a JSON object"}},"required":["name"]}`},
		{name: "property replaced", budget: 300, want: `{"type":"object","properties":{"color":{"type":"string","description":"color: schema omitted to fit the size budget"},"name":{"type":"string","description":"Name."},"owner":{"type":"object","description":"owner: nested structure omitted; pass it as a JSON object"}},"required":["name"]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := LoadData(context.Background(), []byte(spec), "", LoadOptions{SchemaBudget: tt.budget, Upstream: "http://upstream.test"})
			if err != nil {
				t.Fatal(err)
			}
			got := string(d.Tools[0].InputSchema)
			if got != tt.want {
				t.Errorf("budget %d:\n got %s\nwant %s", tt.budget, got, tt.want)
			}
			if tt.budget > 0 && len(got) > tt.budget {
				t.Errorf("budget %d: schema is %d bytes", tt.budget, len(got))
			}
		})
	}
}

// TestBuilderEncodeSize checks that sizeOf, which sizes the buffer of
// builder.encode and drives every S2 budget decision, is the exact length
// of the serialization, on values that need escaping.
func TestBuilderEncodeSize(t *testing.T) {
	b := &builder{schemaCache: newSchemaCache()}
	inner := &obj{}
	inner.set("type", "string")
	inner.set("description", "quote \" backslash \\ newline \n tab \t ctl \x01 é 日本 bad \xff <&>")
	inner.set("enum", literal{[]any{"a<b", 1.5, map[string]any{"z": 1, "a": nil}}})
	inner.set("maxLength", uint64(12))
	inner.set("minimum", -0.25)
	inner.set("nullable", false)
	o := &obj{}
	o.set("type", "object")
	o.set("properties", &obj{k: []string{"ké\"y", "b"}, v: []any{inner, &obj{}}})
	o.set("required", []string{"ké\"y", "\u2028"})
	o.set("anyOf", []any{inner, nil, true})
	got := b.encode(o)
	want := encode(o)
	if string(got) != string(want) {
		t.Fatalf("builder.encode = %s, want %s", got, want)
	}
	if n := b.sizeOf(o); n != len(want) {
		t.Errorf("sizeOf = %d, want %d (%s)", n, len(want), want)
	}
	if cap(got) != len(want) {
		t.Errorf("buffer capacity %d, want exactly %d", cap(got), len(want))
	}
}
