// Package seal encrypts the API keys restmcp keeps at rest (behind OAuth
// grants, bound to identity provider identities) with AES-256-GCM under the
// deployment's 32-byte encryption key (oauth_encryption_key), what it
// belongs to as additional data: a sealed key copied onto another grant or
// identity does not open. The nonce is random (crypto/rand) and travels
// with the ciphertext.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// Sealer seals and opens with one encryption key. Safe for concurrent use.
type Sealer struct{ aead cipher.AEAD }

// New takes the 32-byte encryption key.
func New(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("encryption key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts secret for owner (the grant id, the identity): nonce ‖
// ciphertext.
func (s *Sealer) Seal(owner, secret string) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, []byte(secret), []byte(owner))
}

// Open decrypts what Seal made for owner. It fails for another owner,
// another encryption key or altered bytes.
func (s *Sealer) Open(owner string, sealed []byte) (string, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return "", errors.New("sealed API key too short")
	}
	secret, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(owner))
	if err != nil {
		return "", errors.New("sealed API key does not open with this encryption key")
	}
	return string(secret), nil
}
