package adapter

import (
	"context"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/adapter/idp/idptest"
	"github.com/restmcp/restmcp/metering"
)

const idpResource = "https://mcp.example.com/mcp"

// idpServer serves testdata/idp_api.yaml in resource-server mode against
// provider p (exchange for https://accounts.example), with the plans
// "standard" (default: get_me only) and "pro" (everything), and returns
// the MCP URL, the verifier, the upstream's recorded Authorization headers
// and the meter.
func idpServer(t *testing.T, p *idptest.Provider, minRefresh time.Duration) (string, *idp.Verifier, func() []string, *fakeMeter) {
	t.Helper()
	var mu sync.Mutex
	var auths []string
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"who":"me"}`))
	})
	v, err := idp.New(context.Background(), idp.Config{Issuer: p.URL, Audience: idpResource, IdentityClaim: "sub", PlanClaim: "plan",
		Upstream: idp.UpstreamExchange, ExchangeAudience: "https://accounts.example", ClientID: "restmcp", ClientSecret: "s3cret", MinRefresh: minRefresh})
	if err != nil {
		t.Fatal(err)
	}
	plans, err := metering.ParsePlans([]byte("default_plan: standard\nkey_mode: open\nplans:\n  standard:\n    rate_limits: {per_minute: 100}\n    tools: [get_me]\n  pro:\n    rate_limits: {per_minute: 100}\n"), "plans.yaml")
	if err != nil {
		t.Fatal(err)
	}
	meter := &fakeMeter{admit: func(metering.Call) (metering.Decision, error) { return metering.Decision{Allowed: true, Cost: 1}, nil }}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/idp_api.yaml", up.URL), Meter: meter,
		Keys: metering.NewRegistry(nil, plans, metering.RegistryOptions{}), IdP: v, IdPResource: idpResource, IdPIssuer: p.URL})
	return srv.URL, v, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), auths...) }, meter
}

// TestIdPResourceServer: a token of the vendor's provider is accepted on
// the MCP endpoint; the caller is metered under its identity claim and the
// plan its plan claim names; the upstream gets the token the provider
// issued in exchange (RFC 8693, once per identity), never the inbound one;
// API keys keep working beside it; the protected resource metadata names
// the vendor's provider, and a call without a token is challenged to it.
func TestIdPResourceServer(t *testing.T) {
	p := idptest.New(t)
	base, _, auths, meter := idpServer(t, p, time.Minute)
	now := time.Now()
	alice := p.Token(idptest.Claims{Issuer: p.URL, Subject: "alice", Audience: []string{idpResource}, Expiry: now.Add(time.Hour), Extra: map[string]any{"plan": "pro"}})
	bob := p.Token(idptest.Claims{Issuer: p.URL, Subject: "bob", Audience: []string{idpResource}, Expiry: now.Add(time.Hour)})
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	for i := range 3 {
		got := post(t, base+"/mcp", toolsCallBody(i+1, "get_admin", `{}`), bearer(alice))
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"{\"who\":\"me\"}"}],"structuredContent":{"who":"me"}}}`, i+1); got.body != want {
			t.Fatalf("alice (pro) get_admin:\n got %d %s\nwant %s", got.status, got.body, want)
		}
	}
	// bob has no plan claim: the default plan, which lacks get_admin.
	got := post(t, base+"/mcp", toolsCallBody(9, "get_admin", `{}`), bearer(bob))
	if !strings.Contains(got.body, `"isError":true`) || !strings.Contains(got.body, "plan") {
		t.Errorf("bob get_admin: %s, want a not-in-plan error", got.body)
	}
	if got := post(t, base+"/mcp", toolsCallBody(10, "get_me", `{}`), bearer(bob)); !strings.Contains(got.body, `{\"who\":\"me\"}`) {
		t.Errorf("bob get_me: %s", got.body)
	}
	// An API key beside it.
	if got := post(t, base+"/mcp", toolsCallBody(11, "get_me", `{}`), map[string]string{"X-API-Key": "plain-key"}); !strings.Contains(got.body, `{\"who\":\"me\"}`) {
		t.Errorf("API key get_me: %s", got.body)
	}
	want := []string{"GET /v1/admin Bearer exchanged-1", "GET /v1/admin Bearer exchanged-1", "GET /v1/admin Bearer exchanged-1",
		"GET /v1/me Bearer exchanged-2", "GET /v1/me Bearer plain-key"}
	if got := auths(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("upstream Authorization:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if p.LastClient != "restmcp" || p.LastExchange["audience"][0] != "https://accounts.example" || p.LastExchange["subject_token"][0] != bob ||
		p.LastExchange["subject_token_type"][0] != "urn:ietf:params:oauth:token-type:access_token" {
		t.Errorf("last exchange: client %q form %v", p.LastClient, p.LastExchange)
	}
	if n := meter.calls.Load(); n != 5 {
		t.Errorf("%d calls admitted, want 5 (the not-in-plan call is not metered)", n)
	}

	// Without a token: the challenge names the resource metadata, which
	// names the vendor's provider.
	got = post(t, base+"/mcp", toolsCallBody(12, "get_me", `{}`), nil)
	if got.status != 401 || got.header.Get("WWW-Authenticate") != `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"` {
		t.Errorf("no token: %d %q", got.status, got.header.Get("WWW-Authenticate"))
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/.well-known/oauth-protected-resource/mcp", nil)
	if got := do(t, req); got.body != `{"authorization_servers":["`+p.URL+`"],"bearer_methods_supported":["header"],"resource":"https://mcp.example.com/mcp","resource_name":"restmcp"}` {
		t.Errorf("protected resource metadata: %s", got.body)
	}
}

// TestIdPTokenRefusals: each token fault is refused 401 invalid_token with
// what was wrong, never the token: wrong issuer, another resource,
// expired, not yet valid, alg none, HS256 keyed with the public key, an
// unknown key id (one JWKS refresh, then refused), a plan the plans file
// does not define (403); a JWKS endpoint that hangs or answers 10 MB
// costs a bounded wait, and the server keeps answering.
func TestIdPTokenRefusals(t *testing.T) {
	p := idptest.New(t)
	base, _, _, _ := idpServer(t, p, time.Millisecond)
	now := time.Now()
	ok := idptest.Claims{Issuer: p.URL, Subject: "carol", Audience: []string{idpResource}, Expiry: now.Add(time.Hour)}
	with := func(f func(c *idptest.Claims)) idptest.Claims { c := ok; f(&c); return c }
	// The classic confusion: HMAC keyed with the provider's public key.
	der, _ := x509.MarshalPKIXPublicKey(p.PublicKeys().Keys[0].Key)
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: der}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	none := "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + strings.Split(p.Token(ok), ".")[1] + "."
	tests := []struct{ name, token, want string }{
		{"wrong issuer", p.Token(with(func(c *idptest.Claims) { c.Issuer = "https://evil.example" })), `the access token was issued by "https://evil.example", not by "` + p.URL + `"`},
		{"another resource", p.Token(with(func(c *idptest.Claims) { c.Audience = []string{"https://other.example/mcp"} })), `the access token is for "https://other.example/mcp", not for this server (` + idpResource + `)`},
		{"expired", p.Token(with(func(c *idptest.Claims) { c.Expiry = now.Add(-2 * time.Minute) })), "the access token expired at " + now.Add(-2*time.Minute).UTC().Format(time.RFC3339)},
		{"not yet valid", p.Token(with(func(c *idptest.Claims) { c.NotBefore = now.Add(5 * time.Minute) })), "the access token is not valid before " + now.Add(5*time.Minute).UTC().Format(time.RFC3339)},
		{"no expiry", p.Token(with(func(c *idptest.Claims) { c.Expiry = time.Time{} })), "the access token has no expiry (exp)"},
		{"alg none", none, "the access token is signed with an algorithm this server does not accept (accepted: RS256, ES256, PS256)"},
		{"HS256 with the public key", idptest.Sign(hs, ok), "the access token is signed with an algorithm this server does not accept (accepted: RS256, ES256, PS256)"},
		{"unknown kid", p.Token(ok, "k9"), `the access token's signing key "k9" is not among the identity provider's keys`},
		{"bad signature", strings.Split(p.Token(ok), ".")[0] + "." + strings.Split(p.Token(with(func(c *idptest.Claims) { c.Subject = "mallory" })), ".")[1] + "." + strings.Split(p.Token(ok), ".")[2], `the access token's signature does not verify with the identity provider's key "k1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := p.Fetches.Load()
			got := post(t, base+"/mcp", toolsCallBody(1, "get_me", `{}`), map[string]string{"Authorization": "Bearer " + tt.token})
			body := `{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"invalid access token: ` + strings.ReplaceAll(tt.want, `"`, `\"`) + `"}}`
			challenge := `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="` + strings.ReplaceAll(tt.want, `"`, "'") + `"`
			if got.status != 401 || got.body != body || got.header.Get("WWW-Authenticate") != challenge {
				t.Errorf("got %d %s\n%s\nwant 401 %s\n%s", got.status, got.body, got.header.Get("WWW-Authenticate"), body, challenge)
			}
			if strings.Contains(got.body, tt.token) {
				t.Errorf("the answer repeats the token")
			}
			if fetched := p.Fetches.Load() - before; tt.name == "unknown kid" && fetched != 1 || tt.name != "unknown kid" && fetched != 0 {
				t.Errorf("%d JWKS fetches, want %d", fetched, map[bool]int64{true: 1}[tt.name == "unknown kid"])
			}
		})
	}
	// A plan claim naming no plan: 403.
	got := post(t, base+"/mcp", toolsCallBody(1, "get_me", `{}`), map[string]string{"Authorization": "Bearer " + p.Token(with(func(c *idptest.Claims) { c.Extra = map[string]any{"plan": "platinum"} }))})
	if want := `{"jsonrpc":"2.0","id":1,"error":{"code":-31401,"message":"the plan \"platinum\" your access token names is not one this server defines"}}`; got.status != 403 || got.body != want {
		t.Errorf("unknown plan: %d %s", got.status, got.body)
	}

	// A JWKS endpoint that hangs, then one that answers 10 MB: an unknown
	// kid costs at most the fetch timeout, the token is refused, the old
	// keys keep serving.
	hung := make(chan struct{})
	t.Cleanup(func() { close(hung) }) // before the provider's server closes: it waits for its handlers
	for _, fault := range []string{"hang", "10 MB"} {
		p.ServeJWKS(func(w http.ResponseWriter) bool {
			if fault == "hang" {
				<-hung // never answers while the test runs: the verifier gives up at its fetch timeout
				return true
			}
			_, _ = w.Write([]byte(`{"keys":[` + strings.Repeat(" ", 10<<20) + `]}`))
			return true
		})
		start := time.Now()
		got := post(t, base+"/mcp", toolsCallBody(1, "get_me", `{}`), map[string]string{"Authorization": "Bearer " + p.Token(ok, "k7")})
		if got.status != 401 || time.Since(start) > idp.DefaultTimeout+2*time.Second {
			t.Errorf("%s JWKS: %d after %v", fault, got.status, time.Since(start))
		}
		if got := post(t, base+"/mcp", toolsCallBody(2, "get_me", `{}`), map[string]string{"Authorization": "Bearer " + p.Token(ok)}); !strings.Contains(got.body, `{\"who\":\"me\"}`) {
			t.Errorf("%s JWKS: a good token then: %s", fault, got.body)
		}
	}
}

