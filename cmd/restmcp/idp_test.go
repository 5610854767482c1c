package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"github.com/restmcp/restmcp/adapter"
	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/adapter/idp/idptest"
	"github.com/restmcp/restmcp/adapter/oauth"
	"github.com/restmcp/restmcp/internal/testenv"
	"github.com/restmcp/restmcp/metering"
)

// idpProviderDir holds the real OpenID provider (examples/idp-provider).
const idpProviderDir = "../../examples/idp-provider"

// startOIDCProvider runs examples/idp-provider/provider.mjs (the
// oidc-provider package) on a free port with tokens naming plan, and
// returns its issuer once it listens.
func startOIDCProvider(t *testing.T, node, plan string, more ...string) string {
	t.Helper()
	return startOIDCProviderEnv(t, node, nil, plan, more...)
}

// startOIDCProviderEnv is startOIDCProvider with env added to the
// provider's environment.
func startOIDCProviderEnv(t *testing.T, node string, env []string, plan string, more ...string) string {
	t.Helper()
	if _, err := os.Stat(filepath.Join(idpProviderDir, "node_modules", "oidc-provider")); err != nil {
		skipUnlessRequired(t, "RESTMCP_REQUIRE_NODE", "!!! SKIPPING the real OpenID provider test: needs `npm ci` in examples/idp-provider !!!")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, append([]string{"provider.mjs", strconv.Itoa(port), plan}, more...)...)
	cmd.Dir = idpProviderDir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if issuer, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				ready <- issuer
			}
		}
	}()
	select {
	case issuer := <-ready:
		return issuer
	case <-time.After(20 * time.Second):
		t.Fatalf("the OpenID provider did not start: %s", stderr.String())
		return ""
	}
}

// TestRealOpenIDProvider: restmcp serve in resource-server mode in front
// of a real OpenID provider (oidc-provider). The TypeScript SDK's OAuth
// client (client credentials) is answered 401, finds the provider through
// restmcp's protected resource metadata, gets a JWT access token for the
// MCP URL there and calls a tool; the call is metered under the token's
// client_id and the plan its plan claim names (GET /usage); the upstream
// sees a token the provider issued by RFC 8693 token exchange for the
// upstream's audience, never the inbound one.
func TestRealOpenIDProvider(t *testing.T) {
	node := requireTSClient(t)
	issuer := startOIDCProvider(t, node, "pro")
	upURL, upstreamSaw := meUpstream(t)
	mcpURL, _ := startServe(t, map[string]string{
		"RESTMCP_SPEC": "testdata/idp/accounts.yaml", "RESTMCP_UPSTREAM": upURL + "/v1", "RESTMCP_PLANS_FILE": "testdata/idp/plans.yaml",
		"RESTMCP_IDP_ISSUER": issuer, "RESTMCP_IDP_IDENTITY_CLAIM": "client_id", "RESTMCP_IDP_PLAN_CLAIM": "plan",
		"RESTMCP_IDP_CLIENT_ID": "restmcp", "RESTMCP_IDP_CLIENT_SECRET": "restmcp-secret", "RESTMCP_IDP_EXCHANGE_AUDIENCE": "https://accounts.example",
	})
	out := runTSClient(t, node, "idp-check.mjs", mcpURL, "connector", "connector-secret", "me_get", `{}`)
	var got struct {
		Tools  []string
		Result map[string]any
		Token  string
		Usage  map[string]any
		Seen   []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("idp-check.mjs output: %v\n%s", err, out)
	}
	if diff := cmp.Diff(meResult, got.Result); diff != "" || !slicesEqual(got.Tools, []string{"me_get"}) {
		t.Errorf("tools %v, result (-want +got):\n%s", got.Tools, diff)
	}
	// initialize and tools/list need no credential; the tools/call is
	// answered 401, and the SDK signs in: restmcp's resource metadata, the
	// provider's metadata and token endpoint, the call again.
	// (The SDK's GET for a stream, answered 405, races the tools/list: it
	// is counted apart.)
	wantSeen := []string{"POST /mcp 200", "POST /mcp 202", "POST /mcp 200", "POST /mcp 401",
		"GET /.well-known/oauth-protected-resource/mcp 200", "GET /.well-known/oauth-authorization-server 200", "POST /token 200", "POST /mcp 200"}
	var seen []string
	streams := 0
	for _, s := range got.Seen {
		if s == "GET /mcp 405" {
			streams++
			continue
		}
		seen = append(seen, s)
	}
	if diff := cmp.Diff(wantSeen, seen); diff != "" || streams != 1 {
		t.Errorf("the client's requests (-want +got):\n%s", diff)
	}
	claims := jwtClaims(t, got.Token)
	if claims["iss"] != issuer || claims["aud"] != mcpURL || claims["client_id"] != "connector" || claims["plan"] != "pro" {
		t.Errorf("the inbound token's claims: %v (want iss %s, aud %s)", claims, issuer, mcpURL)
	}
	// Metered under the client_id, on the plan its token names.
	if got.Usage["key_id"] != "idp-"+metering.KeyID("connector") || got.Usage["plan"] != "pro" {
		t.Errorf("usage: %v", got.Usage)
	}
	auths := upstreamSaw()
	if len(auths) != 1 || !strings.HasPrefix(auths[0], "GET /v1/me Bearer ey") || strings.Contains(auths[0], got.Token) {
		t.Fatalf("the upstream saw %q", auths)
	}
	ex := jwtClaims(t, strings.TrimPrefix(auths[0], "GET /v1/me Bearer "))
	if ex["iss"] != issuer || ex["aud"] != "https://accounts.example" || ex["client_id"] != "restmcp" {
		t.Errorf("the exchanged token's claims: %v", ex)
	}
}

