package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/metering"
)

// dispatch is what the go-sdk dispatched for one request.
type dispatch struct{ method, tool string }

// differential is a restmcp server whose go-sdk dispatches are recorded by an
// outermost receiving middleware, and whose Meter records every admission.
type differential struct {
	handler http.Handler
	up      *planUpstream
	logs    *logBuffer

	mu         sync.Mutex
	dispatched []dispatch
	admitted   []string
}

func newDifferential(t testing.TB) *differential {
	d := &differential{up: newPlanUpstream(t), logs: &logBuffer{}}
	meter := &fakeMeter{admit: func(c metering.Call) (metering.Decision, error) {
		d.mu.Lock()
		d.admitted = append(d.admitted, c.Tool)
		d.mu.Unlock()
		return allowedDecision(c)
	}}
	s, err := New(Options{Tools: loadTools(t, "testdata/plans_api.yaml", d.up.URL), Keys: planKeys(), Meter: meter, Logger: newLogger(d.logs)})
	if err != nil {
		t.Fatal(err)
	}
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			rec := dispatch{method: method}
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				rec.tool = r.Params.Name
			}
			d.mu.Lock()
			d.dispatched = append(d.dispatched, rec)
			d.mu.Unlock()
			return next(ctx, method, req)
		}
	})
	d.handler = s.Handler()
	return d
}

// check posts body with the free plan's key and fails t when the go-sdk
// dispatched anything the gate did not read the same way, when a tool ran
// without its own admission, or when the response id differs from the
// gate's.
func (d *differential) check(t *testing.T, body []byte) {
	d.mu.Lock()
	d.dispatched, d.admitted = nil, nil
	d.mu.Unlock()
	d.up.take()

	req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-API-Key", "k-free")
	rec := httptest.NewRecorder()
	d.handler.ServeHTTP(rec, req)

	m, gateErr := decodeMessage(body)
	d.mu.Lock()
	dispatched, admitted := d.dispatched, d.admitted
	d.mu.Unlock()
	for _, got := range dispatched {
		if gateErr != nil {
			t.Fatalf("the gate refused %q (%v), but the SDK dispatched %+v", body, gateErr, got)
		}
		if got.method != m.method || (got.method == "tools/call" && got.tool != m.tool) {
			t.Fatalf("body %q: the gate read method %q tool %q, the SDK dispatched %+v", body, m.method, m.tool, got)
		}
	}
	// Every upstream request is the call of an admitted tool.
	paths := d.up.take()
	if len(paths) > len(admitted) {
		t.Fatalf("body %q: %d upstream requests %v for %d admissions %v", body, len(paths), paths, len(admitted), admitted)
	}
	if strings.Contains(d.logs.String(), "bug:") {
		t.Fatalf("body %q: a tool handler found no admission:\n%s", body, d.logs.String())
	}
	if gateErr != nil || !bytes.HasPrefix(bytes.TrimSpace(rec.Body.Bytes()), []byte("{")) {
		return
	}
	var resp struct {
		ID json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err == nil && len(resp.ID) > 0 {
		want := string(m.id)
		if want == "" {
			want = "null"
		}
		if string(resp.ID) != want && !(want == "null" && string(resp.ID) == `""`) {
			t.Fatalf("body %q: response id %s, the request's id %s", body, resp.ID, want)
		}
	}
}

// differentialSeeds are the decoys of the security report and their
// relatives: case variants, duplicates, nested params, odd ids, escapes.
var differentialSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":"AAPL"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"ping","params":{"name":"get_quote","arguments":{"symbol":"AAPL"}}}`,
	`{"jsonrpc":"2.0","id":1,"Method":"ping","method":"tools/call","params":{"name":"admin_stats"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin_stats","Name":"get_quote"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"Name":"get_quote","name":"admin_stats"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin_stats"},"Params":{"name":"get_quote"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"admin_stats","params":{"name":"get_quote"}}}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"admin_stats"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_quote","name":"admin_stats"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_quote"},"params":{"name":"admin_stats"}}`,
	`{"jsonrpc":"2.0","id":1,"METHOD":"tools/call","method":"ping"}`,
	`{"jsonrpc":"2.0","id":1,"m\u0065thod":"tools/call","params":{"n\u0061me":"admin_stats"}}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"admin_stats\",\"\u212aame\":\"get_quote\"}}",
	`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":"AAPL"}}}`,
	`{"jsonrpc":"2.0","id":1.5,"method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":"AAPL"}}}`,
	`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":null}`,
	`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_quote"}}`,
	`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"get_quote"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_quote","arguments":{"symbol":"AAPL"},"_meta":{"progressToken":1}}}`,
	`{"jsonrpc":"2.0","id":1,"result":{},"method":"tools/call","params":{"name":"get_quote"}}`,
	`{"jsonrpc":"1.0","id":1,"method":"tools/call","params":{"name":"get_quote"}}`,
	`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":3,"method":"ping","params":null}`,
	`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":5,"result":{}}`,
}

// FuzzGateMatchesSDK is the differential test of the security report: for
// any body, what the go-sdk dispatches (method, tool) is what the gate read,
// or the gate refused the body and the SDK dispatched nothing; no tool runs
// without its own admission; ids come back as sent.
func FuzzGateMatchesSDK(f *testing.F) {
	for _, s := range differentialSeeds {
		f.Add([]byte(s))
	}
	d := newDifferential(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		d.check(t, body)
	})
}
