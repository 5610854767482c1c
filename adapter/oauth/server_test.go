package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestMetadataDocuments checks the three discovery documents whole:
// Protected Resource Metadata (RFC 9728 §2, at the root and path-suffixed
// well-known URLs, §3.1) and Authorization Server Metadata (RFC 8414 §2,
// also at the OpenID Connect path).
func TestMetadataDocuments(t *testing.T) {
	h := newHarness(t, NewMemoryStore(nil), nil)
	prm := `{"resource":"https://mcp.example.com/oauth/mcp","authorization_servers":["https://mcp.example.com"],"scopes_supported":["mcp"],"bearer_methods_supported":["header"],"resource_name":"Demo API"}`
	asm := `{"issuer":"https://mcp.example.com","authorization_endpoint":"https://mcp.example.com/oauth/authorize","token_endpoint":"https://mcp.example.com/oauth/token","registration_endpoint":"https://mcp.example.com/oauth/register","revocation_endpoint":"https://mcp.example.com/oauth/revoke","scopes_supported":["mcp"],"response_types_supported":["code"],"response_modes_supported":["query"],"grant_types_supported":["authorization_code","refresh_token"],"token_endpoint_auth_methods_supported":["none"],"revocation_endpoint_auth_methods_supported":["none"],"code_challenge_methods_supported":["S256"],"authorization_response_iss_parameter_supported":true,"client_id_metadata_document_supported":true}`
	for path, want := range map[string]string{
		"/.well-known/oauth-protected-resource/oauth/mcp": prm,
		"/.well-known/oauth-protected-resource":           prm,
		"/.well-known/oauth-authorization-server":         asm,
		"/.well-known/openid-configuration":               asm,
	} {
		w := h.do("GET", path, nil)
		if w.Code != 200 || w.Body.String() != want || w.Header().Get("Access-Control-Allow-Origin") != "*" || w.Header().Get("Content-Type") != "application/json; charset=utf-8" {
			t.Errorf("GET %s: %d %v\n%s\nwant %s", path, w.Code, w.Header(), w.Body, want)
		}
	}
	w := h.do("OPTIONS", "/oauth/token", nil)
	if w.Code != 204 || w.Header().Get("Access-Control-Allow-Methods") != "GET, POST, OPTIONS" {
		t.Errorf("preflight: %d %v", w.Code, w.Header())
	}
	if got, want := h.srv.Challenge("", ""), `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/oauth/mcp", scope="mcp"`; got != want {
		t.Errorf("Challenge = %s, want %s", got, want)
	}
	if got, want := h.srv.Challenge("invalid_token", `token "x" expired`), `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/oauth/mcp", scope="mcp", error="invalid_token", error_description="token 'x' expired"`; got != want {
		t.Errorf("Challenge = %s, want %s", got, want)
	}
}

// TestNewRefusesBadOptions: one error naming every problem, and http only
// on loopback.
func TestNewRefusesBadOptions(t *testing.T) {
	_, err := New(Options{Issuer: "http://mcp.example.com", ResourcePath: "oauth", EncryptionKey: []byte("short"), RedirectURIs: []string{"http://x.example/cb"}})
	want := `Issuer "http://mcp.example.com" must be https: OAuth sends codes and tokens in the clear over http (http is allowed on loopback only)
ResourcePath "oauth" must start with /
Store is required
EncryptionKey: encryption key must be 32 bytes, got 5
RedirectURIs: "http://x.example/cb" is not an https URL without a fragment`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	if _, err := New(Options{Issuer: "https://mcp.example.com/base", ResourcePath: "/m", Store: NewMemoryStore(nil), EncryptionKey: make([]byte, 32)}); err == nil || err.Error() != `Issuer "https://mcp.example.com/base" must be scheme://host[:port] without path or query` {
		t.Errorf("issuer with a path: %v", err)
	}
	if _, err := New(Options{Issuer: "http://127.0.0.1:8080", ResourcePath: "/m", Store: NewMemoryStore(nil), EncryptionKey: make([]byte, 32)}); err != nil {
		t.Errorf("loopback http issuer: %v", err)
	}
}

