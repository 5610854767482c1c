package adapter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/restmcp/restmcp/adapter/oauth"
	"github.com/restmcp/restmcp/adapter/oauth/oauthtest"
	"github.com/restmcp/restmcp/metering"
)

// revocableKeys accepts k-123 and k-456 until revoke is called for them.
type revocableKeys struct {
	mu      sync.Mutex
	revoked map[string]bool
}

// freePlan is the plan of every key revocableKeys accepts, parsed once.
var freePlan = testPlan("free")

func (k *revocableKeys) ResolveKey(_ context.Context, key string) (*metering.Plan, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	switch {
	case k.revoked[key]:
		return nil, metering.ErrRevokedKey
	case key == "k-123" || key == "k-456":
		return freePlan, nil
	}
	return nil, metering.ErrUnknownKey
}

func (k *revocableKeys) revoke(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.revoked[key] = true
}

// serveOAuth serves the tools of spec with the OAuth front on a loopback
// issuer whose clock is now (nil: time.Now); keys are checked by keys at
// sign-in and on each call.
func serveOAuth(t testing.TB, keys *revocableKeys, upstreamURL, spec string, now func() time.Time, more ...func(*Options)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	front, err := oauth.New(oauth.Options{
		Issuer: base, ResourcePath: "/oauth/mcp", ResourceName: "Weather", Store: oauth.NewMemoryStore(nil),
		EncryptionKey: []byte("0123456789abcdef0123456789abcdef"), Now: now,
		CheckKey: func(ctx context.Context, key string) error {
			_, err := keys.ResolveKey(ctx, key)
			return err
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Tools: loadTools(t, spec, upstreamURL), Keys: keys, OAuth: front, Meter: allowAll(0)}
	for _, f := range more {
		f(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(s.Handler())
	hs.Listener.Close()
	hs.Listener = ln
	hs.Start()
	t.Cleanup(hs.Close)
	return base
}

// connectOAuth connects the go-sdk client with its OAuth handler
// (Dynamic Client Registration, authorization code with PKCE) to the
// OAuth MCP endpoint, signing in with key; it returns the session and the
// token source.
func connectOAuth(t testing.TB, base, key string) (*mcp.ClientSession, *auth.AuthorizationCodeHandler) {
	t.Helper()
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "go-sdk test", RedirectURIs: []string{"http://127.0.0.1:9/callback"},
			GrantTypes: []string{"authorization_code", "refresh_token"}, TokenEndpointAuthMethod: "none",
		}},
		RedirectURL:              "http://127.0.0.1:9/callback",
		AuthorizationCodeFetcher: oauthtest.SignIn(http.DefaultClient, key),
		RequestRefreshToken:      true,
	})
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "restmcp-test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: base + "/oauth/mcp", OAuthHandler: h, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, h
}

