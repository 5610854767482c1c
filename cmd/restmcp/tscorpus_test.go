package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/restmcp/restmcp/internal/corpustest"
	"github.com/restmcp/restmcp/openapi"
)

// TestTypeScriptSDKOverCorpus serves two large real documents (GitHub,
// Stripe) against a stub upstream that answers every operation with its
// documented 2xx response example, or, where the document has none, a
// value generated from the tool's output schema, with one object member
// turned into a string where there is one (drift); then calls every tool
// whose required arguments can be generated with the TypeScript SDK 1.x
// client and with the client 2.x on the 2026-07-28 wire, each of which
// validates structuredContent against the tool's outputSchema and throws
// when it does not fit. No call may fail in a client, and none may be an
// error result.
func TestTypeScriptSDKOverCorpus(t *testing.T) {
	node := requireTSClient(t)
	for _, folder := range []string{"github-rest-v1.1.3", "stripe-2022-04-12"} {
		t.Run(folder, func(t *testing.T) {
			mcpURL, doc, stub := serveCorpusWithStub(t, folder)
			calls, skipped := generateCalls(t, doc.Tools)
			callsFile := filepath.Join(t.TempDir(), "calls.json")
			b, _ := json.Marshal(calls)
			if err := os.WriteFile(callsFile, b, 0o600); err != nil {
				t.Fatal(err)
			}
			listed := len(doc.Tools) // and job_status when an operation declares a 202
			for _, tl := range doc.Tools {
				if tl.StartsJobs {
					listed++
					break
				}
			}
			for _, version := range []string{"v1", "v2"} {
				out := runTSClient(t, node, "call-all.mjs", version, mcpURL, "corpus-key", callsFile)
				var got struct {
					Listed, Called, Structured int
					ListMs                     float64
					Failures                   []struct{ Name, Error string }
					ToolErrors                 []struct{ Name, Text string }
				}
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatalf("call-all.mjs %s output: %v\n%s", version, err, out)
				}
				if got.Listed != listed || got.Called != len(calls) {
					t.Errorf("%s: listed %d tools, called %d; want %d and %d", version, got.Listed, got.Called, listed, len(calls))
				}
				if len(got.Failures) != 0 {
					t.Errorf("%s: %d of %d calls failed in the TypeScript client; the first ones:\n%s", version, len(got.Failures), len(calls), firstN(got.Failures, 10))
				}
				if len(got.ToolErrors) != 0 {
					t.Errorf("%s: %d of %d calls were error results; the first ones:\n%s", version, len(got.ToolErrors), len(calls), firstN(got.ToolErrors, 10))
				}
				t.Logf("%s client %s: %d tools listed in %.0f ms; %d called, %d failed, %d error results (%d with structuredContent, %d answered with the document's example, %d with a drifted body), %d skipped (arguments not generated)",
					folder, version, got.Listed, got.ListMs, len(calls), len(got.Failures), len(got.ToolErrors), got.Structured, stub.examples, stub.drifted, skipped)
			}
			if stub.drifted == 0 {
				t.Error("no response body drifted from the document; the test checks nothing of R8's conforming")
			}
		})
	}
}

