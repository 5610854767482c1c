package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/restmcp/restmcp/internal/corpustest"
	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// fitsSchema is an output schema with every keyword the walk reads:
// types, properties, items, additionalProperties, anyOf, $ref.
const fitsSchema = `{"type":"object","properties":{
		"n":{"type":"integer"},"s":{"type":"string"},"b":{"type":"boolean"},"x":{"type":"number"},
		"o":{"type":"object","properties":{"deep":{"type":"array","items":{"$ref":"#/$defs/item"}}}},
		"u":{"anyOf":[{"type":"string"},{"type":"object","properties":{"id":{"type":"integer"}}}]},
		"m":{"type":"object","additionalProperties":{"type":"boolean"}},
		"a<b":{"type":"string"}},
		"$defs":{"item":{"type":"object","properties":{"v":{"type":"string"}}}}}`

// TestFitsStructured: the bytes-only check says "fits" exactly when
// ConformStructured would leave the object as it is: types below the
// root, anyOf (first accepting branch), $ref, integers written as 2.0 or
// 1e3, null anywhere, members the schema does not name (additional
// properties), keys written with escapes, and every occurrence of a
// repeated member.
func TestFitsStructured(t *testing.T) {
	tl := &Tool{OutputSchema: json.RawMessage(fitsSchema)}
	for _, c := range []struct {
		in   string
		fits bool
	}{
		{`{}`, true},
		{`{"n":1,"s":"x","b":true,"x":1.5,"other":[1,{"z":"q"}]}`, true},
		{`{"n":2.0}`, true},
		{`{"n":1e3}`, true},
		{`{"n":2.5}`, false},
		{`{"n":1e400}`, false},
		{`{"n":123456789012345678901234567890}`, true},
		{`{"n":"1"}`, false},
		{`{"s":null,"n":null,"o":null,"u":null}`, true},
		{`{"b":"true"}`, false},
		{`{"x":"1"}`, false},
		{`{"o":{"deep":[{"v":"a"},{"v":null},{}]}}`, true},
		{`{"o":{"deep":[{"v":"a"},{"v":7}]}}`, false},
		{`{"o":{"deep":[{"v":"a"},"not an item"]}}`, false},
		{`{"o":[]}`, false},
		{`{"u":"id"}`, true},
		{`{"u":{"id":4}}`, true},
		{`{"u":{"id":"4"}}`, false},
		{`{"u":5}`, false},
		{`{"m":{"p":true,"q":false}}`, true},
		{`{"m":{"p":true,"q":1}}`, false},
		{`{"a\u003cb":"ok"}`, true},
		{`{"a\u003cb":1}`, false},
		{`{"s":"x","s":1}`, false},
		{`{"s":1,"s":"x"}`, false},
	} {
		compact, err := jsonvalue.AppendCompact(nil, []byte(c.in))
		if err != nil {
			t.Fatalf("%s: %v", c.in, err)
		}
		if got := tl.FitsStructured(compact); got != c.fits {
			t.Errorf("FitsStructured(%s) = %v, want %v", compact, got, c.fits)
		}
		if bytes.Contains(compact, []byte(`"s":1,"s":"x"`)) || bytes.Contains(compact, []byte(`"s":"x","s":1`)) {
			continue // a tree keeps only the last member, so the check is stricter than conforming the tree
		}
		tree, err := jsonvalue.Parse(compact)
		if err != nil {
			t.Fatal(err)
		}
		obj := tree.(map[string]any)
		before, _ := json.Marshal(obj)
		after, _ := json.Marshal(tl.ConformStructured(obj))
		if unchanged := bytes.Equal(before, after); unchanged != c.fits {
			t.Errorf("%s: ConformStructured leaves it unchanged: %v; the table says fits: %v", c.in, unchanged, c.fits)
		}
	}
	for _, in := range []string{``, ` `, `[]`, `"x"`, `{"s":"x"`, `{"s":"x"}x`, `{"s":"x",}`} {
		if tl.FitsStructured([]byte(in)) {
			t.Errorf("FitsStructured(%q) = true for text that is not a JSON object", in)
		}
		if _, _, err := tl.CompactStructured(in); err == nil {
			t.Errorf("CompactStructured(%q): no error", in)
		}
	}
	// White space is no matter: the check runs as the text is compacted.
	for in, want := range map[string]string{"\n{ \"s\" : \"x\" , \"n\" : 1 }\n": `{"s":"x","n":1}`, `{"s":"x","n":1}`: `{"s":"x","n":1}`} {
		got, fits, err := tl.CompactStructured(in)
		if err != nil || !fits || string(got) != want || !tl.FitsStructured([]byte(in)) {
			t.Errorf("CompactStructured(%q) = %s, %v, %v; want %s, fits", in, got, fits, err, want)
		}
	}
	if got, fits, err := tl.CompactStructured(` {"n": "1"} `); err != nil || fits || string(got) != `{"n":"1"}` {
		t.Errorf(`CompactStructured({"n": "1"}) = %s, %v, %v; want {"n":"1"}, not fitting`, got, fits, err)
	}
	if !(&Tool{}).FitsStructured([]byte(`{"any":1}`)) {
		t.Error("a tool without an output schema must fit every object")
	}
}

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
					unchanged := bytes.Equal(before, after)
					if !unchanged {
						changed++
					}
					// The bytes-only check agrees with the tree's.
					compact, err := jsonvalue.AppendCompact(nil, v)
					if err != nil {
						t.Fatalf("%s example %s: %v", tl.Name, ex.Ref, err)
					}
					if fit := tl.FitsStructured(compact); fit != unchanged {
						t.Errorf("%s example %s: FitsStructured = %v, but ConformStructured changed it: %v", tl.Name, ex.Ref, fit, !unchanged)
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

// FuzzCompactStructured: for any JSON object, the one-pass check agrees
// with conforming the tree (fits exactly when ConformStructured leaves it
// as it is), the compact text it returns is the object's value, and
// CompactStructuredBytes says exactly the same.
func FuzzCompactStructured(f *testing.F) {
	for _, s := range []string{`{"n":1,"s":"x","o":{"deep":[{"v":"a"},{"v":null}]}}`, `{"u":{"id":"4"}}`, `{"u":"id","m":{"p":true}}`,
		`{"a\u003cb":1}`, `{"n":2.0,"x":1e400}`, ` { "o" : { "deep" : [ ] } } `, "{\"s\":\"\xff\"}", `{"m":{"p":1}}`} {
		f.Add([]byte(s))
	}
	tl := &Tool{OutputSchema: json.RawMessage(fitsSchema)}
	f.Fuzz(func(t *testing.T, body []byte) {
		compact, fits, err := tl.CompactStructured(string(body))
		// The bytes variant (a pooled body's) gives the same, and its
		// compact text shares the body's memory when it is compact already.
		if cb, fb, eb := tl.CompactStructuredBytes(body); string(cb) != string(compact) || fb != fits || eb != err {
			t.Fatalf("CompactStructuredBytes(%q) = %q, %v, %v; CompactStructured: %q, %v, %v", body, cb, fb, eb, compact, fits, err)
		} else if len(cb) > 0 && string(compact) == strings.TrimSpace(string(body)) && &cb[0] != &body[len(body)-len(strings.TrimLeft(string(body), " \t\r\n"))] {
			t.Fatalf("CompactStructuredBytes(%q) copied a compact body", body)
		}
		tree, perr := jsonvalue.Parse(body)
		obj, isObject := tree.(map[string]any)
		if (err == nil) != (perr == nil && isObject) {
			t.Fatalf("CompactStructured(%q): err %v; Parse: %T, %v", body, err, tree, perr)
		}
		if err != nil {
			return
		}
		back, err := jsonvalue.Parse([]byte(compact))
		if err != nil || !reflect.DeepEqual(back, tree) {
			t.Fatalf("CompactStructured(%q) = %q, which parses to %#v (%v)", body, compact, back, err)
		}
		if dup, _ := hasRepeatedMember([]byte(compact)); dup {
			return // a tree keeps only the last member, so the check is stricter than conforming it
		}
		before, _ := json.Marshal(obj)
		after, _ := json.Marshal(tl.ConformStructured(obj))
		if unchanged := bytes.Equal(before, after); unchanged != fits {
			t.Fatalf("CompactStructured(%q): fits %v, but ConformStructured leaves it unchanged: %v", body, fits, unchanged)
		}
	})
}

// hasRepeatedMember reports whether some object in compact text repeats a
// member.
func hasRepeatedMember(text []byte) (bool, error) {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber() // any literal, however large
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false, nil
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k := tok.(string)
			if top.keys[k] {
				return true, nil
			}
			top.keys[k] = true
			top.key = false
			continue
		}
		switch d, _ := tok.(json.Delim); d {
		case '{':
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
			continue
		case '[':
			stack = append(stack, &frame{})
			continue
		case '}', ']':
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			stack[len(stack)-1].key = true
		}
	}
}
