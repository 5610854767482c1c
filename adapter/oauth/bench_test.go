package oauth

import (
	"context"
	"fmt"
	"runtime"
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

// BenchmarkClientMemory registers clients with VS Code's registration (a
// different loopback port each, so each is a client of its own) into the
// memory store, and reports the heap each stored client takes, in bytes,
// with the cap at its default: MaxClients × that is the store's bound.
func BenchmarkClientMemory(b *testing.B) {
	const n = 10000
	for range b.N {
		h := newHarness(b, NewMemoryStore(nil), func(o *Options) { o.RegisterLimit = -1 })
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i := range n {
			w := h.do("POST", PathRegister, fmt.Sprintf(`{"client_name":"Visual Studio Code","redirect_uris":["https://insiders.vscode.dev/redirect","https://vscode.dev/redirect","http://127.0.0.1/","http://127.0.0.1:%d/"],"grant_types":["authorization_code","refresh_token","urn:ietf:params:oauth:grant-type:device_code"],"response_types":["code"],"token_endpoint_auth_method":"none"}`, 10000+i))
			if w.Code != 201 {
				b.Fatalf("registration %d: %d %s", i, w.Code, w.Body)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		stored := len(h.srv.opts.Store.(*MemoryStore).clients)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(stored), "B/client")
		b.ReportMetric(float64(stored), "clients")
		runtime.KeepAlive(h)
	}
}
