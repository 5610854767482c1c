package openapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/restmcp/restmcp/internal/corpustest"
)

// TestCredentialPlacementCorpus: where the caller's key goes, as the startup
// summary says, on the documents where it used to silently not arrive, and
// the settings that fix each.
func TestCredentialPlacementCorpus(t *testing.T) {
	corpustest.Require(t)
	load := func(folder string, opts LoadOptions) *Document {
		t.Helper()
		opts.Upstream, opts.UpstreamHosts = "http://upstream.test", []string{"*"}
		d, err := Load(context.Background(), corpustest.Path(t, folder), opts)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	summary := func(d *Document) ([]string, bool) { return d.CredentialSummary() }
	request := func(t *testing.T, tl *Tool, args, key, scheme string) string {
		t.Helper()
		req, err := tl.NewRequestPresented(context.Background(), json.RawMessage(args), key, scheme)
		if err != nil {
			t.Fatal(err)
		}
		return dumpRequest(t, req)
	}

	t.Run("github declares no security", func(t *testing.T) {
		got, noKey := summary(load("github-rest-v1.1.3", LoadOptions{}))
		if diff := cmp.Diff([]string{"none (document declares no security): 692 tools"}, got); diff != "" || !noKey {
			t.Errorf("summary (-want +got):\n%s noKey=%v", diff, noKey)
		}
		d := load("github-rest-v1.1.3", LoadOptions{DefaultSecurity: "header:Authorization:Bearer"})
		got, noKey = summary(d)
		if diff := cmp.Diff([]string{"http bearer (default_security): 692 tools"}, got); diff != "" || noKey {
			t.Errorf("with default_security (-want +got):\n%s noKey=%v", diff, noKey)
		}
		want := "GET http://upstream.test/repos/octo/hello\nAccept: application/json\nAuthorization: Bearer ghp_1\n"
		if got := request(t, toolByName(t, d, "repos_get"), `{"owner":"octo","repo":"hello"}`, "ghp_1", ""); got != want {
			t.Errorf("repos_get:\n got %q\nwant %q", got, want)
		}
		if _, err := toolByName(t, d, "repos_get").NewRequest(context.Background(), json.RawMessage(`{"owner":"o","repo":"r"}`), ""); err == nil {
			t.Error("repos_get without a key: no error, want missing credentials")
		}
	})
	t.Run("kubernetes apiKey in the authorization header gets the scheme presented", func(t *testing.T) {
		d := load("kubernetes-1.36-swagger20", LoadOptions{})
		got, _ := summary(d)
		if len(got) == 0 || !strings.HasPrefix(got[0], "apiKey header authorization: ") {
			t.Errorf("summary %v, want apiKey header authorization first", got)
		}
		tl := toolByName(t, d, "list_core_v_1_namespaced_pod")
		want := "GET http://upstream.test/api/v1/namespaces/default/pods\nAccept: application/json, application/json;stream=watch, application/cbor, application/cbor-seq, application/vnd.kubernetes.protobuf, application/vnd.kubernetes.protobuf;stream=watch, application/yaml\nAuthorization: Bearer tok\n"
		if got := request(t, tl, `{"namespace":"default"}`, "tok", "Bearer"); got != want {
			t.Errorf("bearer-presented key:\n got %q\nwant %q", got, want)
		}
		want = strings.Replace(want, "Bearer tok", "tok", 1)
		if got := request(t, tl, `{"namespace":"default"}`, "tok", ""); got != want {
			t.Errorf("x-api-key-presented key:\n got %q\nwant %q", got, want)
		}
	})
	t.Run("fdic api_key as an ordinary query parameter", func(t *testing.T) {
		d := load("fdic-bankfind-multifile", LoadOptions{})
		tl := d.Tools[0]
		if !strings.Contains(string(tl.InputSchema), `"api_key"`) {
			t.Fatalf("%s: api_key not in the schema without the setting: %s", tl.Name, tl.InputSchema)
		}
		d = load("fdic-bankfind-multifile", LoadOptions{CredentialParameters: []string{"api_key"}})
		got, noKey := summary(d)
		if diff := cmp.Diff([]string{"apiKey query api_key (credential_parameters): 8 tools"}, got); diff != "" || noKey {
			t.Errorf("summary (-want +got):\n%s", diff)
		}
		for _, tl := range d.Tools {
			if strings.Contains(string(tl.InputSchema), `"api_key"`) {
				t.Errorf("%s: api_key still in the schema", tl.Name)
			}
		}
		tl = toolByName(t, d, d.Tools[0].Name)
		req, err := tl.NewRequest(context.Background(), json.RawMessage(`{}`), "fdic-key")
		if err != nil {
			t.Fatal(err)
		}
		if q := req.URL.Query().Get("api_key"); q != "fdic-key" {
			t.Errorf("%s: api_key=%q in %s, want the caller's key", tl.Name, q, req.URL)
		}
	})
	t.Run("a malformed default_security fails the load", func(t *testing.T) {
		_, err := Load(context.Background(), corpustest.Path(t, "github-rest-v1.1.3"), LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}, DefaultSecurity: "header"})
		if err == nil || !strings.Contains(err.Error(), `default_security "header": want header:<Name>, header:Authorization:Bearer, query:<name>, cookie:<name>, bearer or basic`) {
			t.Errorf("error %v", err)
		}
	})
}
