package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"testing"
)

// renameSpec has request bodies whose nested property keys are not valid
// input-schema keys (C12: "nested body properties are rewritten the same
// way"): under an object, an array of objects, additionalProperties, an
// anyOf branch and a recursive component, plus a form body.
const renameSpec = `openapi: 3.0.3
info: {title: rename, version: "1"}
servers: [{url: "http://upstream.test"}]
paths:
  /things:
    post:
      operationId: createThing
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: ["top[x]"]
              properties:
                "top[x]": {type: string}
                meta:
                  type: object
                  required: ["a[b]"]
                  properties:
                    "a[b]": {type: string, description: "The b of a."}
                    "a_b": {type: integer}
                list:
                  type: array
                  items: {$ref: "#/components/schemas/Entry"}
                labels:
                  type: object
                  properties:
                    "$fixed": {type: string}
                  additionalProperties:
                    type: object
                    properties:
                      "v.1": {type: string}
                      "v 2": {type: string}
                choice:
                  anyOf:
                    - type: object
                      properties:
                        "x-y": {type: string}
                        "p q": {type: string}
                    - type: string
      responses: {"200": {description: ok}}
  /forms:
    post:
      operationId: postForm
      requestBody:
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              properties:
                "card[number]": {type: string}
                owner:
                  type: object
                  properties:
                    "first name": {type: string}
      responses: {"200": {description: ok}}
  /lists:
    post:
      operationId: postList
      requestBody:
        content:
          application/json:
            schema:
              type: array
              items:
                type: object
                properties:
                  "item id": {type: integer}
      responses: {"200": {description: ok}}
components:
  schemas:
    Entry:
      type: object
      properties:
        "k v": {type: string}
        next: {$ref: "#/components/schemas/Entry"}
`

func TestNestedPropertyKeys(t *testing.T) {
	for _, defs := range []bool{false, true} {
		d, err := LoadData(context.Background(), []byte(renameSpec), "", LoadOptions{SchemaDefs: defs})
		if err != nil {
			t.Fatal(err)
		}
		tools := map[string]*Tool{}
		for _, tl := range d.Tools {
			tools[tl.Name] = tl
		}
		if !defs {
			want := `{"type":"object","properties":{` +
				`"top_x":{"type":"string","description":"Property ` + "`top[x]`" + `."},` +
				`"meta":{"type":"object","properties":{"a_b_2":{"type":"string","description":"Property ` + "`a[b]`" + `. The b of a."},"a_b":{"type":"integer"}},"required":["a_b_2"]},` +
				`"list":{"type":"array","items":{"type":"object","properties":{"k_v":{"type":"string","description":"Property ` + "`k v`" + `."},"next":{"type":"object","description":"Recursive reference to Entry; structure not expanded"}}}},` +
				`"labels":{"type":"object","properties":{"fixed":{"type":"string","description":"Property ` + "`$fixed`" + `."}},"additionalProperties":{"type":"object","properties":{"v.1":{"type":"string"},"v_2":{"type":"string","description":"Property ` + "`v 2`" + `."}}}},` +
				`"choice":{"anyOf":[{"type":"object","properties":{"x-y":{"type":"string"},"p_q":{"type":"string","description":"Property ` + "`p q`" + `."}}},{"type":"string"}]}` +
				`},"required":["top_x"]}`
			if got := string(tools["create_thing"].InputSchema); got != want {
				t.Errorf("create_thing inputSchema\n got %s\nwant %s", got, want)
			}
		}
		tests := []struct {
			tool, args, want string
		}{
			{"create_thing", `{"top_x":"t","meta":{"a_b_2":"s","a_b":1},` +
				`"list":[{"k_v":"x","next":{"k v":"raw"}},{"k_v":"y"}],` +
				`"labels":{"fixed":"f","any":{"v_2":"w","v.1":"u"}},"choice":{"p_q":"z"}}`,
				"POST http://upstream.test/things\nAccept: */*\nContent-Type: application/json\n\n" +
					`{"top[x]":"t","meta":{"a[b]":"s","a_b":1},"list":[{"k v":"x","next":{"k v":"raw"}},{"k v":"y"}],` +
					`"labels":{"$fixed":"f","any":{"v 2":"w","v.1":"u"}},"choice":{"p q":"z"}}`},
			{"create_thing", `{"top_x":"t","choice":"plain"}`,
				"POST http://upstream.test/things\nAccept: */*\nContent-Type: application/json\n\n" + `{"top[x]":"t","choice":"plain"}`},
			{"post_form", `{"card_number":"4242","owner":{"first_name":"Ada"}}`,
				"POST http://upstream.test/forms\nAccept: */*\nContent-Type: application/x-www-form-urlencoded\n\n" +
					// Q10: no Encoding Object, so OpenAPI's default for a form
					// field (style form, explode): an object's members are fields.
					`card%5Bnumber%5D=4242&first+name=Ada`},
			{"post_list", `{"body":[{"item_id":1},{"item_id":2}]}`,
				"POST http://upstream.test/lists\nAccept: */*\nContent-Type: application/json\n\n" + `[{"item id":1},{"item id":2}]`},
		}
		for _, tt := range tests {
			r, err := tools[tt.tool].NewRequest(context.Background(), json.RawMessage(tt.args), "")
			if err != nil {
				t.Errorf("defs=%v %s %s: %v", defs, tt.tool, tt.args, err)
				continue
			}
			if got := dumpRequest(t, r); got != tt.want {
				t.Errorf("defs=%v %s %s\n got %q\nwant %q", defs, tt.tool, tt.args, got, tt.want)
			}
		}
		// The wire name of a top-level property is not an alias (C12).
		_, err = tools["create_thing"].NewRequest(context.Background(), json.RawMessage(`{"top[x]":"t"}`), "")
		if want := "invalid arguments: top[x]: unknown argument"; err == nil || err.Error() != want {
			t.Errorf("defs=%v: wire name as an argument: %v, want %q", defs, err, want)
		}
	}
}

