package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/redis/go-redis/v9"

	"github.com/restmcp/restmcp/adapter/oauth/oauthtest"
	"github.com/restmcp/restmcp/metering"
)

// oauthPlans: registry keys, and one static key on the free plan.
const oauthPlans = gatePlans + `keys:
  - key: oauth-static-key-1
    plan: free
`

// TestOAuthTypeScriptClient: the official TypeScript SDK client with its
// OAuth client provider connects to the OAuth MCP endpoint as a connector
// does (401, discovery, registration, the sign-in page with the API key,
// the code exchange with PKCE), lists and calls a tool, has its access
// token refused and refreshes it, and calls again. Both calls are metered
// under the key's plan and sent upstream with the key itself.
func TestOAuthTypeScriptClient(t *testing.T) {
	node := requireTSClient(t)
	app := startApp(t, oauthPlans, map[string]string{"RESTMCP_OAUTH": "true"})
	out := runTSClient(t, node, "oauth-check.mjs", app.url+"/oauth/mcp", "oauth-static-key-1", "get_quote", `{"symbol":"A"}`)
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("output is not JSON: %v: %s", err, out)
	}
	// The client id is random and the page's size depends on it and the
	// port: checked for shape, then compared with the rest.
	if id, _ := got["registeredClientID"].(string); len(id) != 22 {
		t.Errorf("registeredClientID = %v", got["registeredClientID"])
	}
	if n, _ := got["pageBytes"].(float64); n < 2000 || n > 4096 {
		t.Errorf("pageBytes = %v, want 2000..4096", got["pageBytes"])
	}
	result := map[string]any{"content": []any{map[string]any{"type": "text", "text": `{"ok":true}`}}, "structuredContent": map[string]any{"ok": true}}
	want := map[string]any{
		"unauthorized":       true,
		"registeredClientID": got["registeredClientID"],
		"authorize": map[string]any{
			"endpoint": app.url + "/oauth/authorize", "response_type": "code", "code_challenge_method": "S256",
			"resource": app.url + "/oauth/mcp", "scope": "mcp", "redirect_uri": "http://127.0.0.1:33418/callback",
		},
		"callback":      map[string]any{"origin": "http://127.0.0.1:33418/callback", "iss": app.url},
		"pageTitle":     "Sign in to Plans test API",
		"pageBytes":     got["pageBytes"],
		"tokenType":     "Bearer",
		"scope":         "mcp",
		"accessPrefix":  "rmcp_at_",
		"refreshPrefix": "rmcp_rt_",
		"refreshed":     true,
		"tools":         []any{"admin_stats", "always_fails", "etfs_top_holdings", "get_quote"},
		"result":        result,
		"again":         result,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("client output (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"oauth-static-key-1", "oauth-static-key-1"}, app.up.takeKeys()); diff != "" {
		t.Errorf("upstream X-Api-Key per request (-want +got):\n%s", diff)
	}
	keyID := metering.KeyID("oauth-static-key-1")
	if got := toolUsage(app.report(t, keyID, "free"))["get_quote"].Calls; got != 2 {
		t.Errorf("get_quote calls metered under the key = %d, want 2", got)
	}
}

