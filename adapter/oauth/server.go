package oauth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/restmcp/restmcp/internal/clip"
	"github.com/restmcp/restmcp/internal/loopback"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// The authorization server's endpoints, at the root of the issuer.
const (
	PathAuthorize = "/oauth/authorize" // RFC 6749 §3.1, the sign-in page
	PathToken     = "/oauth/token"     // RFC 6749 §3.2
	PathRegister  = "/oauth/register"  // RFC 7591 §3
	PathRevoke    = "/oauth/revoke"    // RFC 7009 §2
	// PathResourceMetadata is the Protected Resource Metadata (RFC 9728
	// §3), served here and at this path followed by the MCP path.
	PathResourceMetadata = "/.well-known/oauth-protected-resource"
	// PathServerMetadata is the Authorization Server Metadata (RFC 8414
	// §3); PathOpenIDConfiguration serves the same document, for clients
	// that look for it where OpenID Connect Discovery 1.0 §4 puts it.
	PathServerMetadata      = "/.well-known/oauth-authorization-server"
	PathOpenIDConfiguration = "/.well-known/openid-configuration"
)

// Scope is the one scope restmcp grants: use of the MCP endpoint with the
// signed-in API key. A request for other scopes is granted this one, and
// the token response says so (RFC 6749 §3.3).
const Scope = "mcp"

// Defaults for the zero values of Options.
const (
	DefaultAccessTokenTTL  = time.Hour
	DefaultRefreshTokenTTL = 30 * 24 * time.Hour
	DefaultCodeTTL         = time.Minute
	DefaultClientTTL       = 24 * time.Hour
	DefaultTokenCacheTTL   = 10 * time.Second
	DefaultMaxClients      = 10000
	DefaultRegisterLimit   = 60
	DefaultSignInLimit     = 10
)

