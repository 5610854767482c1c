package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/restmcp/restmcp/internal/corpustest"
)

// corpusDir is the third-party corpus beside the repository.
var corpusDir = corpustest.Dir()

// knownBroken are corpus documents that kin-openapi v0.153.0 cannot load
// as published; strict Load must fail for them with a *LoadError naming
// every defect, and lenient Load must serve their tools.
var knownBroken = map[string]bool{
	"petstore-oas31":                true,
	"fire-business-bundled-oas31":   true,
	"fire-business-multifile-oas31": true,
	"square-connect-v2":             true,
	"digitalocean-multifile":        true,
}

func TestCorpusPetstore(t *testing.T) {
	corpustest.Require(t)
	runCorpus := func(folder string, opts LoadOptions, calls []call) {
		d, err := Load(context.Background(), corpustest.Path(t, folder), opts)
		if err != nil {
			t.Fatalf("Load(%s): %v", folder, err)
		}
		for _, c := range calls {
			t.Run(folder+"/"+c.name, func(t *testing.T) {
				tl := toolByName(t, d, c.tool)
				req, err := tl.NewRequest(context.Background(), json.RawMessage(c.args), c.key)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(c.want, dumpRequest(t, req)); diff != "" {
					t.Errorf("request (-want +got):\n%s", diff)
				}
			})
		}
	}
	runCorpus("petstore-oas30", LoadOptions{Upstream: "http://upstream.test"}, []call{
		{name: "findPetsByStatus", tool: "find_pets_by_status", args: `{"status":"sold"}`, key: "k-123",
			want: "GET http://upstream.test/api/v3/pet/findByStatus?status=sold\nAccept: application/json, application/xml\nAuthorization: Bearer k-123\n"},
		{name: "addPet", tool: "add_pet", args: `{"name":"Rex","photoUrls":["u"],"status":"available"}`, key: "k-123",
			want: "POST http://upstream.test/api/v3/pet\nAccept: application/json, application/xml\nAuthorization: Bearer k-123\nContent-Type: application/json\n\n" + `{"name":"Rex","photoUrls":["u"],"status":"available"}`},
		{name: "getOrderById", tool: "get_order_by_id", args: `{"orderId":7}`,
			want: "GET http://upstream.test/api/v3/store/order/7\nAccept: application/json, application/xml\n"},
	})
	runCorpus("petstore-swagger20", LoadOptions{}, []call{
		{name: "listPets", tool: "list_pets", args: `{"limit":20}`,
			want: "GET http://petstore.swagger.io/v1/pets?limit=20\nAccept: application/json\n"},
		{name: "showPetById", tool: "show_pet_by_id", args: `{"petId":"p 1"}`,
			want: "GET http://petstore.swagger.io/v1/pets/p%201\nAccept: application/json\n"},
	})
}

func TestCorpusAll(t *testing.T) {
	corpustest.Require(t)
	entries := corpustest.Entries(t)
	for _, folder := range slices.Sorted(maps.Keys(entries)) {
		t.Run(folder, func(t *testing.T) {
			if raceEnabled && slowLenient[folder] {
				// Each takes over a minute under -race on a 2-core machine,
				// which would push the package past go test's 10 min
				// timeout; the lenient pass is single-threaded, so -race
				// adds nothing here. They run in every test without -race.
				t.Skipf("!!! SKIPPING %s under -race (the lenient pass is single-threaded; run without -race to check it)", folder)
			}
			p := filepath.Join(corpusDir, folder, entries[folder])
			runtime.GC()
			start := time.Now()
			// Some documents keep shared files next to the entry's folder
			// (petstore-separate-swagger20: spec/ and common/), so the ref
			// root is the corpus folder, not the entry file's folder.
			opts := LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}, RefRoot: filepath.Join(corpusDir, folder)}
			d, err := Load(context.Background(), p, opts)
			elapsed := time.Since(start)
			strict := "strict ok"
			if err != nil {
				if !knownBroken[folder] {
					t.Fatalf("%s: %v", folder, err)
				}
				var le *LoadError
				if !errors.As(err, &le) || len(le.Problems) == 0 {
					t.Errorf("strict error is not a *LoadError listing problems: %v", err)
				}
				if !strings.Contains(err.Error(), entries[folder]) && !strings.Contains(err.Error(), folder) {
					t.Errorf("error does not name the document: %v", err)
				}
				strict = fmt.Sprintf("strict FAILS (%d problems: %s)", len(le.Problems), firstLine(err.Error()))
				opts.Lenient = true
				start = time.Now()
				d, err = Load(context.Background(), p, opts)
				elapsed = time.Since(start)
				if err != nil {
					t.Fatalf("%s lenient: %v", folder, err)
				}
				checkLenientCorpus(t, folder, d, le)
			} else if knownBroken[folder] {
				t.Logf("%s: expected to fail but loaded", folder)
			}
			total, max := 0, 0
			for _, tl := range d.Tools {
				n := len(tl.InputSchema) + len(tl.OutputSchema)
				total += n
				max = maxInt(max, len(tl.InputSchema))
				if !isToolName(tl.Name, 64) {
					t.Errorf("invalid tool name %q", tl.Name)
				}
				s := string(tl.InputSchema)
				if strings.Contains(s, `"$ref"`) || strings.Contains(s, `"nullable"`) {
					t.Errorf("%s: $ref or nullable in input schema", tl.Name)
				}
				// Each argument's validator, as the tool's first call
				// compiles it: one that does not compile refuses every value.
				for name, a := range tl.plan.validators() {
					if a.err != nil {
						t.Errorf("%s: argument %s: %v", tl.Name, name, a.err)
					}
				}
			}
			checkFingerprint(t, folder, d)
			lenient := ""
			if opts.Lenient {
				lenient = fmt.Sprintf("; lenient: %d problems", len(d.Problems))
			}
			t.Logf("%-45s %4d tools %8s schemas %9d bytes (largest input %d); %s%s", folder, len(d.Tools), elapsed.Round(time.Millisecond), total, max, strict, lenient)
		})
	}
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}
