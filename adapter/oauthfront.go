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

// keyRefusal is the 401 for a caller whose API key is missing (sent is
// false) or refused, on mcp_path and every door that admits calls (K1 in
// docs/oauth.md). MCP clients that can sign in with OAuth (the Inspector,
// mcp-remote, the TypeScript SDK with an auth provider, Claude Code) start
// a sign-in on any 401, whatever its WWW-Authenticate says, so:
//   - with the OAuth front, the challenge leads there: for a key that came
//     from an access token, the OAuth endpoint's with invalid_token (the
//     client signs in again); otherwise mcp_path's own resource metadata,
//     whose sign-in gives tokens for mcp_path;
//   - without it, the challenge names the API key schemes, and the
//     sign-in those clients attempt ends at restmcp's registration
//     endpoint, which answers with msg's advice (noOAuthRegistration), so
//     that they show it instead of hanging.
//
// detail is the plain message for GET /usage ("" means msg).
func (s *Server) keyRefusal(cred *credential, msg, detail string, sent bool) *refusal {
	r := &refusal{status: http.StatusUnauthorized, code: s.opts.ErrorCodes.Unauthorized, message: orMessage(s.opts.Messages.Unauthorized, msg), detail: detail}
	switch {
	case s.opts.IdP != nil && s.opts.OAuth == nil:
		// Sign in at the vendor's identity provider, which the resource
		// metadata names.
		r.challenge = s.idpChallenge("", "")
	case s.opts.OAuth == nil && sent && cred.unsafe == "":
		r.challenge = `ApiKey realm="restmcp", Bearer realm="restmcp", error="invalid_token"`
	case s.opts.OAuth == nil:
		r.challenge = `ApiKey realm="restmcp", Bearer realm="restmcp"`
	case cred.source == sourceOAuth:
		r.challenge = s.opts.OAuth.Challenge("invalid_token", "the API key this token stands for is no longer accepted; sign in again")
	case sent:
		r.challenge = s.opts.OAuth.ChallengeFor(s.opts.MCPPath, "invalid_token", msg)
	default:
		r.challenge = s.opts.OAuth.ChallengeFor(s.opts.MCPPath, "", "")
	}
	return r
}

// noOAuthRegistration answers client registration when there is no OAuth
// front: at /register (where the MCP TypeScript SDK registers when a
// server publishes no authorization server metadata) and at
// /oauth/register. An OAuth-capable client that got a 401 for a missing
// or refused key lands here, and the RFC 7591 §3.2.2 error it gets says
// how to send the key; the SDKs show error_description (or the body) to
// the user. The text avoids the words "Unauthorized", "Not Found" and the
// numbers 404 and 405, which make mcp-remote sign in again or switch
// transports instead of stopping.
func (s *Server) noOAuthRegistration(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	abortJSON(c, http.StatusBadRequest, gin.H{
		"error": "invalid_client_metadata",
		"error_description": "this MCP server takes an API key, not an OAuth sign-in: set your API key in your MCP client's configuration, " +
			"as the x-api-key header, as ?api_key=YOUR_KEY on the MCP URL (" + s.opts.MCPPath + "), or as Authorization: Bearer YOUR_KEY",
	})
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
	req, err := t.NewRequestPresented(withUpstreamCaller(ctx, key), []byte("{}"), key, "")
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
