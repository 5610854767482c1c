package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/oauth2"
)

// requireChromium returns the system Chromium (Debian package chromium), or
// skips loudly; RESTMCP_REQUIRE_BROWSER=1 (set by .ci/run) makes its
// absence a failure.
func requireChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "!!! SKIPPING the sign-in page browser test: needs Chromium (apt-get install chromium) !!!"
	skipUnlessRequired(t, "RESTMCP_REQUIRE_BROWSER", msg)
	return ""
}

// TestOAuthSignInPageInBrowser drives the sign-in page in headless
// Chromium: a wrong key is refused on the page (the message is announced
// and tied to the field), the right one redirects the browser to the
// client's callback with the code, state and iss, and the code then buys
// tokens that call a tool with the key. Screenshots of both states are
// kept in the test's artifact directory (go test -artifacts).
func TestOAuthSignInPageInBrowser(t *testing.T) {
	chromium := requireChromium(t)
	app := startApp(t, oauthPlans, map[string]string{
		"RESTMCP_OAUTH": "true", "RESTMCP_OAUTH_KEYS_URL": "https://example.com/keys",
	})

	callback := make(chan url.Values, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		callback <- r.URL.Query()
		_, _ = w.Write([]byte("<!doctype html><title>Connected</title><p>You can close this tab."))
	}))
	defer cb.Close()
	redirect := cb.URL + "/callback"

	reg := doHTTP(t, jsonRequest(t, app.url+"/oauth/register", `{"client_name":"Browser test","redirect_uris":["`+redirect+`"],"token_endpoint_auth_method":"none"}`))
	m := regexpClientID.FindStringSubmatch(reg.body)
	if reg.status != 201 || m == nil {
		t.Fatalf("register: %d %s", reg.status, reg.body)
	}
	conf := &oauth2.Config{
		ClientID: m[1], RedirectURL: redirect, Scopes: []string{"mcp"},
		Endpoint: oauth2.Endpoint{AuthURL: app.url + "/oauth/authorize", TokenURL: app.url + "/oauth/token", AuthStyle: oauth2.AuthStyleInParams},
	}
	verifier := oauth2.GenerateVerifier()
	resource := oauth2.SetAuthURLParam("resource", app.url+"/oauth/mcp")
	authURL := conf.AuthCodeURL("browser-state", oauth2.S256ChallengeOption(verifier), resource)

	browser := startBrowser(t, chromium, chromedp.WindowSize(800, 720))
	ctx, cancelTimeout := context.WithTimeout(browser, 60*time.Second)
	defer cancelTimeout()

	do(t, ctx, chromedp.Navigate(authURL))
	do(t, ctx, chromedp.WaitVisible("#api_key"))
	title := get(t, ctx, chromedp.Title())
	label := get(t, ctx, chromedp.Text(`label[for="api_key"]`))
	link := get(t, ctx, chromedp.AttributeValue("#key-hint a", "href")).Value
	shotForm := get(t, ctx, chromedp.FullScreenshot(100))
	do(t, ctx, chromedp.SendKeys("#api_key", "not-a-key-of-this-api"))
	do(t, ctx, chromedp.Click(`button[value="allow"]`))
	do(t, ctx, chromedp.WaitVisible("#error"))
	errText := get(t, ctx, chromedp.Text("#error"))
	describedBy := get(t, ctx, chromedp.AttributeValue("#api_key", "aria-describedby")).Value
	shotError := get(t, ctx, chromedp.FullScreenshot(100))
	dir := t.ArtifactDir()
	for name, b := range map[string][]byte{"signin.png": shotForm, "signin-wrong-key.png": shotError} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots (%d and %d bytes) in %s", len(shotForm), len(shotError), dir)
	if title != "Sign in to Plans test API" || label != "API key" || link != "https://example.com/keys" {
		t.Errorf("page: title %q, label %q, keys link %q", title, label, link)
	}
	if errText != "This API key was not accepted. Check it and try again." || describedBy != "key-hint error" {
		t.Errorf("wrong key: error %q, aria-describedby %q", errText, describedBy)
	}

	do(t, ctx, chromedp.SendKeys("#api_key", "oauth-static-key-1"))
	do(t, ctx, chromedp.Click(`button[value="allow"]`))
	var q url.Values
	select {
	case q = <-callback:
	case <-time.After(10 * time.Second):
		t.Fatal("the browser never reached the client's callback")
	}
	do(t, ctx, chromedp.WaitReady("body"))
	landed := get(t, ctx, chromedp.Location())
	if !strings.HasPrefix(landed, redirect+"?") || q.Get("state") != "browser-state" || q.Get("iss") != app.url || len(q) != 3 {
		t.Fatalf("callback: %s %v", landed, q)
	}
	tok, err := conf.Exchange(context.Background(), q.Get("code"), oauth2.VerifierOption(verifier), resource)
	if err != nil {
		t.Fatalf("code exchange: %v", err)
	}
	got := postOAuth(t, app.url, tok.AccessToken, callBody(1, "get_quote", `{"symbol":"Z"}`))
	if got.status != 200 || !strings.Contains(got.body, `"structuredContent":{"ok":true}`) {
		t.Errorf("call with the browser's token: %d %s", got.status, got.body)
	}
	if keys := app.up.takeKeys(); len(keys) != 1 || keys[0] != "oauth-static-key-1" {
		t.Errorf("upstream X-Api-Key: %v", keys)
	}
}

func jsonRequest(t *testing.T, u, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

// startBrowser starts headless Chromium (a profile of the test's own, the
// options given added) and returns its first tab, both ended when the test
// ends.
func startBrowser(t *testing.T, chromium string, opts ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir())), opts...)...)
	t.Cleanup(cancelAlloc)
	browser, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	if err := chromedp.Do(browser); err != nil { // starts Chromium, with no timeout
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return browser
}

// do runs one browser action, failing the test on error.
func do(t *testing.T, ctx context.Context, a chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, a); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// get runs one browser action that returns a value.
func get[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	return v
}