// TestOAuthEndpoint: the go-sdk's own OAuth client signs in through
// discovery, registration and the sign-in page; every call is then made
// with the API key the token stands for, placed exactly as an x-api-key
// caller's key would be, and the token itself never reaches the upstream.
// Without a token, with an API key instead, or with a dead token, the
// OAuth endpoint answers 401 with the RFC 9728 challenge.
func TestOAuthEndpoint(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("{}")) })
	keys := &revocableKeys{revoked: map[string]bool{}}
	var clockMu sync.Mutex
	clock := time.Now()
	now := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	base := serveOAuth(t, keys, up.URL, "testdata/c25.yaml", now)
	upHost := strings.TrimPrefix(up.URL, "http://")
	challenge := `Bearer resource_metadata="` + base + `/.well-known/oauth-protected-resource/oauth/mcp", scope="mcp"`

	for _, hdr := range []map[string]string{nil, {"X-API-Key": "k-123"}} {
		got := post(t, base+"/oauth/mcp?api_key=k-123", initializeBody, hdr)
		want := rpcResponse{status: 401, body: `{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"authorization required: this endpoint takes OAuth access tokens; connect with an MCP client that supports OAuth (it signs you in with your API key), or send the API key to /mcp instead"}}`}
		if got.status != want.status || got.body != want.body || got.header.Get("WWW-Authenticate") != challenge {
			t.Errorf("%v: %d %v %s", hdr, got.status, got.header, got.body)
		}
	}
	got := post(t, base+"/oauth/mcp", initializeBody, map[string]string{"Authorization": "Bearer k-123"})
	if got.status != 401 || got.body != `{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"this endpoint takes OAuth access tokens, not API keys: connect with an MCP client that supports OAuth, or send the API key to /mcp instead"}}` ||
		got.header.Get("WWW-Authenticate") != challenge+`, error="invalid_token", error_description="this endpoint takes OAuth access tokens, not API keys: connect with an MCP client that supports OAuth, or send the API key to /mcp instead"` {
		t.Errorf("API key as Bearer: %d %v %s", got.status, got.header, got.body)
	}
	dead := "rmcp_at_AAAAAAAAAAAAAAAAAAAAAA." + strings.Repeat("A", 43)
	got = post(t, base+"/oauth/mcp", initializeBody, map[string]string{"Authorization": "Bearer " + dead})
	if got.status != 401 || got.body != `{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"invalid access token: unknown or revoked; sign in again"}}` ||
		got.header.Get("WWW-Authenticate") != challenge+`, error="invalid_token", error_description="invalid access token: unknown or revoked; sign in again"` {
		t.Errorf("dead token: %d %v %s", got.status, got.header, got.body)
	}

	cs, h := connectOAuth(t, base, "k-123")
	up.take()
	for _, c := range []struct {
		tool, args, uri string
		cred            map[string]string
	}{
		{"get_weather", `{"city":"Oslo"}`, "/v1/weather?city=Oslo&api_key=k-123", nil},
		{"get_forecast", `{"days":3}`, "/v1/forecast?days=3", map[string]string{"X-Api-Key": "k-123"}},
		{"get_me", `{}`, "/v1/me", map[string]string{"Authorization": "Bearer k-123"}},
		{"get_status", `{}`, "/v1/status", nil},
	} {
		if res := callTool(t, cs, c.tool, c.args); res.IsError {
			t.Errorf("%s: %v", c.tool, asJSON(t, res))
		}
		want := []recorded{{Method: "GET", RequestURI: c.uri, Host: upHost, Header: upstreamHeaders(c.cred)}}
		if diff := cmp.Diff(want, up.take()); diff != "" {
			t.Errorf("%s upstream (-want +got):\n%s", c.tool, diff)
		}
	}

	// The access token works as a Bearer token on /mcp too, and stands
	// for its key there as well.
	ts, err := h.TokenSource(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token()
	if err != nil || !strings.HasPrefix(tok.AccessToken, "rmcp_at_") {
		t.Fatalf("token %v, %v", tok, err)
	}
	mcpCS := connect(t, base+"/mcp", map[string]string{"Authorization": "Bearer " + tok.AccessToken}, "")
	callTool(t, mcpCS, "get_forecast", `{"days":1}`)
	want := []recorded{{Method: "GET", RequestURI: "/v1/forecast?days=1", Host: upHost, Header: upstreamHeaders(map[string]string{"X-Api-Key": "k-123"})}}
	if diff := cmp.Diff(want, up.take()); diff != "" {
		t.Errorf("access token on /mcp, upstream (-want +got):\n%s", diff)
	}

	// An hour later the access token has expired: 401 invalid_token.
	clockMu.Lock()
	clock = clock.Add(time.Hour)
	clockMu.Unlock()
	got = post(t, base+"/oauth/mcp", toolsCallBody(6, "get_status", `{}`), map[string]string{"Authorization": "Bearer " + tok.AccessToken})
	if got.status != 401 || got.body != `{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"invalid access token: expired; refresh it or sign in again"}}` ||
		got.header.Get("WWW-Authenticate") != challenge+`, error="invalid_token", error_description="invalid access token: expired; refresh it or sign in again"` {
		t.Errorf("expired token: %d %v %s", got.status, got.header, got.body)
	}
	clockMu.Lock()
	clock = clock.Add(-time.Hour)
	clockMu.Unlock()

	// Revoking the key in the registry ends the token's calls with the
	// OAuth challenge, so that the client signs in again.
	keys.revoke("k-123")
	got = post(t, base+"/oauth/mcp", toolsCallBody(7, "get_status", `{}`), map[string]string{"Authorization": "Bearer " + tok.AccessToken})
	if got.status != 401 || !strings.Contains(got.body, `"message":"API key revoked (key_id `+metering.KeyID("k-123")+`)`) ||
		got.header.Get("WWW-Authenticate") != challenge+`, error="invalid_token", error_description="the API key this token stands for is no longer accepted; sign in again"` {
		t.Errorf("revoked key: %d %v %s", got.status, got.header, got.body)
	}
	if n := len(up.take()); n != 0 {
		t.Errorf("%d upstream requests after revocation, want 0", n)
	}
}

