package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/internal/testenv"
	"github.com/restmcp/restmcp/openapi"
)

// BenchmarkStartToReady measures what serve does between reading its
// settings and listening, on the three large corpus documents of issue 3:
// load and convert the document, build the startup report, wire metering
// (in memory) and the adapter. scripts/startup-report measures the same
// from outside the process (exec, page faults and all).
func BenchmarkStartToReady(b *testing.B) {
	corpus := filepath.Join("..", "..", "..", "shared", "corpus")
	if _, err := os.Stat(corpus); err != nil {
		testenv.Unavailable(b, "RESTMCP_REQUIRE_CORPUS", "the corpus", fmt.Sprintf("!!! SKIPPING: corpus %s not found (%v)", corpus, err))
	}
	for _, doc := range []string{
		"github-rest-v1.1.3/api.github.com.json",
		"stripe-2022-04-12/spec3.json",
		"kubernetes-1.36-swagger20/swagger.json.unprocessed",
	} {
		b.Run(filepath.Dir(doc), func(b *testing.B) {
			cfg := config.Default()
			cfg.Spec = filepath.Join(corpus, doc)
			cfg.Upstream = "http://upstream.test"
			logger := newLogger(io.Discard, cfg.LogLevel, cfg.LogFormat)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				d, err := openapi.Load(ctx, cfg.Spec, loadOptions(cfg, logger))
				if err != nil {
					b.Fatal(err)
				}
				_ = d.Report(reportOptions(cfg))
				_, mw, err := newServer(ctx, cfg, d, logger, "127.0.0.1:0", nil)
				if err != nil {
					b.Fatal(err)
				}
				mw.close(ctx)
			}
		})
	}
}
