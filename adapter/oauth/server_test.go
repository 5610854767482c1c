package oauth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/restmcp/restmcp/internal/testenv"
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
RedirectURIs: "http://x.example/cb" is not an https URL without user, query or fragment`
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

// TestRegistration: the RFC 7591 §3.2.1 response with RFC 7592's
// registration_client_uri and its read endpoint (O9); any
// token_endpoint_auth_method registers a public client (O1); acceptable
// redirect URIs kept and the others dropped, a registration refused only
// when none is acceptable, each refused URI named (O2, O4); identical
// registrations are one client (O6); the per-address limit with
// Retry-After (O5).
func TestRegistration(t *testing.T) {
	h := newHarness(t, NewMemoryStore(nil), func(o *Options) { o.RegisterLimit = -1 })
	claude := `{"client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"client_secret_post","jwks":{"keys":[]}}`
	w := h.do("POST", PathRegister, claude)
	m := clientIDRE.FindStringSubmatch(w.Body.String())
	if w.Code != 201 || m == nil {
		t.Fatalf("register: %d %s", w.Code, w.Body)
	}
	id := m[1]
	rat := h.srv.registrationToken(id)
	want := `{"client_id":"` + id + `","client_id_issued_at":1796126400,"redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"client_name":"Claude","scope":"mcp","registration_client_uri":"https://mcp.example.com/oauth/register/` + id + `","registration_access_token":"` + rat + `"}`
	if w.Body.String() != want || len(id) != 22 || len(rat) != len(RegistrationAccessTokenPrefix)+43 {
		t.Errorf("register:\n%s\nwant\n%s", w.Body, want)
	}
	if got := w.Header().Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q", got)
	}
	// claude.ai registers twice per connect attempt: the same client.
	h.clock.add(time.Minute)
	if w := h.do("POST", PathRegister, claude); w.Code != 201 || w.Body.String() != want {
		t.Errorf("second identical registration: %d\n%s\nwant\n%s", w.Code, w.Body, want)
	}
	// The read endpoint (RFC 7592 §2.1).
	read := func(path, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		w := httptest.NewRecorder()
		h.h.ServeHTTP(w, req)
		return w
	}
	if w := read(PathRegister+"/"+id, rat); w.Code != 200 || w.Body.String() != want {
		t.Errorf("read: %d %s", w.Code, w.Body)
	}
	for _, tc := range []struct{ path, token string }{{PathRegister + "/" + id, ""}, {PathRegister + "/" + id, rat + "x"}, {PathRegister + "/unknownclient0000000000", h.srv.registrationToken("unknownclient0000000000")}} {
		w := read(tc.path, tc.token)
		if w.Code != 401 || w.Header().Get("WWW-Authenticate") != `Bearer error="invalid_token"` || !strings.HasPrefix(w.Body.String(), `{"error":"invalid_token"`) {
			t.Errorf("read %s with %q: %d %s", tc.path, tc.token, w.Code, w.Body)
		}
	}

	// VS Code: vscode.dev URIs beside the loopback ones, and device_code
	// among the grant types; the acceptable URIs are kept.
	vscode := `{"client_name":"Visual Studio Code","redirect_uris":["https://insiders.vscode.dev/redirect","https://vscode.dev/redirect","http://127.0.0.1/","http://127.0.0.1:33418/"],"grant_types":["authorization_code","refresh_token","urn:ietf:params:oauth:grant-type:device_code"],"response_types":["code"],"token_endpoint_auth_method":"none"}`
	w = h.do("POST", PathRegister, vscode)
	if w.Code != 201 || !strings.Contains(w.Body.String(), `"redirect_uris":["http://127.0.0.1/","http://127.0.0.1:33418/"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"]`) {
		t.Errorf("VS Code: %d %s", w.Code, w.Body)
	}
	if m := clientIDRE.FindStringSubmatch(w.Body.String()); m == nil || m[1] == id {
		t.Errorf("VS Code's client id %v is Claude's", m)
	}
	// Cursor: its private-use scheme, its hosted callback and a loopback.
	w = h.do("POST", PathRegister, `{"client_name":"Cursor","redirect_uris":["cursor://anysphere.cursor-mcp/oauth/callback","https://www.cursor.com/agents/mcp/oauth/callback","http://localhost:8787/callback"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"]}`)
	if w.Code != 201 || !strings.Contains(w.Body.String(), `"redirect_uris":["cursor://anysphere.cursor-mcp/oauth/callback","https://www.cursor.com/agents/mcp/oauth/callback","http://localhost:8787/callback"]`) {
		t.Errorf("Cursor: %d %s", w.Code, w.Body)
	}
	for _, ok := range []string{
		"https://chatgpt.com/connector/oauth/OUbdUMlL15Ct", "https://chatgpt.com/connector_platform_oauth_redirect",
		"https://claude.com/api/mcp/auth_callback", "com.example.app:/oauth2redirect", "vscode://vscode.github-authentication/did-authenticate",
		"windsurf://codeium.windsurf/oauth/callback", "http://[::1]:9000/cb",
	} {
		if w := h.do("POST", PathRegister, `{"redirect_uris":["`+ok+`"]}`); w.Code != 201 {
			t.Errorf("%s: %d %s", ok, w.Code, w.Body)
		}
	}

	for _, tc := range []struct{ body, code, desc string }{
		{`{"client_name":"x"}`, "invalid_redirect_uri", "redirect_uris is required: at least one"},
		{`{"redirect_uris":["http://evil.example/cb","https://vscode.dev/redirect"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "http://evil.example/cb": http is allowed on loopback only (127.0.0.1, [::1], localhost); use https; redirect URI "https://vscode.dev/redirect" is not allowed by this server (oauth_redirect_uris); loopback http URIs and private-use schemes always are`},
		{`{"redirect_uris":["javascript:alert(1)//"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "javascript:alert(1)//": the javascript: scheme is never a redirect URI`},
		{`{"redirect_uris":["JavaScript:alert(1)"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "JavaScript:alert(1)": the javascript: scheme is never a redirect URI`},
		{`{"redirect_uris":["data:text/html,hello"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "data:text/html,hello": the data: scheme is never a redirect URI`},
		{`{"redirect_uris":["file:///etc/passwd"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "file:///etc/passwd": the file: scheme is never a redirect URI`},
		{`{"redirect_uris":["http://127.0.0.1:3000/cb#frag"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "http://127.0.0.1:3000/cb#frag" has a fragment (#), which RFC 6749 §3.1.2 forbids`},
		{`{"redirect_uris":["cursor://x/cb#"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "cursor://x/cb#" has a fragment (#), which RFC 6749 §3.1.2 forbids`},
		{`{"redirect_uris":["myapp://callback"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "myapp://callback": scheme "myapp" is not accepted: use https, http on loopback, a reverse-domain private-use scheme (com.example.app:/callback) or one of oauth_redirect_schemes`},
		{`{"redirect_uris":["https://chatgpt.com/connector/oauth/a/b"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "https://chatgpt.com/connector/oauth/a/b" is not allowed by this server (oauth_redirect_uris); loopback http URIs and private-use schemes always are`},
		{`{"redirect_uris":["https://chatgpt.com/connector/oauth/a%2Fb"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "https://chatgpt.com/connector/oauth/a%2Fb" is not allowed by this server (oauth_redirect_uris); loopback http URIs and private-use schemes always are`},
		{`{"redirect_uris":["https://chatgpt.com/connector/oauth/"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "https://chatgpt.com/connector/oauth/" is not allowed by this server (oauth_redirect_uris); loopback http URIs and private-use schemes always are`},
		{`{"redirect_uris":["http://user@127.0.0.1:3000/cb"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "http://user@127.0.0.1:3000/cb" has user information (user@host), which a redirect URI must not`},
		{`{"redirect_uris":["/relative/cb"]}`, "invalid_redirect_uri", `no acceptable redirect URI: redirect URI "/relative/cb" is not an absolute URI`},
		{`{"redirect_uris":["http://[::1]:3000/cb"],"grant_types":["client_credentials"]}`, "invalid_client_metadata", "grant_types client_credentials has no authorization_code: this server issues authorization codes and refresh tokens only"},
		{`{"redirect_uris":["http://[::1]:3000/cb"],"response_types":["token"]}`, "invalid_client_metadata", "response_types token has no code: this server answers response_type code only"},
		{`{"redirect_uris":["http://[::1]:1/1","http://[::1]:1/2","http://[::1]:1/3","http://[::1]:1/4","http://[::1]:1/5","http://[::1]:1/6","http://[::1]:1/7","http://[::1]:1/8","http://[::1]:1/9","http://[::1]:1/10","http://[::1]:1/11","http://[::1]:1/12","http://[::1]:1/13","http://[::1]:1/14","http://[::1]:1/15","http://[::1]:1/16","http://[::1]:1/17","http://[::1]:1/18","http://[::1]:1/19","http://[::1]:1/20","http://[::1]:1/21"]}`, "invalid_redirect_uri", "redirect_uris has 21 URIs; at most 20"},
		{`[1]`, "invalid_client_metadata", "the body is not client metadata JSON: json: cannot unmarshal array into Go value of type oauth.registrationRequest"},
	} {
		wantError(t, h.do("POST", PathRegister, tc.body), 400, tc.code, tc.desc)
	}
	wantError(t, h.do("POST", PathRegister, url.Values{"redirect_uris": {"x"}}), 400, "invalid_client_metadata", "Content-Type must be application/json, got application/x-www-form-urlencoded")
}

