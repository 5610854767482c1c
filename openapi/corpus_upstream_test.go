package openapi

import (
	"context"
	"errors"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/restmcp/restmcp/internal/corpustest"
)

// corpusOtherHosts are the corpus documents whose operations name hosts
// other than their document's servers: with only --upstream they serve
// without those operations, which need upstream_hosts.
var corpusOtherHosts = map[string]bool{
	"github-rest-v1.1.3":     true, // uploads.github.com
	"stripe-2022-04-12":      true, // files.stripe.com
	"digitalocean-multifile": true,
}

// corpusNoOperations are the corpus documents with webhooks only.
var corpusNoOperations = map[string]bool{
	"adyen-balanceplatformtransfernotification-v4": true,
	"webhook-example-oas31":                        true,
}

// TestCorpusServesWithUpstream is the README's "Real use" on every corpus
// document: --upstream pointed at a loopback stub and nothing else (no
// upstream_hosts). Every document serves, every tool sends to the stub, and
// an operation whose server names another host is refused naming that host
// and upstream_hosts.
func TestCorpusServesWithUpstream(t *testing.T) {
	corpustest.Require(t)
	entries := corpustest.Entries(t)
	const stub = "http://127.0.0.1:18999"
	for _, folder := range slices.Sorted(maps.Keys(entries)) {
		t.Run(folder, func(t *testing.T) {
			if raceEnabled && slowLenient[folder] {
				t.Skipf("!!! SKIPPING %s under -race (TestCorpusAll's run without -race covers it)", folder)
			}
			path := filepath.Join(corpusDir, folder, entries[folder])
			opts := LoadOptions{Upstream: stub, RefRoot: filepath.Join(corpusDir, folder), Lenient: knownBroken[folder]}
			if corpusOtherHosts[folder] && !knownBroken[folder] {
				// Strict: the load fails, naming the other host and the setting.
				_, err := Load(context.Background(), path, opts)
				var he *UpstreamHostError
				if !errors.As(err, &he) || !strings.Contains(err.Error(), "add \""+he.Host+"\" to upstream_hosts") {
					t.Fatalf("%s strict with --upstream only: %v; want the other host named with upstream_hosts", folder, err)
				}
				opts.Lenient = true
			}
			d, err := Load(context.Background(), path, opts)
			if err != nil {
				t.Fatalf("%s with --upstream %s: %v", folder, stub, err)
			}
			if (len(d.Tools) == 0) != corpusNoOperations[folder] {
				t.Fatalf("%s: %d tools", folder, len(d.Tools))
			}
			for _, tl := range d.Tools {
				if u, err := url.Parse(tl.ServerURL); err != nil || u.Scheme+"://"+u.Host != stub {
					t.Fatalf("%s: tool %s sends to %s, not the upstream %s", folder, tl.Name, tl.ServerURL, stub)
				}
			}
			refused := 0
			for _, p := range d.Problems {
				if strings.Contains(p.Message, "upstream_hosts") {
					refused++
					if !strings.Contains(p.Message, "is on host") || !strings.Contains(p.Message, `not the upstream's host "127.0.0.1:18999"`) {
						t.Errorf("%s: refusal %q does not name the hosts", folder, p.Message)
					}
				}
			}
			if (refused > 0) != corpusOtherHosts[folder] {
				t.Errorf("%s: %d operations refused for another host; want some only for %v", folder, refused, corpusOtherHosts)
			}
			t.Logf("%s: %d tools, all to the upstream; %d operations on other hosts", folder, len(d.Tools), refused)
		})
	}
}
