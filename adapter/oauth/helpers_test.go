package oauth

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"

	"github.com/restmcp/restmcp/internal/testenv"
	"github.com/restmcp/restmcp/metering"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	testenv.Main(m)
}

// Fixed values of the tests.
const (
	testIssuer   = "https://mcp.example.com"
	testResource = "https://mcp.example.com/oauth/mcp"
	testRedirect = "http://127.0.0.1:4567/callback"
	testKey      = "key-good-0123456789"
	testRevoked  = "key-revoked-0123456789"
	// A PKCE pair (RFC 7636 Appendix B).
	testVerifier  = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	testChallenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
)

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// harness is a Server on a gin engine, called in process.
type harness struct {
	t     testing.TB
	srv   *Server
	h     http.Handler
	clock *clock
}

// testKeyCheck accepts testKey, refuses testRevoked as revoked and every
// other key as unknown.
func testKeyCheck(_ context.Context, key string) error {
	switch key {
	case testKey:
		return nil
	case testRevoked:
		return metering.ErrRevokedKey
	}
	return metering.ErrUnknownKey
}

// newHarness serves a Server over store with the test options, changed by
// mod when not nil.
func newHarness(t testing.TB, store Store, mod func(*Options)) *harness {
	t.Helper()
	clk := &clock{t: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)}
	opts := Options{
		Issuer: testIssuer, ResourcePath: "/oauth/mcp", ResourceName: "Demo API", KeysURL: "https://example.com/keys",
		Store: store, EncryptionKey: []byte("0123456789abcdef0123456789abcdef"), CheckKey: testKeyCheck, Now: clk.now,
	}
	if mod != nil {
		mod(&opts)
	}
	srv, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e := gin.New()
	srv.Mount(e)
	return &harness{t: t, srv: srv, h: e, clock: clk}
}

