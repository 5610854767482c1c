package oauth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/internal/clip"
)

// Enterprise-Managed Authorization (the MCP authorization extension,
// https://github.com/modelcontextprotocol/ext-auth/blob/main/specification/draft/enterprise-managed-authorization.mdx):
// a client that signed its user in at the user's enterprise identity
// provider gets from it, by RFC 8693 token exchange, an Identity Assertion
// JWT Authorization Grant (ID-JAG) for this authorization server, and
// presents it at the token endpoint as an RFC 7523 JWT bearer grant. No
// sign-in page, no consent: the enterprise decides who may connect. The
// access token issued stands for the API key the deployment configured for
// that enterprise (EnterpriseIdP.Key): the upstream API gets that key,
// and the calls are metered per user (key id "ema-" and the hash of the
// issuer and subject) under the key's plan.

// GrantTypeJWTBearer is the RFC 7523 §2.1 grant type an ID-JAG is
// presented with.
const GrantTypeJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// EnterpriseIdP is an enterprise identity provider whose identity
// assertions this server accepts.
type EnterpriseIdP struct {
	// Verifier checks its assertions (idp.Verifier.VerifyAssertion), made
	// with this server's issuer as the audience.
	Verifier *idp.Verifier
	// Key is the API key its users' tokens stand for.
	Key string
}

// emaKeyIDPrefix starts the key id of an enterprise-managed user, so that
// it never equals an API key's.
const emaKeyIDPrefix = "ema-"

// assertionGrant answers the JWT bearer grant (RFC 7523 §2.1) with an
// ID-JAG (EMA §5.1): the assertion checked by its issuer's verifier, its
// client_id the authenticated client's, its resource this server's, its
// jti not used before (kept until the assertion expires, in the Store,
// so that no replica takes it twice), the configured key still accepted.
// The answer is an access token without a refresh token: the client gets
// a fresh assertion from the enterprise instead (so the enterprise can
// revoke). Every refusal is invalid_grant (invalid_target for the
// resource) naming what was wrong, never the assertion.
func (s *Server) assertionGrant(c *gin.Context, f url.Values) {
	ctx := c.Request.Context()
	assertion, clientID := f.Get("assertion"), f.Get("client_id")
	if !required(c, f, "assertion", "client_id") {
		return
	}
	ent, msg := s.enterpriseOf(assertion)
	if ent == nil {
		oauthError(c, http.StatusBadRequest, "invalid_grant", msg)
		return
	}
	a, err := ent.Verifier.VerifyAssertion(ctx, assertion)
	if err != nil {
		var te *idp.TokenError
		if errors.As(err, &te) {
			oauthError(c, http.StatusBadRequest, "invalid_grant", te.Description)
			return
		}
		s.logger.Error("oauth: checking an identity assertion failed", "issuer", ent.Verifier.Issuer(), "error", err.Error())
		c.Header("Retry-After", "5")
		oauthError(c, http.StatusServiceUnavailable, "temporarily_unavailable", "the enterprise identity provider "+ent.Verifier.Issuer()+" cannot be read right now (its discovery document or keys); retry in 5 seconds")
		return
	}
	resource, known := s.resourceOf(a.Resource)
	switch {
	case a.ClientID != clientID:
		oauthError(c, http.StatusBadRequest, "invalid_grant", "the assertion was issued to the client "+strconv.Quote(clip.String(a.ClientID, 200))+", not to this one ("+clip.String(clientID, 200)+")")
		return
	case !known:
		oauthError(c, http.StatusBadRequest, "invalid_target", "the assertion is for the resource "+strconv.Quote(clip.String(a.Resource, 200))+", not for this server's ("+s.resource+")")
		return
	case f.Get("resource") != "" && strings.TrimSuffix(f.Get("resource"), "/") != resource:
		oauthError(c, http.StatusBadRequest, "invalid_target", "resource "+strconv.Quote(clip.String(f.Get("resource"), 200))+" is not the one the assertion is for, "+resource)
		return
	}
	if _, err := s.lookupClient(ctx, clientID, c.ClientIP()); err != nil {
		if errors.Is(err, ErrNotFound) || isClientError(err) {
			oauthError(c, http.StatusBadRequest, "invalid_grant", "the client "+strconv.Quote(clip.String(clientID, 200))+" is not registered at this authorization server")
			return
		}
		s.storeFailed(c, "reading the client", err)
		return
	}
	sum := sha256.Sum256([]byte(a.Issuer + "\x00" + a.ID))
	switch err := s.opts.Store.UseOnce(ctx, hex.EncodeToString(sum[:16]), time.Until(a.Expiry)+idp.DefaultSkew); {
	case errors.Is(err, ErrReused):
		s.logger.Warn("oauth: an identity assertion was presented again", "issuer", a.Issuer, "client_id", clientID)
		oauthError(c, http.StatusBadRequest, "invalid_grant", "the assertion was already used (jti "+strconv.Quote(clip.String(a.ID, 100))+"); get a new one from your identity provider")
		return
	case err != nil:
		s.storeFailed(c, "recording the assertion", err)
		return
	}
	if !s.enterpriseKeyAccepted(c, ent) {
		return
	}
	s.issueForAssertion(c, ent, a, clientID, resource)
}

