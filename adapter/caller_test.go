package adapter

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/adapter/idp/idptest"
	"github.com/restmcp/restmcp/adapter/oauth"
	"github.com/restmcp/restmcp/metering"
)

// TestResolveCaller: the one function that makes a caller of a request's
// credential, for each kind of credential and each mode, as a value: the
// caller, or the refusal the gate's renderer answers (exact).
func TestResolveCaller(t *testing.T) {
	p := idptest.New(t)
	v, err := idp.New(context.Background(), idp.Config{Issuer: p.URL, Audience: idpResource, Upstream: idp.UpstreamForward})
	if err != nil {
		t.Fatal(err)
	}
	front, err := oauth.New(oauth.Options{Issuer: "https://mcp.example", ResourcePath: "/oauth/mcp", ResourceName: "Weather",
		Store: oauth.NewMemoryStore(nil), EncryptionKey: []byte("0123456789abcdef0123456789abcdef"),
		CheckKey: func(context.Context, string) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	good := p.Token(idptest.Claims{Issuer: p.URL, Subject: "ada", Audience: []string{idpResource}, Expiry: now.Add(time.Hour)})
	expired := p.Token(idptest.Claims{Issuer: p.URL, Subject: "ada", Audience: []string{idpResource}, Expiry: now.Add(-time.Hour)})
	gone := oauth.AccessTokenPrefix + "bm90LWlzc3VlZA"

	type result struct {
		KeyID, Key, Source string
		Refusal            *refusal
	}
	for _, tt := range []struct {
		name string
		opts Options
		cred *credential
		want result
	}{
		{"an API key in the header", Options{}, newCredential("k-1", "header"), result{KeyID: metering.KeyID("k-1"), Key: "k-1", Source: "header"}},
		{"an API key as a Bearer token", Options{IdP: v, OAuth: front}, newCredential("k-1", "bearer"), result{KeyID: metering.KeyID("k-1"), Key: "k-1", Source: "bearer"}},
		{"no credential", Options{}, &credential{}, result{}},
		{"public mode drops the key", Options{PublicMode: true}, newCredential("k-1", "header"), result{}},
		{"a provider token", Options{IdP: v}, newCredential(good, "bearer"), result{KeyID: idpKeyIDPrefix + metering.KeyID("ada"), Source: sourceIdP}},
		{"an expired provider token", Options{IdP: v}, newCredential(expired, "bearer"), result{Refusal: &refusal{status: http.StatusUnauthorized, code: -31401,
			message:   "invalid access token: the access token expired at " + now.Add(-time.Hour).UTC().Format(time.RFC3339),
			challenge: `Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp", error="invalid_token", error_description="the access token expired at ` + now.Add(-time.Hour).UTC().Format(time.RFC3339) + `"`}}},
		{"a provider token without a provider is an API key", Options{}, newCredential(good, "bearer"), result{KeyID: metering.KeyID(good), Key: good, Source: "bearer"}},
		{"an access token restmcp never issued", Options{OAuth: front}, newCredential(gone, "bearer"), result{Refusal: &refusal{status: http.StatusUnauthorized, code: -31401,
			message:   "invalid access token: not an access token issued by this server",
			challenge: `Bearer resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/oauth/mcp", scope="mcp", error="invalid_token", error_description="invalid access token: not an access token issued by this server"`}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Tools = loadTools(t, "testdata/c23.yaml", "http://127.0.0.1:9")
			if tt.opts.IdP != nil {
				tt.opts.IdPResource, tt.opts.IdPIssuer = idpResource, p.URL
			}
			s, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			caller, r := s.resolveCaller(context.Background(), tt.cred)
			got := result{Refusal: r}
			if caller != nil {
				got.KeyID, got.Key, got.Source = caller.keyID, caller.key, caller.source
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(refusal{})); diff != "" {
				t.Errorf("resolveCaller (-want +got):\n%s", diff)
			}
		})
	}
}
