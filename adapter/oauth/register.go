package oauth

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/restmcp/restmcp/internal/clip"
	"github.com/restmcp/restmcp/internal/loopback"

	"github.com/gin-gonic/gin"
	"golang.org/x/oauth2"
	"golang.org/x/time/rate"

	"github.com/restmcp/restmcp/metering"
)

// registrationRequest is the client metadata of a registration request
// (RFC 7591 §2) that restmcp reads; other members are ignored.
type registrationRequest struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name"`
	ClientURI               string   `json:"client_uri"`
	Scope                   string   `json:"scope"`
}

// registrationResponse is the client information response (RFC 7591
// §3.2.1).
type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name,omitempty"`
	ClientURI               string   `json:"client_uri,omitempty"`
	Scope                   string   `json:"scope"`
}

// maxClientMetadataBytes caps a registration request body and a fetched
// Client ID Metadata Document.
const maxClientMetadataBytes = 16 << 10

// registerClient is Dynamic Client Registration (RFC 7591 §3): public
// clients only, redirect URIs checked by checkRedirectURI, at most
// RegisterLimit registrations per client address per minute.
func (s *Server) registerClient(c *gin.Context) {
	if !s.register.allow(c.ClientIP()) {
		c.Header("Retry-After", "60")
		oauthError(c, http.StatusTooManyRequests, "too_many_requests", "too many client registrations from this address; retry in a minute")
		return
	}
	if ct := c.ContentType(); ct != "application/json" {
		oauthError(c, http.StatusBadRequest, "invalid_client_metadata", "Content-Type must be application/json, got "+clip.String(ct, 60))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, maxClientMetadataBytes))
	if err != nil {
		oauthError(c, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("reading the request: %v (at most %d bytes)", err, maxClientMetadataBytes))
		return
	}
	var req registrationRequest
	if err := json.Unmarshal(body, &req); err != nil {
		oauthError(c, http.StatusBadRequest, "invalid_client_metadata", "the body is not client metadata JSON: "+err.Error())
		return
	}
	if code, msg := s.checkClientMetadata(&req, ""); code != "" {
		oauthError(c, http.StatusBadRequest, code, msg)
		return
	}
	cl := &Client{
		ID: randomString(16), Name: clip.String(req.ClientName, 100), URI: req.ClientURI,
		RedirectURIs: req.RedirectURIs, Created: s.now().Truncate(time.Second),
	}
	if err := s.opts.Store.PutClient(c.Request.Context(), cl, DefaultClientTTL); err != nil {
		s.storeFailed(c, "registering client", err)
		return
	}
	s.logger.Info("oauth client registered", "client_id", cl.ID, "client_name", cl.Name, "redirect_uris", strings.Join(cl.RedirectURIs, " "))
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, registrationResponse{
		ClientID: cl.ID, ClientIDIssuedAt: cl.Created.Unix(), RedirectURIs: cl.RedirectURIs,
		TokenEndpointAuthMethod: "none", GrantTypes: []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"}, ClientName: cl.Name, ClientURI: cl.URI, Scope: Scope,
	})
}

// checkClientMetadata returns the RFC 7591 §3.2.2 error code and message
// for client metadata restmcp does not serve, or "". documentURL is the
// Client ID Metadata Document's URL ("" for a registration).
func (s *Server) checkClientMetadata(m *registrationRequest, documentURL string) (code, msg string) {
	if len(m.RedirectURIs) == 0 {
		return "invalid_redirect_uri", "redirect_uris is required: at least one"
	}
	for _, r := range m.RedirectURIs {
		if err := s.checkRedirectURI(r, documentURL); err != nil {
			return "invalid_redirect_uri", err.Error()
		}
	}
	if a := m.TokenEndpointAuthMethod; a != "" && a != "none" {
		return "invalid_client_metadata", "token_endpoint_auth_method " + clip.String(a, 40) + " is not supported: clients are public (none) and prove themselves with PKCE"
	}
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return "invalid_client_metadata", "grant_types: " + clip.String(g, 40) + " is not supported (authorization_code, refresh_token)"
		}
	}
	for _, r := range m.ResponseTypes {
		if r != "code" {
			return "invalid_client_metadata", "response_types: " + clip.String(r, 40) + " is not supported (code)"
		}
	}
	return "", ""
}

