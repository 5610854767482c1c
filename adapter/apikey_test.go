package adapter

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/metering"
)

func TestExtractCredential(t *testing.T) {
	tests := []struct {
		name       string
		url        string
		header     map[string]string
		wantKey    string
		wantSource string
	}{
		{"none", "/mcp", nil, "", ""},
		{"x-api-key", "/mcp", map[string]string{"x-api-key": "k-123"}, "k-123", "header"},
		{"bearer", "/mcp", map[string]string{"Authorization": "Bearer k-123"}, "k-123", "bearer"},
		{"bearer scheme is case-insensitive", "/mcp", map[string]string{"Authorization": "bearer  k-123 "}, "k-123", "bearer"},
		{"basic is ignored", "/mcp", map[string]string{"Authorization": "Basic a2V5Og=="}, "", ""},
		{"query", "/mcp?api_key=k-123", nil, "k-123", "query"},
		{"header wins over bearer and query", "/mcp?api_key=q", map[string]string{"x-api-key": "h", "Authorization": "Bearer b"}, "h", "header"},
		{"bearer wins over query", "/mcp?api_key=q", map[string]string{"Authorization": "Bearer b"}, "b", "bearer"},
		{"empty header falls through", "/mcp?api_key=q", map[string]string{"x-api-key": " "}, "q", "query"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest("POST", "http://mcp.test"+tt.url, nil)
			for k, v := range tt.header {
				r.Header.Set(k, v)
			}
			c := extractCredential(r)
			if c.key != tt.wantKey || c.source != tt.wantSource {
				t.Errorf("extractCredential(%s, %v) = %q from %q, want %q from %q", tt.url, tt.header, c.key, c.source, tt.wantKey, tt.wantSource)
			}
			if tt.wantKey != "" && c.keyID != metering.KeyID(tt.wantKey) {
				t.Errorf("keyID = %q, want %q", c.keyID, metering.KeyID(tt.wantKey))
			}
		})
	}
}

func TestKeyID(t *testing.T) {
	// key_id is the first 12 hex digits of sha256("k-123").
	if got, want := metering.KeyID("k-123"), "3605a9e4358d"; got != want {
		t.Errorf("KeyID(k-123) = %q, want %q", got, want)
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, key, want string }{
		{`Get "http://127.0.0.1:1/v1/weather?city=Oslo&api_key=k-123": dial tcp 127.0.0.1:1: connect: connection refused`, "k-123",
			`Get "http://127.0.0.1:1/v1/weather?city=Oslo&api_key=REDACTED": dial tcp 127.0.0.1:1: connect: connection refused`},
		{`Get "http://h/v1/x?token=k%2F1&q=k/1": EOF`, "k/1", `Get "http://h/v1/x?token=REDACTED&q=REDACTED": EOF`},
		{`Get "http://h/v1/x?api_key=other": EOF`, "", `Get "http://h/v1/x?api_key=REDACTED": EOF`},
	}
	for _, tt := range tests {
		if got := redact(tt.in, tt.key); got != tt.want {
			t.Errorf("redact(%q, %q) =\n%q, want\n%q", tt.in, tt.key, got, tt.want)
		}
	}
}

func TestRedactQuery(t *testing.T) {
	got := redactQuery("api_key=k-123&city=Oslo&other=k-123", "k-123")
	if want := "api_key=REDACTED&city=Oslo&other=REDACTED"; got != want {
		t.Errorf("redactQuery = %q, want %q", got, want)
	}
}

