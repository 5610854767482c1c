package adapter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/restmcp/restmcp/adapter/oauth"
	"github.com/restmcp/restmcp/metering"
)

// sourceOAuth is the credential source of an API key that an OAuth access
// token stands for.
const sourceOAuth = "oauth"

// oauthCredential is extractCredential for the OAuth MCP endpoint
// (Options.OAuth): the caller is the API key its access token stands for.
// Every request needs a token, initialize included, because OAuth clients
// start the sign-in only on a 401 whose WWW-Authenticate names the
// resource metadata (MCP 2025-11-25 §Authorization,
// https://modelcontextprotocol.io/specification/2025-11-25/basic/authorization;
// RFC 9728 §5.1). API keys sent any other way are not read here and are
// removed from the request.
func (s *Server) oauthCredential(c *gin.Context) {
	if !s.readForwarded(c) {
		return
	}
	token, ok := bearerToken(c.Request.Header.Get("Authorization"))
	c.Request.Header.Del(apiKeyHeader)
	c.Request.Header.Del("Authorization")
	if !ok {
		c.Header("WWW-Authenticate", s.opts.OAuth.Challenge("", ""))
		abortRPC(c, http.StatusUnauthorized, nil, s.opts.ErrorCodes.Unauthorized,
			"authorization required: this endpoint takes OAuth access tokens; connect with an MCP client that supports OAuth (it signs you in with your API key), or send the API key to "+s.opts.MCPPath+" instead")
		return
	}
	if !oauth.IsAccessToken(token) {
		msg := "this endpoint takes OAuth access tokens, not API keys: connect with an MCP client that supports OAuth, or send the API key to " + s.opts.MCPPath + " instead"
		c.Header("WWW-Authenticate", s.opts.OAuth.Challenge("invalid_token", msg))
		abortRPC(c, http.StatusUnauthorized, nil, s.opts.ErrorCodes.Unauthorized, msg)
		return
	}
	if s.resolveAccessToken(c, token) {
		c.Next()
	}
}

// resolveAccessToken puts the API key that token stands for in the
// exchange. It answers 401 invalid_token for a token that is unknown,
// expired or revoked, and 503 when the token store cannot answer.
func (s *Server) resolveAccessToken(c *gin.Context, token string) bool {
	ctx, cancel := context.WithTimeout(c.Request.Context(), s.opts.MeterTimeout)
	id, err := s.opts.OAuth.ResolveToken(ctx, token)
	cancel()
	var te *oauth.TokenError
	switch {
	case errors.As(err, &te):
		c.Header("WWW-Authenticate", s.opts.OAuth.Challenge("invalid_token", te.Error()))
		abortRPC(c, http.StatusUnauthorized, nil, s.opts.ErrorCodes.Unauthorized, te.Error())
		return false
	case err != nil:
		s.logger.Error("oauth token lookup failed; refusing request", "error", err.Error())
		c.Header("Retry-After", strconv.Itoa(meterRetryAfterSeconds))
		abortRPC(c, http.StatusServiceUnavailable, nil, s.opts.ErrorCodes.Unavailable,
			"access token check is temporarily unavailable; retry in "+strconv.Itoa(meterRetryAfterSeconds)+" seconds")
		return false
	}
	exchangeFrom(c.Request.Context()).cred = &credential{key: id.Key, keyID: id.KeyID, source: sourceOAuth, unsafe: unsafeKeyChar(id.Key)}
	return true
}

// keyChallenge is the WWW-Authenticate value of a 401 for a key that was
// refused: the OAuth challenge with invalid_token for a key that came from
// an access token (the client signs in again), the API key challenge
// otherwise.
func (s *Server) keyChallenge(cred *credential) string {
	if cred.source == sourceOAuth && s.opts.OAuth != nil {
		return s.opts.OAuth.Challenge("invalid_token", "the API key this token stands for is no longer accepted; sign in again")
	}
	return `ApiKey realm="restmcp", Bearer realm="restmcp", error="invalid_token"`
}

// VerifyKey checks an API key with one upstream call of the named tool,
// made without arguments: a 2xx answer accepts the key, 401 or 403
// refuses it (metering.ErrUnknownKey), anything else is an error (the
// check could not be made). It is the OAuth sign-in's key check when keys
// are not in a registry (key_mode open). The call is not metered.
func (s *Server) VerifyKey(ctx context.Context, tool, key string) error {
	t := s.table.Load().tools[tool]
	if t == nil {
		return fmt.Errorf("no tool %q to verify keys with", tool)
	}
	if s.opts.UpstreamTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.opts.UpstreamTimeout)
		defer cancel()
	}
	req, err := t.NewRequestPresented(ctx, []byte("{}"), key, "")
	if err != nil {
		return fmt.Errorf("building the verify request for %s: %s", tool, redact(err.Error(), key))
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", s.userAgent)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("verify call %s: %s", tool, redact(err.Error(), key))
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode <= 299:
		return nil
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: the upstream API answered %d to %s", metering.ErrUnknownKey, resp.StatusCode, tool)
	}
	return fmt.Errorf("verify call %s: the upstream API answered %d", tool, resp.StatusCode)
}

// HasTool reports whether the server serves a tool of that name.
func (s *Server) HasTool(name string) bool { return s.table.Load().tools[name] != nil }

// OAuthURL is the OAuth MCP endpoint's URL, the one to paste into Claude
// or ChatGPT; "" without Options.OAuth.
func (s *Server) OAuthURL() string {
	if s.opts.OAuth == nil {
		return ""
	}
	return s.opts.OAuth.Resource()
}
