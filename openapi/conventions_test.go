package openapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/restmcp/restmcp/internal/corpustest"
)

// TestN7LeadingLetter: a generated name whose first character is not a
// letter gets "op_", counted toward the N5 limit.
func TestN7LeadingLetter(t *testing.T) {
	tests := []struct{ opID, want string }{
		{"2faVerify", "op_2_fa_verify"},
		{"123", "op_123"},
		{"_x", "x"},
		{"1-2", "op_1_2"},
		{"listPets", "list_pets"},
		{"9" + strings.Repeat("a", 80), "op_9" + strings.Repeat("a", 51) + "_" + "7b7f0d5c"},
	}
	for _, tt := range tests {
		got := ToolName(tt.opID, "GET", "/x", 64)
		if tt.opID[0] == '9' {
			if !strings.HasPrefix(got, "op_9") || len(got) != 64 {
				t.Errorf("ToolName(%q) = %q (%d), want op_9… of 64 characters", tt.opID, got, len(got))
			}
			continue
		}
		if got != tt.want {
			t.Errorf("ToolName(%q) = %q, want %q", tt.opID, got, tt.want)
		}
	}
}

const conventionsSpec = `openapi: 3.0.3
info: {title: conv, version: "1"}
servers: [{url: "http://upstream.test"}]
paths:
  /things:
    get:
      operationId: listThings
      description: DESC
      parameters:
        - {name: state, in: query, schema: {type: string, enum: [open, closed, open, closed]}}
        - {name: since, in: query, schema: {type: integer, format: unix-time, description: Start.}}
        - {name: count, in: query, schema: {type: integer, format: int64}}
        - {name: at, in: query, schema: {type: string, format: date-time}}
        - {name: secret, in: query, schema: {type: string, format: password}}
      responses: {"200": {description: OK}}
`

// TestS9S11EmittedSchemas: enum values appear once (S9); only JSON Schema
// formats are emitted, others are said in the description or, for the
// numeric widths, dropped (S11).
func TestS9S11EmittedSchemas(t *testing.T) {
	d, err := LoadData(context.Background(), []byte(strings.Replace(conventionsSpec, "DESC", "Lists things.", 1)), "", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"state":{"type":"string","enum":["open","closed"]},"since":{"type":"integer","description":"Start. Format: unix-time."},"count":{"type":"integer"},"at":{"type":"string","format":"date-time"},"secret":{"type":"string","description":"Format: password."}}}`
	if got := string(d.Tools[0].InputSchema); got != want {
		t.Errorf("input schema:\n got %s\nwant %s", got, want)
	}
}

// TestS10DescriptionCap: a description over 1,024 characters is cut at the
// last white space before the cap and ends with " …"; the cap is a setting.
func TestS10DescriptionCap(t *testing.T) {
	long := strings.Repeat("wörd ", 300) // 1,500 characters
	spec := []byte(strings.Replace(conventionsSpec, "DESC", long, 1))
	d, err := LoadData(context.Background(), spec, "", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := d.Tools[0].Description
	want := strings.Repeat("wörd ", 203) + "wörd …" // 1,021 characters: the last word that fits whole
	if got != want {
		t.Errorf("description (%d characters) = %q…, want %d characters ending in %q", utf8.RuneCountInString(got), got[:40], utf8.RuneCountInString(want), "wörd …")
	}
	d, err = LoadData(context.Background(), spec, "", LoadOptions{MaxDescriptionLength: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Tools[0].Description; got != strings.TrimSpace(long) {
		t.Errorf("with no cap the description is %d characters, want %d", utf8.RuneCountInString(got), utf8.RuneCountInString(strings.TrimSpace(long)))
	}
	if got := cutDescription(strings.Repeat("x", 2000), 1024); utf8.RuneCountInString(got) != 1024 || !strings.HasSuffix(got, "x …") {
		t.Errorf("no white space: cut to %d characters %q…", utf8.RuneCountInString(got), got[len(got)-10:])
	}
}

// TestS9KubernetesRequiredOnce: the budget refit of a body parameter no
// longer lists it twice in required (create_core_v_1_namespaced_pod).
func TestS9KubernetesRequiredOnce(t *testing.T) {
	d, err := Load(context.Background(), corpustest.Path(t, "kubernetes-1.36-swagger20"), LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range d.Tools {
		var root struct{ Required []string }
		if err := jsonUnmarshal(tl.InputSchema, &root); err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, r := range root.Required {
			if seen[r] {
				t.Errorf("%s: %q twice in required %v", tl.Name, r, root.Required)
			}
			seen[r] = true
		}
	}
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// TestQ7Q9Q11Requests: Accept upstream lists the 2xx media types, JSON
// first (Q9); a wildcard request media type is never sent as Content-Type
// (Q11); a required body the caller gave nothing for is the empty value of
// its media type (Q7).
func TestQ7Q9Q11Requests(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: q, version: "1"}
servers: [{url: "http://upstream.test"}]
paths:
  /json:
    post:
      operationId: postJSON
      requestBody:
        required: true
        content: {"*/*": {schema: {type: object, properties: {a: {type: string}}}}}
      responses:
        "200": {description: OK, content: {application/xml: {}, text/plain: {}, application/json: {}}}
        "201": {description: Created, content: {application/problem+json: {}}}
        "404": {description: Missing, content: {application/vnd.error+json: {}}}
  /flat:
    post:
      operationId: postFlat
      requestBody:
        required: true
        content: {application/json: {schema: {type: object, properties: {a: {type: string}}}}}
      responses: {"204": {description: No content}}
  /form:
    post:
      operationId: postForm
      requestBody:
        required: true
        content: {application/x-www-form-urlencoded: {schema: {type: object, properties: {a: {type: string}}}}}
      responses: {"204": {description: No content}}
  /optional:
    post:
      operationId: postOptional
      requestBody:
        content: {application/json: {schema: {type: object, properties: {a: {type: string}}}}}
      responses: {"200": {description: OK}}
`
	d, err := LoadData(context.Background(), []byte(spec), "", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ tool, args, want string }{
		{"post_json", `{"body":{"a":"x"}}`, "POST http://upstream.test/json\nAccept: application/json, application/problem+json, application/xml, text/plain\nContent-Type: application/json\n\n{\"a\":\"x\"}"},
		{"post_flat", `{}`, "POST http://upstream.test/flat\nAccept: */*\nContent-Type: application/json\n\n{}"},
		{"post_form", `{}`, "POST http://upstream.test/form\nAccept: */*\nContent-Type: application/x-www-form-urlencoded\n\n"},
		{"post_optional", `{}`, "POST http://upstream.test/optional\nAccept: */*\n"},
	}
	for _, tt := range tests {
		req, err := toolByName(t, d, tt.tool).NewRequest(context.Background(), json.RawMessage(tt.args), "")
		if err != nil {
			t.Fatal(err)
		}
		if got := dumpRequest(t, req); got != tt.want {
			t.Errorf("%s %s:\n got %q\nwant %q", tt.tool, tt.args, got, tt.want)
		}
	}
}

