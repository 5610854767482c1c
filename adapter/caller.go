package adapter

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/adapter/oauth"
)

// Who the caller is is decided here, once per request, for every door:
// resolveCaller turns the credential a request presents (an API key in the
// x-api-key header, ?api_key= or a Bearer token; an OAuth access token of
// restmcp's own authorization server; an access token of the vendor's
// identity provider; nothing) into the caller, a *credential, or into a
// *refusal that the gate's renderers answer (renderRefusal). The
// credential middleware puts the caller in the exchange, where the gate
// and everything after it only read it; the legacy SSE door compares the
// caller of each POST with its stream's (legacysse.go).

// extractCredential is the MCP endpoint's credential middleware: the
// caller resolveCaller makes of the request's credential (extractCredential
// in apikey.go), or its refusal. Every inbound copy of the credential is
// removed from the request, so that nothing below (the SDK's
// RequestExtra.Header included) sees it, and only the tool call places it
// upstream, where the operation's security scheme says.
func (s *Server) extractCredential(c *gin.Context) {
	if !s.readForwarded(c) {
		return
	}
	cred := extractCredential(c.Request)
	c.Request.Header.Del(apiKeyHeader)
	if cred.source == "bearer" {
		c.Request.Header.Del("Authorization")
	}
	caller, r := s.resolveCaller(c.Request.Context(), cred)
	s.setCaller(c, caller, r)
}

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
		s.setCaller(c, nil, s.unauthorized(s.opts.OAuth.Challenge("", ""),
			"authorization required: this endpoint takes OAuth access tokens; connect with an MCP client that supports OAuth (it signs you in with your API key), or send the API key to "+s.opts.MCPPath+" instead"))
		return
	}
	if !oauth.IsAccessToken(token) {
		msg := "this endpoint takes OAuth access tokens, not API keys: connect with an MCP client that supports OAuth, or send the API key to " + s.opts.MCPPath + " instead"
		s.setCaller(c, nil, s.unauthorized(s.opts.OAuth.Challenge("invalid_token", msg), msg))
		return
	}
	caller, r := s.accessTokenCaller(c.Request.Context(), token)
	s.setCaller(c, caller, r)
}

// setCaller ends a credential middleware: the caller into the exchange
// and on down the chain, or the refusal answered by the gate's renderer.
func (s *Server) setCaller(c *gin.Context, caller *credential, r *refusal) {
	if r != nil {
		s.renderRefusal(c, nil, r)
		return
	}
	exchangeFrom(c.Request.Context()).cred = caller
	c.Next()
}

// resolveCaller is the caller a credential read from a request
// (extractCredential) stands for: in public mode no one (the call is
// metered by its client address, and a credential sent reaches neither the
// meter nor the upstream API); a Bearer JWT with a vendor identity
// provider, its verified identity (idpCaller); a Bearer OAuth access token
// with the OAuth front, the API key it stands for (accessTokenCaller);
// anything else, the API key as sent, which the gate checks. The refusal
// is a 401 for a token that does not check out, a 503 when the token store
// cannot tell.
func (s *Server) resolveCaller(ctx context.Context, cred *credential) (*credential, *refusal) {
	switch {
	case s.opts.PublicMode:
		return &credential{}, nil
	case cred.source != "bearer" || cred.unsafe != "":
		return cred, nil
	case s.opts.IdP != nil && idp.LooksLikeJWT(cred.key):
		return s.idpCaller(ctx, cred.key)
	case s.opts.OAuth != nil && oauth.IsAccessToken(cred.key):
		return s.accessTokenCaller(ctx, cred.key)
	}
	return cred, nil
}

// accessTokenCaller is the API key an OAuth access token stands for; the
// refusal is 401 invalid_token for a token that is unknown, expired or
// revoked, 503 when the token store cannot answer within MeterTimeout.
func (s *Server) accessTokenCaller(ctx context.Context, token string) (*credential, *refusal) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.MeterTimeout)
	id, err := s.opts.OAuth.ResolveToken(ctx, token)
	cancel()
	var te *oauth.TokenError
	switch {
	case errors.As(err, &te):
		return nil, s.unauthorized(s.opts.OAuth.Challenge("invalid_token", te.Error()), te.Error())
	case err != nil:
		s.logger.Error("oauth token lookup failed; refusing request", "error", err.Error())
		return nil, s.unavailable("access token check is temporarily unavailable")
	}
	return &credential{key: id.Key, keyID: id.KeyID, source: sourceOAuth, unsafe: unsafeKeyChar(id.Key)}, nil
}

// idpCaller is the identity an access token of the vendor's identity
// provider carries (idp.Verifier); a token refused is 401 invalid_token
// with what was wrong (never the token) and the resource metadata to sign
// in with.
func (s *Server) idpCaller(ctx context.Context, token string) (*credential, *refusal) {
	id, err := s.opts.IdP.Verify(ctx, token)
	if err != nil {
		desc := err.Error()
		var te *idp.TokenError
		if errors.As(err, &te) {
			desc = te.Description
		}
		return nil, s.unauthorized(s.idpChallenge("invalid_token", desc), "invalid access token: "+desc)
	}
	return &credential{keyID: IdentityKeyID(id.ID), source: sourceIdP, idp: id}, nil
}

// unauthorized is a 401 with the challenge given and msg.
func (s *Server) unauthorized(challenge, msg string) *refusal {
	return &refusal{status: http.StatusUnauthorized, code: s.opts.ErrorCodes.Unauthorized, message: msg, challenge: challenge}
}

// unavailable is the 503 of a store or service that did not answer: what
// happened, then when to retry (Retry-After, meterRetryAfterSeconds).
func (s *Server) unavailable(what string) *refusal {
	return &refusal{status: http.StatusServiceUnavailable, code: s.opts.ErrorCodes.Unavailable, retryAfter: strconv.Itoa(meterRetryAfterSeconds),
		message: what + "; retry in " + strconv.Itoa(meterRetryAfterSeconds) + " seconds"}
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
