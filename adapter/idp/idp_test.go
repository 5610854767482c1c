package idp_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/adapter/idp/idptest"
)

// BenchmarkVerify is the check of a token seen for the first time (RS256
// signature, claims) and of one seen before (its SHA-256 looked up).
func BenchmarkVerify(b *testing.B) {
	p := idptest.New(b)
	const aud = "https://mcp.example.com/mcp"
	v, err := idp.New(context.Background(), idp.Config{Issuer: p.URL, Audience: aud, Upstream: idp.UpstreamForward})
	if err != nil {
		b.Fatal(err)
	}
	tokens := make([]string, 4096)
	for i := range tokens {
		tokens[i] = p.Token(idptest.Claims{Issuer: p.URL, Subject: "u" + strconv.Itoa(i), Audience: []string{aud}, Expiry: time.Now().Add(time.Hour)})
	}
	ctx := context.Background()
	b.Run("first", func(b *testing.B) {
		v, _ := idp.New(ctx, idp.Config{Issuer: p.URL, Audience: aud, Upstream: idp.UpstreamForward}) // an empty cache
		i := 0
		for b.Loop() {
			if _, err := v.Verify(ctx, tokens[i]); err != nil {
				b.Fatal(err)
			}
			i++
			if i == len(tokens) {
				b.StopTimer()
				v, _ = idp.New(ctx, idp.Config{Issuer: p.URL, Audience: aud, Upstream: idp.UpstreamForward})
				i = 0
				b.StartTimer()
			}
		}
	})
	b.Run("again", func(b *testing.B) {
		for b.Loop() {
			if _, err := v.Verify(ctx, tokens[0]); err != nil {
				b.Fatal(err)
			}
		}
	})
}