// TestRegistration: RFC 7591 §3.2.1 response, and §3.2.2 errors for
// redirect URIs that are not https-and-allowed or loopback http, for
// confidential clients and unknown grant types; the per-address limit.
func TestRegistration(t *testing.T) {
	h := newHarness(t, NewMemoryStore(nil), func(o *Options) { o.RegisterLimit = 11 })
	w := h.do("POST", PathRegister, `{"redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"client_name":"Claude","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none","jwks":{"keys":[]}}`)
	m := clientIDRE.FindStringSubmatch(w.Body.String())
	if w.Code != 201 || m == nil {
		t.Fatalf("register: %d %s", w.Code, w.Body)
	}
	want := `{"client_id":"` + m[1] + `","client_id_issued_at":1796126400,"redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"client_name":"Claude","scope":"mcp"}`
	if w.Body.String() != want || len(m[1]) != 22 {
		t.Errorf("register:\n%s\nwant\n%s", w.Body, want)
	}
	c, err := h.srv.opts.Store.Client(context.Background(), m[1])
	if err != nil || c.Name != "Claude" || len(c.RedirectURIs) != 1 {
		t.Errorf("stored client: %+v, %v", c, err)
	}

	for _, tc := range []struct{ body, code, desc string }{
		{`{"client_name":"x"}`, "invalid_redirect_uri", "redirect_uris is required: at least one"},
		{`{"redirect_uris":["http://evil.example/cb"]}`, "invalid_redirect_uri", `redirect URI "http://evil.example/cb": http is allowed on loopback only (127.0.0.1, [::1], localhost); use https`},
		{`{"redirect_uris":["https://evil.example/cb"]}`, "invalid_redirect_uri", `redirect URI "https://evil.example/cb" is not allowed by this server (oauth_redirect_uris); loopback http URIs always are`},
		{`{"redirect_uris":["cursor://anysphere.cursor-retrieval/oauth/callback"]}`, "invalid_redirect_uri", `redirect URI "cursor://anysphere.cursor-retrieval/oauth/callback": scheme "cursor" is not allowed; use https, or http on loopback`},
		{`{"redirect_uris":["http://127.0.0.1:3000/cb#frag"]}`, "invalid_redirect_uri", `redirect URI "http://127.0.0.1:3000/cb#frag" must be an absolute URL without a fragment`},
		{`{"redirect_uris":["http://localhost:3000/cb"],"token_endpoint_auth_method":"client_secret_basic"}`, "invalid_client_metadata", "token_endpoint_auth_method client_secret_basic is not supported: clients are public (none) and prove themselves with PKCE"},
		{`{"redirect_uris":["http://[::1]:3000/cb"],"grant_types":["client_credentials"]}`, "invalid_client_metadata", "grant_types: client_credentials is not supported (authorization_code, refresh_token)"},
		{`{"redirect_uris":["http://[::1]:3000/cb"],"response_types":["token"]}`, "invalid_client_metadata", "response_types: token is not supported (code)"},
		{`[1]`, "invalid_client_metadata", "the body is not client metadata JSON: json: cannot unmarshal array into Go value of type oauth.registrationRequest"},
	} {
		wantError(t, h.do("POST", PathRegister, tc.body), 400, tc.code, tc.desc)
	}
	wantError(t, h.do("POST", PathRegister, url.Values{"redirect_uris": {"x"}}), 400, "invalid_client_metadata", "Content-Type must be application/json, got application/x-www-form-urlencoded")

	// RegisterLimit per address per minute: the 11 requests above emptied
	// the bucket.
	w = h.do("POST", PathRegister, `{"redirect_uris":["http://127.0.0.1:1/cb"]}`)
	wantError(t, w, 429, "too_many_requests", "too many client registrations from this address; retry in a minute")
	h.clock.add(6 * time.Second) // one token back (60 s / 11)
	if w := h.do("POST", PathRegister, `{"redirect_uris":["http://127.0.0.1:1/cb"]}`); w.Code != 201 {
		t.Errorf("after the refill: %d %s", w.Code, w.Body)
	}
}

