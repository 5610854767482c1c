package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/openapi"
)

// c22API is the fake upstream of C22: the result kind must follow the
// Content-Type and status sent here, not the document.
func c22API(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodDelete && r.URL.Path == "/v1/items/i1":
		w.WriteHeader(http.StatusNoContent)
	case r.URL.Path == "/v1/items/i1":
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", "0")
	case r.URL.Path == "/v1/items/i2":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"i2","name":"Lamp"}`)
	case r.URL.Path == "/v1/items/i3":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"a":`)
	case r.URL.Path == "/v1/items/i1/thumbnail":
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write([]byte{0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A})
	case r.URL.Path == "/v1/items/i1/report":
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = io.WriteString(w, "%PDF-1.4\n")
	case r.URL.Path == "/v1/items/i1/export":
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
		_, _ = io.WriteString(w, "id,name\n1,a\n")
	default:
		http.NotFound(w, r)
	}
}

func TestC22ResponseTypes(t *testing.T) {
	up := newUpstream(t, c22API)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c22.yaml", up.URL)})
	cs := connect(t, srv.URL+"/mcp", map[string]string{"X-API-Key": "k-123"}, "")

	t.Run("tools/list", func(t *testing.T) {
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tl := range res.Tools {
			got = append(got, tl.Name)
			if diff := cmp.Diff(parseJSON(t, `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`), asJSON(t, tl.InputSchema)); diff != "" {
				t.Errorf("%s inputSchema (-want +got):\n%s", tl.Name, diff)
			}
			// Only get_item's 2xx schema is an object.
			if hasOut := tl.OutputSchema != nil; hasOut != (tl.Name == "get_item") {
				t.Errorf("%s: outputSchema = %v", tl.Name, tl.OutputSchema)
			}
		}
		// The go-sdk lists tools sorted by name.
		if diff := cmp.Diff([]string{"delete_item", "export_item", "get_item", "get_report", "get_thumbnail"}, got); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
	})

	// The case's results, with http://upstream.test standing for the fake
	// upstream. get_item declares outputSchema {"type":"object"}, so its
	// successful results also carry structuredContent (see
	// conformToOutputSchema): the parsed object, or {} when the body is not
	// a JSON object.
	tests := []struct {
		name, tool, args string
		wantMethod       string
		wantPath         string
		want             string
		wantBytes        []byte // binary round trip
	}{
		{name: "204 no body", tool: "delete_item", args: `{"id":"i1"}`, wantMethod: "DELETE", wantPath: "/v1/items/i1",
			want: `{"content":[{"type":"text","text":"HTTP 204 No Content"}]}`},
		{name: "200 JSON with empty body", tool: "get_item", args: `{"id":"i1"}`, wantMethod: "GET", wantPath: "/v1/items/i1",
			want: `{"content":[{"type":"text","text":"` + notJSONObject + `"},{"type":"text","text":"HTTP 200 OK"}],"structuredContent":{}}`},
		{name: "200 JSON object", tool: "get_item", args: `{"id":"i2"}`, wantMethod: "GET", wantPath: "/v1/items/i2",
			want: `{"content":[{"type":"text","text":"{\"id\":\"i2\",\"name\":\"Lamp\"}"}],"structuredContent":{"id":"i2","name":"Lamp"}}`},
		{name: "image", tool: "get_thumbnail", args: `{"id":"i1"}`, wantMethod: "GET", wantPath: "/v1/items/i1/thumbnail",
			want:      `{"content":[{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]}`,
			wantBytes: []byte{0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A}},
		{name: "pdf as embedded resource", tool: "get_report", args: `{"id":"i1"}`, wantMethod: "GET", wantPath: "/v1/items/i1/report",
			want:      `{"content":[{"type":"resource","resource":{"uri":"http://upstream.test/v1/items/i1/report","mimeType":"application/pdf","blob":"JVBERi0xLjQK"}}]}`,
			wantBytes: []byte("%PDF-1.4\n")},
		{name: "csv text", tool: "export_item", args: `{"id":"i1"}`, wantMethod: "GET", wantPath: "/v1/items/i1/export",
			want: `{"content":[{"type":"text","text":"id,name\n1,a\n"}]}`},
		{name: "invalid JSON passed through", tool: "get_item", args: `{"id":"i3"}`, wantMethod: "GET", wantPath: "/v1/items/i3",
			want: `{"content":[{"type":"text","text":"` + notJSONObject + `"},{"type":"text","text":"{\"a\":"}],"structuredContent":{}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, cs, tt.tool, tt.args)
			got := resultJSON(t, res)
			js, _ := json.Marshal(got)
			js = bytes.ReplaceAll(js, []byte(up.URL), []byte("http://upstream.test"))
			if diff := cmp.Diff(parseJSON(t, tt.want), parseJSON(t, string(js))); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if res.IsError {
				t.Error("isError = true, want false")
			}
			checkContent(t, res)
			reqs := up.take()
			if len(reqs) != 1 || reqs[0].Method != tt.wantMethod || reqs[0].RequestURI != tt.wantPath {
				t.Errorf("upstream requests = %+v, want one %s %s", reqs, tt.wantMethod, tt.wantPath)
			}
			if tt.wantBytes != nil {
				if got := binaryBytes(res); !bytes.Equal(got, tt.wantBytes) {
					t.Errorf("binary bytes = % x, want % x", got, tt.wantBytes)
				}
			}
		})
	}
}

// checkContent asserts C22's general rules: content is never empty and
// every item has its required fields.
func checkContent(t *testing.T, res *mcp.CallToolResult) {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatal("content is empty")
	}
	for i, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			if c.Text == "" {
				t.Errorf("content[%d]: empty text", i)
			}
		case *mcp.ImageContent:
			if len(c.Data) == 0 || c.MIMEType == "" {
				t.Errorf("content[%d]: image without data or mimeType", i)
			}
		case *mcp.AudioContent:
			if len(c.Data) == 0 || c.MIMEType == "" {
				t.Errorf("content[%d]: audio without data or mimeType", i)
			}
		case *mcp.EmbeddedResource:
			if c.Resource == nil || c.Resource.URI == "" || strings.Contains(c.Resource.URI, "?") {
				t.Errorf("content[%d]: resource %+v without uri, or with a query", i, c.Resource)
			}
		default:
			t.Errorf("content[%d]: unexpected %T", i, c)
		}
	}
}

func binaryBytes(res *mcp.CallToolResult) []byte {
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.ImageContent:
			return c.Data
		case *mcp.AudioContent:
			return c.Data
		case *mcp.EmbeddedResource:
			return c.Resource.Blob
		}
	}
	return nil
}

// TestResourceURIHasNoQuery: the embedded resource's uri drops the query,
// which may carry the caller's key (C22, C25).
func TestResourceURIHasNoQuery(t *testing.T) {
	up := newUpstream(t, c22API)
	spec := `openapi: 3.0.3
info: {title: q, version: 1.0.0}
servers: [{url: 'http://upstream.test/v1'}]
components:
  securitySchemes:
    q: {type: apiKey, in: query, name: api_key}
security: [{q: []}]
paths:
  /items/{id}/report:
    get:
      operationId: getReport
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
        - {name: format, in: query, schema: {type: string}}
      responses: {'200': {description: PDF}}
`
	doc, err := openapi.LoadData(context.Background(), []byte(spec), "", openapi.LoadOptions{Upstream: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, Options{Tools: doc.Tools})
	cs := connect(t, srv.URL+"/mcp", map[string]string{"X-API-Key": "k-123"}, "")
	res := callTool(t, cs, "get_report", `{"id":"i1","format":"a4"}`)
	if reqs := up.take(); len(reqs) != 1 || !strings.Contains(reqs[0].RequestURI, "api_key=k-123") {
		t.Fatalf("upstream requests = %+v, want the key in the query", reqs)
	}
	checkContent(t, res)
	r, ok := res.Content[0].(*mcp.EmbeddedResource)
	if !ok || r.Resource.URI != up.URL+"/v1/items/i1/report" {
		t.Errorf("content = %#v, want a resource with uri %s", res.Content[0], up.URL+"/v1/items/i1/report")
	}
}

// notJSONObject is the text item R8 puts before a 2xx body that is not a
// JSON object when the tool declares an output schema.
const notJSONObject = "the upstream's 2xx response is not a JSON object, so structuredContent is empty; the response follows."

// TestOutputSchemaContract covers R8 for tools that declare an
// outputSchema: the schema describes (no required, every value below the
// root may be null), structuredContent is on every success and always fits
// it (a value of the wrong type becomes null; the text keeps the body
// verbatim), a body that is not an object gets {} and a text saying so,
// and errors never carry structuredContent.
func TestOutputSchemaContract(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: out, version: 1.0.0}
servers: [{url: 'http://upstream.test'}]
components:
  schemas:
    Thing:
      type: object
      required: [id]
      properties:
        id: {type: string, pattern: '^t-'}
        count: {type: integer, minimum: 1}
        owner: {type: object, required: [login], properties: {login: {type: string}}}
        tags: {type: array, items: {type: string, enum: [a, b]}}
paths:
  /strict:
    get:
      operationId: strict
      responses:
        '200': {description: OK, content: {application/json: {schema: {$ref: '#/components/schemas/Thing'}}}}
  /loose:
    get:
      operationId: loose
      responses:
        '200': {description: OK, content: {application/json: {schema: {allOf: [{type: object, properties: {a: {type: string}}}]}}}}
  /list:
    get:
      operationId: list
      responses:
        '200': {description: OK, content: {application/json: {schema: {type: array, items: {$ref: '#/components/schemas/Thing'}}}}}
`
	var (
		mu          sync.Mutex
		status      int
		ctype, body string
	)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if ctype != "" {
			w.Header().Set("Content-Type", ctype)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	})
	doc, err := openapi.LoadData(context.Background(), []byte(spec), "", openapi.LoadOptions{Upstream: up.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range doc.Tools {
		if hasOut := len(tl.OutputSchema) > 0; hasOut != (tl.Name != "list") {
			t.Errorf("%s: outputSchema = %s; want one only for object responses", tl.Name, tl.OutputSchema)
		}
	}
	const wantSchema = `{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"null"}]},"count":{"anyOf":[{"type":"integer"},{"type":"null"}]},"owner":{"anyOf":[{"type":"object","properties":{"login":{"anyOf":[{"type":"string"},{"type":"null"}]}}},{"type":"null"}]},"tags":{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"null"}]}},{"type":"null"}]}}}`
	if got := string(toolNamed(t, doc, "strict").OutputSchema); got != wantSchema {
		t.Errorf("strict outputSchema:\n got %s\nwant %s", got, wantSchema)
	}
	srv := serve(t, Options{Tools: doc.Tools})
	cs := connect(t, srv.URL+"/mcp", map[string]string{"X-API-Key": "k-123"}, "")
	tests := []struct {
		name, tool  string
		status      int
		ctype, body string
		want        string
	}{
		{name: "object", tool: "strict", status: 200, ctype: "application/json", body: `{"id":"x"}`,
			want: `{"content":[{"type":"text","text":"{\"id\":\"x\"}"}],"structuredContent":{"id":"x"}}`},
		{name: "201 object", tool: "strict", status: 201, ctype: "application/problem+json", body: `{"id":"x"}`,
			want: `{"content":[{"type":"text","text":"{\"id\":\"x\"}"}],"structuredContent":{"id":"x"}}`},
		{name: "drift: null object, missing required, broken pattern, enum and bound", tool: "strict", status: 200, ctype: "application/json",
			body: `{"owner":null,"id":"zz","count":0,"tags":["c"],"extra":{"k":1}}`,
			want: `{"content":[{"type":"text","text":"{\"owner\":null,\"id\":\"zz\",\"count\":0,\"tags\":[\"c\"],\"extra\":{\"k\":1}}"}],"structuredContent":{"owner":null,"id":"zz","count":0,"tags":["c"],"extra":{"k":1}}}`},
		{name: "drift: wrong types become null, the text keeps the body", tool: "strict", status: 200, ctype: "application/json",
			body: `{"id":7,"count":1.5,"owner":"octocat","tags":[1,"a"]}`,
			want: `{"content":[{"type":"text","text":"{\"id\":7,\"count\":1.5,\"owner\":\"octocat\",\"tags\":[1,\"a\"]}"}],"structuredContent":{"id":null,"count":null,"owner":null,"tags":[null,"a"]}}`},
		{name: "array body", tool: "strict", status: 200, ctype: "application/json", body: `[1]`,
			want: `{"content":[{"type":"text","text":"` + notJSONObject + `"},{"type":"text","text":"[1]"}],"structuredContent":{}}`},
		{name: "empty body", tool: "strict", status: 200, ctype: "application/json",
			want: `{"content":[{"type":"text","text":"` + notJSONObject + `"},{"type":"text","text":"HTTP 200 OK"}],"structuredContent":{}}`},
		{name: "image body", tool: "strict", status: 200, ctype: "image/gif", body: "GIF89a",
			want: `{"content":[{"type":"text","text":"` + notJSONObject + `"},{"type":"image","data":"R0lGODlh","mimeType":"image/gif"}],"structuredContent":{}}`},
		{name: "text body", tool: "loose", status: 200, ctype: "text/plain", body: "fine",
			want: `{"content":[{"type":"text","text":"` + notJSONObject + `"},{"type":"text","text":"fine"}],"structuredContent":{}}`},
		{name: "error results never carry structuredContent", tool: "strict", status: 422, ctype: "application/json", body: `{"id":"bad"}`,
			want: `{"content":[{"type":"text","text":"HTTP 422 Unprocessable Entity\n{\"id\":\"bad\"}"}],"isError":true}`},
		{name: "no outputSchema: array stays text only", tool: "list", status: 200, ctype: "application/json", body: `[{"id":"x"}]`,
			want: `{"content":[{"type":"text","text":"[{\"id\":\"x\"}]"}]}`},
		{name: "no outputSchema: object still gets structuredContent (R1 optional)", tool: "list", status: 200, ctype: "application/json", body: `{"id":"x"}`,
			want: `{"content":[{"type":"text","text":"{\"id\":\"x\"}"}],"structuredContent":{"id":"x"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			status, ctype, body = tt.status, tt.ctype, tt.body
			mu.Unlock()
			res := callTool(t, cs, tt.tool, `{}`)
			if diff := cmp.Diff(parseJSON(t, tt.want), resultJSON(t, res)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			checkContent(t, res)
			if out := toolNamed(t, doc, tt.tool).OutputSchema; len(out) > 0 && res.StructuredContent != nil {
				validateJSONSchema(t, out, res.StructuredContent)
			}
			up.take()
		})
	}

	// A JSON object cut at MaxResponseBytes is said to be one.
	small := serve(t, Options{Tools: doc.Tools, MaxResponseBytes: 16})
	mu.Lock()
	status, ctype, body = 200, "application/json", `{"id":"x","count":2,"tags":["a","b"]}`
	mu.Unlock()
	res := callTool(t, connect(t, small.URL+"/mcp", map[string]string{"X-API-Key": "k-123"}, ""), "strict", `{}`)
	const cut = "the upstream's 2xx response is a JSON object larger than max_response_bytes and was cut, so structuredContent is empty; its beginning follows."
	want := `{"content":[{"type":"text","text":"` + cut + `"},{"type":"text","text":"{\"id\":\"x\",\"count\n[truncated: showing 16 of 37 bytes]"}],"structuredContent":{}}`
	if diff := cmp.Diff(parseJSON(t, want), resultJSON(t, res)); diff != "" {
		t.Errorf("cut object (-want +got):\n%s", diff)
	}
}

// validateJSONSchema fails t unless v validates against schema under a
// JSON Schema 2020-12 validator (the one the go-sdk uses), as an SDK
// client checks structuredContent.
func validateJSONSchema(t *testing.T, schema json.RawMessage, v any) {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("schema: %v", err)
	}
	r, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("resolving schema: %v", err)
	}
	b, _ := json.Marshal(v)
	var inst any
	_ = json.Unmarshal(b, &inst)
	if err := r.Validate(inst); err != nil {
		t.Errorf("structuredContent %s does not validate against %s: %v", b, schema, err)
	}
}

func toolNamed(t *testing.T, d *openapi.Document, name string) *openapi.Tool {
	t.Helper()
	for _, tl := range d.Tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}
