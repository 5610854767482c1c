package adapter

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// view is what the gate reads of a message.
type view struct {
	ID, Method, Tool, Meta string
	HasMethod              bool
}

func viewOf(m *rpcMessage) view {
	return view{ID: string(m.id), Method: m.method, Tool: m.tool, Meta: m.metaVersion, HasMethod: m.hasMethod}
}

func TestDecodeMessage(t *testing.T) {
	tests := []struct {
		name string
		body string
		want view
	}{
		{"tools/call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_item","arguments":{"id":"1"}}}`,
			view{ID: "1", Method: "tools/call", Tool: "get_item", HasMethod: true}},
		// The decoys of the security report: a case-variant member is not the
		// member (the go-sdk compares names exactly), so the gate reads
		// tools/call and get_item, which is what the SDK runs.
		{"decoy Method", `{"jsonrpc":"2.0","id":1,"method":"tools/call","Method":"ping","params":{"name":"get_item","arguments":{"id":"1"}}}`,
			view{ID: "1", Method: "tools/call", Tool: "get_item", HasMethod: true}},
		{"decoy Method first", `{"Method":"ping","jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_item"}}`,
			view{ID: "1", Method: "tools/call", Tool: "get_item", HasMethod: true}},
		{"decoy Name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pro_tool","Name":"free_tool"}}`,
			view{ID: "1", Method: "tools/call", Tool: "pro_tool", HasMethod: true}},
		{"decoy Params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"pro_tool"},"Params":{"name":"free_tool"}}`,
			view{ID: "1", Method: "tools/call", Tool: "pro_tool", HasMethod: true}},
		{"Kelvin sign is not k", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\",\"\u212aame\":\"b\"}}",
			view{ID: "1", Method: "tools/call", Tool: "a", HasMethod: true}},
		{"escaped member names", `{"jsonrpc":"2.0","\u0069d":"x","m\u0065thod":"tools\/call","params":{"n\u0061me":"get\u005fitem"}}`,
			view{ID: `"x"`, Method: "tools/call", Tool: "get_item", HasMethod: true}},
		{"null id on a response", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, view{}},
		{"big id kept as sent", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`,
			view{ID: "123456789012345678901234567890", Method: "ping", HasMethod: true}},
		{"negative id", `{"jsonrpc":"2.0","id":-7,"method":"ping"}`, view{ID: "-7", Method: "ping", HasMethod: true}},
		{"null params", `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":null}`, view{ID: "2", Method: "tools/list", HasMethod: true}},
		{"response", `{"jsonrpc":"2.0","id":7,"result":{}}`, view{ID: "7"}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, view{Method: "notifications/initialized", HasMethod: true}},
		{"meta version", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			view{ID: "1", Method: "tools/call", Tool: "t", Meta: "2026-07-28", HasMethod: true}},
		{"white space", " \n{ \"jsonrpc\" : \"2.0\" , \"id\" : 1 , \"method\" : \"tools/call\" , \"params\" : { \"name\" : \"t\" } }\n",
			view{ID: "1", Method: "tools/call", Tool: "t", HasMethod: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := decodeMessage([]byte(tt.body))
			if err != nil {
				t.Fatalf("decodeMessage(%s): %v", tt.body, err)
			}
			if diff := cmp.Diff(tt.want, viewOf(m)); diff != "" {
				t.Errorf("decodeMessage(%s) (-want +got):\n%s", tt.body, diff)
			}
		})
	}
}

