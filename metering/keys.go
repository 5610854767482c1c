package metering

import (
	"strings"
	"time"
)

// KeyPrefix starts every Redis key written by this package.
const KeyPrefix = "restmcp:"

// Key returns the Redis key of one caller's record: KeyPrefix, then keyID
// in braces (the Redis Cluster hash tag, so all of one caller's keys share a
// slot), then each part preceded by ':'. For example Key("abc123", "usage",
// "202611") is "restmcp:{abc123}:usage:202611". It is the only place where
// the key layout is defined.
func Key(keyID string, parts ...string) string {
	var b strings.Builder
	n := len(KeyPrefix) + len(keyID) + 2
	for _, p := range parts {
		n += 1 + len(p)
	}
	b.Grow(n)
	b.WriteString(KeyPrefix)
	b.WriteByte('{')
	b.WriteString(keyID)
	b.WriteByte('}')
	for _, p := range parts {
		b.WriteByte(':')
		b.WriteString(p)
	}
	return b.String()
}

// rateKey is the key of a caller's GCRA state.
func rateKey(keyID string) string { return Key(keyID, "rl") }

// usageKey is the key of a caller's counter for the calendar month (UTC)
// containing t.
func usageKey(keyID string, t time.Time) string { return Key(keyID, "usage", period(t)) }

// period names the calendar month (UTC) containing t as "yyyymm".
func period(t time.Time) string { return t.UTC().Format("200601") }

// monthStart returns the first instant of the calendar month (UTC)
// containing t, shifted by delta months.
func monthStart(t time.Time, delta int) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month()+time.Month(delta), 1, 0, 0, 0, 0, time.UTC)
}