// TestQ10FormEncoding: form fields follow their Encoding Object: Stripe's
// deepObject nests objects and indexes arrays; form without explode joins;
// pipeDelimited joins with "|"; no Encoding Object is OpenAPI's default
// (form, explode).
func TestQ10FormEncoding(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: forms, version: "1"}
servers: [{url: "http://upstream.test"}]
paths:
  /v1/customers:
    post:
      operationId: postCustomers
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              properties:
                address: {type: object, properties: {city: {type: string}, line1: {type: string}}}
                metadata: {type: object, additionalProperties: {type: string}}
                expand: {type: array, items: {type: string}}
                shipping: {type: object, properties: {address: {type: object, properties: {line1: {type: string}}}, name: {type: string}}}
                tags: {type: array, items: {type: string}}
                ids: {type: array, items: {type: integer}}
                name: {type: string}
                prefs: {type: object, properties: {a: {type: string}, b: {type: string}}}
            encoding:
              address: {style: deepObject, explode: true}
              metadata: {style: deepObject, explode: true}
              expand: {style: deepObject, explode: true}
              shipping: {style: deepObject, explode: true}
              tags: {style: form, explode: false}
              ids: {style: pipeDelimited}
      responses: {"200": {description: OK}}
`
	d, err := LoadData(context.Background(), []byte(spec), "", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	args := `{"address":{"city":"Berlin","line1":"Unter den Linden 1"},"metadata":{"order_id":"6735"},"expand":["customer","invoice"],` +
		`"shipping":{"address":{"line1":"X"},"name":"Ada"},"tags":["a","b"],"ids":[1,2],"name":"Ada L","prefs":{"a":"1","b":"2"}}`
	req, err := toolByName(t, d, "post_customers").NewRequest(context.Background(), json.RawMessage(args), "")
	if err != nil {
		t.Fatal(err)
	}
	want := "POST http://upstream.test/v1/customers\nAccept: */*\nContent-Type: application/x-www-form-urlencoded\n\n" +
		"a=1&address%5Bcity%5D=Berlin&address%5Bline1%5D=Unter+den+Linden+1&b=2&expand%5B0%5D=customer&expand%5B1%5D=invoice&" +
		"ids=1%7C2&metadata%5Border_id%5D=6735&name=Ada+L&shipping%5Baddress%5D%5Bline1%5D=X&shipping%5Bname%5D=Ada&tags=a%2Cb"
	if got := dumpRequest(t, req); got != want {
		t.Errorf("request:\n got %q\nwant %q", got, want)
	}
}

// TestQ10StripeCustomers: Stripe's own document, POST /v1/customers: the
// nested fields its Encoding Object declares deepObject go as Stripe reads
// them.
func TestQ10StripeCustomers(t *testing.T) {
	d, err := Load(context.Background(), corpustest.Path(t, "stripe-2022-04-12"), LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	req, err := toolByName(t, d, "post_customers").NewRequest(context.Background(),
		json.RawMessage(`{"address":{"city":"Berlin","line1":"Unter den Linden 1"},"metadata":{"order_id":"6735"},"expand":["sources","tax"],"email":"ada@example.com"}`), "sk_test_1")
	if err != nil {
		t.Fatal(err)
	}
	want := "POST http://upstream.test/v1/customers\nAccept: application/json\nAuthorization: Basic c2tfdGVzdF8xOg==\nContent-Type: application/x-www-form-urlencoded\n\n" +
		"address%5Bcity%5D=Berlin&address%5Bline1%5D=Unter+den+Linden+1&email=ada%40example.com&expand%5B0%5D=sources&expand%5B1%5D=tax&metadata%5Border_id%5D=6735"
	if got := dumpRequest(t, req); got != want {
		t.Errorf("request:\n got %q\nwant %q", got, want)
	}
}

// TestPortablePattern: patterns are valid in ECMA-262 unicode mode (ajv),
// with the same meaning.
func TestPortablePattern(t *testing.T) {
	for in, want := range map[string]string{
		`^[a-zA-Z0-9_\-\:]+$`: `^[a-zA-Z0-9_\-:]+$`,
		`^a\:b\@c$`:           `^a:b@c$`,
		`^\d+\.\d+$`:          `^\d+\.\d+$`,
		`^[\w\s\/]+\$`:        `^[\w\s\/]+\$`,
		`a\-b`:                `a-b`,
		`\u00e9\x41\p{L}`:     `\u00e9\x41\p{L}`,
		`plain`:               `plain`,
	} {
		if got := portablePattern(in); got != want {
			t.Errorf("portablePattern(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFaithfulNullability: {enum: [null]} is {"type":"null"}, so GitHub's
// dismissed_reason keeps its three values; an allOf member that only says
// nullable makes the whole nullable instead of adding a branch that accepts
// anything.
func TestFaithfulNullability(t *testing.T) {
	d, err := LoadData(context.Background(), []byte(`openapi: 3.0.3