// jwtClaims decodes a JWT's payload (the signature was checked elsewhere).
func jwtClaims(t *testing.T, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	var m map[string]any
	if err == nil {
		err = json.Unmarshal(b, &m)
	}
	if err != nil {
		t.Fatalf("JWT payload: %v", err)
	}
	return m
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// TestRealOpenIDProviderSignIn: a user signs in at the vendor's provider
// (not on restmcp's page): the TypeScript SDK's OAuth client is answered
// 401 on its tools/call, finds the provider through restmcp's protected
// resource metadata, and sends the user to the provider's authorization
// endpoint (PKCE, the MCP URL as RFC 8707 resource); the user signs in on
// the provider's own login and consent pages; the SDK exchanges the code
// and calls the tool, metered under the user's sub and the plan the token
// names; the upstream gets an exchanged token.
func TestRealOpenIDProviderSignIn(t *testing.T) {
	node := requireTSClient(t)
	issuer, mcpURL, upstreamAuths := startSignInServe(t, node)
	out := runTSClient(t, node, "idp-login-check.mjs", mcpURL, "ada", "me_get", `{}`)
	var got struct {
		Unauthorized   bool
		Authorization  string
		Resource, Pkce string
		Pages          []string
		Result         map[string]any
		Token          string
		Usage          map[string]any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("idp-login-check.mjs output: %v\n%s", err, out)
	}
	if !got.Unauthorized || got.Authorization != issuer+"/auth" || got.Resource != mcpURL || got.Pkce != "S256" {
		t.Errorf("the sign-in started: unauthorized %v at %q for resource %q, PKCE %q", got.Unauthorized, got.Authorization, got.Resource, got.Pkce)
	}
	// The provider's login page, its consent page, then the redirect back.
	wantPages := []string{"GET /auth 303", "GET /interaction/… 200", "POST /interaction/… 303", "GET /auth/… 303",
		"GET /interaction/… 200", "POST /interaction/… 303", "GET /auth/… 303"}
	if diff := cmp.Diff(wantPages, got.Pages); diff != "" {
		t.Errorf("the browser's pages at the provider (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(meResult, got.Result); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	claims := jwtClaims(t, got.Token)
	if claims["iss"] != issuer || claims["aud"] != mcpURL || claims["sub"] != "ada" || claims["plan"] != "pro" {
		t.Errorf("the user's token's claims: %v", claims)
	}
	if got.Usage["key_id"] != "idp-"+metering.KeyID("ada") || got.Usage["plan"] != "pro" {
		t.Errorf("usage: %v", got.Usage)
	}
	auths := upstreamAuths()
	if len(auths) != 1 || strings.Contains(auths[0], got.Token) {
		t.Fatalf("the upstream saw %q", auths)
	}
	if ex := jwtClaims(t, strings.TrimPrefix(auths[0], "GET /v1/me Bearer ")); ex["aud"] != "https://accounts.example" || ex["iss"] != issuer {
		t.Errorf("the exchanged token's claims: %v", ex)
	}
}

// TestIdPBesideOAuthFront: with restmcp's OAuth front on as well, mcp_path's
// protected resource metadata names the vendor's provider first and
// restmcp's own authorization server second; a provider token and an
// API key both call on mcp_path.
func TestIdPBesideOAuthFront(t *testing.T) {
	p := idptest.New(t)
	upURL, _ := meUpstream(t)
	mcpURL, _ := startServe(t, map[string]string{
		"RESTMCP_SPEC": "testdata/idp/accounts.yaml", "RESTMCP_UPSTREAM": upURL + "/v1", "RESTMCP_OAUTH": "true",
		"RESTMCP_IDP_ISSUER": p.URL, "RESTMCP_IDP_UPSTREAM": "forward",
	})
	origin := strings.TrimSuffix(mcpURL, "/mcp")
	resp, err := http.Get(origin + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if meta.Resource != mcpURL || !slicesEqual(meta.AuthorizationServers, []string{p.URL, origin}) {
		t.Errorf("mcp_path's resource metadata: %+v, want resource %s and servers [%s %s]", meta, mcpURL, p.URL, origin)
	}
	tok := p.Token(idptest.Claims{Issuer: p.URL, Subject: "ada", Audience: []string{mcpURL}, Expiry: time.Now().Add(time.Hour)})
	for _, h := range []map[string]string{{"Authorization": "Bearer " + tok}, {"X-Api-Key": "plain-key"}} {
		got := postJSON(t, mcpURL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"me_get","arguments":{}}}`, h)
		if !strings.Contains(got, `{\"who\":\"me\"}`) {
			t.Errorf("%v: %s", h, got)
		}
	}
}

// postJSON posts body to url with headers h and returns the answer's body.
func postJSON(t *testing.T, url, body string, h map[string]string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestEnterpriseManagedAuthorization: an enterprise's user signs in at the
// enterprise's OpenID provider (oidc-provider, its own login pages) to an
// MCP client built on the TypeScript client v2; the SDK's
// CrossAppAccessProvider, answered 401 by restmcp's OAuth endpoint, gets an
// ID-JAG for restmcp's authorization server from the provider (RFC 8693)
// and presents it as a JWT bearer grant: no sign-in page of restmcp's, no
// refresh token; the tools/call carries the API key oauth_enterprise_idps
// names for that provider, metered per user (ema-<hash>) under its plan.
func TestEnterpriseManagedAuthorization(t *testing.T) {
	node := requireTSClient(t)
	clientIDs := filepath.Join(t.TempDir(), "client-ids.json")
	if err := os.WriteFile(clientIDs, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	issuer := startOIDCProvider(t, node, "pro", clientIDs)
	upURL, upstreamSaw := meUpstream(t)
	t.Setenv("ACME_API_KEY", "k-acme-enterprise")
	mcpURL, _ := startServe(t, map[string]string{
		"RESTMCP_SPEC": "testdata/idp/accounts.yaml", "RESTMCP_UPSTREAM": upURL + "/v1", "RESTMCP_PLANS_FILE": "testdata/idp/plans.yaml",
		"RESTMCP_OAUTH": "true", "RESTMCP_OAUTH_ENTERPRISE_IDPS": issuer + "=ACME_API_KEY",
	})
	origin := strings.TrimSuffix(mcpURL, "/mcp")
	out := runTSClient(t, node, "ema-check.mjs", origin+"/oauth/mcp", issuer, "ada", clientIDs, "me_get", `{}`)
	var got struct {
		ClientID  string
		Exchanges []map[string]string
		Tools     []string
		Result    map[string]any
		Refresh   *string
		Usage     map[string]any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("ema-check.mjs output: %v\n%s", err, out)
	}
	if diff := cmp.Diff([]map[string]string{{"audience": origin, "resource": origin + "/oauth/mcp"}}, got.Exchanges); diff != "" {
		t.Errorf("the ID-JAG asked for (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(meResult, got.Result); diff != "" || !slices.Contains(got.Tools, "me_get") || got.Refresh != nil {
		t.Errorf("tools %v, refresh token %v, result (-want +got):\n%s", got.Tools, got.Refresh, diff)
	}
	if got.Usage["key_id"] != oauth.EnterpriseKeyID(issuer, "ada") || got.Usage["plan"] != "free" {
		t.Errorf("usage: %v", got.Usage)
	}
	if auths, want := upstreamSaw(), []string{"GET /v1/me Bearer k-acme-enterprise"}; !slicesEqual(auths, want) {
		t.Errorf("the upstream saw %q, want %q", auths, want)
	}
}

// TestRealOpenIDProviderSignInChromium is TestRealOpenIDProviderSignIn
// with the user's browser a real one: headless Chromium opens the
// authorization URL the TypeScript SDK made, the user types a login on
// the provider's own login page and confirms its consent page, and the
// provider redirects the browser to the client's redirect URI, where the
// code is taken and handed back to the SDK, which calls the tool.
func TestRealOpenIDProviderSignInChromium(t *testing.T) {
	chromium := requireChromium(t)
	node := requireTSClient(t)
	// The client's redirect URI, on a free port, registered with the
	// provider.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := "http://" + ln.Addr().String() + "/callback"
	issuer, mcpURL, upstreamAuths := startSignInServe(t, node, "CONNECTOR_REDIRECT_URI="+redirect)
	codes := make(chan string, 1)
	cb := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		codes <- r.URL.Query().Get("code")
		_, _ = w.Write([]byte("<!doctype html><title>Signed in</title><p>You can close this tab."))
	})}
	go func() { _ = cb.Serve(ln) }()
	t.Cleanup(func() { _ = cb.Close() })

	cmd := exec.Command(node, "idp-login-check.mjs", mcpURL, "ada", "me_get", `{}`, "browser")
	cmd.Dir = tsClientDir
	cmd.Env = append(os.Environ(), "REDIRECT_URI="+redirect)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var authURL string
	for authURL == "" && lines.Scan() {
		authURL, _ = strings.CutPrefix(lines.Text(), "authorize ")
	}
	if authURL == "" {
		t.Fatalf("idp-login-check.mjs gave no authorization URL: %s", stderr.String())
	}

	ctx, cancelTimeout := context.WithTimeout(startBrowser(t, chromium), 60*time.Second)
	defer cancelTimeout()
	do(t, ctx, chromedp.Navigate(authURL))
	do(t, ctx, chromedp.WaitVisible(`input[name="login"]`))
	loginTitle := get(t, ctx, chromedp.Evaluate[string](`document.querySelector("h1")?.innerText ?? ""`))
	do(t, ctx, chromedp.SendKeys(`input[name="login"]`, "ada"))
	do(t, ctx, chromedp.SendKeys(`input[name="password"]`, "any"))
	do(t, ctx, chromedp.Submit(`input[name="login"]`))
	var consentTitle string
	testenv.Eventually(t, 15*time.Second, "the provider's consent page", func() bool {
		consentTitle, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("h1")?.innerText ?? ""`)) // fails while the page changes
		return consentTitle == "Authorize"
	})
	do(t, ctx, chromedp.Submit(`button[type="submit"]`))
	var code string
	select {
	case code = <-codes:
	case <-time.After(30 * time.Second):
		t.Fatalf("the browser never reached the redirect URI (pages %q, %q)", loginTitle, consentTitle)
	}
	if _, err := io.WriteString(stdin, "code "+code+"\n"); err != nil {
		t.Fatal(err)
	}
	var out []byte
	for lines.Scan() {
		out = lines.Bytes()
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("idp-login-check.mjs: %v\n%s", err, stderr.String())
	}
	var got struct {
		Unauthorized bool
		Result       map[string]any
		Token        string
		Usage        map[string]any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("idp-login-check.mjs output: %v\n%s", err, out)
	}
	if loginTitle != "Sign-in" || consentTitle != "Authorize" {
		t.Errorf("the provider's pages: %q, %q; want its Sign-in and Authorize pages", loginTitle, consentTitle)
	}
	if diff := cmp.Diff(meResult, got.Result); diff != "" || !got.Unauthorized {
		t.Errorf("unauthorized first %v; result (-want +got):\n%s", got.Unauthorized, diff)
	}
	if claims := jwtClaims(t, got.Token); claims["iss"] != issuer || claims["aud"] != mcpURL || claims["sub"] != "ada" {
		t.Errorf("the user's token's claims: %v", claims)
	}
	if got.Usage["key_id"] != "idp-"+metering.KeyID("ada") || got.Usage["plan"] != "pro" {
		t.Errorf("usage: %v", got.Usage)
	}
	if auths := upstreamAuths(); len(auths) != 1 || strings.Contains(auths[0], got.Token) {
		t.Fatalf("the upstream saw %q", auths)
	}
}

// TestIdPUpstreamKey: with idp_upstream key, the upstream gets the API key
// the operator bound to the caller's identity (restmcp keys create
// --identity, kept sealed with oauth_encryption_key in the key registry),
// never the inbound token; the caller is metered on that key's plan; an
// identity without a key is refused 403, exactly.
func TestIdPUpstreamKey(t *testing.T) {
	redisURL := testRedisURL(t)
	p := idptest.New(t)
	plans := filepath.Join(t.TempDir(), "plans.yaml")
	if err := os.WriteFile(plans, []byte("default_plan: free\nkey_mode: registry\nplans:\n  free:\n    rate_limits: {per_minute: 10}\n  pro:\n    rate_limits: {per_minute: 100}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const secret = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
	env := map[string]string{"RESTMCP_REDIS_URL": redisURL, "RESTMCP_PLANS_FILE": plans, "RESTMCP_OAUTH_ENCRYPTION_KEY": secret}
	identity := "ada-" + strconv.FormatInt(time.Now().UnixNano(), 36) // a fresh identity each run
	noSecret := func(k string) string {
		if k == "RESTMCP_OAUTH_ENCRYPTION_KEY" {
			return ""
		}
		return env[k]
	}
	err := run(context.Background(), []string{"keys", "create", "--identity", identity}, noSecret, io.Discard, io.Discard)
	if want := "--identity needs oauth_encryption_key (RESTMCP_OAUTH_ENCRYPTION_KEY), which seals the keys bound to identities: it is not set"; err == nil || err.Error() != want {
		t.Errorf("keys create --identity without the encryption key: %v, want %q", err, want)
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"keys", "create", "--plan", "pro", "--identity", identity}, func(k string) string { return env[k] }, &out, &errOut); err != nil {
		t.Fatalf("keys create --identity: %v %s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	key, keyID := lines[0], lines[1]
	cleanupKeyRecord(t, redisURL, keyID)
	t.Cleanup(func() {
		opt, _ := redis.ParseURL(redisURL)
		c := redis.NewClient(opt)
		defer c.Close()
		c.Del(context.Background(), metering.Key(adapter.IdentityKeyID(identity), "upstream-key"))
	})
	if want := "the upstream key of the identity " + strconv.Quote(identity) + " (key id " + adapter.IdentityKeyID(identity) + ")"; !strings.Contains(errOut.String(), want) {
		t.Errorf("keys create said %q, want it to name %s", errOut.String(), want)
	}

	upURL, upstreamSaw := meUpstream(t)
	serveEnv := map[string]string{"RESTMCP_SPEC": "testdata/idp/accounts.yaml", "RESTMCP_UPSTREAM": upURL + "/v1", "RESTMCP_IDP_ISSUER": p.URL, "RESTMCP_IDP_UPSTREAM": "key"}
	for k, v := range env {
		serveEnv[k] = v
	}
	mcpURL, _ := startServe(t, serveEnv)
	call := func(sub string) string {
		tok := p.Token(idptest.Claims{Issuer: p.URL, Subject: sub, Audience: []string{mcpURL}, Expiry: time.Now().Add(time.Hour)})
		return postJSON(t, mcpURL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"me_get","arguments":{}}}`, map[string]string{"Authorization": "Bearer " + tok})
	}
	if got := call(identity); !strings.Contains(got, `"structuredContent":{"who":"me"}`) {
		t.Fatalf("a call of the bound identity: %s", got)
	}
	if got, want := call("bob"), `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"this server holds no API key for your identity (`+adapter.IdentityKeyID("bob")+`); ask the API's operator for access"}}`; got != want {
		t.Errorf("an identity without a key:\n got %s\nwant %s", got, want)
	}
	if auths, want := upstreamSaw(), []string{"GET /v1/me Bearer " + key}; !slicesEqual(auths, want) {
		t.Errorf("the upstream saw %q, want the bound key only", auths)
	}
	tok := p.Token(idptest.Claims{Issuer: p.URL, Subject: identity, Audience: []string{mcpURL}, Expiry: time.Now().Add(time.Hour)})
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(mcpURL, "/mcp")+"/usage", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var usage map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&usage)
	resp.Body.Close()
	if usage["key_id"] != adapter.IdentityKeyID(identity) || usage["plan"] != "pro" {
		t.Errorf("usage: %v", usage)
	}
}

// startSignInServe starts the real OpenID provider (tokens naming plan
// pro), an upstream that records each request's Authorization, and
// restmcp serve in resource-server mode with the token exchange; it
// returns the provider's issuer, the MCP URL and what the upstream saw.
// providerEnv is added to the provider's environment.
func startSignInServe(t *testing.T, node string, providerEnv ...string) (issuer, mcpURL string, upstreamAuths func() []string) {
	t.Helper()
	issuer = startOIDCProviderEnv(t, node, providerEnv, "pro")
	upURL, upstreamSaw := meUpstream(t)
	mcpURL, _ = startServe(t, map[string]string{
		"RESTMCP_SPEC": "testdata/idp/accounts.yaml", "RESTMCP_UPSTREAM": upURL + "/v1", "RESTMCP_PLANS_FILE": "testdata/idp/plans.yaml",
		"RESTMCP_IDP_ISSUER": issuer, "RESTMCP_IDP_PLAN_CLAIM": "plan",
		"RESTMCP_IDP_CLIENT_ID": "restmcp", "RESTMCP_IDP_CLIENT_SECRET": "restmcp-secret", "RESTMCP_IDP_EXCHANGE_AUDIENCE": "https://accounts.example",
	})
	return issuer, mcpURL, upstreamSaw
}

// meResult is the tools/call result of GET /v1/me on meUpstream, as a
// client decodes it.
var meResult = map[string]any{"content": []any{map[string]any{"type": "text", "text": `{"who":"me"}`}}, "structuredContent": map[string]any{"who": "me"}}

// meUpstream is the API behind the identity provider tests: GET /v1/me
// answers {"who":"me"}; seen lists each request it got as "METHOD PATH
// Authorization".
func meUpstream(t *testing.T) (url string, seen func() []string) {
	t.Helper()
	var mu sync.Mutex
	var auths []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"who":"me"}`))
	}))
	t.Cleanup(up.Close)
	return up.URL, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(auths) }
}

// TestEnterpriseIdPDownAtStart: restmcp serve starts while an enterprise
// identity provider of oauth_enterprise_idps is in an outage (its
// discovery document answers 503); an identity assertion of that
// enterprise is answered 503 temporarily_unavailable, Retry-After 5, and
// the provider is asked again at most every idp.DiscoveryRetry; once it
// answers, the same assertion is a grant and its token calls a tool with
// the enterprise's key.
func TestEnterpriseIdPDownAtStart(t *testing.T) {
	p := idptest.New(t)
	p.Down.Store(true)
	upURL, upstreamSaw := meUpstream(t)
	t.Setenv("ACME_API_KEY", "k-acme-enterprise")
	started := time.Now()
	mcpURL, _ := startServe(t, map[string]string{
		"RESTMCP_SPEC": "testdata/idp/accounts.yaml", "RESTMCP_UPSTREAM": upURL + "/v1", "RESTMCP_PLANS_FILE": "testdata/idp/plans.yaml",
		"RESTMCP_OAUTH": "true", "RESTMCP_OAUTH_ENTERPRISE_IDPS": p.URL + "=ACME_API_KEY",
	})
	origin := strings.TrimSuffix(mcpURL, "/mcp")
	reg := postJSON(t, origin+"/oauth/register", `{"client_name":"ema","redirect_uris":["http://127.0.0.1:1/callback"],"grant_types":["authorization_code"],"response_types":["code"],"token_endpoint_auth_method":"none"}`, nil)
	var client struct {
		ClientID string `json:"client_id"`
	}
	if err := json.Unmarshal([]byte(reg), &client); err != nil || client.ClientID == "" {
		t.Fatalf("registration: %s", reg)
	}
	jag := p.Token(idptest.Claims{Issuer: p.URL, Subject: "ada", Audience: []string{origin}, IssuedAt: time.Now(), Expiry: time.Now().Add(time.Minute),
		ID: "jti-down", Type: idp.AssertionType, Extra: map[string]any{"client_id": client.ClientID, "resource": origin + "/oauth/mcp"}})
	grant := func() (int, string, string) {
		resp, err := http.PostForm(origin+"/oauth/token", url.Values{"grant_type": {oauth.GrantTypeJWTBearer}, "assertion": {jag}, "client_id": {client.ClientID}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
	}
	want := `{"error":"temporarily_unavailable","error_description":"the enterprise identity provider ` + p.URL + ` cannot be read right now (its discovery document or keys); retry in 5 seconds"}`
	for range 3 {
		if status, retry, body := grant(); status != 503 || retry != "5" || body != want {
			t.Fatalf("while the provider is down: %d, Retry-After %q, %s; want 503, 5, %s", status, retry, body, want)
		}
	}
	// Once at the start (or at the first grant), then at most every
	// DiscoveryRetry: once in all unless this machine took that long.
	if n, most := p.Discoveries.Load(), 1+int64(time.Since(started)/idp.DiscoveryRetry); n < 1 || n > most {
		t.Errorf("the provider was asked %d times in its outage of %v, want 1 to %d (once, then at most every %v)", n, time.Since(started).Round(time.Millisecond), most, idp.DiscoveryRetry)
	}

	p.Down.Store(false)
	var body string
	testenv.Eventually(t, 3*idp.DiscoveryRetry, "the grant once the provider answers", func() bool {
		var status int
		status, _, body = grant()
		return status == 200
	})
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal([]byte(body), &tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("grant: %s", body)
	}
	got := postJSON(t, origin+"/oauth/mcp", callBody(1, "me_get", `{}`), map[string]string{"Authorization": "Bearer " + tok.AccessToken})
	if !strings.Contains(got, `"structuredContent":{"who":"me"}`) {
		t.Errorf("tools/call with the token: %s", got)
	}
	if auths, want := upstreamSaw(), []string{"GET /v1/me Bearer k-acme-enterprise"}; !slicesEqual(auths, want) {
		t.Errorf("the upstream saw %q, want %q", auths, want)
	}
}
