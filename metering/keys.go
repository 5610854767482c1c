package metering

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// KeyID identifies an API key in Redis keys, usage events, logs and
// metrics without revealing it: the first 12 hex digits (48 bits) of the
// key's SHA-256. The registry stores the full SHA-256 and refuses a key
// whose id matches but whose full hash does not.
func KeyID(key string) string {
	s := sha256.Sum256([]byte(key))
	var h [12]byte
	hex.Encode(h[:], s[:6])
	return string(h[:])
}

// sum is the lower-case hex SHA-256 of key, the form the registry and the
// plans file's keys section store.
func sum(key string) string {
	s := sha256.Sum256([]byte(key))
	var h [64]byte
	hex.Encode(h[:], s[:])
	return string(h[:])
}

// keyIDOf is the key id of the key whose sum is s.
func keyIDOf(s string) string { return s[:12] }

// KeyPrefix starts every Redis key written by this package.
const KeyPrefix = "restmcp:"

// Key returns the Redis key of one caller's record: KeyPrefix, then keyID
// in braces (the Redis Cluster hash tag, so all of one caller's keys share a
// slot), then each part preceded by ':'. For example Key("abc123",
// "month:202611") is "restmcp:{abc123}:month:202611". It is the only place
// in Go where key names are built; the scripts name further keys of the
// same caller from a key's "restmcp:{keyID}:" prefix (redis.go, settle.go).
func Key(keyID string, parts ...string) string {
	var b strings.Builder
	b.Grow(keySize(keyID, parts...))
	writeKey(&b, keyID, parts...)
	return b.String()
}

// keySize is len(Key(keyID, parts...)).
func keySize(keyID string, parts ...string) int {
	n := len(KeyPrefix) + len(keyID) + 2
	for _, p := range parts {
		n += 1 + len(p)
	}
	return n
}

// writeKey writes Key(keyID, parts...) to b.
func writeKey(b *strings.Builder, keyID string, parts ...string) {
	b.WriteString(KeyPrefix)
	b.WriteByte('{')
	b.WriteString(keyID)
	b.WriteByte('}')
	for _, p := range parts {
		b.WriteByte(':')
		b.WriteString(p)
	}
}

// monthHash starts the name of a month hash (redis.go, luaMonth):
// Key(keyID, monthHash+"yyyymm").
const monthHash = "month:"

// period names the calendar month (UTC) containing t as "yyyymm".
func period(t time.Time) string { return t.UTC().Format("200601") }

// monthStart returns the first instant of the calendar month (UTC)
// containing t, shifted by delta months.
func monthStart(t time.Time, delta int) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month()+time.Month(delta), 1, 0, 0, 0, 0, time.UTC)
}
