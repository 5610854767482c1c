package oauth

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"errors"
	"html/template"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/restmcp/restmcp/internal/clip"
	"github.com/restmcp/restmcp/metering"
)

//go:embed signin.html
var signInHTML string

//go:embed signin.css
var signInCSS string

// signInTemplate is the sign-in page; the stylesheet is inline, allowed by
// its hash in the Content-Security-Policy (no script at all).
var signInTemplate = template.Must(template.New("signin").Parse(strings.Replace(signInHTML, "/*CSS*/", signInCSS, 1)))

// signInCSP is the sign-in page's Content-Security-Policy: nothing but its
// own inline stylesheet, never in a frame (clickjacking). There is no
// form-action: browsers apply it to the redirect back to the client too.
var signInCSP = func() string {
	sum := sha256.Sum256([]byte(signInCSS))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; frame-ancestors 'none'; base-uri 'none'"
}()

// csrfCookie holds the sign-in form's CSRF nonce; the form carries its
// HMAC (sealer.csrfToken), so a form posted from another site fails.
const csrfCookie = "restmcp_oauth_csrf"

// authRequest is a checked authorization request (RFC 6749 §4.1.1, RFC
// 7636 §4.3, RFC 8707 §2).
type authRequest struct {
	client      *Client
	redirectURI string // where to send the answer
	redirectArg string // the redirect_uri parameter as sent ("" when omitted)
	state       string
	challenge   string
	resource    string // the protected resource the grant is for
	scope       string
}

// pageData fills signin.html.
type pageData struct {
	APIName    string
	ClientName string
	ClientHost string
	KeysURL    string
	Error      string
	Fatal      bool // no form: the request cannot go on
	Action     string
	CSRF       string
	Hidden     []hiddenField
}

type hiddenField struct{ Name, Value string }

// authorizeParams are the request parameters the form carries from the
// GET to the POST.
var authorizeParams = []string{"response_type", "client_id", "redirect_uri", "state", "code_challenge", "code_challenge_method", "resource", "scope"}

// authorizePage shows the sign-in page for a valid authorization request.
// An unknown client or a redirect URI it did not register is shown on the
// page (never redirected to, RFC 6749 §4.1.2.1); the other errors go back
// to the client's redirect URI with error, state and iss (RFC 9207).
func (s *Server) authorizePage(c *gin.Context) {
	q := c.Request.URL.Query()
	ar, ok := s.checkAuthRequest(c, q)
	if !ok {
		return
	}
	nonce := randomString(24)
	http.SetCookie(c.Writer, &http.Cookie{
		Name: csrfCookie, Value: nonce, Path: PathAuthorize, HttpOnly: true,
		Secure: strings.HasPrefix(s.issuer, "https://"), SameSite: http.SameSiteLaxMode, MaxAge: 3600,
	})
	s.renderPage(c, http.StatusOK, s.formData(ar, q, nonce, ""))
}