// TestVerifyKey: the open-mode key check is one upstream call of the
// named tool with no arguments: 2xx accepts, 401 and 403 refuse
// (metering.ErrUnknownKey), anything else cannot tell. The request is the
// tool's with the key placed as for a call.
func TestVerifyKey(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("X-Api-Key") {
		case "good":
			_, _ = w.Write([]byte("{}"))
		case "bad":
			w.WriteHeader(http.StatusUnauthorized)
		case "forbidden":
			w.WriteHeader(http.StatusForbidden)
		default:
			w.WriteHeader(http.StatusBadGateway)
		}
	})
	s, err := New(Options{Tools: loadTools(t, "testdata/c25.yaml", up.URL)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for key, want := range map[string]string{
		"good":      "",
		"bad":       "metering: unknown API key: the upstream API answered 401 to get_maps",
		"forbidden": "metering: unknown API key: the upstream API answered 403 to get_maps",
		"flaky":     "verify call get_maps: the upstream API answered 502",
	} {
		err := s.VerifyKey(ctx, "get_maps", key)
		if got := fmt.Sprint(err); (want == "" && err != nil) || (want != "" && got != want) {
			t.Errorf("VerifyKey(%s) = %v, want %q", key, err, want)
		}
		if want != "" && strings.Contains(want, "unknown API key") && !errors.Is(err, metering.ErrUnknownKey) {
			t.Errorf("VerifyKey(%s) does not wrap ErrUnknownKey", key)
		}
	}
	upHost := strings.TrimPrefix(up.URL, "http://")
	reqs := up.take()
	if len(reqs) != 4 {
		t.Fatalf("%d upstream requests, want 4", len(reqs))
	}
	for _, r := range reqs {
		want := recorded{Method: "GET", RequestURI: "/v1/maps", Host: upHost, Header: upstreamHeaders(map[string]string{"X-Api-Key": r.Header.Get("X-Api-Key")})}
		want.Header.Set("Accept-Encoding", "gzip") // Go's transport's own: a verify call reads no body
		if diff := cmp.Diff(want, r); diff != "" {
			t.Errorf("verify request (-want +got):\n%s", diff)
		}
	}
	if err := s.VerifyKey(ctx, "no_such_tool", "good"); err == nil || err.Error() != `no tool "no_such_tool" to verify keys with` {
		t.Errorf("unknown tool: %v", err)
	}
}

// TestLegacySSEWithAccessTokens: a legacy HTTP+SSE client (the go-sdk's)
// whose every request carries an access token works end to end: the
// stream's POSTs resolve the token as its GET did (to the key an OAuth
// token stands for; to the caller a provider token names), so they are
// the opener's, and the call runs with the opener's upstream credential.
func TestLegacySSEWithAccessTokens(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	keys := &revocableKeys{revoked: map[string]bool{}}
	base := serveOAuth(t, keys, up.URL, "testdata/c25.yaml", nil, func(o *Options) { o.LegacySSEPath = "/sse" })
	_, h := connectOAuth(t, base, "k-123")
	ts, err := h.TokenSource(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.SSEClientTransport{Endpoint: base + "/sse", HTTPClient: &http.Client{Transport: addHeaders{base: http.DefaultTransport, h: map[string]string{"Authorization": "Bearer " + tok.AccessToken}}}}, nil)
	if err != nil {
		t.Fatalf("legacy SSE with an OAuth token: %v", err)
	}
	defer cs.Close()
	up.take() // the sign-in's key check
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_me", Arguments: map[string]any{}})
	if err != nil || res.IsError || text(res) != `{"ok":true}` {
		t.Fatalf("tools/call over legacy SSE with an OAuth token: %v %v", res, err)
	}
	// The key the token stands for, as the operation's bearer scheme puts it; never the token.
	got := up.take()
	if len(got) != 1 || got[0].RequestURI != "/v1/me" || got[0].Header.Get("Authorization") != "Bearer k-123" {
		t.Errorf("upstream: %+v", got)
	}
}