// TestRegistrationLimit: RegisterLimit registrations per address group
// per minute, an IPv6 address counted by its /64, then 429 with the
// seconds until the next one in Retry-After (O5); a negative limit is
// none.
func TestRegistrationLimit(t *testing.T) {
	h := newHarness(t, NewMemoryStore(nil), nil)
	register := func(addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", PathRegister, strings.NewReader(`{"redirect_uris":["http://127.0.0.1:1/cb"]}`))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = addr
		w := httptest.NewRecorder()
		h.h.ServeHTTP(w, req)
		return w
	}
	for i := range DefaultRegisterLimit {
		if w := register(fmt.Sprintf("[2001:db8:1:2::%x]:4000", i)); w.Code != 201 {
			t.Fatalf("registration %d: %d %s", i+1, w.Code, w.Body)
		}
	}
	w := register("[2001:db8:1:2:ffff::1]:4000")
	wantError(t, w, 429, "temporarily_unavailable", "too many client registrations from this network; retry after the Retry-After seconds")
	if got := w.Header().Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1 (one registration a second comes back)", got)
	}
	if w := register("[2001:db8:1:3::1]:4000"); w.Code != 201 {
		t.Errorf("another /64: %d %s", w.Code, w.Body)
	}
	h.clock.add(time.Second)
	if w := register("[2001:db8:1:2::1]:4000"); w.Code != 201 {
		t.Errorf("after the refill: %d %s", w.Code, w.Body)
	}

	none := newHarness(t, NewMemoryStore(nil), func(o *Options) { o.RegisterLimit = -1 })
	for i := range 500 {
		req := httptest.NewRequest("POST", PathRegister, strings.NewReader(`{"redirect_uris":["http://127.0.0.1:1/cb"]}`))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		none.h.ServeHTTP(w, req)
		if w.Code != 201 {
			t.Fatalf("unlimited, registration %d: %d %s", i+1, w.Code, w.Body)
		}
	}
}