// checkRedirectURI accepts an absolute URI without a fragment (RFC 6749
// §3.1.2) that is either http on a loopback host (RFC 8252 §7.3: native
// clients) or https and allowed by Options.RedirectURIs or, for a Client
// ID Metadata Document, on the document's own origin.
func (s *Server) checkRedirectURI(r, documentURL string) error {
	u, err := url.Parse(r)
	if err != nil || u.Host == "" || u.Fragment != "" || strings.Contains(r, "#") {
		return fmt.Errorf("redirect URI %q must be an absolute URL without a fragment", clip.String(r, 200))
	}
	switch u.Scheme {
	case "http":
		if loopback.Host(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("redirect URI %q: http is allowed on loopback only (127.0.0.1, [::1], localhost); use https", clip.String(r, 200))
	case "https":
		if s.anyHTTPS || s.allowedRedirects[r] {
			return nil
		}
		if documentURL != "" {
			if d, err := url.Parse(documentURL); err == nil && strings.EqualFold(d.Host, u.Host) {
				return nil
			}
		}
		return fmt.Errorf("redirect URI %q is not allowed by this server (oauth_redirect_uris); loopback http URIs always are", clip.String(r, 200))
	}
	return fmt.Errorf("redirect URI %q: scheme %q is not allowed; use https, or http on loopback", clip.String(r, 200), u.Scheme)
}

// lookupClient returns the client of client_id: a registered one, or,
// when client_id is an https URL, the one its Client ID Metadata Document
// describes (fetched, checked and cached by metadataFetcher).
func (s *Server) lookupClient(ctx context.Context, clientID string) (*Client, error) {
	if strings.HasPrefix(clientID, "https://") {
		return s.metadata.client(ctx, clientID, s.checkClientMetadata)
	}
	if clientID == "" || len(clientID) > 200 {
		return nil, ErrNotFound
	}
	return s.opts.Store.Client(ctx, clientID)
}

// metadataFetcher fetches Client ID Metadata Documents
// (draft-ietf-oauth-client-id-metadata-document,
// https://datatracker.ietf.org/doc/draft-ietf-oauth-client-id-metadata-document/)
// and caches the clients they describe for 10 minutes.
type metadataFetcher struct {
	http  *http.Client
	now   func() time.Time
	mu    sync.Mutex
	cache map[string]memoryEntry[Client]
}

// metadataCacheTTL is how long a fetched client document is used.
const metadataCacheTTL = 10 * time.Minute

func newMetadataFetcher(c *http.Client, now func() time.Time) *metadataFetcher {
	if c == nil {
		c = safeMetadataClient()
	}
	return &metadataFetcher{http: c, now: now, cache: map[string]memoryEntry[Client]{}}
}

// safeMetadataClient fetches from public addresses only: a client_id URL
// must not make restmcp reach its own network (SSRF). It follows no
// redirect and gives up after 5 s.
func safeMetadataClient() *http.Client {
	d := &net.Dialer{Timeout: 3 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return err
		}
		ip := net.ParseIP(host)
		if ip == nil || !publicIP(ip) {
			return fmt.Errorf("address %s is not public", host)
		}
		return nil
	}}
	return &http.Client{
		Timeout:       5 * time.Second,
		Transport:     &http.Transport{DialContext: d.DialContext, TLSHandshakeTimeout: 3 * time.Second, Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return errors.New("redirects are not followed") },
	}
}

// publicIP reports whether ip is neither loopback, private (RFC 1918, RFC
// 4193), link-local, multicast nor unspecified.
func publicIP(ip net.IP) bool {
	return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || ip.Equal(net.IPv4bcast) ||
		ip.To4() != nil && ip.To4()[0] == 100 && ip.To4()[1]&0xc0 == 64) // 100.64.0.0/10, carrier-grade NAT
}

