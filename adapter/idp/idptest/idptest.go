// Package idptest is an OpenID provider for tests: discovery, a JWKS whose
// keys can rotate, tokens signed on request, and an RFC 8693 token
// exchange endpoint that records what it was asked.
package idptest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Provider is a running test provider.
type Provider struct {
	URL string // the issuer

	mu      sync.Mutex
	keys    []*rsa.PrivateKey
	kids    []string
	jwks    func(w http.ResponseWriter) bool // overrides the JWKS answer when it returns true
	Fetches atomic.Int64                     // JWKS requests
	// Down, while true, has every endpoint answer 503 (a provider in an
	// outage); Discoveries counts discovery document requests, answered
	// or not.
	Down        atomic.Bool
	Discoveries atomic.Int64
	Exchanges   atomic.Int64 // token exchange requests
	// LastExchange is the form of the last token exchange request.
	LastExchange map[string][]string
	LastClient   string // its Basic user
	LastSecret   string // its Basic password
}

// New starts a provider with one signing key, kid "k1".
func New(t testing.TB) *Provider {
	p := &Provider{}
	p.Rotate("k1")
	mux := http.NewServeMux()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/openid-configuration" {
			p.Discoveries.Add(1)
		}
		if p.Down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": p.URL, "jwks_uri": p.URL + "/jwks", "token_endpoint": p.URL + "/token",
			"authorization_endpoint": p.URL + "/authorize", "response_types_supported": []string{"code"},
			"subject_types_supported": []string{"public"}, "id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		p.Fetches.Add(1)
		p.mu.Lock()
		override := p.jwks
		p.mu.Unlock()
		if override != nil && override(w) {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(p.PublicKeys())
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		p.Exchanges.Add(1)
		_ = r.ParseForm()
		user, pass, _ := r.BasicAuth()
		p.mu.Lock()
		p.LastExchange, p.LastClient, p.LastSecret = r.PostForm, user, pass
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange" || r.PostForm.Get("subject_token") == "" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"unsupported_grant_type"}`))
			return
		}
		if r.PostForm.Get("audience") == "https://refused.example" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_target","error_description":"no such audience"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{
			"access_token":      "exchanged-" + strconv.FormatInt(p.Exchanges.Load(), 10),
			"issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
			"token_type":        "Bearer", "expires_in": 600,
		})
	})
	return p
}

// Rotate adds a signing key kid, which signs from now on; the older keys
// stay in the JWKS.
func (p *Provider) Rotate(kid string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys = append(p.keys, k)
	p.kids = append(p.kids, kid)
}

// PublicKeys is the JWKS.
func (p *Provider) PublicKeys() jose.JSONWebKeySet {
	p.mu.Lock()
	defer p.mu.Unlock()
	var set jose.JSONWebKeySet
	for i, k := range p.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: &k.PublicKey, KeyID: p.kids[i], Algorithm: "RS256", Use: "sig"})
	}
	return set
}

// ServeJWKS makes f answer the JWKS requests (a hang, a huge body) while
// it returns true.
func (p *Provider) ServeJWKS(f func(w http.ResponseWriter) bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.jwks = f
}

// Claims are a token's claims; zero members are left out.
type Claims struct {
	Issuer, Subject string
	Audience        []string
	Expiry          time.Time
	NotBefore       time.Time
	IssuedAt        time.Time
	ID              string // jti
	Extra           map[string]any
	// Type is the typ header; "" is "JWT" (an identity assertion's is
	// idp.AssertionType).
	Type string
}

// Token signs claims with the newest key (RS256), or with kid's.
func (p *Provider) Token(c Claims, kid ...string) string {
	p.mu.Lock()
	i := len(p.keys) - 1
	if len(kid) > 0 {
		for j, k := range p.kids {
			if k == kid[0] {
				i = j
			}
		}
	}
	key, id := p.keys[i], p.kids[i]
	p.mu.Unlock()
	if len(kid) > 0 && kid[0] != id {
		id = kid[0] // a key id the JWKS does not have, signed with a key it does
	}
	typ := c.Type
	if typ == "" {
		typ = "JWT"
	}
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key}, (&jose.SignerOptions{}).WithType(jose.ContentType(typ)).WithHeader("kid", id))
	if err != nil {
		panic(err)
	}
	return sign(sig, c)
}

// Sign signs claims with any signer (an HS256 keyed with the public key,
// say).
func Sign(sig jose.Signer, c Claims) string { return sign(sig, c) }

func sign(sig jose.Signer, c Claims) string {
	std := jwt.Claims{Issuer: c.Issuer, Subject: c.Subject, Audience: jwt.Audience(c.Audience), ID: c.ID}
	if !c.IssuedAt.IsZero() {
		std.IssuedAt = jwt.NewNumericDate(c.IssuedAt)
	}
	if !c.Expiry.IsZero() {
		std.Expiry = jwt.NewNumericDate(c.Expiry)
	}
	if !c.NotBefore.IsZero() {
		std.NotBefore = jwt.NewNumericDate(c.NotBefore)
	}
	b := jwt.Signed(sig).Claims(std)
	if c.Extra != nil {
		b = b.Claims(c.Extra)
	}
	s, err := b.Serialize()
	if err != nil {
		panic(err)
	}
	return s
}

// Last returns the last token exchange's form and client credentials.
func (p *Provider) Last() (form map[string][]string, client, secret string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.LastExchange, p.LastClient, p.LastSecret
}
