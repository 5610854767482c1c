// Package idp accepts access tokens that the API vendor's own identity
// provider issued (resource-server mode): OpenID Connect discovery
// (https://openid.net/specs/openid-connect-discovery-1_0.html) through
// github.com/coreos/go-oidc/v3, the provider's signing keys (JWKS, RFC 7517)
// fetched, cached and refreshed on an unknown key id at most once per
// MinRefresh, and each token's signature and claims checked by
// github.com/go-jose/go-jose/v4 (RFC 7519 §7.2; iss, aud as the RFC 8707
// resource, exp and nbf with a small skew, algorithms pinned). It also
// turns the inbound token into the upstream credential: an RFC 8693 token
// exchange at the provider for the upstream API's audience, cached until
// shortly before it expires, or the inbound token itself when the
// deployment says so.
package idp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Upstream credential modes (Config.Upstream).
const (
	UpstreamExchange = "exchange" // RFC 8693 token exchange for ExchangeAudience
	UpstreamForward  = "forward"  // the inbound token itself
	// UpstreamNone is a verifier of identity assertions alone
	// (VerifyAssertion): an enterprise identity provider whose users'
	// calls carry a key of its own, not a token of theirs.
	UpstreamNone = "none"
	// UpstreamKey: the caller's calls carry an API key bound to its
	// identity, which the adapter looks up (UpstreamToken is not used).
	UpstreamKey = "key"
)

// Defaults for the zero values of Config.
const (
	DefaultSkew        = time.Minute
	DefaultMinRefresh  = 5 * time.Second
	DefaultMaxBytes    = 1 << 20 // a discovery document, a JWKS or a token answer
	DefaultTimeout     = 5 * time.Second
	DefaultCacheTokens = 10_000
	// DiscoveryRetry is the least time between two attempts to read a
	// Deferred provider's discovery document after one failed.
	DiscoveryRetry = 5 * time.Second
)

// DefaultAlgorithms are the signature algorithms accepted when Config
// names none: asymmetric only (RFC 8725 §3.1: never "none", never an HMAC
// keyed with a public key).
var DefaultAlgorithms = []string{"RS256", "ES256", "PS256"}

// Config is what resource-server mode needs.
type Config struct {
	// Issuer is the provider's issuer URL; its discovery document must name
	// the same issuer.
	Issuer string
	// Audience is the aud a token must carry: restmcp's MCP URL, the RFC
	// 8707 resource its clients ask tokens for.
	Audience string
	// Algorithms are the accepted JWS algorithms; nil: DefaultAlgorithms.
	// HS* are refused: a provider's keys are public.
	Algorithms []string
	// IdentityClaim names the claim that identifies the caller for
	// metering ("sub" when empty); PlanClaim, when set, the claim whose
	// value names the caller's plan.
	IdentityClaim string
	PlanClaim     string
	// Upstream is UpstreamExchange or UpstreamForward; ExchangeAudience
	// the audience asked for in the exchange, ClientID and ClientSecret
	// restmcp's client at the provider (HTTP Basic, RFC 6749 §2.3.1).
	Upstream         string
	ExchangeAudience string
	ClientID         string
	ClientSecret     string
	// Skew is the clock skew allowed on exp and nbf; MinRefresh the least
	// time between two JWKS fetches; zero: the defaults.
	Skew       time.Duration
	MinRefresh time.Duration
	// HTTPClient reaches the provider; nil: one with DefaultTimeout.
	HTTPClient *http.Client
	// Deferred: New reads nothing from the provider; its discovery
	// document and keys are read at the first token (or Discover), and
	// after a failure again at most every DiscoveryRetry. For a provider a
	// deployment must start without (an enterprise's): while it cannot be
	// read, its tokens get an error that is no *TokenError.
	Deferred bool
}