// TestAuthorizePage: the page for a valid request (whole, with its
// security headers), errors shown on the page for an unknown client or an
// unregistered redirect URI (never redirected to), and the other errors
// redirected with state and iss (RFC 6749 §4.1.2.1, RFC 9207 §2).
func TestAuthorizePage(t *testing.T) {
	h := newHarness(t, NewMemoryStore(nil), nil)
	id := h.register(testRedirect)
	w := h.do("GET", PathAuthorize+"?"+authQuery(id).Encode(), nil)
	if w.Code != 200 {
		t.Fatalf("page: %d %s", w.Code, w.Body)
	}
	for k, v := range map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"Content-Security-Policy": signInCSP,
		"X-Frame-Options":         "DENY",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
	} {
		if got := w.Header().Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if !strings.HasPrefix(signInCSP, "default-src 'none'; style-src 'sha256-") {
		t.Errorf("CSP = %s", signInCSP)
	}
	cookie := w.Header().Get("Set-Cookie")
	nonce := strings.TrimPrefix(strings.Split(cookie, ";")[0], csrfCookie+"=")
	if !strings.HasSuffix(cookie, "; Path=/oauth/authorize; Max-Age=3600; HttpOnly; Secure; SameSite=Lax") || len(nonce) != 32 {
		t.Errorf("Set-Cookie = %s", cookie)
	}
	body := w.Body.String()
	i, j := strings.Index(body, "<main>"), strings.Index(body, "</main>")
	wantMain := `<main>
<h1>Sign in to Demo API</h1>
<p><strong>Test client</strong> (127.0.0.1:4567) asks to use Demo API with your API key. Every call it makes counts against your key's plan, as if you made it yourself.</p>
<form method="post" action="/oauth/authorize">
<input type="hidden" name="csrf" value="` + h.srv.seal.csrfToken(nonce) + `">
<input type="hidden" name="response_type" value="code">
<input type="hidden" name="client_id" value="` + id + `">
<input type="hidden" name="redirect_uri" value="http://127.0.0.1:4567/callback">
<input type="hidden" name="state" value="st-1">
<input type="hidden" name="code_challenge" value="E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM">
<input type="hidden" name="code_challenge_method" value="S256">
<input type="hidden" name="resource" value="https://mcp.example.com/oauth/mcp">
<input type="hidden" name="scope" value="mcp">
<label for="api_key">API key</label>
<input id="api_key" name="api_key" type="password" autocomplete="off" spellcheck="false" required autofocus aria-describedby="key-hint">
<p class="hint" id="key-hint">Paste the key exactly as it was issued to you. <a href="https://example.com/keys" target="_blank" rel="noopener noreferrer">Get an API key</a></p>
<div class="actions">
<button type="submit" name="action" value="allow">Sign in</button>
<button type="submit" name="action" value="deny" formnovalidate>Cancel</button>
</div>
</form>
</main>`
	if i < 0 || j < 0 || body[i:j+7] != wantMain {
		t.Errorf("page main:\n%s\nwant main:\n%s", body[i:j+7], wantMain)
	}
	if strings.Contains(body, "<script") || len(body) > 4096 {
		t.Errorf("the page has a script or is %d bytes", len(body))
	}

	page := func(q url.Values) (int, string) {
		w := h.do("GET", PathAuthorize+"?"+q.Encode(), nil)
		b := w.Body.String()
		i, j := strings.Index(b, `role="alert">`), strings.Index(b, "</p>\n</main>")
		if i < 0 || j < 0 || w.Header().Get("Location") != "" {
			t.Fatalf("not an error page: %d %v %s", w.Code, w.Header(), b)
		}
		return w.Code, b[i+len(`role="alert">`) : j]
	}
	for _, tc := range []struct {
		change func(url.Values)
		status int
		msg    string
	}{
		{func(q url.Values) { q.Set("client_id", "nope") }, 400, "The app asking to connect is not registered with this server (unknown client_id). Remove the connector and add it again."},
		{func(q url.Values) { q.Del("client_id") }, 400, "The request from your app is invalid: client_id is missing."},
		{func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1:4567/other") }, 400, "The app&#39;s redirect_uri is not one it registered, so this server will not send your sign-in there."},
		{func(q url.Values) { q.Add("state", "again") }, 400, "The request from your app is invalid: the parameter state is given more than once."},
	} {
		q := authQuery(id)
		tc.change(q)
		if status, msg := page(q); status != tc.status || msg != tc.msg {
			t.Errorf("%v: %d %q, want %d %q", q, status, msg, tc.status, tc.msg)
		}
	}

	redirected := func(q url.Values) string {
		w := h.do("GET", PathAuthorize+"?"+q.Encode(), nil)
		if w.Code != http.StatusSeeOther {
			t.Fatalf("%v: %d %s", q, w.Code, w.Body)
		}
		return w.Header().Get("Location")
	}
	for _, tc := range []struct {
		change func(url.Values)
		want   string
	}{
		{func(q url.Values) { q.Del("code_challenge") }, "error=invalid_request&error_description=code_challenge+is+required+%28PKCE+S256%2C+RFC+7636%29"},
		{func(q url.Values) { q.Set("code_challenge_method", "plain") }, "error=invalid_request&error_description=code_challenge_method+must+be+S256"},
		{func(q url.Values) { q.Del("code_challenge_method") }, "error=invalid_request&error_description=code_challenge_method+must+be+S256"},
		{func(q url.Values) { q.Set("code_challenge", "short") }, "error=invalid_request&error_description=code_challenge+must+be+43+base64url+characters+%28S256%29"},
		{func(q url.Values) { q.Set("response_type", "token") }, "error=unsupported_response_type&error_description=response_type+must+be+code"},
		{func(q url.Values) { q.Set("resource", "https://other.example/mcp") }, "error=invalid_target&error_description=resource+must+be+https%3A%2F%2Fmcp.example.com%2Foauth%2Fmcp"},
	} {
		q := authQuery(id)
		tc.change(q)
		if got, want := redirected(q), testRedirect+"?"+tc.want+"&iss=https%3A%2F%2Fmcp.example.com&state=st-1"; got != want {
			t.Errorf("Location = %s\nwant %s", got, want)
		}
	}
	// A redirect URI may be left out when the client registered one.
	q := authQuery(id)
	q.Del("redirect_uri")
	if w := h.do("GET", PathAuthorize+"?"+q.Encode(), nil); w.Code != 200 {
		t.Errorf("without redirect_uri: %d", w.Code)
	}
}

// TestSignIn: the CSRF check, the key check's answers shown on the page,
// Cancel, and a successful sign-in's redirect (code, state, iss).
func TestSignIn(t *testing.T) {
	h := newHarness(t, NewMemoryStore(nil), nil)
	id := h.register(testRedirect)
	q := authQuery(id)

	errorOf := func(body string) string {
		i, j := strings.Index(body, `id="error">`), strings.Index(body, "</p>\n<form")
		if i < 0 || j < 0 {
			return "(no error) " + body
		}
		return body[i+len(`id="error">`) : j]
	}
	for _, tc := range []struct {
		key    string
		status int
		msg    string
	}{
		{"", 400, "Enter your API key."},
		{"has space", 400, "That is not an API key: keys are up to 512 printable characters without spaces. Paste the key exactly as issued."},
		{"key-unknown", 401, "This API key was not accepted. Check it and try again."},
		{testRevoked, 401, "This API key has been revoked. Use a current key."},
	} {
		w := h.signIn(q, tc.key)
		if w.Code != tc.status || errorOf(w.Body.String()) != tc.msg || strings.Contains(w.Body.String(), tc.key+`"`) && tc.key != "" {
			t.Errorf("key %q: %d %q, want %d %q", tc.key, w.Code, errorOf(w.Body.String()), tc.status, tc.msg)
		}
	}

	// No cookie, or a token that is not the cookie's.
	f, cookie := h.form(q)
	f.Set("api_key", testKey)
	for _, hdr := range [][]string{nil, {"Cookie", csrfCookie + "=forged"}} {
		w := h.do("POST", PathAuthorize, f, hdr...)
		if w.Code != 403 || !strings.Contains(w.Body.String(), "This sign-in form has expired or was not opened from this server. Go back to your app and connect again.") {
			t.Errorf("CSRF %v: %d %s", hdr, w.Code, w.Body)
		}
	}
	f.Set("action", "deny")
	w := h.do("POST", PathAuthorize, f, "Cookie", cookie)
	if loc := w.Header().Get("Location"); w.Code != 303 || loc != testRedirect+"?error=access_denied&error_description=the+user+declined+the+authorization&iss=https%3A%2F%2Fmcp.example.com&state=st-1" {
		t.Errorf("cancel: %d %s", w.Code, loc)
	}

	w = h.signIn(q, "  "+testKey+" ")
	u, _ := url.Parse(w.Header().Get("Location"))
	code := u.Query().Get("code")
	if w.Code != 303 || u.Scheme+"://"+u.Host+u.Path != testRedirect || u.Query().Get("state") != "st-1" || u.Query().Get("iss") != testIssuer || len(u.Query()) != 3 {
		t.Fatalf("sign-in: %d %s", w.Code, w.Header().Get("Location"))
	}
	if _, ok := parseSecret(CodePrefix, code); !ok {
		t.Errorf("code %q has not the code shape", code)
	}
}

// TestSignInRateLimit: ten attempts per address per minute, then 429 on
// the page.
func TestSignInRateLimit(t *testing.T) {
	h := newHarness(t, NewMemoryStore(nil), nil)
	q := authQuery(h.register(testRedirect))
	for i := range 10 {
		if w := h.signIn(q, "wrong"); w.Code != 401 {
			t.Fatalf("attempt %d: %d", i+1, w.Code)
		}
	}
	w := h.signIn(q, testKey)
	if w.Code != 429 || w.Header().Get("Retry-After") != "60" || !strings.Contains(w.Body.String(), "Too many sign-in attempts from your network. Wait a minute and try again.") {
		t.Errorf("11th attempt: %d %s", w.Code, w.Body)
	}
}

// TestTokenFlow runs on every store: the code exchange with PKCE, token
// resolution, expiry, refresh rotation, reuse detection of codes and
// refresh tokens (the grant is revoked), and revocation.
func TestTokenFlow(t *testing.T) {
	for name, store := range testStores() {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, store(t), func(o *Options) { o.TokenCacheTTL = -1 })
			ctx := context.Background()
			id := h.register(testRedirect)
			code := h.code(id)

			for _, tc := range []struct {
				change     func(url.Values)
				code, desc string
			}{
				{func(f url.Values) { f.Set("code_verifier", strings.Repeat("a", 43)) }, "invalid_grant", "code_verifier does not match the code_challenge (PKCE S256)"},
				{func(f url.Values) { f.Set("code_verifier", "short") }, "invalid_request", "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1)"},
				{func(f url.Values) { f.Del("code_verifier") }, "invalid_request", "code_verifier is required (PKCE, RFC 7636)"},
				{func(f url.Values) { f.Set("redirect_uri", "http://127.0.0.1:4567/other") }, "invalid_grant", "redirect_uri must be the one of the authorization request"},
				{func(f url.Values) { f.Set("client_id", "other") }, "invalid_grant", "the authorization code was issued to another client"},
				{func(f url.Values) { f.Set("resource", "https://other.example/") }, "invalid_target", "resource must be https://mcp.example.com/oauth/mcp"},
				{func(f url.Values) { f.Set("code", code[:len(code)-1]+"x") }, "invalid_grant", "the authorization code is unknown or expired"},
				{func(f url.Values) { f.Set("code", "garbage") }, "invalid_grant", "the authorization code is not one this server issued"},
				{func(f url.Values) { f.Set("grant_type", "password") }, "unsupported_grant_type", `grant_type "password" is not supported; use authorization_code or refresh_token`},
				{func(f url.Values) { f.Add("code", code) }, "invalid_request", `parameter "code" is given 2 times`},
			} {
				f := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {id}, "redirect_uri": {testRedirect}, "code_verifier": {testVerifier}}
				tc.change(f)
				wantError(t, h.do("POST", PathToken, f), 400, tc.code, tc.desc)
			}
			access, refresh := h.tokens(h.exchange(id, code))
			got, err := h.srv.ResolveToken(ctx, access)
			grantID, _ := parseSecret(AccessTokenPrefix, access)
			if want := (Identity{Key: testKey, KeyID: keyIDOf(testKey), GrantID: grantID, ClientID: id}); err != nil || got != want {
				t.Fatalf("ResolveToken = %+v, %v; want %+v", got, err, want)
			}
			g, _ := h.srv.opts.Store.Grant(ctx, grantID)
			if strings.Contains(string(g.SealedKey), testKey) || g.AccessHash == access || g.RefreshHash == refresh {
				t.Errorf("the store holds the key or a token in the clear: %+v", g)
			}

			// Reusing the code revokes the grant (RFC 6749 §4.1.2).
			wantError(t, h.exchange(id, code), 400, "invalid_grant", "the authorization code was already used; every token issued with it is revoked; sign in again")
			if _, err := h.srv.ResolveToken(ctx, access); !isTokenError(err, "unknown or revoked; sign in again") {
				t.Errorf("after code reuse: %v", err)
			}

			// A new grant: refresh rotates both tokens.
			_, access, refresh = h.login()
			h.clock.add(30 * time.Minute)
			a2, r2 := h.tokens(h.do("POST", PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {clientOf(t, h, access)}}))
			if _, err := h.srv.ResolveToken(ctx, access); !isTokenError(err, "unknown or revoked; sign in again") {
				t.Errorf("old access token after refresh: %v", err)
			}
			if _, err := h.srv.ResolveToken(ctx, a2); err != nil {
				t.Errorf("new access token: %v", err)
			}
			// The access token expires after an hour.
			h.clock.add(time.Hour)
			if _, err := h.srv.ResolveToken(ctx, a2); !isTokenError(err, "expired; refresh it or sign in again") {
				t.Errorf("after an hour: %v", err)
			}
			// Reusing the rotated refresh token revokes the grant.
			cid := clientOf(t, h, r2)
			wantError(t, h.do("POST", PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {cid}}), 400,
				"invalid_grant", "the refresh token was already used; every token issued with it is revoked; sign in again")
			wantError(t, h.do("POST", PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r2}, "client_id": {cid}}), 400,
				"invalid_grant", "the refresh token is unknown, expired or revoked; sign in again")

			// Revocation (RFC 7009): 200, and the grant is gone; an
			// unknown token is 200 too.
			cid, access, refresh = h.login()
			if w := h.do("POST", PathRevoke, url.Values{"token": {refresh}, "client_id": {cid}}); w.Code != 200 || w.Body.Len() != 0 {
				t.Errorf("revoke: %d %s", w.Code, w.Body)
			}
			if _, err := h.srv.ResolveToken(ctx, access); !isTokenError(err, "unknown or revoked; sign in again") {
				t.Errorf("after revocation: %v", err)
			}
			if w := h.do("POST", PathRevoke, url.Values{"token": {"rmcp_at_whatever"}}); w.Code != 200 {
				t.Errorf("revoke unknown: %d", w.Code)
			}
			wantError(t, h.do("POST", PathRevoke, url.Values{}), 400, "invalid_request", "token is required")
		})
	}
}

