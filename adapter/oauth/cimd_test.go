package oauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestClientIDMetadataDocument: a client_id that is an https URL names the
// client by the document there (draft-ietf-oauth-client-id-metadata-document):
// fetched once and cached, checked (its own URL as client_id, redirect URIs
// on its origin or allowed, a size cap), and usable through the whole flow.
func TestClientIDMetadataDocument(t *testing.T) {
	var fetches atomic.Int64
	docs := map[string]string{}
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		if r.URL.Path == "/moved.json" {
			http.Redirect(w, r, "/client.json", http.StatusFound)
			return
		}
		d, ok := docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(d))
	}))
	defer ts.Close()
	docs["/client.json"] = `{"client_id":"` + ts.URL + `/client.json","client_name":"Metadata client","redirect_uris":["` + ts.URL + `/cb","` + testRedirect + `"],"token_endpoint_auth_method":"none"}`
	docs["/liar.json"] = `{"client_id":"https://other.example/client.json","redirect_uris":["` + testRedirect + `"]}`
	docs["/elsewhere.json"] = `{"client_id":"` + ts.URL + `/elsewhere.json","redirect_uris":["https://evil.example/cb"]}`
	docs["/huge.json"] = `{"client_id":"` + ts.URL + `/huge.json","client_name":"` + strings.Repeat("x", 20000) + `"}`

	hc := ts.Client()
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return errors.New("redirects are not followed") }
	h := newHarness(t, NewMemoryStore(nil), func(o *Options) { o.MetadataClient = hc })

	id := ts.URL + "/client.json"
	q := authQuery(id)
	w := h.do("GET", PathAuthorize+"?"+q.Encode(), nil)
	if w.Code != 200 || !strings.Contains(w.Body.String(), "<strong>Metadata client</strong> (127.0.0.1:4567) asks to use Demo API") {
		t.Fatalf("page: %d %s", w.Code, w.Body)
	}
	access, _ := h.tokens(h.exchange(id, h.code(id)))
	if got, err := h.srv.ResolveToken(t.Context(), access); err != nil || got.ClientID != id {
		t.Errorf("ResolveToken = %+v, %v", got, err)
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("document fetched %d times, want 1 (cached)", n)
	}
	h.clock.add(11 * time.Minute)
	h.do("GET", PathAuthorize+"?"+q.Encode(), nil)
	if n := fetches.Load(); n != 2 {
		t.Errorf("after the cache time: %d fetches, want 2", n)
	}

	for path, want := range map[string]string{
		"/liar.json":      "the client metadata document&#39;s client_id https://other.example/client.json is not its own URL " + ts.URL + "/liar.json",
		"/elsewhere.json": "the client metadata document: redirect URI &#34;https://evil.example/cb&#34; is not allowed by this server (oauth_redirect_uris); loopback http URIs always are",
		"/huge.json":      "the client metadata document is larger than 16384 bytes",
		"/missing.json":   "the client metadata document " + ts.URL + "/missing.json answered HTTP 404",
		"/moved.json":     "fetching the client metadata document " + ts.URL + "/moved.json: Get &#34;/client.json&#34;: redirects are not followed",
	} {
		q := authQuery(ts.URL + path)
		w := h.do("GET", PathAuthorize+"?"+q.Encode(), nil)
		if msg := "The app asking to connect could not be identified: " + want; w.Code != 400 || !strings.Contains(w.Body.String(), msg) {
			t.Errorf("%s: %d\n%s\nwant %s", path, w.Code, w.Body, msg)
		}
	}
}

// TestMetadataFetchRefusesLocalAddresses: the default fetcher does not
// reach loopback or private addresses (SSRF) and needs https with a path.
func TestMetadataFetchRefusesLocalAddresses(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the fetcher reached %s", r.URL)
	}))
	defer ts.Close()
	h := newHarness(t, NewMemoryStore(nil), nil)
	host := strings.TrimPrefix(ts.URL, "https://")
	for id, want := range map[string]string{
		ts.URL + "/client.json":        "fetching the client metadata document " + ts.URL + "/client.json: Get &#34;" + ts.URL + "/client.json&#34;: dial tcp " + host + ": address 127.0.0.1 is not public",
		"https://10.1.2.3/client.json": "fetching the client metadata document https://10.1.2.3/client.json: Get &#34;https://10.1.2.3/client.json&#34;: dial tcp 10.1.2.3:443: address 10.1.2.3 is not public",
		"https://example.com":          "client_id https://example.com is not a valid client metadata document URL (https, with a path, no fragment or dot segments)",
		"https://example.com/a/../b":   "client_id https://example.com/a/../b is not a valid client metadata document URL (https, with a path, no fragment or dot segments)",
	} {
		w := h.do("GET", PathAuthorize+"?"+url.Values{"client_id": {id}}.Encode(), nil)
		if msg := "The app asking to connect could not be identified: " + want; w.Code != 400 || !strings.Contains(w.Body.String(), msg) {
			t.Errorf("%s: %d\n%s\nwant %s", id, w.Code, w.Body, msg)
		}
	}
}
