package oauth

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/adapter/idp/idptest"
)

// TestAssertionGrant: an enterprise identity provider's ID-JAG is taken
// as a JWT bearer grant (Enterprise-Managed Authorization §5) for an
// access token, without a refresh token, standing for the key configured
// for that provider and metered per user; each refusal says exactly what
// was wrong, a replayed assertion included, on the memory and the Redis
// store alike.
func TestAssertionGrant(t *testing.T) {
	ent := idptest.New(t)
	other := idptest.New(t)
	v, err := idp.New(context.Background(), idp.Config{Issuer: ent.URL, Audience: testIssuer, Upstream: idp.UpstreamNone})
	if err != nil {
		t.Fatal(err)
	}
	for name, store := range testStores() {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, store(t), func(o *Options) {
				o.EnterpriseIdPs = []EnterpriseIdP{{Verifier: v, Key: testKey}}
				o.TokenCacheTTL = -1
			})
			ctx := context.Background()
			client := h.register(testRedirect)
			n := 0
			jag := func(change func(*idptest.Claims)) string {
				n++
				c := idptest.Claims{Issuer: ent.URL, Subject: "U0194", Audience: []string{testIssuer}, IssuedAt: time.Now(), Expiry: time.Now().Add(5 * time.Minute),
					ID: name + "-jti-" + string(rune('a'+n)), Type: idp.AssertionType, Extra: map[string]any{"client_id": client, "resource": testResource}}
				if change != nil {
					change(&c)
				}
				return ent.Token(c)
			}
			grant := func(assertion string, more ...string) *httptest.ResponseRecorder {
				f := url.Values{"grant_type": {GrantTypeJWTBearer}, "assertion": {assertion}, "client_id": {client}}
				for i := 0; i+1 < len(more); i += 2 {
					f.Set(more[i], more[i+1])
				}
				return h.do("POST", PathToken, f)
			}

			good := jag(nil)
			w := grant(good)
			var tok map[string]any
			if err := json.Unmarshal(w.Body.Bytes(), &tok); err != nil || w.Code != 200 {
				t.Fatalf("a good assertion: %d %s", w.Code, w.Body)
			}
			access, _ := tok["access_token"].(string)
			delete(tok, "access_token")
			if want := map[string]any{"token_type": "Bearer", "expires_in": float64(3600), "scope": Scope}; !reflect.DeepEqual(tok, want) || !IsAccessToken(access) {
				t.Fatalf("token response %v (access %q); want %v and no refresh_token", tok, access, want)
			}
			grantID, _ := parseSecret(AccessTokenPrefix, access)
			id, err := h.srv.ResolveToken(ctx, access)
			if want := (Identity{Key: testKey, KeyID: EnterpriseKeyID(ent.URL, "U0194"), GrantID: grantID, ClientID: client}); err != nil || id != want {
				t.Fatalf("ResolveToken = %+v, %v; want %+v", id, err, want)
			}
			if !strings.HasPrefix(id.KeyID, "ema-") || len(id.KeyID) != 16 {
				t.Errorf("key id %q: want ema- and 12 hex digits", id.KeyID)
			}
			wantError(t, grant(good), 400, "invalid_grant", `the assertion was already used (jti "`+name+`-jti-b"); get a new one from your identity provider`)

			expiredAt := time.Now().Add(-2 * time.Minute).Truncate(time.Second)
			for _, c := range []struct {
				assertion, more string
				status          int
				code, desc      string
			}{
				{other.Token(idptest.Claims{Issuer: other.URL, Subject: "U1", Audience: []string{testIssuer}, Type: idp.AssertionType}), "", 400, "invalid_grant",
					`the assertion was issued by "` + other.URL + `", which is not an identity provider this server accepts assertions from`},
				{jag(func(c *idptest.Claims) { c.Audience = []string{"https://other.example"} }), "", 400, "invalid_grant",
					`the assertion is for "https://other.example", not for this authorization server (` + testIssuer + `)`},
				{jag(func(c *idptest.Claims) { c.Expiry = expiredAt }), "", 400, "invalid_grant", "the assertion expired at " + expiredAt.UTC().Format(time.RFC3339)},
				{jag(func(c *idptest.Claims) { c.Type = "" }), "", 400, "invalid_grant", `the assertion's typ is "JWT", not "oauth-id-jag+jwt" (an identity assertion authorization grant)`},
				{jag(func(c *idptest.Claims) { c.Extra["client_id"] = "someone-else" }), "", 400, "invalid_grant",
					`the assertion was issued to the client "someone-else", not to this one (` + client + `)`},
				{jag(func(c *idptest.Claims) { c.Extra["resource"] = "https://mcp.example.com/elsewhere" }), "", 400, "invalid_target",
					`the assertion is for the resource "https://mcp.example.com/elsewhere", not for this server's (` + testResource + `)`},
				{jag(func(c *idptest.Claims) { c.ID = "" }), "", 400, "invalid_grant", "the assertion has no id (jti)"},
				{jag(func(c *idptest.Claims) { c.Subject = "" }), "", 400, "invalid_grant", "the assertion names no user (sub)"},
				{jag(func(c *idptest.Claims) { c.IssuedAt = time.Time{} }), "", 400, "invalid_grant", "the assertion has no issue time (iat)"},
				{jag(nil), "https://other.example/mcp", 400, "invalid_target", `resource "https://other.example/mcp" is not the one the assertion is for, ` + testResource},
				{"eyJhbGciOiJSUzI1NiJ9.e30", "", 400, "invalid_grant", "the assertion is not a signed JWT (an identity assertion authorization grant)"},
			} {
				var more []string
				if c.more != "" {
					more = []string{"resource", c.more}
				}
				wantError(t, grant(c.assertion, more...), c.status, c.code, c.desc)
			}
			// An unknown key id (one JWKS refresh, then refused), and an HS256
			// keyed with the public key.
			wantError(t, grant(ent.Token(idptest.Claims{Issuer: ent.URL, Subject: "U1", Audience: []string{testIssuer}, IssuedAt: time.Now(), Expiry: time.Now().Add(time.Minute),
				ID: name + "-kid", Type: idp.AssertionType, Extra: map[string]any{"client_id": client, "resource": testResource}}, "k9")), 400, "invalid_grant",
				`the assertion's signing key "k9" is not among the keys of `+ent.URL)
			pub, _ := json.Marshal(ent.PublicKeys())
			hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: pub}, (&jose.SignerOptions{}).WithType(idp.AssertionType))
			wantError(t, grant(idptest.Sign(hs, idptest.Claims{Issuer: ent.URL, Subject: "U1", Audience: []string{testIssuer}})), 400, "invalid_grant",
				"the assertion is signed with an algorithm this server does not accept: an identity provider signs with its private key (RS, PS, ES or EdDSA)")
			// A client this server does not know, named alike in the request
			// and the assertion.
			f := url.Values{"grant_type": {GrantTypeJWTBearer}, "client_id": {"nobody"}, "assertion": {jag(func(c *idptest.Claims) { c.Extra["client_id"] = "nobody" })}}
			wantError(t, h.do("POST", PathToken, f), 400, "invalid_grant", `the client "nobody" is not registered at this authorization server`)
		})
	}

	// Without an enterprise identity provider the grant is not offered.
	h := newHarness(t, NewMemoryStore(nil), nil)
	wantError(t, h.do("POST", PathToken, url.Values{"grant_type": {GrantTypeJWTBearer}, "assertion": {"x"}, "client_id": {"c"}}), 400, "unsupported_grant_type",
		"this server accepts no identity assertions (no enterprise identity provider is configured); use authorization_code or refresh_token")
}