// TestC25 covers the C25 case through the adapter: key placement per
// security scheme, public operations, anonymous calls and redaction.
func TestC25(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	upHost := strings.TrimPrefix(up.URL, "http://")
	logs := &logBuffer{}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c25.yaml", up.URL), AllowAnonymous: true, Logger: newLogger(logs)})
	noise := map[string]string{"Mcp-Session-Id": "s-1", "Cookie": "mcp_ui=1"}

	t.Run("tools/list has no credential arguments", func(t *testing.T) {
		cs := connect(t, srv.URL+"/mcp", noise, "")
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			schema := strings.ToLower(string(mustJSON(t, tool.InputSchema)))
			for _, bad := range []string{"api_key", "x-api-key", "authorization"} {
				if strings.Contains(schema, bad) {
					t.Errorf("%s input schema mentions %s: %s", tool.Name, bad, schema)
				}
			}
		}
		if diff := cmp.Diff([]string{"get_forecast", "get_maps", "get_me", "get_status", "get_weather"}, names); diff != "" {
			t.Errorf("tool names (-want +got):\n%s", diff)
		}
	})

	withKey := []struct {
		tool, args string
		uri        string
		cred       map[string]string
	}{
		{"get_weather", `{"city":"Oslo"}`, "/v1/weather?city=Oslo&api_key=k-123", nil},
		{"get_forecast", `{"days":3}`, "/v1/forecast?days=3", map[string]string{"X-Api-Key": "k-123"}},
		{"get_me", `{}`, "/v1/me", map[string]string{"Authorization": "Bearer k-123"}},
		{"get_status", `{}`, "/v1/status", nil},
		{"get_maps", `{}`, "/v1/maps", map[string]string{"X-Api-Key": "k-123"}},
	}
	for _, pres := range []struct {
		name, endpoint string
		header         map[string]string
	}{
		{"x-api-key", srv.URL + "/mcp", map[string]string{"X-API-Key": "k-123"}},
		{"query", srv.URL + "/mcp?api_key=k-123", nil},
		{"bearer", srv.URL + "/mcp", map[string]string{"Authorization": "Bearer k-123"}},
	} {
		t.Run("with key as "+pres.name, func(t *testing.T) {
			h := map[string]string{"Accept": "application/json, text/event-stream"}
			for k, v := range noise {
				h[k] = v
			}
			for k, v := range pres.header {
				h[k] = v
			}
			cs := connect(t, pres.endpoint, h, "2025-11-25")
			up.take()
			for _, c := range withKey {
				res := callTool(t, cs, c.tool, c.args)
				if res.IsError {
					t.Errorf("%s: isError, %v", c.tool, asJSON(t, res))
				}
				want := []recorded{{Method: "GET", RequestURI: c.uri, Host: upHost, Header: upstreamHeaders(c.cred)}}
				if diff := cmp.Diff(want, up.take()); diff != "" {
					t.Errorf("%s %s upstream (-want +got):\n%s", c.tool, c.args, diff)
				}
			}
		})
	}

	t.Run("without key", func(t *testing.T) {
		cs := connect(t, srv.URL+"/mcp", noise, "")
		up.take()
		res := callTool(t, cs, "get_forecast", `{"days":3}`)
		text := res.Content[0].(*mcp.TextContent).Text
		if !res.IsError || !strings.HasPrefix(text, "missing credentials:") || !strings.Contains(text, "X-API-Key") {
			t.Errorf("get_forecast without key = %v %q, want isError, missing credentials naming X-API-Key", res.IsError, text)
		}
		if got := up.take(); len(got) != 0 {
			t.Errorf("get_forecast without key sent %v, want nothing", got)
		}
		for _, c := range []struct{ tool, uri string }{{"get_status", "/v1/status"}, {"get_maps", "/v1/maps"}} {
			if res := callTool(t, cs, c.tool, `{}`); res.IsError {
				t.Errorf("%s without key: isError %v", c.tool, asJSON(t, res))
			}
			want := []recorded{{Method: "GET", RequestURI: c.uri, Host: upHost, Header: upstreamHeaders(nil)}}
			if diff := cmp.Diff(want, up.take()); diff != "" {
				t.Errorf("%s without key upstream (-want +got):\n%s", c.tool, diff)
			}
		}
	})

	t.Run("redaction of transport errors", func(t *testing.T) {
		srv := serve(t, Options{Tools: loadTools(t, "testdata/c25.yaml", closedURL(t)), Logger: newLogger(logs)})
		for _, endpoint := range []string{srv.URL + "/mcp?api_key=k-123", srv.URL + "/mcp"} {
			cs := connect(t, endpoint, map[string]string{"X-API-Key": "k-123"}, "")
			res := callTool(t, cs, "get_weather", `{"city":"Oslo"}`)
			text := res.Content[0].(*mcp.TextContent).Text
			if !res.IsError || !strings.HasPrefix(text, "upstream request failed:") || strings.Contains(text, "k-123") {
				t.Errorf("get_weather against a closed port = %v %q, want isError, upstream request failed, no key", res.IsError, text)
			}
			if !strings.Contains(text, "api_key=REDACTED") {
				t.Errorf("text %q does not show the redacted parameter", text)
			}
		}
	})

	if strings.Contains(logs.String(), "k-123") {
		t.Errorf("the key appears in the logs:\n%s", logs.String())
	}
}

func TestToolsCallWithoutKeyThroughClient(t *testing.T) {
	up := newUpstream(t, petstoreAPI)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c25.yaml", up.URL)})
	cs := connect(t, srv.URL+"/mcp", nil, "")
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_status", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "authentication required") {
		t.Errorf("CallTool without a key: err = %v, want the 401 JSON-RPC error", err)
	}
	if n := len(up.take()); n != 0 {
		t.Errorf("%d upstream requests, want 0", n)
	}
}

// panicTransport stands in for a buggy component below the tool handler.
type panicTransport struct{}

func (panicTransport) RoundTrip(*http.Request) (*http.Response, error) { panic("transport bug") }

func TestToolHandlerPanic(t *testing.T) {
	logs := &logBuffer{}
	srv := serve(t, Options{
		Tools:      loadTools(t, "testdata/c23.yaml", "http://127.0.0.1:1"),
		HTTPClient: &http.Client{Transport: panicTransport{}},
		Logger:     newLogger(logs),
	})
	cs := connect(t, srv.URL+"/mcp", map[string]string{"X-API-Key": "k-123"}, "")
	for i := range 2 { // the server keeps serving after the first panic
		res := callTool(t, cs, "get_pet", `{"petId":"p1"}`)
		want := `{"content":[{"type":"text","text":"internal error: the call to get_pet failed inside restmcp; it may not have reached the upstream API"}],"isError":true}`
		if diff := cmp.Diff(parseJSON(t, want), resultJSON(t, res)); diff != "" {
			t.Errorf("call %d (-want +got):\n%s", i, diff)
		}
	}
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Errorf("tools/list after panics: %v", err)
	}
	if !strings.Contains(logs.String(), "tool handler panicked") {
		t.Error("the panic was not logged")
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
