package oauth

import (
	"context"
	"testing"
)

// BenchmarkResolveToken is the per-call cost of an access token: from the
// replica's cache, and from each store with the cache off (one Redis
// HGETALL round trip for the Redis store, plus opening the sealed key).
func BenchmarkResolveToken(b *testing.B) {
	for _, bc := range []struct {
		name  string
		store string
		cache bool
	}{{"cached", "memory", true}, {"memory", "memory", false}, {"redis", "redis", false}} {
		b.Run(bc.name, func(b *testing.B) {
			h := newHarness(b, testStores()[bc.store](b), func(o *Options) {
				if !bc.cache {
					o.TokenCacheTTL = -1
				}
			})
			_, access, _ := h.login()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.srv.ResolveToken(ctx, access); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
