package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/restmcp/restmcp/internal/corpustest"
)

// TestR8GitHubExamplesValidate takes GitHub's own documented response
// example of every operation that has one (335 object examples, among them
// repos/get, whose template_repository is null where the document says
// object) and checks that, after ConformStructured, it validates against
// the tool's outputSchema under a JSON Schema 2020-12 validator, as an MCP
// SDK client checks structuredContent. Before R8, such examples failed the
// clients' check.
func TestR8GitHubExamplesValidate(t *testing.T) {
	path := corpustest.Path(t, "github-rest-v1.1.3")
	d, err := Load(context.Background(), path, LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct {
			Examples map[string]struct {
				Value json.RawMessage `json:"value"`
			} `json:"examples"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	byOp := map[string]*Tool{}
	for _, tl := range d.Tools {
		byOp[tl.OperationID] = tl
	}
	checked, changed := 0, 0
	for _, item := range doc.Paths {
		for _, opRaw := range item {
			var op struct {
				OperationID string `json:"operationId"`
				Responses   map[string]struct {
					Content map[string]struct {
						Examples map[string]struct {
							Ref string `json:"$ref"`
						} `json:"examples"`
					} `json:"content"`
				} `json:"responses"`
			}
			if json.Unmarshal(opRaw, &op) != nil || op.OperationID == "" {
				continue
			}
			tl := byOp[op.OperationID]
			if tl == nil || len(tl.OutputSchema) == 0 {
				continue
			}
			for _, code := range []string{"200", "201"} {
				for _, ex := range op.Responses[code].Content["application/json"].Examples {
					v := doc.Components.Examples[strings.TrimPrefix(ex.Ref, "#/components/examples/")].Value
					dec := json.NewDecoder(bytes.NewReader(v))
					dec.UseNumber()
					var obj map[string]any
					if dec.Decode(&obj) != nil || obj == nil {
						continue // not an object example
					}
					before, _ := json.Marshal(obj)
					got := tl.ConformStructured(obj)
					after, _ := json.Marshal(got)
					if !bytes.Equal(before, after) {
						changed++
					}
					if err := validate(tl.OutputSchema, got); err != nil {
						t.Errorf("%s example %s: %v", tl.Name, ex.Ref, err)
					}
					checked++
				}
			}
		}
	}
	if checked < 300 {
		t.Errorf("checked %d examples, want at least 300", checked)
	}
	t.Logf("%d GitHub response examples validate after ConformStructured (%d changed by it)", checked, changed)
}

func validate(schema json.RawMessage, v any) error {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return err
	}
	r, err := s.Resolve(nil)
	if err != nil {
		return err
	}
	b, _ := json.Marshal(v)
	var inst any
	_ = json.Unmarshal(b, &inst)
	return r.Validate(inst)
}

// TestNoOutputSchemas: output_schemas false leaves every tool without an
// outputSchema; the default lists them, cut to about OutputSchemaBudget.
func TestNoOutputSchemas(t *testing.T) {
	path := corpustest.Path(t, "github-rest-v1.1.3")
	opts := LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}}
	d, err := Load(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	with, largest := 0, 0
	for _, tl := range d.Tools {
		if len(tl.OutputSchema) > 0 {
			with++
			largest = max(largest, len(tl.OutputSchema))
		}
	}
	// S2 keeps the root's own properties even when they alone pass the
	// budget (shortened texts, then the largest replaced), so a few roots
	// stay somewhat over it.
	if with != 330 || largest > 6<<10 {
		t.Errorf("default: %d tools with an outputSchema (want 330), largest %d bytes (want at most 6 KiB)", with, largest)
	}
	opts.NoOutputSchemas = true
	d, err = Load(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range d.Tools {
		if tl.OutputSchema != nil {
			t.Fatalf("%s has an outputSchema with NoOutputSchemas", tl.Name)
		}
	}
}

// TestR8CutPlaceholderAcceptsWhatItReplaces: Stripe's expandable fields
// (account: a string id, or the Account object when expanded) are cut by
// the output-schema budget. The placeholder must accept the string id a
// real response carries, and conforming must keep it: a placeholder typed
// object refused it, and SDK clients rejected the whole call.
func TestR8CutPlaceholderAcceptsWhatItReplaces(t *testing.T) {
	d, err := Load(context.Background(), corpustest.Path(t, "stripe-2022-04-12"), LoadOptions{Upstream: "http://upstream.test", Lenient: true})
	if err != nil {
		t.Fatal(err)
	}
	tl := toolByName(t, d, "get_account_capabilities_capability")
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(tl.OutputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if got, want := string(schema.Properties["account"]), `{"description":"account: nested structure omitted; the text content has the whole response"}`; got != want {
		t.Errorf("account's output schema = %s\nwant %s", got, want)
	}
	for _, v := range []any{"acct_1Nv0FGQ9RKHgCVdK", map[string]any{"id": "acct_1", "object": "account"}, nil} {
		got := tl.ConformStructured(map[string]any{"account": v, "id": "card_payments"})
		if diff := cmp.Diff(map[string]any{"account": v, "id": "card_payments"}, got); diff != "" {
			t.Errorf("ConformStructured with account %v (-want +got):\n%s", v, diff)
		}
	}
}