// FuzzRenameApply checks renameTree.apply on any JSON value: the output is
// valid JSON, equal to the input with the tree's keys renamed, values
// untouched.
func FuzzRenameApply(f *testing.F) {
	for _, s := range []string{`{"a_b":{"k_v":1,"x":[1,2]},"c":"d"}`, `[{"a_b":{"k_v":"1.50"}},{"a_b":[]}]`, `"s"`, `12.50`, `{"a_b":{"k_v":{"a_b":1}}}`, ` { "a_b" : null } `} {
		f.Add(s)
	}
	inner := &renameTree{wire: map[string]string{"k_v": "k v"}}
	tree := &renameTree{wire: map[string]string{"a_b": "a[b]"}, props: map[string]*renameTree{"a_b": inner}}
	tree.items = tree
	var transform func(t *renameTree, v any) (any, bool)
	transform = func(t *renameTree, v any) (any, bool) {
		switch x := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				sub := (*renameTree)(nil)
				if t != nil {
					sub = t.props[k]
					if w, ok := t.wire[k]; ok {
						k = w
					}
				}
				if _, dup := out[k]; dup {
					return nil, false // a renamed key meets its wire name
				}
				ev, ok := transform(sub, e)
				if !ok {
					return nil, false
				}
				out[k] = ev
			}
			return out, true
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				var it *renameTree
				if t != nil {
					it = t.items
				}
				ev, ok := transform(it, e)
				if !ok {
					return nil, false
				}
				out[i] = ev
			}
			return out, true
		}
		return v, true
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		out := tree.apply([]byte(s))
		if !json.Valid(out) {
			t.Fatalf("apply(%s) = %s: not valid JSON", s, out)
		}
		decode := func(b []byte) any {
			d := json.NewDecoder(bytes.NewReader(b))
			d.UseNumber() // numbers beyond float64 stay as written
			var v any
			if err := d.Decode(&v); err != nil {
				t.Fatalf("decoding %s: %v", b, err)
			}
			return v
		}
		in, got := decode([]byte(s)), decode(out)
		want, ok := transform(tree, in)
		if !ok {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("apply(%s) = %s; want the value %v", s, out, want)
		}
	})
}