// Identity is a caller the provider vouched for.
type Identity struct {
	// ID is the IdentityClaim's value, Plan the PlanClaim's ("" when none).
	ID, Plan string
	// Token is the inbound access token, Expiry its exp.
	Token  string
	Expiry time.Time
}

// TokenError is a refused token; its text is the error_description
// (RFC 6750 §3.1), naming what was wrong and never the token.
type TokenError struct{ Description string }

func (e *TokenError) Error() string { return e.Description }

func refuse(format string, args ...any) error {
	return &TokenError{Description: fmt.Sprintf(format, args...)}
}

// asymmetricAlgorithms are every asymmetric JWS algorithm, for reading a
// token's issuer before knowing whose it is (AssertionIssuer).
var asymmetricAlgorithms = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.ES256, jose.ES384, jose.ES512,
	jose.PS256, jose.PS384, jose.PS512, jose.EdDSA}

// AssertionIssuer reads the iss claim of an identity assertion (a signed
// JWT) without checking it, to choose the Verifier that will
// (VerifyAssertion). The error is a *TokenError for a token that is no
// JWS signed with an asymmetric algorithm, or whose claims do not read.
func AssertionIssuer(token string) (string, error) {
	tok, err := jwt.ParseSigned(token, asymmetricAlgorithms)
	switch {
	case err != nil && strings.Contains(err.Error(), "unexpected signature algorithm"):
		return "", refuse("the assertion is signed with an algorithm this server does not accept: an identity provider signs with its private key (RS, PS, ES or EdDSA)")
	case err != nil:
		return "", refuse("the assertion is not a signed JWT (an identity assertion authorization grant)")
	}
	var claims jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&claims); err != nil {
		return "", refuse("the assertion's claims are not readable")
	}
	return claims.Issuer, nil
}

// Verifier checks tokens of one provider. Safe for concurrent use.
type Verifier struct {
	cfg      Config
	algs     []jose.SignatureAlgorithm
	client   *http.Client
	jwksURL  string
	tokenURL string

	mu      sync.Mutex
	keys    jose.JSONWebKeySet
	fetched time.Time
	fetchMu sync.Mutex   // one fetch at a time
	fetches atomic.Int64 // JWKS fetches made

	cache   sync.Map // exchange cache: identity + audience → cachedToken
	cacheN  atomic.Int64
	checked sync.Map // verified tokens: SHA-256 of the token → checkedToken
	checkN  atomic.Int64
	now     func() time.Time

	// discovery (Deferred): done once it succeeded; until then tried at
	// most every DiscoveryRetry, the last failure kept.
	discovered   atomic.Bool
	discoverMu   sync.Mutex
	discoverTry  time.Time
	discoverFail error
}

type cachedToken struct {
	token   string
	expires time.Time
}

// checkedToken is a token whose signature and claims were verified: it
// is served again until its exp (plus skew), from its SHA-256, without a
// second signature check.
type checkedToken struct {
	id       Identity
	validTil time.Time
}