// authorizeSubmit takes the posted API key: checks the form's CSRF token
// and the request again, rate-limits by client address, checks the key
// (Options.CheckKey) and, when it is accepted, creates the grant and
// redirects to the client with the authorization code.
func (s *Server) authorizeSubmit(c *gin.Context) {
	if err := parseForm(c); err != nil {
		s.renderPage(c, http.StatusBadRequest, pageData{Fatal: true, Error: "The sign-in form could not be read: " + err.Error()})
		return
	}
	f := c.Request.PostForm
	ar, ok := s.checkAuthRequest(c, f)
	if !ok {
		return
	}
	cookie, _ := c.Cookie(csrfCookie)
	if !s.seal.checkCSRF(cookie, f.Get("csrf")) {
		s.renderPage(c, http.StatusForbidden, pageData{Fatal: true, APIName: s.opts.ResourceName,
			Error: "This sign-in form has expired or was not opened from this server. Go back to your app and connect again."})
		return
	}
	if f.Get("action") == "deny" {
		s.redirectError(c, ar, "access_denied", "the user declined the authorization")
		return
	}
	retry := func(status int, msg string) {
		s.renderPage(c, status, s.formData(ar, f, cookie, msg))
	}
	if wait, ok := s.signIn.allow(c.ClientIP()); !ok {
		c.Header("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
		retry(http.StatusTooManyRequests, "Too many sign-in attempts from your network. Wait a minute and try again.")
		return
	}
	key := strings.TrimSpace(f.Get("api_key"))
	if key == "" {
		retry(http.StatusBadRequest, "Enter your API key.")
		return
	}
	if !plausibleKey(key) {
		retry(http.StatusBadRequest, "That is not an API key: keys are up to 512 printable characters without spaces. Paste the key exactly as issued.")
		return
	}
	ctx := c.Request.Context()
	if s.opts.CheckKey != nil {
		switch err := s.opts.CheckKey(ctx, key); {
		case errors.Is(err, metering.ErrRevokedKey):
			retry(http.StatusUnauthorized, "This API key has been revoked. Use a current key.")
			return
		case errors.Is(err, metering.ErrUnknownKey):
			retry(http.StatusUnauthorized, "This API key was not accepted. Check it and try again.")
			return
		case err != nil:
			s.logger.Error("oauth sign-in: API key check failed", "key_id", keyIDOf(key), "error", err.Error())
			c.Header("Retry-After", "5")
			retry(http.StatusServiceUnavailable, "Your API key cannot be checked right now. Try again in a few seconds.")
			return
		}
	}
	id := randomString(16)
	code, codeHash := newSecret(CodePrefix, id)
	g := &Grant{
		ID: id, ClientID: ar.client.ID, RedirectURI: ar.redirectArg, Resource: ar.resource, Scope: Scope,
		KeyID: keyIDOf(key), SealedKey: s.seal.seal(id, key), Created: s.now(),
		CodeHash: codeHash, CodeChallenge: ar.challenge,
	}
	if err := s.opts.Store.CreateGrant(ctx, g, DefaultCodeTTL); err != nil {
		s.logger.Error("oauth store failed", "doing", "creating grant", "error", err.Error())
		c.Header("Retry-After", "5")
		retry(http.StatusServiceUnavailable, "Signing in is unavailable right now. Try again in a few seconds.")
		return
	}
	s.logger.Info("oauth sign-in", "client_id", ar.client.ID, "key_id", g.KeyID, "grant_id", id)
	http.SetCookie(c.Writer, &http.Cookie{Name: csrfCookie, Value: "", Path: PathAuthorize, MaxAge: -1})
	s.redirect(c, ar, url.Values{"code": {code}})
}

// checkAuthRequest checks the authorization request in v. On failure it
// has answered (page or redirect) and returns false.
func (s *Server) checkAuthRequest(c *gin.Context, v url.Values) (*authRequest, bool) {
	fatal := func(status int, msg string) (*authRequest, bool) {
		s.renderPage(c, status, pageData{Fatal: true, APIName: s.opts.ResourceName, Error: msg})
		return nil, false
	}
	for _, p := range authorizeParams {
		if len(v[p]) > 1 {
			return fatal(http.StatusBadRequest, "The request from your app is invalid: the parameter "+p+" is given more than once.")
		}
	}
	clientID := v.Get("client_id")
	if clientID == "" {
		return fatal(http.StatusBadRequest, "The request from your app is invalid: client_id is missing.")
	}
	cl, err := s.lookupClient(c.Request.Context(), clientID, c.ClientIP())
	var ce *ClientError
	switch {
	case errors.Is(err, ErrNotFound):
		return fatal(http.StatusBadRequest, "The app asking to connect is not registered with this server (unknown client_id). Remove the connector and add it again.")
	case errors.As(err, &ce):
		return fatal(http.StatusBadRequest, "The app asking to connect could not be identified: "+ce.Reason)
	case err != nil:
		s.logger.Error("oauth store failed", "doing", "reading client", "error", err.Error())
		c.Header("Retry-After", "5")
		return fatal(http.StatusServiceUnavailable, "Signing in is unavailable right now. Try again in a few seconds.")
	}
	ar := &authRequest{client: cl, redirectArg: v.Get("redirect_uri"), state: v.Get("state")}
	switch {
	case ar.redirectArg != "":
		r, ok := matchRedirect(cl.RedirectURIs, ar.redirectArg)
		if !ok {
			return fatal(http.StatusBadRequest, "The app's redirect_uri is not one it registered, so this server will not send your sign-in there.")
		}
		ar.redirectURI = r
	case len(cl.RedirectURIs) == 1:
		ar.redirectURI = cl.RedirectURIs[0]
	default:
		return fatal(http.StatusBadRequest, "The request from your app is invalid: redirect_uri is missing.")
	}
	switch rt := v.Get("response_type"); {
	case rt == "":
		return s.redirectError(c, ar, "invalid_request", "response_type is required")
	case rt != "code":
		return s.redirectError(c, ar, "unsupported_response_type", "response_type must be code")
	}
	ar.challenge = v.Get("code_challenge")
	switch m := v.Get("code_challenge_method"); {
	case ar.challenge == "":
		return s.redirectError(c, ar, "invalid_request", "code_challenge is required (PKCE S256, RFC 7636)")
	case m != "S256":
		return s.redirectError(c, ar, "invalid_request", "code_challenge_method must be S256")
	case !validChallenge(ar.challenge):
		return s.redirectError(c, ar, "invalid_request", "code_challenge must be 43 base64url characters (S256)")
	}
	ar.resource = s.resource
	if r := v.Get("resource"); r != "" {
		res, ok := s.resourceOf(r)
		if !ok {
			return s.redirectError(c, ar, "invalid_target", "resource "+strconv.Quote(clip.String(r, 200))+" is not served here; use "+strings.Join(slices.Sorted(maps.Keys(s.resources)), " or "))
		}
		ar.resource = res
	}
	ar.scope = v.Get("scope")
	return ar, true
}

// redirectError sends an error back to the client's redirect URI (RFC 6749
// §4.1.2.1) and returns (nil, false) for checkAuthRequest.
func (s *Server) redirectError(c *gin.Context, ar *authRequest, code, description string) (*authRequest, bool) {
	s.redirect(c, ar, url.Values{"error": {code}, "error_description": {description}})
	return nil, false
}

// redirect answers 303 to the client's redirect URI with params, the
// state and iss (RFC 9207 §2) added to its query.
func (s *Server) redirect(c *gin.Context, ar *authRequest, params url.Values) {
	u, _ := url.Parse(ar.redirectURI) // checked at registration
	q := u.Query()
	for k, v := range params {
		q[k] = v
	}
	if ar.state != "" {
		q.Set("state", ar.state)
	}
	q.Set("iss", s.issuer)
	u.RawQuery = q.Encode()
	c.Header("Cache-Control", "no-store")
	c.Redirect(http.StatusSeeOther, u.String())
	c.Abort()
}

// formData is the sign-in form for ar, carrying the request's parameters
// from v and the CSRF token for nonce.
func (s *Server) formData(ar *authRequest, v url.Values, nonce, errMsg string) pageData {
	d := pageData{
		APIName: s.opts.ResourceName, ClientName: ar.client.Name, KeysURL: s.opts.KeysURL,
		Error: errMsg, Action: PathAuthorize, CSRF: s.seal.csrfToken(nonce),
	}
	if u, err := url.Parse(ar.redirectURI); err == nil {
		d.ClientHost = u.Host
	}
	if d.ClientName == "" {
		d.ClientName = "An app"
	}
	for _, p := range authorizeParams {
		if val := v.Get(p); val != "" {
			d.Hidden = append(d.Hidden, hiddenField{p, val})
		}
	}
	return d
}

// renderPage writes the sign-in page with the headers that keep it out of
// caches, frames and referrers.
func (s *Server) renderPage(c *gin.Context, status int, d pageData) {
	var b bytes.Buffer
	if err := signInTemplate.Execute(&b, d); err != nil {
		s.logger.Error("oauth sign-in page failed to render", "error", err.Error())
		c.AbortWithStatus(http.StatusInternalServerError)
		return
	}
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", signInCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	c.Data(status, "text/html; charset=utf-8", b.Bytes())
	c.Abort()
}

// plausibleKey reports whether key can be an API key: 1 to 512 printable
// ASCII characters without spaces.
func plausibleKey(key string) bool {
	if len(key) > 512 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= ' ' || key[i] > '~' {
			return false
		}
	}
	return true
}