// TestClientStoreBounded: unused clients expire after ClientTTL; a token
// issued for one keeps it as long as its refresh token; past MaxClients
// the longest unused are dropped (O6).
func TestClientStoreBounded(t *testing.T) {
	for name, mk := range testStores() {
		t.Run(name, func(t *testing.T) {
			store := mk(t)
			ctx := context.Background()
			if rs, ok := store.(*RedisStore); ok {
				if err := rs.rdb.Del(ctx, clientIndexKey).Err(); err != nil {
					t.Fatal(err)
				}
			}
			h := newHarness(t, store, func(o *Options) { o.MaxClients = 3; o.ClientTTL = time.Hour; o.RegisterLimit = -1 })
			if ms, ok := store.(*MemoryStore); ok {
				ms.now = h.clock.now
			}
			used := h.register(testRedirect)
			h.tokens(h.exchange(used, h.code(used)))
			var ids []string
			for i := range 3 {
				h.clock.add(time.Minute)
				if rs, ok := store.(*RedisStore); ok { // Redis scores by its own clock: let it move on a millisecond
					rdb := rs.rdb.(redis.Cmdable)
					t0, err := rdb.Time(ctx).Result()
					if err != nil {
						t.Fatal(err)
					}
					testenv.Eventually(t, time.Second, "Redis's clock to move", func() bool {
						t1, err := rdb.Time(ctx).Result()
						return err == nil && t1.Sub(t0) >= time.Millisecond
					})
				}
				ids = append(ids, h.register(fmt.Sprintf("http://127.0.0.1:%d/cb", 5000+i)))
			}
			for i, id := range ids {
				_, err := store.Client(ctx, id)
				if (i == 0) != errors.Is(err, ErrNotFound) {
					t.Errorf("client %d of 3 after the cap: %v", i+1, err)
				}
			}
			if _, err := store.Client(ctx, used); err != nil {
				t.Errorf("the client in use was dropped: %v", err)
			}
			if name == "memory" { // Redis expires by its own clock
				h.clock.add(time.Hour)
				if _, err := store.Client(ctx, ids[2]); !errors.Is(err, ErrNotFound) {
					t.Errorf("an unused client after ClientTTL: %v", err)
				}
				if _, err := store.Client(ctx, used); err != nil {
					t.Errorf("the client in use after ClientTTL: %v", err)
				}
			}
		})
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
		{func(q url.Values) { q.Set("resource", "https://other.example/mcp") }, "error=invalid_target&error_description=resource+%22https%3A%2F%2Fother.example%2Fmcp%22+is+not+served+here%3B+use+https%3A%2F%2Fmcp.example.com%2Foauth%2Fmcp"},
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
// the page, with the seconds until one more attempt (a minute / 10).
func TestSignInRateLimit(t *testing.T) {
	h := newHarness(t, NewMemoryStore(nil), nil)
	q := authQuery(h.register(testRedirect))
	for i := range 10 {
		if w := h.signIn(q, "wrong"); w.Code != 401 {
			t.Fatalf("attempt %d: %d", i+1, w.Code)
		}
	}
	w := h.signIn(q, testKey)
	if w.Code != 429 || w.Header().Get("Retry-After") != "6" || !strings.Contains(w.Body.String(), "Too many sign-in attempts from your network. Wait a minute and try again.") {
		t.Errorf("11th attempt: %d %s", w.Code, w.Body)
	}
}

// TestSignInRateLimitPer64: sign-in attempts from 60 addresses of one
// IPv6 /64 share one limit: 10 wrong keys answered 401, then 429; another
// /64 is not affected (O5).
func TestSignInRateLimitPer64(t *testing.T) {
	h := newHarness(t, NewMemoryStore(nil), nil)
	q := authQuery(h.register(testRedirect))
	guess := func(addr string) int {
		f, cookie := h.form(q)
		f.Set("api_key", "wrong-key-guess")
		f.Set("action", "allow")
		req := httptest.NewRequest("POST", PathAuthorize, strings.NewReader(f.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Cookie", cookie)
		req.RemoteAddr = addr
		w := httptest.NewRecorder()
		h.h.ServeHTTP(w, req)
		return w.Code
	}
	statuses := map[int]int{}
	for i := range 60 {
		addr := fmt.Sprintf("[2001:db8:aa:bb:%x::1]:5000", i+1)
		code := guess(addr)
		statuses[code]++
		if i < 10 && code != 401 || i >= 10 && code != 429 {
			t.Fatalf("attempt %d from %s: %d", i+1, addr, code)
		}
	}
	if statuses[401] != 10 || statuses[429] != 50 {
		t.Errorf("statuses = %v, want 10 × 401 and 50 × 429", statuses)
	}
	if code := guess("[2001:db8:aa:bc::1]:5000"); code != 401 {
		t.Errorf("another /64: %d", code)
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
				{func(f url.Values) { f.Set("resource", "https://other.example/") }, "invalid_target", `resource "https://other.example/" is not the one this code was issued for, https://mcp.example.com/oauth/mcp`},
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

// TestLoopbackRedirectAnyPort: a loopback redirect URI matches on scheme,
// host and path with any port at authorize and token time (RFC 8252 §7.3,
// O3), as VS Code needs when its port is taken; other redirect URIs match
// exactly.
func TestLoopbackRedirectAnyPort(t *testing.T) {
	h := newHarness(t, NewMemoryStore(nil), nil)
	w := h.do("POST", PathRegister, `{"client_name":"Visual Studio Code","redirect_uris":["https://insiders.vscode.dev/redirect","https://vscode.dev/redirect","http://127.0.0.1/","http://127.0.0.1:33418/"],"grant_types":["authorization_code","refresh_token","urn:ietf:params:oauth:grant-type:device_code"],"response_types":["code"],"token_endpoint_auth_method":"none"}`)
	id := clientIDRE.FindStringSubmatch(w.Body.String())[1]
	q := authQuery(id)
	q.Set("redirect_uri", "http://127.0.0.1:59656/")
	w = h.signIn(q, testKey)
	loc, _ := url.Parse(w.Header().Get("Location"))
	if w.Code != 303 || loc.Scheme+"://"+loc.Host+loc.Path != "http://127.0.0.1:59656/" {
		t.Fatalf("sign-in on an unregistered port: %d %s", w.Code, w.Header().Get("Location"))
	}
	f := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "client_id": {id}, "redirect_uri": {"http://127.0.0.1:33418/"}, "code_verifier": {testVerifier}}
	wantError(t, h.do("POST", PathToken, f), 400, "invalid_grant", "redirect_uri must be the one of the authorization request")
	w = h.signIn(q, testKey)
	loc, _ = url.Parse(w.Header().Get("Location"))
	f.Set("code", loc.Query().Get("code"))
	f.Set("redirect_uri", "http://127.0.0.1:59656/")
	h.tokens(h.do("POST", PathToken, f))

	for _, bad := range []string{"http://127.0.0.1:59656/other", "http://localhost:59656/", "http://127.0.0.1:59656/?x=1", "https://127.0.0.1:59656/", "http://127.0.0.1:59656/#f"} {
		q.Set("redirect_uri", bad)
		w := h.do("GET", PathAuthorize+"?"+q.Encode(), nil)
		if w.Code != 400 || !strings.Contains(w.Body.String(), "The app&#39;s redirect_uri is not one it registered") {
			t.Errorf("%s: %d %s", bad, w.Code, w.Header().Get("Location"))
		}
	}
}

// TestTokenEndpointClientAuthentication: a client that asked for
// client_secret_basic or client_secret_post (O1) may send its id as the
// HTTP Basic user or a client_secret in the body; another Authorization
// or a Basic user that is not the client is invalid_client.
func TestTokenEndpointClientAuthentication(t *testing.T) {
	h := newHarness(t, NewMemoryStore(nil), nil)
	id := h.register(testRedirect)
	f := url.Values{"grant_type": {"authorization_code"}, "code": {h.code(id)}, "redirect_uri": {testRedirect}, "code_verifier": {testVerifier}}
	_, refresh := h.tokens(h.do("POST", PathToken, f, "Authorization", "Basic "+b64std(id+":")))
	g := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {id}, "client_secret": {""}}
	_, refresh = h.tokens(h.do("POST", PathToken, g))
	g.Set("refresh_token", refresh)
	g.Set("client_secret", "anything")
	_, refresh = h.tokens(h.do("POST", PathToken, g))
	g.Set("refresh_token", refresh)
	for _, auth := range []string{"Bearer abc", "Basic " + b64std("someone-else:"), "Basic !!!"} {
		w := h.do("POST", PathToken, g, "Authorization", auth)
		wantError(t, w, 401, "invalid_client", "clients of this server are public (token_endpoint_auth_method none): send client_id in the body, or as the user of HTTP Basic, and no other Authorization")
	}
	h.tokens(h.do("POST", PathToken, g))
}

func b64std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// TestTokensBoundToDeployment: two deployments sharing one store and one
// encryption key do not accept each other's tokens, codes or refresh
// tokens; KeyPath is a second resource of the same deployment, with its
// own metadata, whose tokens work on both.
func TestTokensBoundToDeployment(t *testing.T) {
	store := NewMemoryStore(nil)
	a := newHarness(t, store, func(o *Options) { o.KeyPath = "/mcp" })
	b := newHarness(t, store, func(o *Options) { o.Issuer = "https://other.example.com"; o.TokenCacheTTL = -1 })
	id, access, refresh := a.login()
	if _, err := a.srv.ResolveToken(t.Context(), access); err != nil {
		t.Fatalf("own token: %v", err)
	}
	_, err := b.srv.ResolveToken(t.Context(), access)
	if te := (*TokenError)(nil); !errors.As(err, &te) || te.Reason != "issued for another resource (https://mcp.example.com/oauth/mcp); sign in to this one" {
		t.Errorf("another deployment's token: %v", err)
	}
	wantError(t, b.do("POST", PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {id}}), 400, "invalid_grant", "the refresh token was issued for another resource, https://mcp.example.com/oauth/mcp")
	code := a.code(id)
	wantError(t, b.do("POST", PathToken, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {id}, "redirect_uri": {testRedirect}, "code_verifier": {testVerifier}, "resource": {"https://other.example.com/oauth/mcp"}}), 400, "invalid_target", `resource "https://other.example.com/oauth/mcp" is not the one this code was issued for, https://mcp.example.com/oauth/mcp`)
	wantError(t, b.do("POST", PathToken, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "client_id": {id}, "redirect_uri": {testRedirect}, "code_verifier": {testVerifier}}), 400, "invalid_grant", "the authorization code was issued for another resource, https://mcp.example.com/oauth/mcp")

	// The KeyPath resource: its metadata, a sign-in for it, its token.
	w := a.do("GET", PathResourceMetadata+"/mcp", nil)
	if want := `{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://mcp.example.com"],"scopes_supported":["mcp"],"bearer_methods_supported":["header"],"resource_name":"Demo API"}`; w.Code != 200 || w.Body.String() != want {
		t.Errorf("KeyPath metadata: %d %s", w.Code, w.Body)
	}
	if got := a.srv.ChallengeFor("/mcp", "", ""); got != `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp"` {
		t.Errorf("ChallengeFor = %s", got)
	}
	q := authQuery(id)
	q.Set("resource", "https://mcp.example.com/mcp")
	w = a.signIn(q, testKey)
	loc, _ := url.Parse(w.Header().Get("Location"))
	f := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "client_id": {id}, "redirect_uri": {testRedirect}, "code_verifier": {testVerifier}, "resource": {"https://mcp.example.com/mcp"}}
	access, _ = a.tokens(a.do("POST", PathToken, f))
	g, err := store.Grant(t.Context(), mustGrantID(t, access))
	if err != nil || g.Resource != "https://mcp.example.com/mcp" {
		t.Errorf("grant for the KeyPath resource: %+v, %v", g, err)
	}
	if _, err := a.srv.ResolveToken(t.Context(), access); err != nil {
		t.Errorf("KeyPath token: %v", err)
	}
	if _, err := b.srv.ResolveToken(t.Context(), access); err == nil {
		t.Error("another deployment took the KeyPath token")
	}
	if w := b.do("GET", PathResourceMetadata+"/mcp", nil); w.Code != 404 {
		t.Errorf("metadata for a KeyPath b does not have: %d", w.Code)
	}
}

