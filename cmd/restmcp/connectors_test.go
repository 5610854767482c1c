package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"

	"github.com/restmcp/restmcp/internal/testenv"
	"github.com/restmcp/restmcp/metering"
)

// connector is one MCP client that signs in to the OAuth front as it does
// in the field: the registration body it sends (replayed byte for byte),
// how often it registers per connect, the redirect URI it authorizes with
// and how it authenticates at the token endpoint. Sources are in
// docs/oauth.md, "What connectors send".
type connector struct {
	name          string
	registration  string // "{port}" is the loopback port the client listens on
	registrations int    // registrations per connect attempt
	// redirect is the authorization request's redirect_uri; "{port}" is a
	// loopback port; "{other}" another free one, not registered (VS Code
	// when its port is taken).
	redirect string
	scope    string // the authorization request's scope ("" for none)
	// kept is the registration response's redirect_uris, as JSON.
	kept string
	// tokenAuth: "post" sends client_id (and an empty client_secret, as a
	// client_secret_post client does), "basic" the client id as the HTTP
	// Basic user, "" client_id alone.
	tokenAuth string
}

var connectors = []connector{{
	// claude.ai's backend: client_secret_post, registers twice per
	// connect (anthropics/claude-ai-mcp#1043, anthropics/claude-code#5826).
	name:          "claude.ai",
	registration:  `{"client_name":"Claude","redirect_uris":["https://claude.ai/api/mcp/auth_callback"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"client_secret_post"}`,
	registrations: 2,
	redirect:      "https://claude.ai/api/mcp/auth_callback",
	scope:         "mcp",
	kept:          `["https://claude.ai/api/mcp/auth_callback"]`,
	tokenAuth:     "post",
}, {
	// Claude Code: the TypeScript SDK's registration on a loopback port.
	name:          "claude-code",
	registration:  `{"redirect_uris":["http://localhost:{port}/callback"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"],"client_name":"Claude Code (restmcp)"}`,
	registrations: 1,
	redirect:      "http://localhost:{port}/callback",
	kept:          `["http://localhost:{port}/callback"]`,
}, {
	// ChatGPT: its per-connector callback (makeplane/plane-mcp-server#165,
	// BasedHardware/omi#8824).
	name:          "chatgpt",
	registration:  `{"client_name":"ChatGPT","redirect_uris":["https://chatgpt.com/connector/oauth/OUbdUMlL15Ct"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none","scope":"mcp"}`,
	registrations: 1,
	redirect:      "https://chatgpt.com/connector/oauth/OUbdUMlL15Ct",
	scope:         "mcp",
	kept:          `["https://chatgpt.com/connector/oauth/OUbdUMlL15Ct"]`,
}, {
	// Cursor: its private-use scheme beside its hosted and loopback
	// callbacks (erp-mafia/accounted#2225, makeplane/plane-mcp-server#159).
	name:          "cursor",
	registration:  `{"client_name":"Cursor","redirect_uris":["cursor://anysphere.cursor-mcp/oauth/callback","https://www.cursor.com/agents/mcp/oauth/callback","http://localhost:8787/callback"],"token_endpoint_auth_method":"none","grant_types":["authorization_code","refresh_token"],"response_types":["code"]}`,
	registrations: 1,
	redirect:      "cursor://anysphere.cursor-mcp/oauth/callback",
	kept:          `["cursor://anysphere.cursor-mcp/oauth/callback","https://www.cursor.com/agents/mcp/oauth/callback","http://localhost:8787/callback"]`,
}, {
	// VS Code: vscode.dev URIs beside its loopback ones, device_code among
	// the grant types, and the authorization on another port when 33418
	// is taken (microsoft/vscode#278512).
	name:          "vscode",
	registration:  `{"client_name":"Visual Studio Code","redirect_uris":["https://insiders.vscode.dev/redirect","https://vscode.dev/redirect","http://127.0.0.1/","http://127.0.0.1:33418/"],"grant_types":["authorization_code","refresh_token","urn:ietf:params:oauth:grant-type:device_code"],"response_types":["code"],"token_endpoint_auth_method":"none"}`,
	registrations: 1,
	redirect:      "http://127.0.0.1:{other}/",
	kept:          `["http://127.0.0.1/","http://127.0.0.1:33418/"]`,
	tokenAuth:     "basic",
}, {
	// Windsurf: a VS Code fork; its registration body is not published, so
	// this is the VS Code shape with its own scheme and a loopback URI.
	name:          "windsurf",
	registration:  `{"client_name":"Windsurf","redirect_uris":["windsurf://codeium.windsurf/oauth/callback","http://127.0.0.1:{port}/"],"grant_types":["authorization_code","refresh_token"],"response_types":["code"],"token_endpoint_auth_method":"none"}`,
	registrations: 1,
	redirect:      "windsurf://codeium.windsurf/oauth/callback",
	kept:          `["windsurf://codeium.windsurf/oauth/callback","http://127.0.0.1:{port}/"]`,
}}

