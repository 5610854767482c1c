package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const issue8Spec = `openapi: 3.0.3
info: {title: issue8, version: "1"}
servers: [{url: "http://upstream.test/v1"}]
paths:
  /records:
    get:
      operationId: listRecords
      parameters:
        - name: filter
          in: query
          style: deepObject
          explode: true
          schema: {type: object, properties: {status: {type: string}, min: {type: integer}}}
        - {name: Cookie, in: header, schema: {type: string}}
        - {name: connection, in: header, schema: {type: string}}
        - {name: Host, in: header, schema: {type: string}}
        - {name: Content-Length, in: header, schema: {type: integer}}
        - {name: Transfer-Encoding, in: header, schema: {type: string}}
        - {name: Upgrade, in: header, schema: {type: string}}
        - {name: X-Tenant, in: header, schema: {type: string}}
      responses: {"200": {description: OK}}
`

// TestIssue8ReservedHeaderParameters: header parameters that HTTP itself
// owns (Cookie, Connection, Host, Content-Length, Transfer-Encoding and the
// hop-by-hop fields) are not arguments: they stay out of the input schema,
// with one warning each, and never reach the request.
func TestIssue8ReservedHeaderParameters(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	d, err := LoadData(context.Background(), []byte(issue8Spec), "", LoadOptions{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	tool := d.Tools[0]
	want := `{"type":"object","properties":{"filter":{"type":"object","properties":{"status":{"type":"string"},"min":{"type":"integer"}}},"X-Tenant":{"type":"string"}}}`
	if diff := cmp.Diff(canonicalJSON(t, want), canonicalJSON(t, string(tool.InputSchema))); diff != "" {
		t.Errorf("input schema (-want +got):\n%s", diff)
	}
	var warned []string
	for _, p := range d.Problems {
		warned = append(warned, p.Message)
	}
	var want8 []string
	for _, h := range []string{"Cookie", "connection", "Host", "Content-Length", "Transfer-Encoding", "Upgrade"} {
		want8 = append(want8, `header parameter "`+h+`" skipped: HTTP itself sets this header; it is not an argument`)
	}
	if diff := cmp.Diff(want8, warned); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	for _, args := range []string{`{"Cookie":"session=admin"}`, `{"Host":"evil.example"}`, `{"Transfer-Encoding":"chunked"}`} {
		if _, err := tool.NewRequest(context.Background(), json.RawMessage(args), ""); err == nil || !strings.HasPrefix(err.Error(), "invalid arguments: ") {
			t.Errorf("NewRequest(%s) = %v, want invalid arguments (not an argument)", args, err)
		}
	}
}

// TestIssue8DeepObjectScalarsOnly: a deepObject query parameter serializes
// an object of scalars; a member that is an object or an array is an
// argument error, never filter[a][b]=1.
func TestIssue8DeepObjectScalarsOnly(t *testing.T) {
	d, err := LoadData(context.Background(), []byte(issue8Spec), "", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tool := d.Tools[0]
	req, err := tool.NewRequest(context.Background(), json.RawMessage(`{"filter":{"status":"open","min":2,"extra":true,"none":null}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := dumpRequest(t, req), "GET http://upstream.test/v1/records?filter%5Bextra%5D=true&filter%5Bmin%5D=2&filter%5Bnone%5D=&filter%5Bstatus%5D=open\nAccept: */*\n"; got != want {
		t.Errorf("request:\n%s\nwant:\n%s", got, want)
	}
	for args, want := range map[string]string{
		`{"filter":{"a":{"b":1}}}`:  `invalid arguments: filter: member "a" is an object; a deepObject parameter holds only strings, numbers, booleans and nulls`,
		`{"filter":{"a":[1,2]}}`:    `invalid arguments: filter: member "a" is an array; a deepObject parameter holds only strings, numbers, booleans and nulls`,
		`{"filter":{"status":[1]}}`: `invalid arguments: filter: status: has type array, want string`,
	} {
		_, err := tool.NewRequest(context.Background(), json.RawMessage(args), "")
		if err == nil || err.Error() != want {
			t.Errorf("NewRequest(%s) = %v, want %s", args, err, want)
		}
	}
}