// clientOf is the client of the grant a token belongs to.
func clientOf(t *testing.T, h *harness, token string) string {
	t.Helper()
	id, ok := parseSecret(AccessTokenPrefix, token)
	if !ok {
		id, _ = parseSecret(RefreshTokenPrefix, token)
	}
	g, err := h.srv.opts.Store.Grant(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return g.ClientID
}

func isTokenError(err error, reason string) bool {
	var te *TokenError
	return errors.As(err, &te) && te.Reason == reason
}

// TestRefreshChecksTheKey: a key revoked since sign-in ends the grant at
// the next refresh.
func TestRefreshChecksTheKey(t *testing.T) {
	revoked := false
	h := newHarness(t, NewMemoryStore(nil), func(o *Options) {
		o.CheckKey = func(ctx context.Context, key string) error {
			if revoked {
				return errors.Join(errors.New("registry says"), testKeyCheck(ctx, testRevoked))
			}
			return testKeyCheck(ctx, key)
		}
	})
	cid, access, refresh := h.login()
	revoked = true
	wantError(t, h.do("POST", PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {cid}}), 400,
		"invalid_grant", "the API key behind this grant is no longer accepted; sign in again with a valid key")
	if _, err := h.srv.ResolveToken(context.Background(), access); !isTokenError(err, "unknown or revoked; sign in again") {
		t.Errorf("after the key's revocation: %v", err)
	}
}