// Options configures [New]. A zero field is its documented default.
type Options struct {
	// Issuer is the authorization server's identifier and the origin of
	// every URL in the metadata: https://host[:port], no path, no query
	// (RFC 8414 §2). http is accepted only for a loopback host.
	Issuer string
	// ResourcePath is the path of the MCP endpoint these tokens are for,
	// e.g. "/oauth/mcp"; the protected resource is Issuer+ResourcePath.
	ResourcePath string
	// KeyPath, when set, is the API-key MCP endpoint's path (e.g. "/mcp"):
	// a second protected resource, Issuer+KeyPath, whose 401s lead
	// OAuth clients to the same sign-in (its metadata is served at the
	// well-known path followed by KeyPath). Tokens of either resource
	// work on both: both are this deployment.
	KeyPath string
	// KeyPathAuthorizationServers are authorization servers whose tokens
	// KeyPath's endpoint takes too (the vendor's own identity provider, in
	// resource-server mode), named before this one in its metadata.
	KeyPathAuthorizationServers []string
	// ResourceName names the API on the sign-in page and in the resource
	// metadata (the document's title). Empty: "this API".
	ResourceName string
	// KeysURL is where users get an API key, linked from the sign-in
	// page. Empty: no link.
	KeysURL string

	// Store holds clients and grants. Required.
	Store Store
	// EncryptionKey (32 bytes) seals API keys at rest (AES-256-GCM) and
	// signs the sign-in form's CSRF token. Every replica sharing a Store
	// needs the same key. Required.
	EncryptionKey []byte
	// CheckKey decides at sign-in and at each refresh whether an API key
	// is usable: nil, or metering.ErrUnknownKey / metering.ErrRevokedKey
	// for a key to refuse; any other error means it cannot tell now. Nil:
	// every key is accepted (the upstream API judges it on each call).
	CheckKey func(ctx context.Context, key string) error

	// RedirectURIs lists the https redirect URIs a client may register:
	// exact URIs, and patterns https://host/path/* that allow one path
	// segment after that host and path (never a bare host). Loopback http
	// URIs (http://127.0.0.1:<port>/…, http://[::1]…, http://localhost…)
	// are always allowed, and so are a Client ID Metadata Document's https
	// redirect URIs on the document's own origin. Nil:
	// DefaultRedirectURIs.
	RedirectURIs []string
	// RedirectSchemes are the private-use URI schemes without a dot that
	// native apps may register (RFC 8252 §7.1); a scheme with a dot is
	// always accepted. Nil: DefaultRedirectSchemes.
	RedirectSchemes []string
	// ClientTTL is how long a registered client lives unused; each token
	// issued or refreshed for it extends it to RefreshTokenTTL. Zero:
	// DefaultClientTTL (24 h).
	ClientTTL time.Duration
	// MaxClients caps the registered clients kept; past it, the ones
	// unused longest are dropped. Zero: DefaultMaxClients (10,000).
	MaxClients int

	// AccessTokenTTL and RefreshTokenTTL are the token lifetimes; a
	// refresh rotates both. Zero: DefaultAccessTokenTTL (1 h),
	// DefaultRefreshTokenTTL (30 days).
	AccessTokenTTL  time.Duration
	RefreshTokenTTL time.Duration
	// TokenCacheTTL is how long a replica remembers a resolved access
	// token, saving the Store round trip on later calls; a revocation on
	// another replica takes effect there within it. Zero:
	// DefaultTokenCacheTTL (10 s); negative: no cache.
	TokenCacheTTL time.Duration

	// MetadataClient fetches Client ID Metadata Documents. Nil: a client
	// that refuses redirects and private, loopback and link-local
	// addresses, with a 5 s timeout. Tests set their own.
	MetadataClient *http.Client
	// RegisterLimit caps registrations (and Client ID Metadata Document
	// fetches) per address group (an IPv6 address by its /64) per minute;
	// SignInLimit caps sign-in attempts (POST /oauth/authorize), the guard
	// against guessing API keys. Zero: DefaultRegisterLimit (60) and
	// DefaultSignInLimit (10); negative: no limit. The token endpoint is
	// not limited per address: hosted connectors call it from a few
	// shared addresses.
	RegisterLimit int
	SignInLimit   int

	// EnterpriseIdPs are the enterprise identity providers whose identity
	// assertions (ID-JAG) the token endpoint takes as JWT bearer grants
	// (Enterprise-Managed Authorization, assertion.go). None: the grant is
	// not offered.
	EnterpriseIdPs []EnterpriseIdP

	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives sign-in, grant and revocation events (key_id,
	// client_id; never a key or token). Nil: discard.
	Logger *slog.Logger
}

// Server is restmcp's OAuth 2.1 authorization server: the sign-in page
// that exchanges a user's API key for a grant, and the token, registration
// and revocation endpoints around it. Its access tokens stand for the API
// key; ResolveToken turns one back into the key.
type Server struct {
	opts      Options
	issuer    string
	resource  string          // Issuer + ResourcePath
	resources map[string]bool // every resource of this deployment (ResourcePath, KeyPath)
	seal      *sealer
	now       func() time.Time
	logger    *slog.Logger
	redirects *redirectPolicy

	metadata *metadataFetcher
	register *addressLimiter
	signIn   *addressLimiter

	cacheMu sync.Mutex
	cache   map[string]cachedToken // by token hash
}

// Identity is who an access token stands for.
type Identity struct {
	Key      string // the API key; never logged
	KeyID    string
	GrantID  string
	ClientID string
}

type cachedToken struct {
	id      Identity
	expires time.Time // the token's own expiry
	until   time.Time // end of caching
}

// TokenError is an access token that does not authorize the request (RFC
// 6750 §3.1 invalid_token): unknown, expired or revoked.
type TokenError struct{ Reason string }

func (e *TokenError) Error() string { return "invalid access token: " + e.Reason }

// New checks opts and returns the Server. It returns one error listing
// every problem.
func New(opts Options) (*Server, error) {
	var errs []error
	u, err := url.Parse(opts.Issuer)
	switch {
	case opts.Issuer == "":
		errs = append(errs, errors.New("Issuer is required"))
	case err != nil || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		errs = append(errs, fmt.Errorf("Issuer %q must be scheme://host[:port] without path or query", opts.Issuer))
	case u.Scheme == "http" && !loopback.Host(u.Hostname()):
		errs = append(errs, fmt.Errorf("Issuer %q must be https: OAuth sends codes and tokens in the clear over http (http is allowed on loopback only)", opts.Issuer))
	case u.Scheme != "https" && u.Scheme != "http":
		errs = append(errs, fmt.Errorf("Issuer %q must be an https URL", opts.Issuer))
	}
	if !strings.HasPrefix(opts.ResourcePath, "/") {
		errs = append(errs, fmt.Errorf("ResourcePath %q must start with /", opts.ResourcePath))
	}
	if opts.KeyPath != "" && (!strings.HasPrefix(opts.KeyPath, "/") || opts.KeyPath == opts.ResourcePath) {
		errs = append(errs, fmt.Errorf("KeyPath %q must start with / and differ from ResourcePath", opts.KeyPath))
	}
	if opts.Store == nil {
		errs = append(errs, errors.New("Store is required"))
	}
	seal, err := newSealer(opts.EncryptionKey)
	if err != nil {
		errs = append(errs, fmt.Errorf("EncryptionKey: %w", err))
	}
	if opts.RedirectURIs == nil {
		opts.RedirectURIs = DefaultRedirectURIs
	}
	if opts.RedirectSchemes == nil {
		opts.RedirectSchemes = DefaultRedirectSchemes
	}
	redirects, err := newRedirectPolicy(opts.RedirectURIs, opts.RedirectSchemes)
	if err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	opts.AccessTokenTTL = cmp.Or(opts.AccessTokenTTL, DefaultAccessTokenTTL)
	opts.RefreshTokenTTL = cmp.Or(opts.RefreshTokenTTL, DefaultRefreshTokenTTL)
	opts.TokenCacheTTL = cmp.Or(opts.TokenCacheTTL, DefaultTokenCacheTTL)
	opts.RegisterLimit = cmp.Or(opts.RegisterLimit, DefaultRegisterLimit)
	opts.SignInLimit = cmp.Or(opts.SignInLimit, DefaultSignInLimit)
	opts.ClientTTL = cmp.Or(opts.ClientTTL, DefaultClientTTL)
	opts.MaxClients = cmp.Or(opts.MaxClients, DefaultMaxClients)
	if opts.ResourceName == "" {
		opts.ResourceName = "this API"
	}
	s := &Server{
		opts:      opts,
		issuer:    strings.TrimSuffix(opts.Issuer, "/"),
		seal:      seal,
		now:       opts.Now,
		logger:    opts.Logger,
		redirects: redirects,
		cache:     map[string]cachedToken{},
	}
	s.resource = s.issuer + opts.ResourcePath
	s.resources = map[string]bool{s.resource: true}
	if opts.KeyPath != "" {
		s.resources[s.issuer+opts.KeyPath] = true
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.logger == nil {
		s.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s.metadata = newMetadataFetcher(opts.MetadataClient, s.now, s.logger)
	s.register = newAddressLimiter(opts.RegisterLimit, s.now)
	s.signIn = newAddressLimiter(opts.SignInLimit, s.now)
	return s, nil
}

// Resource is the protected resource's URL: Issuer + ResourcePath, the
// URL to paste into Claude or ChatGPT.
func (s *Server) Resource() string { return s.resource }

// ResourceMetadataURL is where the resource's metadata is served (RFC 9728
// §3.1: the well-known path with the resource's path appended).
func (s *Server) ResourceMetadataURL() string {
	return s.issuer + PathResourceMetadata + s.opts.ResourcePath
}

// Challenge is the WWW-Authenticate value of a 401 from the OAuth MCP
// endpoint (RFC 6750 §3, RFC 9728 §5.1): the resource metadata URL and the
// scope, and with errCode ("invalid_token") the error and its description.
func (s *Server) Challenge(errCode, description string) string {
	return s.ChallengeFor(s.opts.ResourcePath, errCode, description)
}

// ChallengeFor is Challenge for the resource at path (ResourcePath or
// KeyPath): its metadata URL is the well-known path followed by path.
func (s *Server) ChallengeFor(path, errCode, description string) string {
	v := `Bearer resource_metadata="` + s.issuer + PathResourceMetadata + path + `", scope="` + Scope + `"`
	if errCode != "" {
		v += `, error="` + errCode + `", error_description="` + strings.ReplaceAll(description, `"`, "'") + `"`
	}
	return v
}

// Mount adds the authorization server's routes to r: the metadata
// documents, /oauth/register, /oauth/authorize (GET shows the sign-in
// page, POST signs in), /oauth/token and /oauth/revoke.
func (s *Server) Mount(r gin.IRoutes) {
	r.GET(PathResourceMetadata, s.cors, s.resourceMetadata(s.resource))
	r.GET(PathResourceMetadata+s.opts.ResourcePath, s.cors, s.resourceMetadata(s.resource))
	// (The OAuth endpoint takes this server's tokens only.)
	paths := []string{PathResourceMetadata, PathResourceMetadata + s.opts.ResourcePath, PathServerMetadata, PathOpenIDConfiguration, PathRegister, PathToken, PathRevoke}
	if s.opts.KeyPath != "" {
		r.GET(PathResourceMetadata+s.opts.KeyPath, s.cors, s.resourceMetadata(s.issuer+s.opts.KeyPath, s.opts.KeyPathAuthorizationServers...))
		paths = append(paths, PathResourceMetadata+s.opts.KeyPath)
	}
	r.GET(PathRegister+"/:client_id", s.cors, s.readClient)
	r.GET(PathServerMetadata, s.cors, s.serverMetadata)
	r.GET(PathOpenIDConfiguration, s.cors, s.serverMetadata)
	r.GET(PathAuthorize, s.authorizePage)
	r.POST(PathAuthorize, s.authorizeSubmit)
	r.POST(PathRegister, s.cors, s.registerClient)
	r.POST(PathToken, s.cors, s.token)
	r.POST(PathRevoke, s.cors, s.revoke)
	for _, p := range paths {
		r.OPTIONS(p, s.cors)
	}
	r.OPTIONS(PathRegister+"/:client_id", s.cors)
}

// cors lets browser-based MCP clients (the Inspector's web UI) read the
// metadata and call the token endpoints: they carry no cookies and no
// ambient authority, so any origin may. A preflight is answered here.
func (s *Server) cors(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	if c.Request.Method == http.MethodOptions {
		h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, MCP-Protocol-Version")
		h.Set("Access-Control-Max-Age", "86400")
		c.AbortWithStatus(http.StatusNoContent)
		return
	}
	c.Next()
}

// resourceMetadata serves the Protected Resource Metadata (RFC 9728 §2)
// of resource: exactly the URL a connector is given (O9; RFC 9728 §3.3
// has clients compare it with that URL).
func (s *Server) resourceMetadata(resource string, others ...string) gin.HandlerFunc {
	servers := append(slices.Clone(others), s.issuer)
	return func(c *gin.Context) {
		c.Header("Cache-Control", "public, max-age=3600")
		c.JSON(http.StatusOK, &oauthex.ProtectedResourceMetadata{
			Resource:               resource,
			AuthorizationServers:   servers,
			ScopesSupported:        []string{Scope},
			BearerMethodsSupported: []string{"header"},
			ResourceName:           s.opts.ResourceName,
		})
	}
}

// serverMetadata is the Authorization Server Metadata (RFC 8414 §2), with
// the MCP authorization extensions: RFC 9207's iss parameter and Client ID
// Metadata Documents.
type serverMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint"`
	TokenEndpoint                              string   `json:"token_endpoint"`
	RegistrationEndpoint                       string   `json:"registration_endpoint"`
	RevocationEndpoint                         string   `json:"revocation_endpoint"`
	ScopesSupported                            []string `json:"scopes_supported"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	ResponseModesSupported                     []string `json:"response_modes_supported"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported     []string `json:"revocation_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported"`
}

func (s *Server) serverMetadata(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=3600")
	c.JSON(http.StatusOK, &serverMetadata{
		Issuer:                                     s.issuer,
		AuthorizationEndpoint:                      s.issuer + PathAuthorize,
		TokenEndpoint:                              s.issuer + PathToken,
		RegistrationEndpoint:                       s.issuer + PathRegister,
		RevocationEndpoint:                         s.issuer + PathRevoke,
		ScopesSupported:                            []string{Scope},
		ResponseTypesSupported:                     []string{"code"},
		ResponseModesSupported:                     []string{"query"},
		GrantTypesSupported:                        s.grantTypes(),
		TokenEndpointAuthMethodsSupported:          []string{"none"},
		RevocationEndpointAuthMethodsSupported:     []string{"none"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		AuthorizationResponseIssParameterSupported: true,
		ClientIDMetadataDocumentSupported:          true,
	})
}

// grantTypes are the grants the token endpoint takes.
func (s *Server) grantTypes() []string {
	if len(s.opts.EnterpriseIdPs) > 0 {
		return []string{"authorization_code", "refresh_token", GrantTypeJWTBearer}
	}
	return []string{"authorization_code", "refresh_token"}
}

// ResolveToken returns the identity an access token stands for. A token
// that is unknown, expired, revoked or of another shape gives a
// *TokenError; any other error means the Store could not answer. A
// resolved token is remembered for TokenCacheTTL (never past its expiry).
func (s *Server) ResolveToken(ctx context.Context, token string) (Identity, error) {
	now := s.now()
	hash := hashToken(token)
	if s.opts.TokenCacheTTL > 0 {
		s.cacheMu.Lock()
		e, ok := s.cache[hash]
		s.cacheMu.Unlock()
		if ok && now.Before(e.until) && now.Before(e.expires) {
			return e.id, nil
		}
	}
	id, ok := parseSecret(AccessTokenPrefix, token)
	if !ok {
		return Identity{}, &TokenError{Reason: "not an access token issued by this server"}
	}
	g, err := s.opts.Store.Grant(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return Identity{}, &TokenError{Reason: "unknown or revoked; sign in again"}
	}
	if err != nil {
		return Identity{}, fmt.Errorf("reading grant: %w", err)
	}
	if !g.Active || !hashEqual(g.AccessHash, hash) {
		return Identity{}, &TokenError{Reason: "unknown or revoked; sign in again"}
	}
	if !s.resources[g.Resource] {
		return Identity{}, &TokenError{Reason: "issued for another resource (" + clip.String(g.Resource, 200) + "); sign in to this one"}
	}
	if !now.Before(g.AccessExpires) {
		return Identity{}, &TokenError{Reason: "expired; refresh it or sign in again"}
	}
	key, err := s.seal.open(g.ID, g.SealedKey)
	if err != nil {
		return Identity{}, fmt.Errorf("grant %s: %w", g.ID, err)
	}
	ident := Identity{Key: key, KeyID: g.KeyID, GrantID: g.ID, ClientID: g.ClientID}
	if s.opts.TokenCacheTTL > 0 {
		s.cacheMu.Lock()
		if len(s.cache) >= maxCachedTokens {
			clear(s.cache)
		}
		s.cache[hash] = cachedToken{id: ident, expires: g.AccessExpires, until: now.Add(s.opts.TokenCacheTTL)}
		s.cacheMu.Unlock()
	}
	return ident, nil
}

// maxCachedTokens bounds the token cache; when full it is emptied.
const maxCachedTokens = 10000

// forget drops every cached token of grant id (on this replica).
func (s *Server) forget(grantID string) {
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	for h, e := range s.cache {
		if e.id.GrantID == grantID {
			delete(s.cache, h)
		}
	}
}

// tokenResponse is a successful token response (RFC 6749 §5.1).
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// oauthError writes an error response of the token, registration or
// revocation endpoint (RFC 6749 §5.2, RFC 7591 §3.2.2).
func oauthError(c *gin.Context, status int, code, description string) {
	c.Header("Cache-Control", "no-store")
	c.AbortWithStatusJSON(status, gin.H{"error": code, "error_description": description})
}

// clientForm reads the form of a token or revocation request and its
// public client's id (publicClientID), answering 400 invalid_request or
// 401 invalid_client itself when either is wrong (ok false).
func clientForm(c *gin.Context) (f url.Values, ok bool) {
	if err := parseForm(c); err != nil {
		oauthError(c, http.StatusBadRequest, "invalid_request", err.Error())
		return nil, false
	}
	f = c.Request.PostForm
	return f, publicClientID(c, f)
}

// token is the token endpoint (RFC 6749 §3.2): the authorization_code
// grant with PKCE (§4.1.3, RFC 7636 §4.5) and the refresh_token grant
// (§6), whose refresh tokens rotate (RFC 9700 §4.14.2).
func (s *Server) token(c *gin.Context) {
	f, ok := clientForm(c)
	if !ok {
		return
	}
	switch gt := f.Get("grant_type"); gt {
	case "authorization_code":
		s.exchangeCode(c, f)
	case "refresh_token":
		s.refresh(c, f)
	case GrantTypeJWTBearer:
		if len(s.opts.EnterpriseIdPs) == 0 {
			oauthError(c, http.StatusBadRequest, "unsupported_grant_type", "this server accepts no identity assertions (no enterprise identity provider is configured); use authorization_code or refresh_token")
			return
		}
		s.assertionGrant(c, f)
	case "":
		oauthError(c, http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		oauthError(c, http.StatusBadRequest, "unsupported_grant_type", "grant_type "+strconv.Quote(clip.String(gt, 40))+" is not supported; use authorization_code or refresh_token")
	}
}

// publicClientID settles the client_id of a token or revocation request in
// f. Clients are public, but one that registered asking for
// client_secret_basic or client_secret_post may still authenticate so
// (O1): HTTP Basic with the client id as the user (RFC 6749 §2.3.1) names
// the client, and a client_secret is ignored (none was issued). Another
// Authorization scheme, or a Basic user that is not the body's client_id,
// is invalid_client (401).
func publicClientID(c *gin.Context, f url.Values) bool {
	h := c.GetHeader("Authorization")
	if h == "" {
		return true
	}
	user, _, ok := c.Request.BasicAuth()
	if ok {
		user, err := url.QueryUnescape(user) // RFC 6749 §2.3.1: form-encoded
		if err == nil && user != "" && (f.Get("client_id") == "" || f.Get("client_id") == user) {
			f.Set("client_id", user)
			return true
		}
	}
	c.Header("WWW-Authenticate", `Basic realm="restmcp oauth"`)
	oauthError(c, http.StatusUnauthorized, "invalid_client", "clients of this server are public (token_endpoint_auth_method none): send client_id in the body, or as the user of HTTP Basic, and no other Authorization")
	return false
}

// parseForm parses an application/x-www-form-urlencoded body of at most
// 64 KiB, refusing a parameter given twice (RFC 6749 §3.1, §3.2:
// "Request and response parameters MUST NOT be included more than once").
func parseForm(c *gin.Context) error {
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, 64<<10)
	if ct := c.ContentType(); ct != "application/x-www-form-urlencoded" {
		return fmt.Errorf("Content-Type must be application/x-www-form-urlencoded, got %q", clip.String(ct, 60))
	}
	if err := c.Request.ParseForm(); err != nil {
		return fmt.Errorf("reading the form: %w", err)
	}
	for k, v := range c.Request.PostForm {
		if len(v) > 1 {
			return fmt.Errorf("parameter %q is given %d times", clip.String(k, 40), len(v))
		}
	}
	return nil
}

func (s *Server) exchangeCode(c *gin.Context, f url.Values) {
	ctx := c.Request.Context()
	code, clientID, verifier := f.Get("code"), f.Get("client_id"), f.Get("code_verifier")
	if !required(c, f, "code", "client_id", "code_verifier") {
		return
	}
	if !validVerifier(verifier) {
		oauthError(c, http.StatusBadRequest, "invalid_request", "code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 §4.1)")
		return
	}
	id, ok := parseSecret(CodePrefix, code)
	if !ok {
		oauthError(c, http.StatusBadRequest, "invalid_grant", "the authorization code is not one this server issued")
		return
	}
	g, err := s.opts.Store.Grant(ctx, id)
	if errors.Is(err, ErrNotFound) {
		oauthError(c, http.StatusBadRequest, "invalid_grant", "the authorization code is unknown or expired")
		return
	}
	if err != nil {
		s.storeFailed(c, "reading grant", err)
		return
	}
	codeHash := hashToken(code)
	switch {
	case !hashEqual(g.CodeHash, codeHash):
		oauthError(c, http.StatusBadRequest, "invalid_grant", "the authorization code is unknown or expired")
		return
	case g.Active:
		s.revokeReused(c, g.ID, "authorization code")
		return
	case g.ClientID != clientID:
		oauthError(c, http.StatusBadRequest, "invalid_grant", "the authorization code was issued to another client")
		return
	case f.Get("redirect_uri") != g.RedirectURI:
		oauthError(c, http.StatusBadRequest, "invalid_grant", "redirect_uri must be the one of the authorization request")
		return
	case !hashEqual(s256(verifier), g.CodeChallenge):
		oauthError(c, http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge (PKCE S256)")
		return
	}
	if r := f.Get("resource"); r != "" && strings.TrimSuffix(r, "/") != g.Resource {
		oauthError(c, http.StatusBadRequest, "invalid_target", "resource "+strconv.Quote(clip.String(r, 200))+" is not the one this code was issued for, "+g.Resource)
		return
	}
	if !s.resources[g.Resource] {
		oauthError(c, http.StatusBadRequest, "invalid_grant", "the authorization code was issued for another resource, "+clip.String(g.Resource, 200))
		return
	}
	t, access, refresh := s.newTokens(g.ID)
	g, err = s.opts.Store.Redeem(ctx, id, codeHash, t)
	if !s.grantWritten(c, err, id, "authorization code", "the authorization code is unknown or expired", "redeeming code") {
		return
	}
	s.touchClient(ctx, g.ClientID)
	s.logger.Info("oauth tokens issued", "client_id", g.ClientID, "key_id", g.KeyID, "grant_id", g.ID, "resource", g.Resource)
	s.writeTokens(c, access, refresh)
}

// grantWritten answers the error of redeeming a code or rotating a
// refresh token (what names the credential) and reports whether err is
// nil: a credential used twice revokes the grant (RFC 6749 §4.1.2 for
// codes, RFC 9700 §4.14 for refresh tokens), an
// unknown one is invalid_grant with the message unknown, a store failure
// (doing says what failed) 503.
func (s *Server) grantWritten(c *gin.Context, err error, id, what, unknown, doing string) bool {
	switch {
	case errors.Is(err, ErrReused):
		s.revokeReused(c, id, what)
	case errors.Is(err, ErrNotFound):
		oauthError(c, http.StatusBadRequest, "invalid_grant", unknown)
	case err != nil:
		s.storeFailed(c, doing, err)
	default:
		return true
	}
	return false
}

// required answers 400 invalid_request naming the first of names that f
// lacks (RFC 6749 §5.2) and reports false, or reports true.
func required(c *gin.Context, f url.Values, names ...string) bool {
	for _, n := range names {
		if f.Get(n) == "" {
			msg := n + " is required"
			if n == "code_verifier" {
				msg += " (PKCE, RFC 7636)"
			}
			oauthError(c, http.StatusBadRequest, "invalid_request", msg)
			return false
		}
	}
	return true
}

func (s *Server) refresh(c *gin.Context, f url.Values) {
	ctx := c.Request.Context()
	rt, clientID := f.Get("refresh_token"), f.Get("client_id")
	if !required(c, f, "refresh_token", "client_id") {
		return
	}
	id, ok := parseSecret(RefreshTokenPrefix, rt)
	if !ok {
		oauthError(c, http.StatusBadRequest, "invalid_grant", "the refresh token is not one this server issued")
		return
	}
	g, err := s.opts.Store.Grant(ctx, id)
	if errors.Is(err, ErrNotFound) || err == nil && !g.Active {
		oauthError(c, http.StatusBadRequest, "invalid_grant", "the refresh token is unknown, expired or revoked; sign in again")
		return
	}
	if err != nil {
		s.storeFailed(c, "reading grant", err)
		return
	}
	if g.ClientID != clientID {
		oauthError(c, http.StatusBadRequest, "invalid_grant", "the refresh token was issued to another client")
		return
	}
	if !s.resources[g.Resource] {
		oauthError(c, http.StatusBadRequest, "invalid_grant", "the refresh token was issued for another resource, "+clip.String(g.Resource, 200))
		return
	}
	if !hashEqual(g.RefreshHash, hashToken(rt)) {
		s.revokeReused(c, id, "refresh token")
		return
	}
	if s.opts.CheckKey != nil {
		key, err := s.seal.open(g.ID, g.SealedKey)
		if err != nil {
			s.storeFailed(c, "opening the grant's key", err)
			return
		}
		switch err := s.opts.CheckKey(ctx, key); {
		case isKeyRefusal(err):
			_ = s.opts.Store.Delete(ctx, id)
			s.forget(id)
			s.logger.Info("oauth grant revoked: its API key is no longer accepted", "client_id", g.ClientID, "key_id", g.KeyID, "grant_id", id)
			oauthError(c, http.StatusBadRequest, "invalid_grant", "the API key behind this grant is no longer accepted; sign in again with a valid key")
			return
		case err != nil:
			s.storeFailed(c, "checking the API key", err)
			return
		}
	}
	t, access, refresh := s.newTokens(id)
	g, err = s.opts.Store.Rotate(ctx, id, hashToken(rt), t)
	if !s.grantWritten(c, err, id, "refresh token", "the refresh token is unknown, expired or revoked; sign in again", "rotating tokens") {
		return
	}
	s.forget(id) // the previous access token is dead
	s.touchClient(ctx, g.ClientID)
	s.logger.Info("oauth tokens refreshed", "client_id", g.ClientID, "key_id", g.KeyID, "grant_id", id)
	s.writeTokens(c, access, refresh)
}

// revokeReused answers a reused code or refresh token: the grant is
// deleted (a copy of the credential is in someone else's hands).
func (s *Server) revokeReused(c *gin.Context, grantID, what string) {
	if err := s.opts.Store.Delete(c.Request.Context(), grantID); err != nil {
		s.storeFailed(c, "revoking grant", err)
		return
	}
	s.forget(grantID)
	s.logger.Warn("oauth grant revoked: "+what+" reused", "grant_id", grantID)
	oauthError(c, http.StatusBadRequest, "invalid_grant", "the "+what+" was already used; every token issued with it is revoked; sign in again")
}

func (s *Server) storeFailed(c *gin.Context, doing string, err error) {
	s.logger.Error("oauth store failed", "doing", doing, "error", err.Error())
	c.Header("Retry-After", "5")
	oauthError(c, http.StatusServiceUnavailable, "temporarily_unavailable", "the authorization server cannot reach its store; retry in 5 seconds")
}

// newTokens makes a fresh access and refresh token for grant id.
func (s *Server) newTokens(grantID string) (t Tokens, access, refresh string) {
	access, t.AccessHash = newSecret(AccessTokenPrefix, grantID)
	refresh, t.RefreshHash = newSecret(RefreshTokenPrefix, grantID)
	t.AccessExpires = s.now().Add(s.opts.AccessTokenTTL)
	t.TTL = s.opts.RefreshTokenTTL
	return t, access, refresh
}

func (s *Server) writeTokens(c *gin.Context, access, refresh string) {
	c.Header("Cache-Control", "no-store")
	c.Header("Pragma", "no-cache")
	c.JSON(http.StatusOK, tokenResponse{
		AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(s.opts.AccessTokenTTL / time.Second),
		RefreshToken: refresh, Scope: Scope,
	})
}

// revoke is the revocation endpoint (RFC 7009 §2): an access or refresh
// token ends its whole grant. Per §2.2 the answer is 200 whether or not the
// token was valid.
func (s *Server) revoke(c *gin.Context) {
	f, ok := clientForm(c)
	if !ok {
		return
	}
	tok := f.Get("token")
	if tok == "" {
		oauthError(c, http.StatusBadRequest, "invalid_request", "token is required")
		return
	}
	id, ok := parseSecret(AccessTokenPrefix, tok)
	if !ok {
		id, ok = parseSecret(RefreshTokenPrefix, tok)
	}
	if !ok {
		c.Status(http.StatusOK)
		return
	}
	ctx := c.Request.Context()
	g, err := s.opts.Store.Grant(ctx, id)
	if errors.Is(err, ErrNotFound) {
		c.Status(http.StatusOK)
		return
	}
	if err != nil {
		s.storeFailed(c, "reading grant", err)
		return
	}
	h := hashToken(tok)
	if !hashEqual(g.AccessHash, h) && !hashEqual(g.RefreshHash, h) {
		c.Status(http.StatusOK)
		return
	}
	if cid := f.Get("client_id"); cid != "" && cid != g.ClientID {
		oauthError(c, http.StatusBadRequest, "invalid_client", "the token was issued to another client")
		return
	}
	if err := s.opts.Store.Delete(ctx, id); err != nil {
		s.storeFailed(c, "revoking grant", err)
		return
	}
	s.forget(id)
	s.logger.Info("oauth grant revoked by its client", "client_id", g.ClientID, "key_id", g.KeyID, "grant_id", id)
	c.Status(http.StatusOK)
}

// resourceOf returns the protected resource r names (RFC 8707 §2), with
// or without a trailing slash: one of this deployment's.
func (s *Server) resourceOf(r string) (string, bool) {
	r = strings.TrimSuffix(r, "/")
	return r, s.resources[r]
}

// touchClient keeps a registered client that is in use alive as long as
// its refresh tokens (O6); a client id that is a metadata document URL has
// nothing stored.
func (s *Server) touchClient(ctx context.Context, id string) {
	if strings.HasPrefix(id, "https://") {
		return
	}
	if err := s.opts.Store.TouchClient(ctx, id, s.opts.RefreshTokenTTL); err != nil {
		s.logger.Warn("oauth store failed", "doing", "extending a client's life", "client_id", id, "error", err.Error())
	}
}

// ResourcePath is the OAuth MCP endpoint's path (Options.ResourcePath).
func (s *Server) ResourcePath() string { return s.opts.ResourcePath }
