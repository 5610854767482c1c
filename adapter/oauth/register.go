package oauth

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/restmcp/restmcp/internal/clip"
	"github.com/restmcp/restmcp/internal/netaddr"

	"github.com/gin-gonic/gin"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"
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
// §3.2.1), with the client configuration endpoint of RFC 7592 §3.
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
	RegistrationClientURI   string   `json:"registration_client_uri"`
	RegistrationAccessToken string   `json:"registration_access_token"`
}

// maxClientMetadataBytes caps a registration request body and a fetched
// Client ID Metadata Document.
const maxClientMetadataBytes = 16 << 10

// maxStoredClientBytes caps what one client keeps (its name, URI and
// redirect URIs), so that MaxClients bounds the store's memory.
const maxStoredClientBytes = 2 << 10

// RegistrationAccessTokenPrefix starts the registration access token of
// RFC 7592 §3, which reads a client's registration.
const RegistrationAccessTokenPrefix = "rmcp_rat_"

// registerClient is Dynamic Client Registration (RFC 7591 §3): every
// client is public, whatever token_endpoint_auth_method it asks for (O1);
// of several redirect URIs the acceptable ones are kept (O2); identical
// registrations are one client, whose id is derived from its metadata
// (O6); the answer carries registration_client_uri (O9). At most
// RegisterLimit registrations per address group per minute (O5).
func (s *Server) registerClient(c *gin.Context) {
	if !s.allowOrRefuse(c, s.register, "too many client registrations from this network; retry after the Retry-After seconds") {
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
	cl, dropped, code, msg := s.acceptClientMetadata(&req, "")
	if code != "" {
		oauthError(c, http.StatusBadRequest, code, msg)
		return
	}
	ctx := c.Request.Context()
	cl.ID = s.seal.derive("client", clientFingerprint(cl))[:grantIDLen]
	cl.Created = s.now().Truncate(time.Second)
	switch old, err := s.opts.Store.Client(ctx, cl.ID); {
	case err == nil:
		cl.Created = old.Created // the same registration again
	case !errors.Is(err, ErrNotFound):
		s.storeFailed(c, "reading client", err)
		return
	}
	if err := s.opts.Store.PutClient(ctx, cl, s.opts.ClientTTL, s.opts.MaxClients); err != nil {
		s.storeFailed(c, "registering client", err)
		return
	}
	s.logger.Info("oauth client registered", "client_id", cl.ID, "client_name", cl.Name,
		"redirect_uris", strings.Join(cl.RedirectURIs, " "), "dropped_redirect_uris", strings.Join(dropped, " "),
		"requested_auth_method", clip.String(req.TokenEndpointAuthMethod, 40))
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusCreated, s.clientInformation(cl))
}

// clientInformation is the registration response for cl.
func (s *Server) clientInformation(cl *Client) registrationResponse {
	return registrationResponse{
		ClientID: cl.ID, ClientIDIssuedAt: cl.Created.Unix(), RedirectURIs: cl.RedirectURIs,
		TokenEndpointAuthMethod: "none", GrantTypes: []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"}, ClientName: cl.Name, ClientURI: cl.URI, Scope: Scope,
		RegistrationClientURI:   s.issuer + PathRegister + "/" + cl.ID,
		RegistrationAccessToken: s.registrationToken(cl.ID),
	}
}

// registrationToken is client id's registration access token: derived
// from the id with the encryption key, so any replica checks it and
// nothing is stored.
func (s *Server) registrationToken(id string) string {
	return RegistrationAccessTokenPrefix + s.seal.derive("registration", []byte(id))
}