// TestTokenCache: a resolved token is served from memory for
// TokenCacheTTL, and a revocation on this replica ends it at once.
func TestTokenCache(t *testing.T) {
	store := &countingStore{Store: NewMemoryStore(nil)}
	h := newHarness(t, store, nil)
	cid, access, _ := h.login()
	store.reads = 0
	ctx := context.Background()
	for range 3 {
		if _, err := h.srv.ResolveToken(ctx, access); err != nil {
			t.Fatal(err)
		}
	}
	if store.reads != 1 {
		t.Errorf("3 resolutions read the store %d times, want 1", store.reads)
	}
	h.clock.add(11 * time.Second)
	_, _ = h.srv.ResolveToken(ctx, access)
	if store.reads != 2 {
		t.Errorf("after the cache time: %d reads, want 2", store.reads)
	}
	h.do("POST", PathRevoke, url.Values{"token": {access}, "client_id": {cid}})
	if _, err := h.srv.ResolveToken(ctx, access); !isTokenError(err, "unknown or revoked; sign in again") {
		t.Errorf("after revocation: %v", err)
	}
}

type countingStore struct {
	Store
	reads int
}

func (c *countingStore) Grant(ctx context.Context, id string) (*Grant, error) {
	c.reads++
	return c.Store.Grant(ctx, id)
}

// TestSealedKeyBoundToGrant: a sealed key copied onto another grant, or
// opened with another encryption key, does not open.
func TestSealedKeyBoundToGrant(t *testing.T) {
	s, _ := newSealer([]byte("0123456789abcdef0123456789abcdef"))
	sealed := s.seal("grant-a", "the-key")
	if k, err := s.open("grant-a", sealed); err != nil || k != "the-key" {
		t.Fatalf("open = %q, %v", k, err)
	}
	if _, err := s.open("grant-b", sealed); err == nil {
		t.Error("opened under another grant id")
	}
	other, _ := newSealer([]byte("fedcba9876543210fedcba9876543210"))
	if _, err := other.open("grant-a", sealed); err == nil {
		t.Error("opened with another encryption key")
	}
}