// serveCorpusWithStub runs restmcp serve on corpus document folder, its
// upstream an exampleUpstream, without rate limits, and returns the MCP
// URL, the document's tools and the stub.
func serveCorpusWithStub(t *testing.T, folder string) (string, *openapi.Document, *exampleUpstream) {
	t.Helper()
	spec := corpustest.Path(t, folder)
	raw, err := os.ReadFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	stub := newExampleUpstream(t, raw)
	doc, err := openapi.Load(context.Background(), spec, openapi.LoadOptions{Upstream: stub.URL, Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	stub.route(doc.Tools)
	// Every output schema kept (GitHub's list is past the 1 MiB default), so
	// that the clients check every structuredContent against one.
	mcpURL := startRun(t, map[string]string{"RESTMCP_SPEC": spec, "RESTMCP_UPSTREAM": stub.URL, "RESTMCP_RATE_LIMIT": "-1", "RESTMCP_OUTPUT_SCHEMAS_MAX_LIST_BYTES": "-1"})
	return mcpURL, doc, stub
}

// body returns the stub's response body for tool, the first route of its
// method and path template.
func (u *exampleUpstream) body(tl *openapi.Tool) []byte {
	for _, rt := range u.routes {
		if rt.tool == tl.Name {
			return rt.body
		}
	}
	return nil
}

func firstN[T any](l []T, n int) string {
	b, _ := json.MarshalIndent(l[:min(n, len(l))], "", "  ")
	return string(b)
}

// toolCall is one tools/call for call-all.mjs.
type toolCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// generateCalls makes the required arguments of each tool from its input
// schema, keeping the tools whose arguments restmcp accepts (NewRequest
// validates them as a tools/call does). It returns the calls and how many
// tools it could not make arguments for.
func generateCalls(t *testing.T, tools []*openapi.Tool) ([]toolCall, int) {
	t.Helper()
	var calls []toolCall
	skipped := 0
	for _, tl := range tools {
		var schema map[string]any
		if err := json.Unmarshal(tl.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		args, _ := sampleValue(schema, 0, true).(map[string]any)
		b, _ := json.Marshal(args)
		if _, err := tl.NewRequest(context.Background(), b, "corpus-key"); err != nil {
			skipped++
			continue
		}
		calls = append(calls, toolCall{Name: tl.Name, Arguments: args})
	}
	return calls, skipped
}

// sampleValue makes a value that fits schema: for objects, the required
// properties only (all of them when all is set, for response bodies).
func sampleValue(schema map[string]any, depth int, requiredOnly bool) any {
	if e, ok := schema["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if c, ok := schema["const"]; ok {
		return c
	}
	if alts, ok := schema["anyOf"].([]any); ok {
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok && m["type"] != "null" {
				return sampleValue(m, depth, requiredOnly)
			}
		}
		return nil
	}
	switch schema["type"] {
	case "object":
		out := map[string]any{}
		if depth > 6 {
			return out
		}
		props, _ := schema["properties"].(map[string]any)
		names := make([]string, 0, len(props))
		if requiredOnly {
			for _, r := range asSlice(schema["required"]) {
				if s, ok := r.(string); ok {
					names = append(names, s)
				}
			}
		} else {
			for k := range props {
				names = append(names, k)
			}
		}
		for _, k := range names {
			if p, ok := props[k].(map[string]any); ok {
				out[k] = sampleValue(p, depth+1, requiredOnly)
			}
		}
		return out
	case "array":
		n := 1
		if f, ok := schema["minItems"].(float64); ok {
			n = max(int(f), 1)
		}
		items, _ := schema["items"].(map[string]any)
		if depth > 6 || items == nil {
			return []any{}
		}
		l := make([]any, n)
		for i := range l {
			l[i] = sampleValue(items, depth+1, requiredOnly)
		}
		return l
	case "integer":
		if f, ok := schema["minimum"].(float64); ok {
			return int64(f) + 1
		}
		return 1
	case "number":
		if f, ok := schema["minimum"].(float64); ok {
			return f + 1
		}
		return 1.5
	case "boolean":
		return true
	case "null":
		return nil
	case "string":
		switch schema["format"] {
		case "date-time":
			return "2026-01-02T03:04:05Z"
		case "date":
			return "2026-01-02"
		case "email":
			return "dev@example.com"
		case "uri":
			return "https://example.com/x"
		}
		n := 1
		if f, ok := schema["minLength"].(float64); ok {
			n = max(int(f), 1)
		}
		return strings.Repeat("x", n)
	}
	return map[string]any{}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// exampleUpstream answers each operation of a document with its first 2xx
// response: the documented JSON example (resolving #/components/examples
// references), or a value generated from the tool's output schema, or no
// body for a response without content.
type exampleUpstream struct {
	*httptest.Server
	doc      map[string]any
	routes   []exampleRoute
	examples int // routes answered with a documented example
	drifted  int // routes whose body drifts from the document (see drift)
}

type exampleRoute struct {
	tool   string
	method string
	path   *regexp.Regexp
	status int
	body   []byte // nil: no body
	lits   int    // literal characters of the path template, to prefer the most specific route
	// headers are the response headers the first 2xx response declares,
	// sent with every answer (Link as a next-page link to the same URL).
	headers []string
}

func newExampleUpstream(t *testing.T, raw []byte) *exampleUpstream {
	t.Helper()
	u := &exampleUpstream{}
	if err := json.Unmarshal(raw, &u.doc); err != nil {
		t.Fatal(err)
	}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, rt := range u.routes {
			if rt.method != r.Method || !rt.path.MatchString(r.URL.EscapedPath()) {
				continue
			}
			for _, h := range rt.headers {
				v := "stub " + h
				if strings.EqualFold(h, "Link") {
					v = "<" + u.URL + r.URL.RequestURI() + `>; rel="next"`
				}
				w.Header().Set(h, v)
			}
			if rt.body == nil {
				w.WriteHeader(rt.status)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rt.status)
			_, _ = w.Write(rt.body)
			return
		}
		http.Error(w, "no operation matches "+r.Method+" "+r.URL.Path, http.StatusNotFound)
	}))
	t.Cleanup(u.Close)
	return u
}

var templateParam = regexp.MustCompile(`\{[^}]*\}`)