// New discovers the provider and fetches its keys once. It fails when the
// discovery document cannot be read, names another issuer or no jwks_uri,
// or the configuration is unusable.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("idp: the issuer and the audience are required")
	}
	if cfg.IdentityClaim == "" {
		cfg.IdentityClaim = "sub"
	}
	if cfg.Skew == 0 {
		cfg.Skew = DefaultSkew
	}
	if cfg.MinRefresh == 0 {
		cfg.MinRefresh = DefaultMinRefresh
	}
	if len(cfg.Algorithms) == 0 {
		cfg.Algorithms = DefaultAlgorithms
	}
	v := &Verifier{cfg: cfg, now: time.Now}
	for _, a := range cfg.Algorithms {
		if a == "none" || strings.HasPrefix(a, "HS") {
			return nil, fmt.Errorf("idp: algorithm %s is not accepted: a provider's signing keys are public (RFC 8725 §3.1)", a)
		}
		v.algs = append(v.algs, jose.SignatureAlgorithm(a))
	}
	switch cfg.Upstream {
	case UpstreamForward, UpstreamNone, UpstreamKey:
	case UpstreamExchange:
		if cfg.ExchangeAudience == "" || cfg.ClientID == "" {
			return nil, errors.New("idp: a token exchange needs the upstream audience and restmcp's client id at the provider")
		}
	default:
		return nil, fmt.Errorf("idp: upstream credential %q is not exchange or forward", cfg.Upstream)
	}
	v.client = cfg.HTTPClient
	if v.client == nil {
		v.client = &http.Client{Timeout: DefaultTimeout}
	}
	if !cfg.Deferred {
		if err := v.Discover(ctx); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// discover reads the provider's discovery document (OpenID Connect
// Discovery 1.0 §4) and then its keys. Discover runs it, once at a time;
// the URLs it sets are read only once discovered is set.
func (v *Verifier) discover(ctx context.Context) error {
	bounded := &http.Client{Timeout: v.client.Timeout, Transport: boundedTransport{next: v.client.Transport}}
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, bounded), v.cfg.Issuer)
	if err != nil {
		return fmt.Errorf("idp: discovery at %s: %w", v.cfg.Issuer, err)
	}
	var meta struct {
		JWKS  string `json:"jwks_uri"`
		Token string `json:"token_endpoint"`
	}
	if err := p.Claims(&meta); err != nil || meta.JWKS == "" {
		return fmt.Errorf("idp: the discovery document of %s names no jwks_uri", v.cfg.Issuer)
	}
	if v.cfg.Upstream == UpstreamExchange && meta.Token == "" {
		return fmt.Errorf("idp: the discovery document of %s names no token_endpoint for the token exchange", v.cfg.Issuer)
	}
	v.jwksURL, v.tokenURL = meta.JWKS, meta.Token
	return v.refresh(ctx)
}

// Discover reads the provider's discovery document and keys now (New
// does, unless Deferred), unless done already or tried less than
// DiscoveryRetry ago (then it returns that attempt's error), bounded by
// DefaultTimeout. Concurrent callers wait for one attempt.
func (v *Verifier) Discover(ctx context.Context) error {
	if v.discovered.Load() {
		return nil
	}
	v.discoverMu.Lock()
	defer v.discoverMu.Unlock()
	if v.discovered.Load() {
		return nil
	}
	if v.discoverFail != nil && v.now().Sub(v.discoverTry) < DiscoveryRetry {
		return v.discoverFail
	}
	v.discoverTry = v.now()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultTimeout)
	defer cancel()
	if err := v.discover(ctx); err != nil {
		v.discoverFail = err
		return err
	}
	v.discoverFail = nil
	v.discovered.Store(true)
	return nil
}

// Issuer is the provider's issuer URL.
func (v *Verifier) Issuer() string { return v.cfg.Issuer }

// Fetches reports how many times the JWKS was fetched.
func (v *Verifier) Fetches() int64 { return v.fetches.Load() }

// LooksLikeJWT reports whether token has a JWS compact form's three parts
// (RFC 7515 §7.1), so that it is checked here and not taken as an API key.
func LooksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2 && strings.HasPrefix(token, "eyJ")
}

// Verify checks token and returns who it stands for, or a *TokenError
// naming what was wrong: its form, its algorithm, an unknown key id (after
// one JWKS refresh, at most once per MinRefresh), its signature, issuer,
// audience, expiry, not-before time, or a missing identity claim.
func (v *Verifier) Verify(ctx context.Context, token string) (*Identity, error) {
	sum := sha256.Sum256([]byte(token))
	if c, ok := v.checked.Load(sum); ok {
		if ct := c.(checkedToken); v.now().Before(ct.validTil) {
			id := ct.id
			return &id, nil
		}
		v.checked.Delete(sum)
	}
	id, err := v.verify(ctx, token)
	if err == nil {
		if v.checkN.Add(1) > DefaultCacheTokens {
			v.checked.Clear() // bounded: start over rather than grow
			v.checkN.Store(1)
		}
		v.checked.Store(sum, checkedToken{id: *id, validTil: id.Expiry.Add(v.cfg.Skew)})
	}
	return id, err
}