func TestDecodeMessageRefusals(t *testing.T) {
	deep := strings.Repeat("[", 1001) + strings.Repeat("]", 1001)
	tests := []struct {
		name string
		body string
		want messageError
	}{
		{"duplicate method", `{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/call","params":{"name":"t"}}`,
			messageError{400, -32600, `invalid request: member "method" appears twice in the message; send it once`}},
		{"duplicate params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"params":{"name":"b"}}`,
			messageError{400, -32600, `invalid request: member "params" appears twice in the message; send it once`}},
		{"duplicate name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}`,
			messageError{400, -32600, `invalid request: member "params.name" appears twice in params; send it once`}},
		{"duplicate escaped name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","n\u0061me":"b"}}`,
			messageError{400, -32600, `invalid request: member "params.name" appears twice in params; send it once`}},
		{"duplicate id", `{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`,
			messageError{400, -32600, `invalid request: member "id" appears twice in the message; send it once`}},
		{"duplicate meta version", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
			messageError{400, -32600, `invalid request: member "params._meta.io.modelcontextprotocol/protocolVersion" appears twice in params._meta; send it once`}},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
			messageError{400, -32600, `invalid request: "jsonrpc" must be "2.0", got "1.0"`}},
		{"no jsonrpc", `{"id":1,"method":"ping"}`, messageError{400, -32600, `invalid request: missing "jsonrpc": "2.0"`}},
		{"null body", `null`, messageError{400, -32600, `invalid request: a JSON-RPC message is a JSON object`}},
		{"empty body", ``, messageError{400, -32600, `empty body: send one JSON-RPC message`}},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
			messageError{400, -32600, `batch requests are not supported: send one JSON-RPC message per POST`}},
		{"not JSON", `{"jsonrpc":`, messageError{400, -32700, `parse error: the body must be one JSON-RPC message (UTF-8 JSON)`}},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\xff\"}",
			messageError{400, -32700, `parse error: the body must be one JSON-RPC message (UTF-8 JSON)`}},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
			messageError{400, -32600, `invalid request: id must be a string or an integer, got {"a":1}`}},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"ping"}`,
			messageError{400, -32600, `invalid request: id must be a string or an integer, got true`}},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
			messageError{400, -32600, `invalid request: id must be a string or an integer, got null`}},
		{"fractional id", `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
			messageError{400, -32600, `invalid request: id must be a string or an integer, got 1.5`}},
		{"exponent id", `{"jsonrpc":"2.0","id":1e999999,"method":"tools/call","params":{"name":"t"}}`,
			messageError{400, -32600, `invalid request: id must be a string or an integer, got 1e999999`}},
		{"array id", `{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
			messageError{400, -32600, `invalid request: id must be a string or an integer, got [1]`}},
		{"null method", `{"jsonrpc":"2.0","id":1,"method":null}`, messageError{400, -32600, `invalid request: method must be a string`}},
		{"method and result", `{"jsonrpc":"2.0","id":1,"method":"tools/call","result":{},"params":{"name":"t"}}`,
			messageError{400, -32600, `invalid request: a message has a "method" or a "result"/"error", not both`}},
		{"array params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["t"]}`,
			messageError{400, -32600, `invalid request: params must be an object`}},
		{"tools/call without params", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`,
			messageError{400, -32600, `invalid request: tools/call needs params with the tool's name`}},
		{"tools/call null params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
			messageError{400, -32600, `invalid request: tools/call needs params with the tool's name`}},
		{"tools/call numeric name", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7}}`,
			messageError{400, -32600, `invalid request: tools/call params.name must be the tool's name, a string`}},
		{"too deep", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":` + deep + `}}}`,
			messageError{400, -32600, `invalid request: JSON nested deeper than 1000 levels`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := decodeMessage([]byte(tt.body))
			me, ok := asMessageError(err)
			if !ok {
				t.Fatalf("decodeMessage(%s) = %+v, %v; want refusal %+v", tt.body, m, err, tt.want)
			}
			if *me != tt.want {
				t.Errorf("decodeMessage(%s) refusal = %+v, want %+v", tt.body, *me, tt.want)
			}
		})
	}
}

// TestIDsEchoedExactly: JSON-RPC ids come back byte for byte, including
// integers the go-sdk would not hold exactly (it reads ids as float64); an
// id that is neither a string nor an integer is an invalid request, answered
// with a JSON-RPC error (J1).
func TestIDsEchoedExactly(t *testing.T) {
	srv := serve(t, Options{Tools: handTools()})
	for _, id := range []string{`1.5`, `1e3`, `null`, `true`, `[1]`} {
		got := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`, nil)
		want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id must be a string or an integer, got ` + id + `"}}`
		if got.status != http.StatusBadRequest || got.body != want || got.header.Get("Content-Type") != "application/json" {
			t.Errorf("ping with id %s = %d %s %q, want 400 application/json %q", id, got.status, got.header.Get("Content-Type"), got.body, want)
		}
	}
	for _, id := range []string{`123456789012345678901234567890`, `0`, `-0`, `9007199254740993`, `7`, `"abc"`, `""`, `"\u00e9"`} {
		for _, accept := range []string{"application/json", "text/event-stream"} {
			got := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`, map[string]string{"Accept": accept})
			want := `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`
			if accept == "text/event-stream" {
				want = "event: message\ndata: " + want + "\n\n"
			}
			if got.status != http.StatusOK || got.body != want {
				t.Errorf("ping with id %s (Accept %s) = %d %q, want 200 %q", id, accept, got.status, got.body, want)
			}
		}
	}
	// The gate's own answers carry the id as sent too.
	got := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/call","params":{"name":"get_pet"}}`, nil)
	var env struct{ ID json.RawMessage }
	_ = json.Unmarshal([]byte(got.body), &env)
	if got.status != http.StatusUnauthorized || string(env.ID) != "123456789012345678901234567890" {
		t.Errorf("tools/call without key = %d %s, want 401 with the id as sent", got.status, got.body)
	}
}
