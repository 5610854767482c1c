package oauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/restmcp/restmcp/internal/testenv"
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

	// ChatGPT identifies itself by such a document, calling back to its
	// per-connector URI on chatgpt.com (another origin, allowed by O8).
	docs["/chatgpt.json"] = `{"client_id":"` + ts.URL + `/chatgpt.json","client_name":"ChatGPT","redirect_uris":["https://chatgpt.com/connector/oauth/OUbdUMlL15Ct"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none"}`
	cq := authQuery(ts.URL + "/chatgpt.json")
	cq.Set("redirect_uri", "https://chatgpt.com/connector/oauth/OUbdUMlL15Ct")
	w = h.signIn(cq, testKey)
	if loc := w.Header().Get("Location"); w.Code != 303 || !strings.HasPrefix(loc, "https://chatgpt.com/connector/oauth/OUbdUMlL15Ct?code=rmcp_ac_") {
		t.Errorf("ChatGPT by its metadata document: %d %s", w.Code, loc)
	}

	for path, want := range map[string]string{
		"/liar.json":      "its client metadata document&#39;s client_id https://other.example/client.json is not its own URL " + ts.URL + "/liar.json",
		"/elsewhere.json": "its client metadata document: no acceptable redirect URI: redirect URI &#34;https://evil.example/cb&#34; is not allowed by this server (oauth_redirect_uris); loopback http URIs and private-use schemes always are",
		"/huge.json":      "its client metadata document is larger than 16384 bytes",
		"/missing.json":   "its client metadata document " + ts.URL + "/missing.json could not be fetched (it must answer 200 with JSON, from a public address, within 5 seconds)",
		"/moved.json":     "its client metadata document " + ts.URL + "/moved.json could not be fetched (it must answer 200 with JSON, from a public address, within 5 seconds)",
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
	for id, want := range map[string]string{
		ts.URL + "/client.json":        "its client metadata document " + ts.URL + "/client.json could not be fetched (it must answer 200 with JSON, from a public address, within 5 seconds)",
		"https://10.1.2.3/client.json": "its client metadata document https://10.1.2.3/client.json could not be fetched (it must answer 200 with JSON, from a public address, within 5 seconds)",
		"https://example.com":          "client_id https://example.com is not a valid client metadata document URL (https, with a path, no fragment or dot segments)",
		"https://example.com/a/../b":   "client_id https://example.com/a/../b is not a valid client metadata document URL (https, with a path, no fragment or dot segments)",
	} {
		w := h.do("GET", PathAuthorize+"?"+url.Values{"client_id": {id}}.Encode(), nil)
		if msg := "The app asking to connect could not be identified: " + want; w.Code != 400 || !strings.Contains(w.Body.String(), msg) {
			t.Errorf("%s: %d\n%s\nwant %s", id, w.Code, w.Body, msg)
		}
	}
}

// TestMetadataFetchOncePerID: 100 sign-in page requests for one bad
// client id, 50 of them at once, make one fetch (failures are cached,
// concurrent requests share the fetch), and the page never shows what the
// network said: a closed port, a refused address and a 500 read the same
// (O7). Fetches of ids the cache does not know count against the
// caller's registration limit.
func TestMetadataFetchOncePerID(t *testing.T) {
	var fetches atomic.Int64
	release := make(chan struct{})
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		<-release
		http.Error(w, "secret internal detail", http.StatusInternalServerError)
	}))
	defer ts.Close()
	closed := httptest.NewTLSServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	h := newHarness(t, NewMemoryStore(nil), func(o *Options) { o.MetadataClient = ts.Client(); o.RegisterLimit = 3 })
	id := ts.URL + "/client.json"
	generic := func(id string) string {
		return "The app asking to connect could not be identified: its client metadata document " + id + " could not be fetched (it must answer 200 with JSON, from a public address, within 5 seconds)"
	}
	var wg sync.WaitGroup
	var started atomic.Int64
	bodies := make([]string, 100)
	for i := range 50 {
		wg.Go(func() {
			started.Add(1)
			bodies[i] = h.do("GET", PathAuthorize+"?"+url.Values{"client_id": {id}}.Encode(), nil).Body.String()
		})
	}
	// The 50 pile up while the one fetch hangs: wait until it has begun
	// and all 50 are under way. (One that reaches the fetcher after the
	// fetch ended finds its result cached, so the count below holds
	// whatever the timing; the wait is what makes them concurrent.)
	testenv.Eventually(t, 10*time.Second, "the fetch and 50 requests under way", func() bool { return fetches.Load() == 1 && started.Load() == 50 })
	close(release)
	wg.Wait()
	for i := 50; i < 100; i++ {
		bodies[i] = h.do("GET", PathAuthorize+"?"+url.Values{"client_id": {id}}.Encode(), nil).Body.String()
	}
	if n := fetches.Load(); n != 1 {
		t.Errorf("100 requests for one bad client id made %d fetches, want 1", n)
	}
	for i, b := range bodies {
		// The upstream's status must not show; the id itself may hold "500"
		// in its port (127.0.0.1:45001).
		rest := strings.ReplaceAll(b, id, "")
		if !strings.Contains(b, generic(id)) || strings.Contains(rest, "secret internal detail") || strings.Contains(rest, "500") {
			t.Fatalf("request %d: %s", i+1, b)
		}
	}
	if got := h.srv.metadata.fetches.Load(); got != 1 {
		t.Errorf("fetcher counted %d fetches", got)
	}
	// A closed port reads as the 500 did.
	w := h.do("GET", PathAuthorize+"?"+url.Values{"client_id": {closedURL + "/c.json"}}.Encode(), nil)
	if !strings.Contains(w.Body.String(), generic(closedURL+"/c.json")) || strings.Contains(w.Body.String(), "refused") {
		t.Errorf("closed port: %s", w.Body)
	}
	// The registration limit (3 here): the first fetch and the closed port
	// took two; one more new id is fetched, the next is refused unfetched.
	h.do("GET", PathAuthorize+"?"+url.Values{"client_id": {ts.URL + "/third.json"}}.Encode(), nil)
	before := fetches.Load()
	w = h.do("GET", PathAuthorize+"?"+url.Values{"client_id": {ts.URL + "/fourth.json"}}.Encode(), nil)
	if fetches.Load() != before || !strings.Contains(w.Body.String(), "too many client metadata documents fetched for your network; retry in a minute") {
		t.Errorf("past the limit: %d fetches (was %d): %s", fetches.Load(), before, w.Body)
	}
}