// enterpriseKeyAccepted checks the key configured for ent (CheckKey),
// answering the refusal itself when it is not.
func (s *Server) enterpriseKeyAccepted(c *gin.Context, ent *EnterpriseIdP) bool {
	if s.opts.CheckKey == nil {
		return true
	}
	switch err := s.opts.CheckKey(c.Request.Context(), ent.Key); {
	case isKeyRefusal(err):
		s.logger.Error("oauth: the API key configured for an enterprise identity provider is not accepted", "issuer", ent.Verifier.Issuer(), "key_id", keyIDOf(ent.Key))
		oauthError(c, http.StatusBadRequest, "invalid_grant", "this server does not accept the API key configured for "+ent.Verifier.Issuer()+"; its operator has to set a valid one")
		return false
	case err != nil:
		s.storeFailed(c, "checking the API key", err)
		return false
	}
	return true
}

// issueForAssertion makes the grant of a checked assertion, active at
// once, and answers its access token.
func (s *Server) issueForAssertion(c *gin.Context, ent *EnterpriseIdP, a *idp.Assertion, clientID, resource string) {
	ctx := c.Request.Context()
	id := randomString(16)
	_, codeHash := newSecret(CodePrefix, id)
	g := &Grant{
		ID: id, ClientID: clientID, Resource: resource, Scope: Scope,
		KeyID: EnterpriseKeyID(a.Issuer, a.Subject), SealedKey: s.seal.seal(id, ent.Key), Created: s.now(), CodeHash: codeHash,
	}
	if err := s.opts.Store.CreateGrant(ctx, g, DefaultCodeTTL); err != nil {
		s.storeFailed(c, "creating grant", err)
		return
	}
	t, access, _ := s.newTokens(id)
	t.RefreshHash, t.TTL = "", s.opts.AccessTokenTTL // no refresh token: the grant lives as long as its access token
	if _, err := s.opts.Store.Redeem(ctx, id, codeHash, t); err != nil {
		s.storeFailed(c, "activating grant", err)
		return
	}
	s.touchClient(ctx, clientID)
	s.logger.Info("oauth tokens issued for an identity assertion", "client_id", clientID, "key_id", g.KeyID, "issuer", a.Issuer, "grant_id", id, "resource", resource)
	c.Header("Cache-Control", "no-store")
	c.Header("Pragma", "no-cache")
	c.JSON(http.StatusOK, gin.H{"access_token": access, "token_type": "Bearer", "expires_in": int64(s.opts.AccessTokenTTL / time.Second), "scope": Scope})
}

// EnterpriseKeyID is the key id an enterprise-managed user is metered
// under: "ema-" and 12 hex digits of the SHA-256 of the issuer and the
// subject.
func EnterpriseKeyID(issuer, subject string) string {
	sum := sha256.Sum256([]byte(issuer + "\x00" + subject))
	return emaKeyIDPrefix + hex.EncodeToString(sum[:6])
}

// enterpriseOf is the enterprise identity provider that issued assertion,
// read from its iss claim before any check (the signature is checked by
// that provider's verifier); nil and why when it is none this server
// trusts.
func (s *Server) enterpriseOf(assertion string) (*EnterpriseIdP, string) {
	issuer, err := idp.AssertionIssuer(assertion)
	if err != nil {
		return nil, err.Error()
	}
	for i := range s.opts.EnterpriseIdPs {
		if e := &s.opts.EnterpriseIdPs[i]; e.Verifier.Issuer() == issuer {
			return e, ""
		}
	}
	return nil, "the assertion was issued by " + strconv.Quote(clip.String(issuer, 200)) + ", which is not an identity provider this server accepts assertions from"
}

// isClientError reports whether err is a *ClientError (a client id that
// names no usable client).
func isClientError(err error) bool {
	var ce *ClientError
	return errors.As(err, &ce)
}
