package adapter

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/restmcp/restmcp/adapter/idp"

	"github.com/restmcp/restmcp/metering"
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
	source string // "header", "bearer", "query" or "oauth" (an access token's key); "" when none
	unsafe string // non-empty: what in key is unsafe (see unsafeKeyChar); such a key is refused
	// idp is the caller an identity provider's access token stands for
	// (Options.IdP, idpfront.go); key is then the upstream credential,
	// set by the gate once the call is authenticated.
	idp *idp.Identity
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
	return &credential{key: key, keyID: metering.KeyID(key), source: source, unsafe: unsafeKeyChar(key)}
}

// unsafeKeyChar names the first character of key that no API key has and
// that could change the meaning of the upstream request the key is placed
// in: control characters (CR and LF split headers), space, '"', ',', ';'
// and '\\' (cookie and header list separators, RFC 6265 §4.1.1), and
// anything outside printable ASCII. "" when key is safe everywhere: as a
// header value, a cookie value and (escaped) a query parameter.
func unsafeKeyChar(key string) string {
	for i := 0; i < len(key); i++ {
		switch b := key[i]; {
		case b < 0x20 || b == 0x7f:
			return fmt.Sprintf("a control character (byte 0x%02x)", b)
		case b >= 0x80:
			return "a non-ASCII character"
		case b == ' ' || b == '"' || b == ',' || b == ';' || b == '\\':
			return fmt.Sprintf("the character %q", b)
		}
	}
	return ""
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
