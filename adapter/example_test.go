package adapter_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/restmcp/restmcp/adapter"
	"github.com/restmcp/restmcp/openapi"
)

func ExampleNew() {
	// A REST API to put behind MCP.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"pong":true,"key":%q}`, r.Header.Get("X-API-Key"))
	}))
	defer api.Close()

	spec := `
openapi: 3.0.3
info: {title: Demo, version: 1.0.0}
servers: [{url: /v1}]
security: [{key: []}]
paths:
  /ping:
    get:
      operationId: ping
      responses: {'200': {description: OK}}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-API-Key}
`
	doc, err := openapi.LoadData(context.Background(), []byte(spec), "", openapi.LoadOptions{Upstream: api.URL})
	if err != nil {
		log.Fatal(err)
	}
	s, err := adapter.New(adapter.Options{Tools: doc.Tools, Name: "demo", Version: "1.0.0"})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()

	// One tools/call, with the caller's key in the x-api-key header.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-API-Key", "k-123")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, resp.Header.Get("Content-Type"))
	fmt.Println(string(body))
	// Output:
	// 200 application/json
	// {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"pong\":true,\"key\":\"k-123\"}"}],"structuredContent":{"pong":true,"key":"k-123"}}}
}