// TestIdPJWKSFetches: 1,000 calls with tokens that rotate (a new token
// every call, the signing key rotated twice) fetch the JWKS once per
// rotation, not per call.
func TestIdPJWKSFetches(t *testing.T) {
	p := idptest.New(t)
	base, v, _, _ := idpServer(t, p, time.Millisecond)
	start := v.Fetches()
	for i := range 1000 {
		if i == 400 {
			p.Rotate("k2")
		}
		if i == 700 {
			p.Rotate("k3")
		}
		tok := p.Token(idptest.Claims{Issuer: p.URL, Subject: fmt.Sprintf("user-%d", i%7), Audience: []string{idpResource}, Expiry: time.Now().Add(time.Hour)})
		if got := post(t, base+"/mcp", toolsCallBody(i, "get_me", `{}`), map[string]string{"Authorization": "Bearer " + tok}); got.status != 200 {
			t.Fatalf("call %d: %d %s", i, got.status, got.body)
		}
	}
	if n := v.Fetches() - start; n != 2 {
		t.Errorf("%d JWKS fetches for 1,000 calls and 2 rotations, want 2", n)
	}
}

// TestLegacySSEWithProviderToken: a legacy HTTP+SSE client whose every
// request carries a provider token works end to end: its POSTs are the
// opener's (the token resolves to the same caller), and the call reaches
// the upstream with the forwarded token.
func TestLegacySSEWithProviderToken(t *testing.T) {
	p := idptest.New(t)
	var mu sync.Mutex
	var auths []string
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"who":"me"}`))
	})
	v, err := idp.New(context.Background(), idp.Config{Issuer: p.URL, Audience: idpResource, Upstream: idp.UpstreamForward})
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/idp_api.yaml", up.URL), Meter: allowAll(0), LegacySSEPath: "/sse",
		IdP: v, IdPResource: idpResource, IdPIssuer: p.URL})
	tok := p.Token(idptest.Claims{Issuer: p.URL, Subject: "ada", Audience: []string{idpResource}, Expiry: time.Now().Add(time.Hour)})
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.SSEClientTransport{Endpoint: srv.URL + "/sse", HTTPClient: &http.Client{Transport: addHeaders{base: http.DefaultTransport, h: map[string]string{"Authorization": "Bearer " + tok}}}}, nil)
	if err != nil {
		t.Fatalf("legacy SSE with a provider token: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_me", Arguments: map[string]any{}})
	if err != nil || res.IsError || text(res) != `{"who":"me"}` {
		t.Fatalf("tools/call: %v %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auths) != 1 || auths[0] != "Bearer "+tok {
		t.Errorf("upstream Authorization: %q", auths)
	}
}