// verify is Verify without the cache of verified tokens.
func (v *Verifier) verify(ctx context.Context, token string) (*Identity, error) {
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		if strings.Contains(err.Error(), "unexpected signature algorithm") {
			return nil, refuse("the access token is signed with an algorithm this server does not accept (accepted: %s)", strings.Join(v.cfg.Algorithms, ", "))
		}
		return nil, refuse("the access token is not a signed JWT")
	}
	if err := v.Discover(ctx); err != nil {
		return nil, err
	}
	kid := tok.Headers[0].KeyID
	key, ok := v.signingKey(ctx, kid)
	if !ok {
		return nil, refuse("the access token's signing key %q is not among the identity provider's keys", clip(kid))
	}
	var std jwt.Claims
	var all map[string]any
	if err := tok.Claims(key.Key, &std, &all); err != nil {
		return nil, refuse("the access token's signature does not verify with the identity provider's key %q", clip(kid))
	}
	if err := v.checkClaims(std, "the access token", "this server"); err != nil {
		return nil, err
	}
	id, _ := all[v.cfg.IdentityClaim].(string)
	if id == "" {
		return nil, refuse("the access token has no %q claim to identify its caller by", v.cfg.IdentityClaim)
	}
	out := &Identity{ID: id, Token: token, Expiry: std.Expiry.Time()}
	if v.cfg.PlanClaim != "" {
		out.Plan, _ = all[v.cfg.PlanClaim].(string)
	}
	return out, nil
}

// signingKey is the key of kid, after one JWKS refetch (maybeRefresh) when
// the keys held lack it.
func (v *Verifier) signingKey(ctx context.Context, kid string) (jose.JSONWebKey, bool) {
	key, ok := v.key(kid)
	if !ok && v.maybeRefresh(ctx) {
		key, ok = v.key(kid)
	}
	return key, ok
}

// checkClaims checks the registered claims every token of the provider
// must pass (RFC 7519 §7.2): iss the provider, aud the Config.Audience
// (audienceName names whose it is in the refusal), exp present and not
// past, nbf not future, each with Config.Skew. what names the token in the
// refusal ("the access token", "the assertion").
func (v *Verifier) checkClaims(std jwt.Claims, what, audienceName string) error {
	now := v.now()
	switch {
	case std.Issuer != v.cfg.Issuer:
		return refuse("%s was issued by %q, not by %q", what, clip(std.Issuer), v.cfg.Issuer)
	case !std.Audience.Contains(v.cfg.Audience):
		return refuse("%s is for %q, not for %s (%s)", what, clip(strings.Join(std.Audience, " ")), audienceName, v.cfg.Audience)
	case std.Expiry == nil:
		return refuse("%s has no expiry (exp)", what)
	case now.Add(-v.cfg.Skew).After(std.Expiry.Time()):
		return refuse("%s expired at %s", what, std.Expiry.Time().UTC().Format(time.RFC3339))
	case std.NotBefore != nil && now.Add(v.cfg.Skew).Before(std.NotBefore.Time()):
		return refuse("%s is not valid before %s", what, std.NotBefore.Time().UTC().Format(time.RFC3339))
	}
	return nil
}

// key is the cached key of kid that may verify a token.
func (v *Verifier) key(kid string) (jose.JSONWebKey, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, k := range v.keys.Key(kid) {
		if k.Use == "" || k.Use == "sig" {
			return k, true
		}
	}
	return jose.JSONWebKey{}, false
}