// readClient is the client configuration endpoint's read (RFC 7592 §2.1):
// GET registration_client_uri with the registration access token as a
// Bearer token. An unknown client or a wrong token is 401 (§2.1: the
// server must not say which).
func (s *Server) readClient(c *gin.Context) {
	id := c.Param("client_id")
	token, _ := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
	if id == "" || len(id) > 200 || !hashEqual(token, s.registrationToken(id)) {
		c.Header("WWW-Authenticate", `Bearer error="invalid_token"`)
		oauthError(c, http.StatusUnauthorized, "invalid_token", "send the registration_access_token of the registration response as Authorization: Bearer <token>")
		return
	}
	cl, err := s.opts.Store.Client(c.Request.Context(), id)
	switch {
	case errors.Is(err, ErrNotFound):
		c.Header("WWW-Authenticate", `Bearer error="invalid_token"`)
		oauthError(c, http.StatusUnauthorized, "invalid_token", "this client is no longer registered (unused registrations expire); register again")
		return
	case err != nil:
		s.storeFailed(c, "reading client", err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.JSON(http.StatusOK, s.clientInformation(cl))
}

// clientFingerprint is what makes two registrations the same client: its
// name, URI and kept redirect URIs.
func clientFingerprint(cl *Client) []byte {
	b, _ := json.Marshal([]any{cl.Name, cl.URI, cl.RedirectURIs})
	return b
}

// acceptClientMetadata returns the client that metadata m registers, the
// redirect URIs it dropped, or the RFC 7591 §3.2.2 error code and message
// naming what is wrong. documentURL is the Client ID Metadata Document's
// URL ("" for a registration).
//   - token_endpoint_auth_method is never a reason to refuse (O1): every
//     client is public and the response says "none" (RFC 7591 §3.2.1 lets
//     the server replace requested values).
//   - redirect_uris: the acceptable ones are kept; refused only when none
//     is (O2), every refused one named.
//   - grant_types and response_types: they must include authorization_code
//     and code; other values are dropped (VS Code asks for device_code too).
func (s *Server) acceptClientMetadata(m *registrationRequest, documentURL string) (cl *Client, dropped []string, code, msg string) {
	switch n := len(m.RedirectURIs); {
	case n == 0:
		return nil, nil, "invalid_redirect_uri", "redirect_uris is required: at least one"
	case n > maxRedirectURIs:
		return nil, nil, "invalid_redirect_uri", fmt.Sprintf("redirect_uris has %d URIs; at most %d", n, maxRedirectURIs)
	}
	var kept, reasons []string
	size := len(m.ClientName) + len(m.ClientURI)
	for _, r := range m.RedirectURIs {
		if err := s.redirects.check(r, documentURL); err != nil {
			dropped, reasons = append(dropped, r), append(reasons, err.Error())
			continue
		}
		if !slices.Contains(kept, r) {
			kept, size = append(kept, r), size+len(r)
		}
	}
	if len(kept) == 0 {
		return nil, nil, "invalid_redirect_uri", "no acceptable redirect URI: " + strings.Join(reasons, "; ")
	}
	if len(m.GrantTypes) > 0 && !slices.Contains(m.GrantTypes, "authorization_code") {
		return nil, nil, "invalid_client_metadata", "grant_types " + clip.String(strings.Join(m.GrantTypes, " "), 200) + " has no authorization_code: this server issues authorization codes and refresh tokens only"
	}
	if len(m.ResponseTypes) > 0 && !slices.Contains(m.ResponseTypes, "code") {
		return nil, nil, "invalid_client_metadata", "response_types " + clip.String(strings.Join(m.ResponseTypes, " "), 200) + " has no code: this server answers response_type code only"
	}
	if size > maxStoredClientBytes {
		return nil, nil, "invalid_client_metadata", fmt.Sprintf("client_name, client_uri and redirect_uris take %d bytes; at most %d", size, maxStoredClientBytes)
	}
	return &Client{Name: clip.String(m.ClientName, 100), URI: clip.String(m.ClientURI, 500), RedirectURIs: kept}, dropped, "", ""
}

// lookupClient returns the client of client_id: a registered one, or,
// when client_id is an https URL, the one its Client ID Metadata Document
// describes (fetched, checked and cached by metadataFetcher; a fetch that
// the cache does not answer counts against the caller's registration
// limit, O7).
func (s *Server) lookupClient(ctx context.Context, clientID, clientIP string) (*Client, error) {
	if strings.HasPrefix(clientID, "https://") {
		return s.metadata.client(ctx, clientID, func() bool {
			_, ok := s.register.allow(clientIP)
			return ok
		}, s.acceptClientMetadata)
	}
	if clientID == "" || len(clientID) > 200 {
		return nil, ErrNotFound
	}
	return s.opts.Store.Client(ctx, clientID)
}

// metadataFetcher fetches Client ID Metadata Documents
// (draft-ietf-oauth-client-id-metadata-document,
// https://datatracker.ietf.org/doc/draft-ietf-oauth-client-id-metadata-document/)
// and caches what it learns (O7): a client for 10 minutes, a failure for
// one, so that a client id is fetched at most once per period however
// often it is asked for; concurrent requests for one id share one fetch.
type metadataFetcher struct {
	http    *http.Client
	now     func() time.Time
	logger  *slog.Logger
	flights singleflight.Group
	mu      sync.Mutex
	cache   map[string]metadataEntry
	fetches atomic.Int64 // documents requested, for tests and the note
}

type metadataEntry struct {
	client  Client
	err     *ClientError // a failure, cached too
	expires time.Time
}

// How long a fetched client document, and a failure to get one, is used.
const (
	metadataCacheTTL        = 10 * time.Minute
	metadataFailureCacheTTL = time.Minute
	maxMetadataCacheEntries = 1000
)

func newMetadataFetcher(c *http.Client, now func() time.Time, logger *slog.Logger) *metadataFetcher {
	if c == nil {
		c = safeMetadataClient()
	}
	return &metadataFetcher{http: c, now: now, logger: logger, cache: map[string]metadataEntry{}}
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

// client returns the client the document at id describes. mayFetch is
// asked before a fetch the cache cannot spare; when it says no, the
// answer is a ClientError saying to retry later.
func (f *metadataFetcher) client(ctx context.Context, id string, mayFetch func() bool, accept func(*registrationRequest, string) (*Client, []string, string, string)) (*Client, error) {
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.User != nil || u.Fragment != "" ||
		strings.Contains(id, "#") || strings.Contains(u.Path, "/./") || strings.Contains(u.Path, "/../") || len(id) > 2000 {
		return nil, &ClientError{Reason: "client_id " + clip.String(id, 200) + " is not a valid client metadata document URL (https, with a path, no fragment or dot segments)"}
	}
	if e, ok := f.cached(id); ok {
		return e.result()
	}
	v, _, _ := f.flights.Do(id, func() (any, error) {
		if e, ok := f.cached(id); ok { // fetched while this one waited for the lock
			return e, nil
		}
		if !mayFetch() {
			return metadataEntry{err: &ClientError{Reason: "too many client metadata documents fetched for your network; retry in a minute"}}, nil
		}
		e := f.fetch(context.WithoutCancel(ctx), id, accept)
		ttl := metadataCacheTTL
		if e.err != nil {
			ttl = metadataFailureCacheTTL
		}
		e.expires = f.now().Add(ttl)
		f.mu.Lock()
		if len(f.cache) >= maxMetadataCacheEntries {
			clear(f.cache)
		}
		f.cache[id] = e
		f.mu.Unlock()
		return e, nil
	})
	return v.(metadataEntry).result()
}

func (f *metadataFetcher) cached(id string) (metadataEntry, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.cache[id]
	return e, ok && f.now().Before(e.expires)
}

func (e metadataEntry) result() (*Client, error) {
	if e.err != nil {
		return nil, e.err
	}
	c := cloneClient(e.client)
	return &c, nil
}

// fetch gets and checks the document at id. What went wrong on the
// network is logged, never put in the ClientError the sign-in page shows:
// dial and status errors would make the page a port scanner (O7).
func (f *metadataFetcher) fetch(ctx context.Context, id string, accept func(*registrationRequest, string) (*Client, []string, string, string)) metadataEntry {
	f.fetches.Add(1)
	unreachable := metadataEntry{err: &ClientError{Reason: "its client metadata document " + clip.String(id, 200) + " could not be fetched (it must answer 200 with JSON, from a public address, within 5 seconds)"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, id, nil)
	if err != nil {
		return unreachable
	}
	req.Header.Set("Accept", "application/json")
	resp, err := f.http.Do(req)
	if err != nil {
		f.logger.Info("oauth client metadata document not fetched", "client_id", clip.String(id, 200), "error", err.Error())
		return unreachable
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		f.logger.Info("oauth client metadata document not fetched", "client_id", clip.String(id, 200), "status", resp.StatusCode)
		return unreachable
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxClientMetadataBytes+1))
	if err != nil {
		f.logger.Info("oauth client metadata document not fetched", "client_id", clip.String(id, 200), "error", err.Error())
		return unreachable
	}
	if len(body) > maxClientMetadataBytes {
		return metadataEntry{err: &ClientError{Reason: fmt.Sprintf("its client metadata document is larger than %d bytes", maxClientMetadataBytes)}}
	}
	var doc struct {
		ClientID string `json:"client_id"`
		registrationRequest
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return metadataEntry{err: &ClientError{Reason: "its client metadata document is not JSON client metadata: " + clip.String(err.Error(), 200)}}
	}
	if doc.ClientID != id {
		return metadataEntry{err: &ClientError{Reason: "its client metadata document's client_id " + clip.String(doc.ClientID, 200) + " is not its own URL " + clip.String(id, 200)}}
	}
	cl, _, code, msg := accept(&doc.registrationRequest, id)
	if code != "" {
		return metadataEntry{err: &ClientError{Reason: "its client metadata document: " + msg}}
	}
	cl.ID, cl.Created = id, f.now()
	return metadataEntry{client: *cl}
}

// ClientError is a client_id that names no usable client: its metadata
// document could not be fetched or is not acceptable.
type ClientError struct{ Reason string }

func (e *ClientError) Error() string { return e.Reason }

// addressLimiter allows n requests per address group (netaddr.Group: an
// IPv6 address by its /64) per minute: a token bucket of n, refilled over
// a minute (golang.org/x/time/rate). n < 0 allows everything.
type addressLimiter struct {
	n   int
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*rate.Limiter
}

func newAddressLimiter(n int, now func() time.Time) *addressLimiter {
	return &addressLimiter{n: n, now: now, m: map[string]*rate.Limiter{}}
}

// allow takes one request from addr's bucket; when it is empty, it says
// how long until one is back.
func (l *addressLimiter) allow(addr string) (wait time.Duration, ok bool) {
	if l.n < 0 {
		return 0, true
	}
	group := netaddr.Group(addr)
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, found := l.m[group]
	if !found {
		if len(l.m) >= 10000 {
			clear(l.m) // bounded memory; a flood of addresses resets everyone's bucket
		}
		lim = rate.NewLimiter(rate.Every(time.Minute/time.Duration(l.n)), l.n)
		l.m[group] = lim
	}
	now := l.now()
	r := lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// allowOrRefuse takes one request of the caller's address group from l,
// or answers 429 with Retry-After (whole seconds, rounded up) and an RFC
// 6749 §5.2 error, temporarily_unavailable, and returns false (O5).
func (s *Server) allowOrRefuse(c *gin.Context, l *addressLimiter, msg string) bool {
	wait, ok := l.allow(c.ClientIP())
	if ok {
		return true
	}
	c.Header("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
	oauthError(c, http.StatusTooManyRequests, "temporarily_unavailable", msg)
	return false
}

// retryAfterSeconds is d in whole seconds, rounded up, at least 1.
func retryAfterSeconds(d time.Duration) int {
	return max(1, int((d+time.Second-1)/time.Second))
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