info: {title: n, version: "1"}
servers: [{url: "http://upstream.test"}]
components:
  schemas:
    Reason:
      type: string
      nullable: true
      oneOf:
        - enum: [false positive, won't fix, used in tests]
        - enum: [null]
    Base: {type: object, properties: {a: {type: string}}}
paths:
  /x:
    patch:
      operationId: patchX
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                dismissed_reason: {$ref: '#/components/schemas/Reason'}
                owner:
                  allOf: [{$ref: '#/components/schemas/Base'}, {nullable: true}]
      responses: {"200": {description: OK}}
`), "", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"object","properties":{"dismissed_reason":{"anyOf":[{"type":"string","anyOf":[{"enum":["false positive","won't fix","used in tests"]},{"type":"null"}]},{"type":"null"}]},"owner":{"anyOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"null"}]}}}`
	if got := string(d.Tools[0].InputSchema); got != want {
		t.Errorf("input schema:\n got %s\nwant %s", got, want)
	}
	for args, ok := range map[string]bool{`{"dismissed_reason":"won't fix"}`: true, `{"dismissed_reason":null}`: true, `{"dismissed_reason":"nope"}`: false, `{"owner":null}`: true, `{"owner":{"a":"x"}}`: true, `{"owner":7}`: false} {
		_, err := d.Tools[0].NewRequest(context.Background(), json.RawMessage(args), "")
		if (err == nil) != ok {
			t.Errorf("NewRequest(%s) = %v, want ok=%v", args, err, ok)
		}
	}
}