// TestConnectorsSignIn walks each connector of the field through the
// whole sign-in in headless Chromium: its registration as it sends it
// (twice for claude.ai, the same client both times; the client
// configuration endpoint read), the resource metadata naming the URL it
// was given, its authorization request, the sign-in page with the API key,
// the redirect to its callback with code, state and iss (for Cursor the
// cursor:// URI itself, for VS Code a loopback port it did not register),
// the code exchange with PKCE, a refresh, and a tools/call metered under
// the key and sent upstream with it.
func TestConnectorsSignIn(t *testing.T) {
	chromium := requireChromium(t)
	app := startApp(t, oauthPlans, map[string]string{"RESTMCP_OAUTH": "true"})
	resource := app.url + "/oauth/mcp"
	prm := doHTTP(t, mustRequest(t, http.MethodGet, app.url+"/.well-known/oauth-protected-resource/oauth/mcp", nil))
	if want := `{"resource":"` + resource + `","authorization_servers":["` + app.url + `"],"scopes_supported":["mcp"],"bearer_methods_supported":["header"],"resource_name":"Plans test API"}`; prm.status != 200 || prm.body != want {
		t.Fatalf("resource metadata: %d %s\nwant %s", prm.status, prm.body, want)
	}

	browser := startBrowser(t, chromium)

	calls := 0
	for _, cn := range connectors {
		t.Run(cn.name, func(t *testing.T) {
			port, other := strconv.Itoa(freePort(t)), strconv.Itoa(freePort(t))
			fill := func(s string) string {
				return strings.NewReplacer("{port}", port, "{other}", other).Replace(s)
			}
			// A loopback redirect is served, as the native client does.
			landed := make(chan url.Values, 1)
			if u, _ := url.Parse(fill(cn.redirect)); u.Scheme == "http" {
				ln, err := net.Listen("tcp", u.Host)
				if err != nil {
					t.Fatal(err)
				}
				cb := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					landed <- r.URL.Query()
					_, _ = w.Write([]byte("<!doctype html><title>Signed in</title>"))
				}))
				cb.Listener.Close()
				cb.Listener = ln
				cb.Start()
				defer cb.Close()
			}

			var clientID, registration string
			for i := range cn.registrations {
				reg := doHTTP(t, jsonRequest(t, app.url+"/oauth/register", fill(cn.registration)))
				m := regexpClientID.FindStringSubmatch(reg.body)
				if reg.status != 201 || m == nil || (clientID != "" && m[1] != clientID) {
					t.Fatalf("registration %d: %d %s (first client_id %q)", i+1, reg.status, reg.body, clientID)
				}
				clientID, registration = m[1], reg.body
			}
			var info struct {
				RedirectURIs            json.RawMessage `json:"redirect_uris"`
				TokenEndpointAuthMethod string          `json:"token_endpoint_auth_method"`
				RegistrationClientURI   string          `json:"registration_client_uri"`
				RegistrationAccessToken string          `json:"registration_access_token"`
			}
			if err := json.Unmarshal([]byte(registration), &info); err != nil {
				t.Fatal(err)
			}
			if string(info.RedirectURIs) != fill(cn.kept) || info.TokenEndpointAuthMethod != "none" || info.RegistrationClientURI != app.url+"/oauth/register/"+clientID {
				t.Errorf("registration response: %s", registration)
			}
			read := mustRequest(t, http.MethodGet, info.RegistrationClientURI, nil)
			read.Header.Set("Authorization", "Bearer "+info.RegistrationAccessToken)
			if got := doHTTP(t, read); got.status != 200 || got.body != registration {
				t.Errorf("client configuration read: %d %s\nwant %s", got.status, got.body, registration)
			}

			verifier := oauth2.GenerateVerifier()
			state := "state-" + cn.name
			q := url.Values{
				"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {fill(cn.redirect)}, "state": {state},
				"code_challenge": {oauth2.S256ChallengeFromVerifier(verifier)}, "code_challenge_method": {"S256"}, "resource": {resource},
			}
			if cn.scope != "" {
				q.Set("scope", cn.scope)
			}
			back := signInInBrowser(t, browser, app.url+"/oauth/authorize?"+q.Encode(), "oauth-static-key-1")
			if !strings.HasPrefix(back, fill(cn.redirect)+"?") {
				t.Fatalf("redirected to %s, want %s?…", back, fill(cn.redirect))
			}
			bu, _ := url.Parse(back)
			got := bu.Query()
			if got.Get("state") != state || got.Get("iss") != app.url || got.Get("code") == "" || len(got) != 3 {
				t.Fatalf("redirect parameters: %v", got)
			}
			if strings.HasPrefix(back, "http://") {
				select {
				case q := <-landed:
					if q.Encode() != got.Encode() {
						t.Errorf("the loopback callback got %v, the redirect said %v", q, got)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the browser never reached the loopback callback")
				}
			}

			form := url.Values{"grant_type": {"authorization_code"}, "code": {got.Get("code")}, "redirect_uri": {fill(cn.redirect)}, "code_verifier": {verifier}, "resource": {resource}}
			access, refresh := tokenRequest(t, app.url, cn, clientID, form)
			access2, _ := tokenRequest(t, app.url, cn, clientID, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}})
			if access2 == access {
				t.Error("the refresh returned the same access token")
			}
			res := postOAuth(t, app.url, access2, callBody(1, "get_quote", `{"symbol":"`+strings.ToUpper(cn.name[:1])+`"}`))
			if res.status != 200 || !strings.Contains(res.body, `"structuredContent":{"ok":true}`) {
				t.Fatalf("tools/call with %s's token: %d %s", cn.name, res.status, res.body)
			}
			if keys := app.up.takeKeys(); len(keys) != 1 || keys[0] != "oauth-static-key-1" {
				t.Errorf("upstream X-Api-Key: %v", keys)
			}
			calls++
			if n := toolUsage(app.report(t, metering.KeyID("oauth-static-key-1"), "free"))["get_quote"].Calls; n != int64(calls) {
				t.Errorf("get_quote calls metered = %d, want %d", n, calls)
			}
		})
	}
}