// maybeRefresh fetches the JWKS again unless it was fetched less than
// MinRefresh ago (an unknown key id costs no fetch then); it reports
// whether the keys may have changed.
func (v *Verifier) maybeRefresh(ctx context.Context) bool {
	v.fetchMu.Lock()
	defer v.fetchMu.Unlock()
	v.mu.Lock()
	recent := v.now().Sub(v.fetched) < v.cfg.MinRefresh
	v.mu.Unlock()
	if recent {
		return false
	}
	return v.refresh(ctx) == nil
}

// refresh fetches the JWKS (bounded in size and time); on failure the
// keys held stay.
func (v *Verifier) refresh(ctx context.Context) error {
	v.fetches.Add(1)
	v.mu.Lock()
	v.fetched = v.now()
	v.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.jwksURL, nil)
	if err != nil {
		return fmt.Errorf("idp: jwks_uri %q: %w", v.jwksURL, err)
	}
	body, err := v.read(req)
	if err != nil {
		return fmt.Errorf("idp: fetching the keys at %s: %w", v.jwksURL, err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(body, &set); err != nil {
		return fmt.Errorf("idp: the keys at %s are not a JWK set: %w", v.jwksURL, err)
	}
	v.mu.Lock()
	v.keys = set
	v.mu.Unlock()
	return nil
}

// read sends req and returns a 200 answer's body, at most DefaultMaxBytes.
func (v *Verifier) read(req *http.Request) ([]byte, error) {
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, DefaultMaxBytes+1))
	if err != nil {
		return nil, err
	}
	if len(body) > DefaultMaxBytes {
		return nil, fmt.Errorf("the answer is larger than %d bytes", DefaultMaxBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("HTTP %d: %s", resp.StatusCode, clip(string(body)))
	}
	return body, nil
}

// UpstreamToken is the credential the upstream API gets for id: the
// inbound token (UpstreamForward), or a token of ExchangeAudience the
// provider issues for it (RFC 8693 §2.1), cached per identity and audience
// until 30 s before it expires.
func (v *Verifier) UpstreamToken(ctx context.Context, id *Identity) (string, error) {
	if v.cfg.Upstream == UpstreamForward {
		return id.Token, nil
	}
	sum := sha256.Sum256([]byte(id.ID + "\x00" + v.cfg.ExchangeAudience))
	ck := hex.EncodeToString(sum[:16])
	if c, ok := v.cache.Load(ck); ok && v.now().Before(c.(cachedToken).expires) {
		return c.(cachedToken).token, nil
	}
	form := url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token":        {id.Token},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:access_token"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
		"audience":             {v.cfg.ExchangeAudience},
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(url.QueryEscape(v.cfg.ClientID), url.QueryEscape(v.cfg.ClientSecret))
	body, err := v.read(req)
	if err != nil {
		var e struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return "", refuse("the identity provider refused to exchange the token for %s: %s %s", v.cfg.ExchangeAudience, e.Error, clip(e.Description))
		}
		return "", fmt.Errorf("idp: token exchange at %s: %w", v.tokenURL, err)
	}
	var out struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.AccessToken == "" {
		return "", fmt.Errorf("idp: token exchange at %s: no access_token in the answer", v.tokenURL)
	}
	expires := id.Expiry
	if out.ExpiresIn > 0 {
		expires = v.now().Add(time.Duration(out.ExpiresIn) * time.Second)
	}
	if expires = expires.Add(-30 * time.Second); v.now().Before(expires) {
		if v.cacheN.Add(1) > DefaultCacheTokens {
			v.cache.Clear() // bounded: start over rather than grow
			v.cacheN.Store(1)
		}
		v.cache.Store(ck, cachedToken{token: out.AccessToken, expires: expires})
	}
	return out.AccessToken, nil
}

// AssertionType is the typ header of an Identity Assertion JWT
// Authorization Grant (draft-ietf-oauth-identity-assertion-authz-grant §3.1).
const AssertionType = "oauth-id-jag+jwt"