func mustGrantID(t *testing.T, access string) string {
	t.Helper()
	id, ok := parseSecret(AccessTokenPrefix, access)
	if !ok {
		t.Fatalf("%q is not an access token", access)
	}
	return id
}

// TestRedirectPatternsRefused: "*" and a pattern for a whole host are
// refused at startup, naming the entry; so is a scheme that cannot be a
// private-use one.
func TestRedirectPatternsRefused(t *testing.T) {
	_, err := New(Options{Issuer: testIssuer, ResourcePath: "/m", Store: NewMemoryStore(nil), EncryptionKey: make([]byte, 32),
		RedirectURIs:    []string{"*", "https://evil.example/*", "https://ok.example/cb/*", "https://x.example/a*b/*"},
		RedirectSchemes: []string{"javascript", "http", "my app", "windsurf"}})
	want := `RedirectURIs: "*" (any https URI) is not allowed: list each callback, or a host and path prefix as https://host/path/*
RedirectURIs: "https://evil.example/*" allows a whole host: a pattern needs a path before the * (https://host/path/*)
RedirectURIs: "https://x.example/a*b/*": a pattern has one *, as its last path segment (https://host/path/*)
RedirectSchemes: "javascript" is not a private-use URI scheme (RFC 3986 §3.1 letters, digits, + - .; not http, https or javascript, data, file, blob, about, vbscript)
RedirectSchemes: "http" is not a private-use URI scheme (RFC 3986 §3.1 letters, digits, + - .; not http, https or javascript, data, file, blob, about, vbscript)
RedirectSchemes: "my app" is not a private-use URI scheme (RFC 3986 §3.1 letters, digits, + - .; not http, https or javascript, data, file, blob, about, vbscript)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// TestLifetimesOnSynctestClock: the code, access token and refresh token
// lifetimes on the server's own clock (Options.Now nil: time.Now, and the
// memory store's), which synctest moves: a code unused for a minute is
// gone, an access token lives an hour, a refresh token thirty days.
func TestLifetimesOnSynctestClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, NewMemoryStore(nil), func(o *Options) { o.Now = nil; o.TokenCacheTTL = -1 })
		ctx := context.Background()
		id := h.register(testRedirect)
		code := h.code(id)
		time.Sleep(DefaultCodeTTL + time.Second)
		wantError(t, h.exchange(id, code), 400, "invalid_grant", "the authorization code is unknown or expired")

		cid, access, refresh := h.login()
		time.Sleep(DefaultAccessTokenTTL - time.Second)
		if _, err := h.srv.ResolveToken(ctx, access); err != nil {
			t.Fatalf("an access token a second before its hour: %v", err)
		}
		time.Sleep(2 * time.Second)
		if _, err := h.srv.ResolveToken(ctx, access); !isTokenError(err, "expired; refresh it or sign in again") {
			t.Fatalf("an access token past its hour: %v", err)
		}
		a2, r2 := h.tokens(h.do("POST", PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {cid}}))
		if _, err := h.srv.ResolveToken(ctx, a2); err != nil {
			t.Fatalf("the refreshed access token: %v", err)
		}
		time.Sleep(DefaultRefreshTokenTTL - time.Hour)
		_, r3 := h.tokens(h.do("POST", PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r2}, "client_id": {cid}}))
		time.Sleep(DefaultRefreshTokenTTL + time.Second)
		wantError(t, h.do("POST", PathToken, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {r3}, "client_id": {cid}}), 400,
			"invalid_grant", "the refresh token is unknown, expired or revoked; sign in again")
	})
}
