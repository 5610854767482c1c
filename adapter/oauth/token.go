package oauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"github.com/restmcp/restmcp/internal/seal"
)

// The prefixes of what restmcp issues. An access token is never taken for
// an API key sent as a Bearer token, nor the other way round: a Bearer
// value that starts with AccessTokenPrefix is an access token, and
// anything else is a key.
const (
	AccessTokenPrefix  = "rmcp_at_"
	RefreshTokenPrefix = "rmcp_rt_"
	CodePrefix         = "rmcp_ac_"
)

// IsAccessToken reports whether v has the shape of an access token restmcp
// issued (whether it is valid is for Server.ResolveToken to say).
func IsAccessToken(v string) bool { return strings.HasPrefix(v, AccessTokenPrefix) }

// b64 is base64url without padding (RFC 4648 §5), the alphabet of every
// token, code and id restmcp issues.
var b64 = base64.RawURLEncoding

// randomString is n random bytes in base64url.
func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return b64.EncodeToString(b)
}

// newSecret returns a new token of the form <prefix><grant id>.<secret>
// (a 256-bit secret) and its hash as the store keeps it.
func newSecret(prefix, grantID string) (token, hash string) {
	token = prefix + grantID + "." + randomString(32)
	return token, hashToken(token)
}

// hashToken is the SHA-256 of a token, in hex: what the store holds.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// parseSecret returns the grant id of a token of the given prefix, or
// false when v does not have that shape.
func parseSecret(prefix, v string) (grantID string, ok bool) {
	rest, ok := strings.CutPrefix(v, prefix)
	if !ok {
		return "", false
	}
	id, secret, ok := strings.Cut(rest, ".")
	if !ok || len(id) != grantIDLen || len(secret) != secretLen || !isBase64URL(id) || !isBase64URL(secret) {
		return "", false
	}
	return id, true
}

// Lengths of a grant id (128 bits) and a secret (256 bits) in base64url.
const (
	grantIDLen = 22
	secretLen  = 43
)

func isBase64URL(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// validVerifier reports whether v is a PKCE code_verifier: 43 to 128
// characters of [A-Za-z0-9-._~] (RFC 7636 §4.1,
// https://www.rfc-editor.org/rfc/rfc7636#section-4.1).
func validVerifier(v string) bool {
	if len(v) < 43 || len(v) > 128 {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// validChallenge reports whether c can be an S256 code_challenge: the
// base64url of a SHA-256, 43 characters (RFC 7636 §4.2).
func validChallenge(c string) bool { return len(c) == 43 && isBase64URL(c) }

// sealer encrypts API keys at rest (internal/seal: AES-256-GCM, the grant
// id as additional data, so a sealed key copied onto another grant does not
// open), and holds the HMAC keys derived from the same secret.
type sealer struct {
	keys *seal.Sealer
	csrf []byte // HMAC key for the sign-in form's CSRF token, derived from the same secret
	ids  []byte // HMAC key for derived client ids and registration tokens
}

// newSealer takes the 32-byte encryption key.
func newSealer(key []byte) (*sealer, error) {
	keys, err := seal.New(key)
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("restmcp oauth csrf"))
	ids := hmac.New(sha256.New, key)
	ids.Write([]byte("restmcp oauth ids"))
	return &sealer{keys: keys, csrf: mac.Sum(nil), ids: ids.Sum(nil)}, nil
}

// seal encrypts key for grant id: nonce ‖ ciphertext.
func (s *sealer) seal(grantID, key string) []byte { return s.keys.Seal(grantID, key) }

// open decrypts what seal made for grant id.
func (s *sealer) open(grantID string, sealed []byte) (string, error) {
	return s.keys.Open(grantID, sealed)
}

// csrfToken is the sign-in form's CSRF token for the cookie value v: an
// HMAC, so that any replica with the same encryption key checks it.
func (s *sealer) csrfToken(v string) string {
	mac := hmac.New(sha256.New, s.csrf)
	mac.Write([]byte(v))
	return b64.EncodeToString(mac.Sum(nil))
}

// checkCSRF reports whether token is csrfToken(cookie).
func (s *sealer) checkCSRF(cookie, token string) bool {
	if cookie == "" || token == "" {
		return false
	}
	return hmac.Equal([]byte(s.csrfToken(cookie)), []byte(token))
}

// derive is the HMAC-SHA256 of data for purpose under a key derived from
// the encryption key, in base64url (43 characters): the same on every
// replica, unguessable without the key.
func (s *sealer) derive(purpose string, data []byte) string {
	mac := hmac.New(sha256.New, s.ids)
	mac.Write([]byte(purpose))
	mac.Write([]byte{0})
	mac.Write(data)
	return b64.EncodeToString(mac.Sum(nil))
}