// route builds the routes of tools, from the document's examples.
func (u *exampleUpstream) route(tools []*openapi.Tool) {
	paths, _ := u.doc["paths"].(map[string]any)
	for _, tl := range tools {
		base, _ := url.Parse(tl.ServerURL)
		prefix := strings.TrimSuffix(base.Path, "/")
		parts := templateParam.Split(tl.PathTemplate, -1)
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		rt := exampleRoute{tool: tl.Name, method: tl.Method, path: regexp.MustCompile("^" + regexp.QuoteMeta(prefix) + strings.Join(parts, "[^/]+") + "$"),
			lits: len(templateParam.ReplaceAllString(tl.PathTemplate, ""))}
		item, _ := paths[tl.PathTemplate].(map[string]any)
		op, _ := item[strings.ToLower(tl.Method)].(map[string]any)
		rt.status, rt.body = u.response(op, tl)
		rt.headers = u.declaredHeaders(op)
		rt.body = u.drift(rt.body, tl)
		u.routes = append(u.routes, rt)
	}
	sort.SliceStable(u.routes, func(i, j int) bool { return u.routes[i].lits > u.routes[j].lits })
}

// first2xx is the operation's first 2xx status code (sorted) and its
// response, dereferenced; "" when it has none.
func (u *exampleUpstream) first2xx(op map[string]any) (string, map[string]any) {
	responses, _ := op["responses"].(map[string]any)
	var codes []string
	for c := range responses {
		if strings.HasPrefix(c, "2") {
			codes = append(codes, c)
		}
	}
	slices.Sort(codes)
	if len(codes) == 0 {
		return "", nil
	}
	return codes[0], u.deref(responses[codes[0]])
}

// declaredHeaders names the headers the operation's first 2xx response
// declares.
func (u *exampleUpstream) declaredHeaders(op map[string]any) []string {
	_, resp := u.first2xx(op)
	hs, _ := resp["headers"].(map[string]any)
	var out []string
	for h := range hs {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

// response picks the operation's first 2xx response and its body.
func (u *exampleUpstream) response(op map[string]any, tl *openapi.Tool) (int, []byte) {
	code, resp := u.first2xx(op)
	if code == "" {
		return 200, []byte(`{}`)
	}
	status, err := strconv.Atoi(code)
	if err != nil {
		status = 200
	}
	content, _ := resp["content"].(map[string]any)
	if len(content) == 0 || status == http.StatusNoContent {
		return status, nil
	}
	var media map[string]any
	for mt, m := range content {
		if strings.Contains(mt, "json") {
			media, _ = m.(map[string]any)
			break
		}
	}
	if media != nil {
		if ex, ok := media["example"]; ok {
			u.examples++
			b, _ := json.Marshal(ex)
			return status, b
		}
		if exs, ok := media["examples"].(map[string]any); ok {
			names := make([]string, 0, len(exs))
			for k := range exs {
				names = append(names, k)
			}
			slices.Sort(names)
			for _, k := range names {
				if v, ok := u.deref(exs[k])["value"]; ok {
					u.examples++
					b, _ := json.Marshal(v)
					return status, b
				}
			}
		}
	}
	if tl.OutputSchema == nil {
		return status, []byte(`{}`)
	}
	var schema map[string]any
	_ = json.Unmarshal(tl.OutputSchema, &schema)
	b, _ := json.Marshal(sampleValue(schema, 0, false))
	return status, b
}

// drift makes body disagree with the document the way real APIs do: the
// first top-level member the output schema types as an object becomes a
// string, and every other member keeps its value. restmcp must still send
// a structuredContent that fits its outputSchema (R8), or SDK clients
// throw.
func (u *exampleUpstream) drift(body []byte, tl *openapi.Tool) []byte {
	var obj map[string]any
	var schema struct {
		Properties map[string]struct {
			Type  string `json:"type"`
			AnyOf []struct {
				Type string `json:"type"`
			} `json:"anyOf"`
		} `json:"properties"`
	}
	if tl.OutputSchema == nil || json.Unmarshal(body, &obj) != nil || obj == nil || json.Unmarshal(tl.OutputSchema, &schema) != nil {
		return body
	}
	names := make([]string, 0, len(schema.Properties))
	for k := range schema.Properties {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		p := schema.Properties[k]
		isObject := p.Type == "object"
		for _, a := range p.AnyOf {
			isObject = isObject || a.Type == "object"
		}
		if isObject {
			obj[k] = "drifted: a string where the document says object"
			u.drifted++
			b, _ := json.Marshal(obj)
			return b
		}
	}
	return body
}

// deref follows one local $ref of the document.
func (u *exampleUpstream) deref(v any) map[string]any {
	m, _ := v.(map[string]any)
	ref, ok := m["$ref"].(string)
	if !ok || !strings.HasPrefix(ref, "#/") {
		return m
	}
	var cur any = u.doc
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		cm, _ := cur.(map[string]any)
		cur = cm[tok]
	}
	out, _ := cur.(map[string]any)
	return out
}
