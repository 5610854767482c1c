package adapter

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/metering"
)

// Resource-server mode (Options.IdP): an "Authorization: Bearer <JWT>" on
// the MCP endpoint is an access token of the vendor's identity provider,
// checked by idp.Verifier (issuer, audience = this server's MCP URL,
// expiry, signature by a key of the provider's JWKS). The caller is its
// identity claim: key id "idp-" + the claim's hash, metered like a key,
// under the plan its plan claim names (the default plan without one). The
// upstream never sees the inbound token unless the deployment forwards it:
// by default it gets a token the provider issues for the upstream API's
// audience (RFC 8693), obtained when a call is admitted. API keys keep
// working beside it; a bearer value that is no JWT is an API key.

// sourceIdP is the credential source of an identity provider's token.
const sourceIdP = "idp"

// idpKeyIDPrefix starts the key id of an identity provider's caller, so
// that it never equals an API key's.
const idpKeyIDPrefix = "idp-"

// IdentityKeyID is the key id an identity provider's caller whose identity
// claim is value is metered under: "idp-" and 12 hex digits of its
// SHA-256.
func IdentityKeyID(value string) string { return idpKeyIDPrefix + metering.KeyID(value) }

// sourceIdentityKey is the credential source of an API key bound to an
// identity provider's caller (idp_upstream key).
const sourceIdentityKey = "identity-key"

// idpKeyAdmit is idpAdmit with idp_upstream key: the upstream credential is
// the API key bound to the caller's identity (Options.IdPIdentityKey), and
// the plan that key's (the key registry: a revoked key is refused 401 as
// for a key sent). An identity without a key is refused 403; a registry
// that cannot answer, 503.
func (s *Server) idpKeyAdmit(ctx context.Context, ex *exchange) (*metering.Plan, *refusal) {
	cred := ex.cred
	key := ""
	if ex.upstream != nil {
		key = ex.upstream.key // looked up already on this request
	} else {
		k, err := s.opts.IdPIdentityKey(ctx, cred.keyID)
		switch {
		case errors.Is(err, metering.ErrUnknownKey):
			return nil, &refusal{status: http.StatusForbidden, code: s.opts.ErrorCodes.Unauthorized,
				message: "this server holds no API key for your identity (" + cred.keyID + "); ask the API's operator for access"}
		case err != nil:
			s.logger.Error("identity provider: the key of an identity could not be read; refusing the call", "key_id", cred.keyID, "error", err.Error())
			return nil, s.unavailable("the key registry is temporarily unavailable")
		}
		key = k
	}
	up := &credential{key: key, keyID: cred.keyID, source: sourceIdentityKey, unsafe: unsafeKeyChar(key)}
	if s.opts.Keys == nil {
		ex.upstream = up
		return nil, nil
	}
	plan, r := s.resolveKey(ctx, up, "")
	if r != nil {
		return nil, r
	}
	ex.upstream = up
	return plan, nil
}

// idpChallenge is the WWW-Authenticate of a 401 in resource-server mode
// (RFC 6750 §3, RFC 9728 §5.1): where the protected resource metadata is,
// which names the vendor's authorization server.
func (s *Server) idpChallenge(errCode, description string) string {
	v := `Bearer resource_metadata="` + s.idpMetadataURL() + `"`
	if errCode != "" {
		v += `, error="` + errCode + `", error_description="` + strings.ReplaceAll(description, `"`, "'") + `"`
	}
	return v
}

// idpMetadataURL is the protected resource metadata URL of the MCP
// endpoint (RFC 9728 §3.1: the well-known path, then the resource's path).
func (s *Server) idpMetadataURL() string {
	origin := strings.TrimSuffix(s.opts.IdPResource, s.opts.MCPPath)
	return origin + "/.well-known/oauth-protected-resource" + s.opts.MCPPath
}

// idpResourceMetadata serves the protected resource metadata (RFC 9728 §2)
// of the MCP endpoint in resource-server mode: the resource (the audience
// tokens must carry) and the vendor's authorization server.
func (s *Server) idpResourceMetadata(c *gin.Context) {
	c.Header("Cache-Control", "public, max-age=3600")
	writeJSON(c, http.StatusOK, map[string]any{
		"resource":                 s.opts.IdPResource,
		"authorization_servers":    []string{s.opts.IdPIssuer},
		"bearer_methods_supported": []string{"header"},
		"resource_name":            s.opts.Name,
	})
}

// idpPlan is the plan of an identity provider's caller: the one its plan
// claim names, or the default plan; a 403 refusal for a name the plans
// file does not define. Nil without plans (no key registry).
func (s *Server) idpPlan(cred *credential) (*metering.Plan, *refusal) {
	ps, ok := s.opts.Keys.(interface{ Plans() *metering.Plans })
	if !ok || ps.Plans() == nil {
		return nil, nil
	}
	plans := ps.Plans()
	if cred.idp.Plan == "" {
		return plans.Default(), nil
	}
	if plan := plans.Plan(cred.idp.Plan); plan != nil {
		return plan, nil
	}
	return nil, &refusal{status: http.StatusForbidden, code: s.opts.ErrorCodes.Unauthorized,
		message: "the plan " + strconv.Quote(cred.idp.Plan) + " your access token names is not one this server defines"}
}

// identityPlan is the plan of an identity provider's caller without
// admitting a call: its bound key's with idp_upstream key (a registry read,
// idpKeyAdmit), else the one its plan claim names (idpPlan; no token
// exchange).
func (s *Server) identityPlan(ctx context.Context, ex *exchange) (*metering.Plan, *refusal) {
	if s.opts.IdPIdentityKey != nil {
		return s.idpKeyAdmit(ctx, ex)
	}
	return s.idpPlan(ex.cred)
}

// idpAdmit completes an identity provider's caller for a call: its plan
// and, with idp_upstream key, its bound key (identityPlan), else the plan
// its plan claim names (403 for a plan the plans file does not define) and
// its upstream credential (idp.Verifier.UpstreamToken: 401 when the
// provider refuses the exchange, 503 when it cannot be reached).
// ex.upstream becomes that credential; the caller (ex.cred) stays as the
// credential middleware made it.
func (s *Server) idpAdmit(ctx context.Context, ex *exchange) (*metering.Plan, *refusal) {
	cred := ex.cred
	plan, r := s.identityPlan(ctx, ex)
	if r != nil || ex.upstream != nil {
		return plan, r // refused, or the upstream credential settled already (a bound key, or exchanged before on this request)
	}
	token, err := s.opts.IdP.UpstreamToken(ctx, cred.idp)
	if err != nil {
		var te *idp.TokenError
		if errors.As(err, &te) {
			return nil, s.unauthorized(s.idpChallenge("invalid_token", te.Description), te.Description)
		}
		s.logger.Error("identity provider: token exchange failed; refusing the call", "key_id", cred.keyID, "error", err.Error())
		return nil, s.unavailable("the identity provider did not answer the token exchange for the upstream API")
	}
	ex.upstream = &credential{key: token, keyID: cred.keyID, source: sourceIdP, idp: cred.idp, unsafe: unsafeKeyChar(token)}
	return plan, nil
}
