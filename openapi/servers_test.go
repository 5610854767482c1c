package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestServersC20(t *testing.T) {
	const dir = "C20-servers"
	c20Hosts := []string{"uploads.example.test", "reports.example.test"}
	runCalls(t, []call{
		{name: "variable defaults", dir: dir, tool: "list_things", args: `{}`, want: "GET https://eu.api.example.test/v2/things\nAccept: */*\n"},
		{name: "operation server", dir: dir, tool: "get_upload", args: `{"id":"x"}`, want: "GET https://uploads.example.test/u1/uploads/x\nAccept: */*\n"},
		{name: "path server", dir: dir, tool: "get_reports", args: `{}`, want: "GET https://reports.example.test/r/reports\nAccept: */*\n"},
		{name: "configured variable", dir: dir, opts: LoadOptions{ServerVariables: map[string]string{"region": "us"}}, tool: "list_things", args: `{}`,
			want: "GET https://us.api.example.test/v2/things\nAccept: */*\n"},
		{name: "origin override keeps path", dir: dir, opts: LoadOptions{Upstream: "http://127.0.0.1:9000", UpstreamHosts: c20Hosts}, tool: "list_things", args: `{}`,
			want: "GET http://127.0.0.1:9000/v2/things\nAccept: */*\n"},
		{name: "override with path replaces", dir: dir, opts: LoadOptions{Upstream: "https://api.example.com/v3", UpstreamHosts: c20Hosts}, tool: "list_things", args: `{}`,
			want: "GET https://api.example.com/v3/things\nAccept: */*\n"},
		{name: "override leaves listed operation servers", dir: dir, opts: LoadOptions{Upstream: "http://127.0.0.1:9000", UpstreamHosts: c20Hosts}, tool: "get_upload", args: `{"id":"x"}`,
			want: "GET https://uploads.example.test/u1/uploads/x\nAccept: */*\n"},
		{name: "relative server with origin", dir: dir, file: "openapi-relative.yaml", opts: LoadOptions{Upstream: "http://upstream.test"}, tool: "list_things", args: `{}`,
			want: "GET http://upstream.test/api/v1/things\nAccept: */*\n"},
		{name: "no servers with origin", dir: dir, file: "openapi-noservers.yaml", opts: LoadOptions{Upstream: "http://upstream.test"}, tool: "list_things", args: `{}`,
			want: "GET http://upstream.test/things\nAccept: */*\n"},
	})

	errs := []struct {
		name, file string
		opts       LoadOptions
		want       []string
	}{
		{"enum violation", "openapi.yaml", LoadOptions{ServerVariables: map[string]string{"region": "mars"}}, []string{`"region"`, "eu, us"}},
		{"relative without origin", "openapi-relative.yaml", LoadOptions{}, []string{`server URL "/api/v1" is relative; configure the upstream base URL`}},
		{"no servers without origin", "openapi-noservers.yaml", LoadOptions{}, []string{`server URL "/" is relative`}},
		{"operation server with no host", "openapi-nohost.yaml", LoadOptions{Upstream: "http://127.0.0.1:9000"}, []string{
			`PUT /<upload_url> (#/paths/~1<upload_url>/put): server URL "https://" has a scheme but no host`}},
		{"override with unlisted operation servers", "openapi.yaml", LoadOptions{Upstream: "http://127.0.0.1:9000"}, []string{
			`GET /reports (#/paths/~1reports/get): server "https://reports.example.test/r" is on host "reports.example.test", not the upstream's host "127.0.0.1:9000"`,
			`GET /uploads/{id} (#/paths/~1uploads~1{id}/get): server "https://uploads.example.test/u1" is on host "uploads.example.test"`}},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load(context.Background(), filepath.Join("testdata", dir, tt.file), tt.opts)
			if err == nil {
				t.Fatal("Load succeeded; want error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// TestServerWithoutHostLenient: in lenient mode an operation whose own
// server has a scheme but no host is dropped with a problem naming it; the
// others are served through the upstream.
func TestServerWithoutHostLenient(t *testing.T) {
	d, err := Load(context.Background(), filepath.Join("testdata", "C20-servers", "openapi-nohost.yaml"), LoadOptions{Upstream: "http://127.0.0.1:9000", Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Tools) != 1 || d.Tools[0].Name != "list_things" || d.Tools[0].ServerURL != "http://127.0.0.1:9000/v1" || d.RelativeServer() != "" {
		t.Errorf("tools %+v", d.Tools)
	}
	want := []Problem{{Severity: SeverityError, File: "openapi-nohost.yaml", Pointer: "/paths/~1<upload_url>/put", Operation: "PUT /<upload_url>",
		Message: `server URL "https://" has a scheme but no host; operation dropped`}}
	if diff := cmp.Diff(want, d.Problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestServersFromURL loads the C20 documents over HTTP, so relative
// servers resolve against the document's URL.
func TestServersFromURL(t *testing.T) {
	files := map[string]string{"/specs/relative.yaml": "openapi-relative.yaml", "/specs/noservers.yaml": "openapi-noservers.yaml"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		data, err := os.ReadFile(filepath.Join("testdata", "C20-servers", f))
		if err != nil {
			t.Error(err)
		}
		w.Write(data)
	}))
	defer srv.Close()
	tests := []struct{ path, want string }{
		{"/specs/relative.yaml", "GET " + srv.URL + "/api/v1/things\nAccept: */*\n"},
		{"/specs/noservers.yaml", "GET " + srv.URL + "/things\nAccept: */*\n"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			d, err := Load(context.Background(), srv.URL+tt.path, LoadOptions{HTTPClient: srv.Client()})
			if err != nil {
				t.Fatal(err)
			}
			req, err := toolByName(t, d, "list_things").NewRequest(context.Background(), json.RawMessage(`{}`), "")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, dumpRequest(t, req)); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExternalRefC02 checks that refs leaving the spec folder are refused
// before anything outside is read, and that remote refs are never fetched.
func TestExternalRefC02(t *testing.T) {
	root := t.TempDir()
	spec := filepath.Join(root, "spec")
	if err := os.MkdirAll(filepath.Join(root, "outside"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(spec, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "outside", "pet.yaml"), []byte("Pet:\n  type: object\n  properties:\n    name: {type: string}\n"), 0o644)
	data, err := os.ReadFile(filepath.Join("testdata", "C02-external-ref", "openapi-forbidden-ref.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(spec, "openapi-forbidden-ref.yaml"), data, 0o644)

	var read []string
	spy := func(_ context.Context, u *url.URL) ([]byte, error) {
		read = append(read, u.String())
		return nil, io.EOF
	}
	base := string(data)
	tests := []struct {
		name, doc string
		want      []string
	}{
		{"parent folder", base, []string{`"../outside/pet.yaml"`, "outside the spec root"}},
		{"absolute path", strings.ReplaceAll(base, "../outside/pet.yaml", filepath.ToSlash(filepath.Join(root, "outside", "pet.yaml"))), []string{"outside the spec root"}},
		{"file URI", strings.ReplaceAll(base, "../outside/pet.yaml", "file://"+filepath.ToSlash(filepath.Join(root, "outside", "pet.yaml"))), []string{"outside the spec root"}},
		{"remote", strings.ReplaceAll(base, "../outside/pet.yaml", "https://schemas.example.test/pet.yaml"), []string{"https://schemas.example.test/pet.yaml", "remote references are refused"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read = nil
			p := filepath.Join(spec, "doc.yaml")
			if err := os.WriteFile(p, []byte(tt.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(context.Background(), p, LoadOptions{ReadFromURI: spy})
			if err == nil {
				t.Fatal("Load succeeded; want a refused-ref error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			// Lenient mode refuses it too, with strict mode's error.
			if _, lerr := Load(context.Background(), p, LoadOptions{ReadFromURI: spy, Lenient: true}); lerr == nil || lerr.Error() != err.Error() {
				t.Errorf("lenient Load error %v, want strict mode's %v", lerr, err)
			}
			if !strings.Contains(err.Error(), "doc.yaml") {
				t.Errorf("error %q does not name the document", err)
			}
			if len(read) > 0 {
				t.Errorf("read %v before refusing", read)
			}
		})
	}
}

// TestUpstreamHosts: with an upstream set, an operation- or path-level
// server on another host would receive callers' keys; unless upstream_hosts
// names the host, strict Load fails and lenient Load drops the operation.
func TestUpstreamHosts(t *testing.T) {
	spec := []byte(`openapi: 3.0.3
info: {title: hosts, version: "1"}
servers: [{url: "https://api.example.com/v1"}]
paths:
  /a:
    get: {operationId: getA, responses: {"200": {description: OK}}}
  /b:
    servers: [{url: "https://uploads.example.net/v2"}]
    get: {operationId: getB, responses: {"200": {description: OK}}}
  /c:
    get:
      operationId: getC
      servers: [{url: "http://127.0.0.1:9000/c"}]
      responses: {"200": {description: OK}}
`)
	ctx := context.Background()
	const msg = `server "https://uploads.example.net/v2" is on host "uploads.example.net", not the upstream's host "127.0.0.1:9000": callers' API keys would be sent there; add "uploads.example.net" to upstream_hosts (--upstream-hosts, RESTMCP_UPSTREAM_HOSTS) if that host may receive them`
	_, err := LoadData(ctx, spec, "", LoadOptions{Upstream: "http://127.0.0.1:9000"})
	var he *UpstreamHostError
	if !errors.As(err, &he) || he.Error() != msg {
		t.Errorf("strict Load error %v\nwant an *UpstreamHostError: %s", err, msg)
	}
	d, err := LoadData(ctx, spec, "", LoadOptions{Upstream: "http://127.0.0.1:9000", Lenient: true})
	if err != nil {
		t.Fatalf("lenient Load: %v", err)
	}
	wantProblems := []Problem{{Severity: SeverityError, File: "<data>", Pointer: "/paths/~1b/get", Operation: "GET /b", Message: msg + "; operation dropped"}}
	if diff := cmp.Diff(wantProblems, d.Problems); diff != "" || len(d.Tools) != 2 {
		t.Errorf("lenient: %d tools (want 2); problems (-want +got):\n%s", len(d.Tools), diff)
	}
	d, err = LoadData(ctx, spec, "", LoadOptions{Upstream: "http://127.0.0.1:9000", UpstreamHosts: []string{"Uploads.Example.NET"}})
	if err != nil {
		t.Fatalf("with upstream_hosts: %v", err)
	}
	var got []string
	for _, tl := range d.Tools {
		got = append(got, tl.Name+" "+tl.ServerURL)
	}
	want := []string{"get_a http://127.0.0.1:9000/v1", "get_b https://uploads.example.net/v2", "get_c http://127.0.0.1:9000/c"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"127.0.0.1:9000", "uploads.example.net"}, d.KeyHosts()); diff != "" {
		t.Errorf("KeyHosts (-want +got):\n%s", diff)
	}
	// Without an upstream the document's own servers are used as published.
	if _, err := LoadData(ctx, spec, "", LoadOptions{}); err != nil {
		t.Errorf("without upstream: %v", err)
	}
}

// TestUpstreamFollowsRepeatedDocumentServers: a path- or operation-level
// server that repeats a document-level server (Twilio writes
// https://api.twilio.com on every path) follows the upstream like the
// document's; one on a document server's host with its own path keeps that
// path on the upstream's origin; another host still needs upstream_hosts.
func TestUpstreamFollowsRepeatedDocumentServers(t *testing.T) {
	spec := []byte(`openapi: 3.0.3
info: {title: repeated, version: "1"}
servers: [{url: "https://api.example.com/v1"}, {url: "https://{region}.example.com", variables: {region: {default: eu}}}]
paths:
  /a:
    servers: [{url: "https://api.example.com/v1/"}]
    get: {operationId: getA, responses: {"200": {description: OK}}}
  /b:
    get:
      operationId: getB
      servers: [{url: "https://API.example.com:443/v2"}]
      responses: {"200": {description: OK}}
  /c:
    servers: [{url: "https://eu.example.com"}]
    get: {operationId: getC, responses: {"200": {description: OK}}}
  /d:
    servers: [{url: "http://api.example.com/v1"}]
    get: {operationId: getD, responses: {"200": {description: OK}}}
`)
	d, err := LoadData(context.Background(), spec, "", LoadOptions{Upstream: "http://127.0.0.1:9000", Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tl := range d.Tools {
		got = append(got, tl.Name+" "+tl.ServerURL)
	}
	want := []string{"get_a http://127.0.0.1:9000/v1", "get_b http://127.0.0.1:9000/v2", "get_c http://127.0.0.1:9000"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	// Another scheme is another server: its keys would go out in clear text.
	if len(d.Problems) != 1 || !strings.Contains(d.Problems[0].Message, `server "http://api.example.com/v1" is on host "api.example.com"`) {
		t.Errorf("problems %+v, want GET /d refused for its host", d.Problems)
	}
}
