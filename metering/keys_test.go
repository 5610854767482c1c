package metering

import (
	"strings"
	"testing"
	"time"
)

func TestKey(t *testing.T) {
	nov := time.Date(2026, time.November, 3, 4, 5, 6, 0, time.UTC)
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"month hash for a fixed time", monthKey("abc123", nov), "restmcp:{abc123}:month:202611"},
		{"month hash uses UTC", monthKey("abc123", time.Date(2026, time.December, 1, 0, 30, 0, 0, time.FixedZone("CET", 3600))), "restmcp:{abc123}:month:202611"},
		{"sliding log", Key("abc123", "rl", "sw"+windowTag(time.Minute)), "restmcp:{abc123}:rl:sw60s"},
		{"no parts", Key("abc123"), "restmcp:{abc123}"},
		{"several parts", Key("k", "a", "b", "c"), "restmcp:{k}:a:b:c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
			if !strings.HasPrefix(tt.got, KeyPrefix) {
				t.Errorf("%q does not start with KeyPrefix %q", tt.got, KeyPrefix)
			}
		})
	}
}

// TestKeysShareHashTag checks that all of one caller's keys hash to the same
// Redis Cluster slot: the first {...} of each is the keyID.
func TestKeysShareHashTag(t *testing.T) {
	tag := func(k string) string {
		i := strings.IndexByte(k, '{')
		j := strings.IndexByte(k[i+1:], '}')
		return k[i+1 : i+1+j]
	}
	for _, k := range []string{Key("f00d", "rl", "sw1s"), monthKey("f00d", time.Now()), Key("f00d", "calls"), Key("f00d", "key")} {
		if got := tag(k); got != "f00d" {
			t.Errorf("hash tag of %q = %q, want %q", k, got, "f00d")
		}
	}
}

func TestMonthStart(t *testing.T) {
	tests := []struct {
		t     time.Time
		delta int
		want  string
	}{
		{time.Date(2026, time.January, 31, 23, 0, 0, 0, time.UTC), -1, "2025-12-01"},
		{time.Date(2026, time.December, 31, 23, 0, 0, 0, time.UTC), 1, "2027-01-01"},
		{time.Date(2026, time.March, 31, 0, 0, 0, 0, time.UTC), -1, "2026-02-01"},
		{time.Date(2026, time.March, 31, 0, 0, 0, 0, time.UTC), 0, "2026-03-01"},
	}
	for _, tt := range tests {
		if got := monthStart(tt.t, tt.delta).Format(time.DateOnly); got != tt.want {
			t.Errorf("monthStart(%v, %d) = %s, want %s", tt.t, tt.delta, got, tt.want)
		}
	}
}