// Assertion is an Identity Assertion JWT Authorization Grant (ID-JAG)
// that checked out: the user (Subject) the provider (Issuer) vouches for,
// the client it was issued to and the resource it is for (MCP
// Enterprise-Managed Authorization §4.3,
// https://github.com/modelcontextprotocol/ext-auth/blob/main/specification/draft/enterprise-managed-authorization.mdx).
type Assertion struct {
	Issuer, Subject, ClientID, Resource, ID, Scope string // ID: its jti
	Expiry                                         time.Time
}

// VerifyAssertion checks an ID-JAG presented to restmcp's authorization
// server (RFC 7523 §3 and EMA §5.1): its typ header is oauth-id-jag+jwt,
// it is signed by a key of this provider (as Verify), its iss is the
// provider, its aud the authorization server (Config.Audience), exp and
// iat are present and exp has not passed (skew allowed), and it names a
// sub, a client_id, a resource and a jti. The error is a *TokenError
// naming what was wrong, never the assertion, or, for a Deferred provider
// whose discovery document or keys cannot be read now, Discover's error.
// Unlike Verify it keeps no cache: an assertion is used once (the caller
// records its jti).
func (v *Verifier) VerifyAssertion(ctx context.Context, assertion string) (*Assertion, error) {
	tok, err := jwt.ParseSigned(assertion, v.algs)
	if err != nil {
		if strings.Contains(err.Error(), "unexpected signature algorithm") {
			return nil, refuse("the assertion is signed with an algorithm this server does not accept (accepted: %s)", strings.Join(v.cfg.Algorithms, ", "))
		}
		return nil, refuse("the assertion is not a signed JWT")
	}
	if typ, _ := tok.Headers[0].ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(typ, AssertionType) {
		return nil, refuse("the assertion's typ is %q, not %q (an identity assertion authorization grant)", clip(typ), AssertionType)
	}
	if err := v.Discover(ctx); err != nil {
		return nil, err // not a refusal of the assertion: its provider cannot be read
	}
	kid := tok.Headers[0].KeyID
	key, ok := v.signingKey(ctx, kid)
	if !ok {
		return nil, refuse("the assertion's signing key %q is not among the keys of %s", clip(kid), v.cfg.Issuer)
	}
	var std jwt.Claims
	var more struct {
		ClientID string `json:"client_id"`
		Resource string `json:"resource"`
		Scope    string `json:"scope"`
	}
	if err := tok.Claims(key.Key, &std, &more); err != nil {
		return nil, refuse("the assertion's signature does not verify with the key %q of %s", clip(kid), v.cfg.Issuer)
	}
	if err := v.checkClaims(std, "the assertion", "this authorization server"); err != nil {
		return nil, err
	}
	switch {
	case std.IssuedAt == nil:
		return nil, refuse("the assertion has no issue time (iat)")
	case v.now().Add(v.cfg.Skew).Before(std.IssuedAt.Time()):
		return nil, refuse("the assertion was issued in the future (%s)", std.IssuedAt.Time().UTC().Format(time.RFC3339))
	case std.Subject == "":
		return nil, refuse("the assertion names no user (sub)")
	case more.ClientID == "":
		return nil, refuse("the assertion names no client (client_id)")
	case more.Resource == "":
		return nil, refuse("the assertion names no resource")
	case std.ID == "":
		return nil, refuse("the assertion has no id (jti)")
	}
	return &Assertion{Issuer: std.Issuer, Subject: std.Subject, ClientID: more.ClientID, Resource: more.Resource, ID: std.ID,
		Scope: more.Scope, Expiry: std.Expiry.Time()}, nil
}

// boundedTransport caps the bodies go-oidc reads (discovery) at
// DefaultMaxBytes.
type boundedTransport struct{ next http.RoundTripper }

func (t boundedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	next := t.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(r)
	if err == nil {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, DefaultMaxBytes), resp.Body}
	}
	return resp, err
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