// TestOAuthTwoReplicasShareRedis: a token issued by one replica works on
// another sharing Redis and the encryption key; a refresh on the second
// and a reuse of the old refresh token on the first revoke the grant for
// both.
func TestOAuthTwoReplicasShareRedis(t *testing.T) {
	redisURL := testRedisURL(t)
	env := map[string]string{
		"RESTMCP_REDIS_URL": redisURL, "RESTMCP_OAUTH": "true",
		"RESTMCP_OAUTH_ENCRYPTION_KEY": "c2hhcmVkLWtleS1mb3ItYm90aC1yZXBsaWNhcy0zMmI=",
	}
	a := startApp(t, gatePlans, env)
	// Replicas share one public_url (their tokens are for that resource);
	// here, A's address.
	envB := maps.Clone(env)
	envB["RESTMCP_PUBLIC_URL"] = a.url
	b := startApp(t, gatePlans, envB)
	cleanupOAuthKeys(t, redisURL)
	key, keyID := a.createKey(t, redisURL, "free")

	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "replica test", RedirectURIs: []string{"http://127.0.0.1:9/cb"}, TokenEndpointAuthMethod: "none",
			GrantTypes: []string{"authorization_code", "refresh_token"},
		}},
		RedirectURL:              "http://127.0.0.1:9/cb",
		AuthorizationCodeFetcher: oauthtest.SignIn(http.DefaultClient, key),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: a.url + "/oauth/mcp", OAuthHandler: h, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_quote", Arguments: map[string]any{"symbol": "A"}}); err != nil || res.IsError {
		t.Fatalf("call on A: %v %v", res, err)
	}
	ts, _ := h.TokenSource(ctx)
	tok, err := ts.Token()
	if err != nil {
		t.Fatal(err)
	}

	// B serves A's token.
	got := postOAuth(t, b.url, tok.AccessToken, callBody(1, "get_quote", `{"symbol":"B"}`))
	if got.status != 200 || !strings.Contains(got.body, `"structuredContent":{"ok":true}`) {
		t.Errorf("A's token on B: %d %s", got.status, got.body)
	}
	if diff := cmp.Diff([]string{key}, b.up.takeKeys()); diff != "" {
		t.Errorf("B's upstream X-Api-Key (-want +got):\n%s", diff)
	}
	if n := toolUsage(b.report(t, keyID, "free"))["get_quote"].Calls; n != 2 {
		t.Errorf("get_quote calls in the shared counters = %d, want 2", n)
	}
	// Another deployment on the same Redis and encryption key (its own
	// public URL) does not take A's token.
	other := startApp(t, gatePlans, env)
	got = postOAuth(t, other.url, tok.AccessToken, callBody(1, "get_quote", `{"symbol":"X"}`))
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"invalid access token: issued for another resource (` + a.url + `/oauth/mcp); sign in to this one"}}`; got.status != 401 || got.body != want {
		t.Errorf("A's token on another deployment: %d %s\nwant 401 %s", got.status, got.body, want)
	}
	if keys := other.up.takeKeys(); len(keys) != 0 {
		t.Errorf("the other deployment sent %v upstream", keys)
	}

	// B refreshes; the old refresh token replayed on A revokes the grant.
	refresh := func(app *testApp, rt string) httpResult {
		form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {registeredClientID(t, redisURL)}}
		req, _ := http.NewRequest(http.MethodPost, app.url+"/oauth/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		return doHTTP(t, req)
	}
	r := refresh(b, tok.RefreshToken)
	var fresh struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal([]byte(r.body), &fresh); r.status != 200 || err != nil {
		t.Fatalf("refresh on B: %d %s", r.status, r.body)
	}
	r = refresh(a, tok.RefreshToken)
	if want := `{"error":"invalid_grant","error_description":"the refresh token was already used; every token issued with it is revoked; sign in again"}`; r.status != 400 || r.body != want {
		t.Errorf("reused refresh token on A: %d %s", r.status, r.body)
	}
	got = postOAuth(t, a.url, fresh.AccessToken, callBody(2, "get_quote", `{"symbol":"C"}`))
	if got.status != 401 || got.body != `{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"invalid access token: unknown or revoked; sign in again"}}` {
		t.Errorf("the refreshed token after the grant's revocation: %d %s", got.status, got.body)
	}
}

// registeredClientID is the id of the one client registered in the OAuth
// store (the go-sdk handler does not expose the id it was given).
func registeredClientID(t *testing.T, redisURL string) string {
	t.Helper()
	c := redisClient(t, redisURL)
	keys, err := c.Keys(context.Background(), "restmcp:oauth:client:*").Result()
	if err != nil || len(keys) != 1 {
		t.Fatalf("registered clients in Redis: %v, %v", keys, err)
	}
	return strings.TrimPrefix(keys[0], "restmcp:oauth:client:")
}

func redisClient(t *testing.T, u string) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// cleanupOAuthKeys removes the OAuth store's keys from the test database
// before and after the test.
func cleanupOAuthKeys(t *testing.T, u string) {
	c := redisClient(t, u)
	clean := func() {
		ctx := context.Background()
		keys, _ := c.Keys(ctx, "restmcp:oauth:*").Result()
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	}
	clean()
	t.Cleanup(clean)
}

// postOAuth posts body to the OAuth MCP endpoint with an access token.
func postOAuth(t *testing.T, base, token, body string) httpResult {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/oauth/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	return doHTTP(t, req)
}

var regexpClientID = regexp.MustCompile(`"client_id":"([^"]+)"`)