// signInInBrowser opens authURL in a new tab, signs in with key and
// returns where the sign-in's 303 sends the browser: its Location as
// restmcp wrote it, whether or not the browser can follow it (https
// callbacks are unreachable here, cursor:// is an app's).
func signInInBrowser(t *testing.T, browser context.Context, authURL, key string) string {
	t.Helper()
	var mu sync.Mutex
	location := ""
	tab, cancel := chromedp.NewContext(browser, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*network.EventResponseReceivedExtraInfo); ok && e.StatusCode == http.StatusSeeOther {
			for k, v := range e.Headers {
				if s, ok := v.(string); ok && strings.EqualFold(k, "location") {
					mu.Lock()
					location = s
					mu.Unlock()
				}
			}
		}
	}))
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(tab, 60*time.Second)
	defer cancelTimeout()
	do(t, ctx, chromedp.Navigate(authURL))
	do(t, ctx, chromedp.WaitVisible("#api_key"))
	do(t, ctx, chromedp.SendKeys("#api_key", key))
	do(t, ctx, chromedp.Click(`button[value="allow"]`))
	testenv.Eventually(t, 15*time.Second, "the sign-in's redirect", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return location != ""
	})
	mu.Lock()
	defer mu.Unlock()
	return location
}

// tokenRequest posts form to the token endpoint as connector cn
// authenticates there and returns the access and refresh tokens.
func tokenRequest(t *testing.T, base string, cn connector, clientID string, form url.Values) (access, refresh string) {
	t.Helper()
	switch cn.tokenAuth {
	case "post":
		form.Set("client_id", clientID)
		form.Set("client_secret", "")
	case "basic":
	default:
		form.Set("client_id", clientID)
	}
	req := mustRequest(t, http.MethodPost, base+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if cn.tokenAuth == "basic" {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(url.QueryEscape(clientID)+":")))
	}
	got := doHTTP(t, req)
	var tr struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		TokenType    string `json:"token_type"`
		ExpiresIn    int    `json:"expires_in"`
		Scope        string `json:"scope"`
	}
	if err := json.Unmarshal([]byte(got.body), &tr); err != nil || got.status != 200 || tr.TokenType != "Bearer" || tr.ExpiresIn != 3600 || tr.Scope != "mcp" || tr.AccessToken == "" || tr.RefreshToken == "" {
		t.Fatalf("token request (%s): %d %s", form.Get("grant_type"), got.status, got.body)
	}
	return tr.AccessToken, tr.RefreshToken
}

func mustRequest(t *testing.T, method, u string, body io.Reader) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	return req
}