// client returns the client the document at id describes.
func (f *metadataFetcher) client(ctx context.Context, id string, check func(*registrationRequest, string) (string, string)) (*Client, error) {
	f.mu.Lock()
	e, ok := f.cache[id]
	f.mu.Unlock()
	if ok && f.now().Before(e.expires) {
		c := cloneClient(e.v)
		return &c, nil
	}
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.User != nil || u.Fragment != "" ||
		strings.Contains(u.Path, "/./") || strings.Contains(u.Path, "/../") {
		return nil, &ClientError{Reason: "client_id " + clip.String(id, 200) + " is not a valid client metadata document URL (https, with a path, no fragment or dot segments)"}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return nil, &ClientError{Reason: err.Error()}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.http.Do(req)
	if err != nil {
		return nil, &ClientError{Reason: "fetching the client metadata document " + clip.String(id, 200) + ": " + err.Error()}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &ClientError{Reason: fmt.Sprintf("the client metadata document %s answered HTTP %d", clip.String(id, 200), resp.StatusCode)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxClientMetadataBytes+1))
	if err != nil {
		return nil, &ClientError{Reason: "reading the client metadata document: " + err.Error()}
	}
	if len(body) > maxClientMetadataBytes {
		return nil, &ClientError{Reason: fmt.Sprintf("the client metadata document is larger than %d bytes", maxClientMetadataBytes)}
	}
	var doc struct {
		ClientID string `json:"client_id"`
		registrationRequest
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, &ClientError{Reason: "the client metadata document is not JSON client metadata: " + err.Error()}
	}
	if doc.ClientID != id {
		return nil, &ClientError{Reason: "the client metadata document's client_id " + clip.String(doc.ClientID, 200) + " is not its own URL " + clip.String(id, 200)}
	}
	if code, msg := check(&doc.registrationRequest, id); code != "" {
		return nil, &ClientError{Reason: "the client metadata document: " + msg}
	}
	c := Client{ID: id, Name: clip.String(doc.ClientName, 100), URI: doc.ClientURI, RedirectURIs: doc.RedirectURIs, Created: f.now()}
	f.mu.Lock()
	if len(f.cache) >= 1000 {
		clear(f.cache)
	}
	f.cache[id] = memoryEntry[Client]{v: c, expires: f.now().Add(metadataCacheTTL)}
	f.mu.Unlock()
	out := cloneClient(c)
	return &out, nil
}

// ClientError is a client_id that names no usable client: its metadata
// document could not be fetched or is not acceptable.
type ClientError struct{ Reason string }

func (e *ClientError) Error() string { return e.Reason }

// addressLimiter allows n requests per client address per minute (a token
// bucket of n, refilled over a minute; golang.org/x/time/rate).
type addressLimiter struct {
	n   int
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*rate.Limiter
}

func newAddressLimiter(n int, now func() time.Time) *addressLimiter {
	return &addressLimiter{n: n, now: now, m: map[string]*rate.Limiter{}}
}

func (l *addressLimiter) allow(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.m[addr]
	if !ok {
		if len(l.m) >= 10000 {
			clear(l.m) // bounded memory; a flood of addresses resets everyone's bucket
		}
		lim = rate.NewLimiter(rate.Every(time.Minute/time.Duration(l.n)), l.n)
		l.m[addr] = lim
	}
	return lim.AllowN(l.now(), 1)
}

// s256 is the S256 code_challenge of a verifier (RFC 7636 §4.2).
func s256(verifier string) string { return oauth2.S256ChallengeFromVerifier(verifier) }

// hashEqual compares two hashes in constant time.
func hashEqual(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// isKeyRefusal reports whether CheckKey's error refuses the key (as
// opposed to not knowing).
func isKeyRefusal(err error) bool {
	return errors.Is(err, metering.ErrUnknownKey) || errors.Is(err, metering.ErrRevokedKey)
}

// keyIDOf is the key id a grant records for key.
func keyIDOf(key string) string { return metering.KeyID(key) }