// TestOAuthDemoRun: `restmcp --oauth` on the demo prints the URL for
// connectors beside the one for header clients, and the go-sdk's OAuth
// client signs in there with the demo key and calls a tool.
func TestOAuthDemoRun(t *testing.T) {
	mcpURL, banner := startServe(t, map[string]string{"RESTMCP_OAUTH": "true"})
	oauthURL := strings.TrimSuffix(mcpURL, "/mcp") + "/oauth/mcp"
	for _, want := range []string{
		"\nClaude and ChatGPT custom connectors (sign in with your API key): " + oauthURL + "\n",
		"Clients that send the key in a header or as ?api_key=: " + mcpURL + "\n",
	} {
		if !strings.Contains(banner, want) {
			t.Errorf("banner lacks %q:\n%s", want, banner)
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName: "demo", RedirectURIs: []string{"http://localhost:9/cb"}, TokenEndpointAuthMethod: "none",
		}},
		AuthorizationCodeFetcher: oauthtest.SignIn(http.DefaultClient, "demo-key"),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: oauthURL, OAuthHandler: h, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx_rates", Arguments: map[string]any{"base": "USD", "symbols": []string{"EUR"}}})
	if err != nil || res.IsError || text(res) != "{\"base\":\"USD\",\"date\":\"2025-06-30\",\"rates\":{\"EUR\":0.9215}}\n" {
		t.Errorf("fx_rates over OAuth: %v %v", res, err)
	}
}

// TestOAuthIssuer: public_url's origin, else a loopback listen address;
// a remote listen address without public_url is refused.
func TestOAuthIssuer(t *testing.T) {
	for _, tc := range []struct{ publicURL, addr, want, err string }{
		{"https://mcp.example.com/mcp", "0.0.0.0:8080", "https://mcp.example.com", ""},
		{"", "127.0.0.1:8931", "http://127.0.0.1:8931", ""},
		{"", "[::1]:8931", "http://[::1]:8931", ""},
		{"", "0.0.0.0:8080", "", "oauth needs public_url: the https origin clients reach (e.g. https://mcp.example.com, behind your TLS proxy); the listen address 0.0.0.0:8080 is not loopback"},
	} {
		got, err := oauthIssuer(tc.publicURL, tc.addr)
		if got != tc.want || fmt.Sprint(err) != map[bool]string{true: "<nil>", false: tc.err}[tc.err == ""] {
			t.Errorf("oauthIssuer(%q, %q) = %q, %v; want %q, %s", tc.publicURL, tc.addr, got, err, tc.want, tc.err)
		}
	}
}

// TestOAuthMCPRemote: mcp-remote, the stdio bridge Claude Desktop and other
// local clients use, connects to the OAuth MCP endpoint, registers itself,
// prints the authorization URL and waits on its loopback callback; the test
// plays the user (signs in with the key and lets the browser's redirect hit
// the callback), and the go-sdk client then calls a tool through the
// bridge, metered under the key.
func TestOAuthMCPRemote(t *testing.T) {
	node := requireNode22(t)
	app := startApp(t, oauthPlans, map[string]string{"RESTMCP_OAUTH": "true"})
	bridge, err := filepath.Abs(filepath.Join(node22Dir, "node_modules", "mcp-remote", "dist", "proxy.js"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	port := freePort(t)
	cmd := exec.CommandContext(ctx, node, bridge, app.url+"/oauth/mcp", strconv.Itoa(port), "--host", "127.0.0.1")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "BROWSER=true", "NO_COLOR=1")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	signedIn := make(chan error, 1)
	var logMu sync.Mutex
	var logText strings.Builder
	bridgeLog := func() string { logMu.Lock(); defer logMu.Unlock(); return logText.String() }
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		done := false
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			logText.WriteString(line + "\n")
			logMu.Unlock()
			if done || !strings.HasPrefix(line, app.url+"/oauth/authorize?") {
				continue
			}
			done = true
			back, err := oauthtest.Authorize(ctx, http.DefaultClient, line, "oauth-static-key-1")
			if err == nil {
				var resp *http.Response
				if resp, err = http.Get(back.String()); err == nil { // the browser following the redirect
					resp.Body.Close()
				}
			}
			signedIn <- err
		}
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect through mcp-remote: %v\n%s", err, bridgeLog())
	}
	defer cs.Close()
	select {
	case err := <-signedIn:
		if err != nil {
			t.Fatalf("sign-in: %v", err)
		}
	default:
		t.Fatalf("mcp-remote connected without signing in:\n%s", bridgeLog())
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_quote", Arguments: map[string]any{"symbol": "R"}})
	if err != nil || res.IsError || text(res) != `{"ok":true}` {
		t.Fatalf("get_quote through mcp-remote: %v %v\n%s", res, err, bridgeLog())
	}
	if diff := cmp.Diff([]string{"oauth-static-key-1"}, app.up.takeKeys()); diff != "" {
		t.Errorf("upstream X-Api-Key (-want +got):\n%s", diff)
	}
	if n := toolUsage(app.report(t, metering.KeyID("oauth-static-key-1"), "free"))["get_quote"].Calls; n != 1 {
		t.Errorf("get_quote calls metered = %d, want 1", n)
	}
}

// freePort is a loopback TCP port nobody listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
