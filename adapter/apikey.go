package adapter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
)

// Where a caller can present its API key on the MCP request. The first one
// present, in this order, wins; the others are ignored.
const (
	apiKeyHeader = "X-Api-Key" // canonical form of x-api-key
	apiKeyQuery  = "api_key"
)

// credential is the caller's API key as presented on the MCP HTTP request.
type credential struct {
	key    string // the key itself; never logged
	keyID  string // KeyID(key); "" when no key was presented
	source string // "header", "bearer" or "query"; "" when none
}

// credentialKey is the context key for the request's *credential.
//
// The go-sdk in stateless mode connects a fresh session for each POST with
// the POST's own context (mcp/streamable.go: connectStreamable(req.Context(),
// …)), and jsonrpc2 derives each handler's context from it, so values set by
// gin middleware reach the tool handler. The SDK's own carrier,
// auth.TokenInfo, can only be set by auth.RequireBearerToken (its context
// key is unexported) and cannot see a key sent as x-api-key or ?api_key=.
type credentialKey struct{}

func withCredential(ctx context.Context, c *credential) context.Context {
	return context.WithValue(ctx, credentialKey{}, c)
}

// credentialFrom returns the credential stored by the middleware, or an
// empty one.
func credentialFrom(ctx context.Context) *credential {
	if c, ok := ctx.Value(credentialKey{}).(*credential); ok && c != nil {
		return c
	}
	return &credential{}
}

// extractCredential reads the caller's key from, in order of precedence, the
// x-api-key header, an Authorization: Bearer header, and the api_key query
// parameter of the MCP URL. Empty values count as absent; an Authorization
// header with another scheme (Basic, …) is ignored.
func extractCredential(r *http.Request) *credential {
	if k := strings.TrimSpace(r.Header.Get(apiKeyHeader)); k != "" {
		return newCredential(k, "header")
	}
	if k, ok := bearerToken(r.Header.Get("Authorization")); ok {
		return newCredential(k, "bearer")
	}
	if k := strings.TrimSpace(r.URL.Query().Get(apiKeyQuery)); k != "" {
		return newCredential(k, "query")
	}
	return &credential{}
}

func newCredential(key, source string) *credential {
	return &credential{key: key, keyID: KeyID(key), source: source}
}

// bearerToken returns the token of an "Authorization: Bearer <token>" value.
// The scheme is case-insensitive (RFC 9110 §11.1).
func bearerToken(v string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(v), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// KeyID identifies an API key in logs and metering without revealing it: the
// first 12 hex digits of the key's SHA-256.
func KeyID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:6])
}