// do serves one request; body is a url.Values (form), a string (JSON) or nil.
func (h *harness) do(method, target string, body any, header ...string) *httptest.ResponseRecorder {
	h.t.Helper()
	var r *http.Request
	switch b := body.(type) {
	case url.Values:
		r = httptest.NewRequest(method, target, strings.NewReader(b.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	case string:
		r = httptest.NewRequest(method, target, strings.NewReader(b))
		r.Header.Set("Content-Type", "application/json")
	default:
		r = httptest.NewRequest(method, target, nil)
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.h.ServeHTTP(w, r)
	return w
}

var clientIDRE = regexp.MustCompile(`"client_id":"([^"]+)"`)

// register registers a client with redirect URI redirect and returns its id.
func (h *harness) register(redirect string) string {
	h.t.Helper()
	w := h.do("POST", PathRegister, `{"redirect_uris":["`+redirect+`"],"client_name":"Test client","token_endpoint_auth_method":"none"}`)
	if w.Code != http.StatusCreated {
		h.t.Fatalf("register: %d %s", w.Code, w.Body)
	}
	return clientIDRE.FindStringSubmatch(w.Body.String())[1]
}

// authQuery is a valid authorization request of clientID.
func authQuery(clientID string) url.Values {
	return url.Values{
		"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {testRedirect}, "state": {"st-1"},
		"code_challenge": {testChallenge}, "code_challenge_method": {"S256"}, "resource": {testResource}, "scope": {"mcp"},
	}
}

var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// form is the sign-in form of a page: its hidden fields and the CSRF cookie.
func (h *harness) form(q url.Values) (url.Values, string) {
	h.t.Helper()
	w := h.do("GET", PathAuthorize+"?"+q.Encode(), nil)
	if w.Code != http.StatusOK {
		h.t.Fatalf("sign-in page: %d %s", w.Code, w.Body)
	}
	f := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(w.Body.String(), -1) {
		f.Set(m[1], html.UnescapeString(m[2]))
	}
	cookie := strings.Split(w.Header().Get("Set-Cookie"), ";")[0]
	return f, cookie
}

// signIn posts key on the sign-in form of q.
func (h *harness) signIn(q url.Values, key string) *httptest.ResponseRecorder {
	h.t.Helper()
	f, cookie := h.form(q)
	f.Set("api_key", key)
	f.Set("action", "allow")
	return h.do("POST", PathAuthorize, f, "Cookie", cookie)
}

// code signs in with testKey and returns the authorization code.
func (h *harness) code(clientID string) string {
	h.t.Helper()
	w := h.signIn(authQuery(clientID), testKey)
	if w.Code != http.StatusSeeOther {
		h.t.Fatalf("sign-in: %d %s", w.Code, w.Body)
	}
	u, _ := url.Parse(w.Header().Get("Location"))
	return u.Query().Get("code")
}

// exchange redeems code with the test verifier.
func (h *harness) exchange(clientID, code string) *httptest.ResponseRecorder {
	h.t.Helper()
	return h.do("POST", PathToken, url.Values{
		"grant_type": {"authorization_code"}, "code": {code}, "client_id": {clientID},
		"redirect_uri": {testRedirect}, "code_verifier": {testVerifier}, "resource": {testResource},
	})
}

var tokensRE = regexp.MustCompile(`^\{"access_token":"(rmcp_at_[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})","token_type":"Bearer","expires_in":3600,"refresh_token":"(rmcp_rt_[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})","scope":"mcp"\}$`)

// tokens checks a token response whole and returns its two tokens.
func (h *harness) tokens(w *httptest.ResponseRecorder) (access, refresh string) {
	h.t.Helper()
	m := tokensRE.FindStringSubmatch(w.Body.String())
	if w.Code != http.StatusOK || m == nil || w.Header().Get("Cache-Control") != "no-store" {
		h.t.Fatalf("token response: %d %v %s", w.Code, w.Header(), w.Body)
	}
	return m[1], m[2]
}

// login runs registration, sign-in and the code exchange.
func (h *harness) login() (clientID, access, refresh string) {
	h.t.Helper()
	clientID = h.register(testRedirect)
	access, refresh = h.tokens(h.exchange(clientID, h.code(clientID)))
	return clientID, access, refresh
}

// wantError checks an error response of the token, registration or
// revocation endpoint whole.
func wantError(t *testing.T, w *httptest.ResponseRecorder, status int, code, description string) {
	t.Helper()
	want := fmt.Sprintf(`{"error":%q,"error_description":%q}`, code, description)
	if w.Code != status || w.Body.String() != want {
		t.Errorf("got %d %s\nwant %d %s", w.Code, w.Body, status, want)
	}
}

// testStores are the Store implementations every contract test runs on:
// memory, Redis, and a Redis Cluster. The Redis ones need a server
// (RESTMCP_TEST_REDIS_URL, RESTMCP_TEST_REDIS_CLUSTER_URL); without one they
// are skipped loudly, or fail when RESTMCP_REQUIRE_REDIS=1 /
// RESTMCP_REQUIRE_REDIS_CLUSTER=1.
func testStores() map[string]func(t testing.TB) Store {
	return map[string]func(t testing.TB) Store{
		"memory": func(testing.TB) Store { return NewMemoryStore(nil) },
		"redis": func(t testing.TB) Store {
			u := os.Getenv("RESTMCP_TEST_REDIS_URL")
			if u == "" {
				u = "redis://127.0.0.1:6379/15"
			}
			opt, err := redis.ParseURL(u)
			if err != nil {
				t.Fatal(err)
			}
			return reachable(t, redis.NewClient(opt), u, "RESTMCP_REQUIRE_REDIS")
		},
		"cluster": func(t testing.TB) Store {
			u := os.Getenv("RESTMCP_TEST_REDIS_CLUSTER_URL")
			if u == "" {
				u = "redis://127.0.0.1:7001?addr=127.0.0.1:7002&addr=127.0.0.1:7003"
			}
			opt, err := redis.ParseClusterURL(u)
			if err != nil {
				t.Fatal(err)
			}
			opt.DialTimeout, opt.MaxRetries = time.Second, 1
			return reachable(t, redis.NewClusterClient(opt), u, "RESTMCP_REQUIRE_REDIS_CLUSTER")
		},
	}
}

func reachable(t testing.TB, c redis.UniversalClient, u, require string) Store {
	t.Helper()
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		msg := fmt.Sprintf("\n*** REDIS UNREACHABLE at %s: %v\n*** The OAuth Redis store tests did NOT run; set %s=1 to make this a failure.", u, err, require)
		testenv.Unavailable(t, require, map[string]string{"RESTMCP_REQUIRE_REDIS": "Redis", "RESTMCP_REQUIRE_REDIS_CLUSTER": "a Redis Cluster"}[require], msg)
	}
	return NewRedisStore(c)
}
