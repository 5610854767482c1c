package openapi

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// FuzzSchemaConversion feeds a components/schemas object (seeded from
// corpus documents in testdata/fuzz/FuzzSchemaConversion) through Load,
// one operation per schema as request body and 200 response, and checks
// the emitted schemas: valid JSON, the S1 root, within the budget, and no
// $ref/$defs/definitions, array-valued type or nullable anywhere (S2, S4).
func FuzzSchemaConversion(f *testing.F) {
	f.Add([]byte(`{"Pet":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"tag":{"type":"string","nullable":true},"parent":{"$ref":"#/components/schemas/Pet"}}}}`))
	f.Add([]byte(`{"Card":{"type":"object","properties":{"card[number]":{"type":"string"},"meta":{"type":"object","properties":{"a b":{"type":"string"},"a_b":{"type":"string"}}}}}}`))
	f.Add([]byte(`{"A":{"oneOf":[{"$ref":"#/components/schemas/B"},{"type":"object","properties":{"x":{"type":["integer","null"]}}}]},"B":{"allOf":[{"$ref":"#/components/schemas/A"}],"properties":{"y":{"type":"array"}}}}`))
	f.Fuzz(func(t *testing.T, schemas []byte) {
		var m map[string]json.RawMessage
		if json.Unmarshal(schemas, &m) != nil || len(m) == 0 {
			t.Skip()
		}
		names := slices.Sorted(maps.Keys(m))
		if len(names) > 40 {
			names = names[:40]
		}
		paths := map[string]any{}
		for i, n := range names {
			ref := map[string]any{"$ref": "#/components/schemas/" + jsonPointerEscape(n)}
			paths["/s"+string(rune('a'+i%26))+string(rune('a'+i/26))] = map[string]any{"post": map[string]any{
				"operationId": "op" + string(rune('a'+i%26)) + string(rune('a'+i/26)),
				"requestBody": map[string]any{"content": map[string]any{"application/json": map[string]any{"schema": ref}}},
				"responses": map[string]any{"200": map[string]any{"description": "ok",
					"content": map[string]any{"application/json": map[string]any{"schema": ref}}}},
			}}
		}
		doc, err := json.Marshal(map[string]any{"openapi": "3.0.3", "info": map[string]any{"title": "f", "version": "1"},
			"servers": []any{map[string]any{"url": "http://upstream.test"}}, "paths": paths,
			"components": map[string]any{"schemas": json.RawMessage(schemas)}})
		if err != nil {
			t.Skip()
		}
		d, err := LoadData(context.Background(), doc, "", LoadOptions{})
		if err != nil {
			t.Skip() // not a document kin-openapi accepts
		}
		for _, tool := range d.Tools {
			for i, s := range []json.RawMessage{tool.InputSchema, tool.OutputSchema} {
				if i == 1 && len(s) == 0 {
					continue
				}
				if len(s) > DefaultSchemaBudget {
					t.Fatalf("%s: schema of %d bytes is over the budget", tool.Name, len(s))
				}
				v, err := jsonvalue.Parse(s)
				if err != nil {
					t.Fatalf("%s: not valid JSON: %s", tool.Name, s)
				}
				root, _ := v.(map[string]any)
				if root == nil || root["type"] != "object" {
					t.Fatalf("%s: root is not an object schema: %s", tool.Name, s)
				}
				if _, ok := root["properties"].(map[string]any); !ok && i == 0 {
					t.Fatalf("%s: root has no properties: %s", tool.Name, s)
				}
				if i == 0 {
					for _, k := range []string{"oneOf", "anyOf", "allOf", "$schema"} {
						if _, ok := root[k]; ok {
							t.Fatalf("%s: root carries %s (S1, S5): %s", tool.Name, k, s)
						}
					}
				}
				if bad := portable(root); bad != "" {
					t.Fatalf("%s: %s: %s", tool.Name, bad, s)
				}
				if i == 0 {
					if bad := keysValid(root); bad != "" {
						t.Fatalf("%s: property key %q is not ^[a-zA-Z0-9_.-]{1,64}$ (P1-P2, C12): %s", tool.Name, bad, s)
					}
				}
			}
		}
	})
}

// portable walks a schema and returns what breaks S2/S4, or "".
func portable(s map[string]any) string {
	for _, k := range []string{"$ref", "$defs", "definitions", "nullable"} {
		if _, ok := s[k]; ok {
			return "has " + k
		}
	}
	if _, ok := s["type"].([]any); ok {
		return "has an array-valued type"
	}
	if s["type"] == "array" {
		if _, ok := s["items"]; !ok {
			return "array without items (S6)"
		}
	}
	for _, m := range subschemas(s) {
		if bad := portable(m); bad != "" {
			return bad
		}
	}
	return ""
}

// subschemas returns the schemas directly below s: its properties (in key
// order), items, additionalProperties, not and anyOf branches.
func subschemas(s map[string]any) []map[string]any {
	var subs []any
	if p, ok := s["properties"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(p)) {
			subs = append(subs, p[k])
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		subs = append(subs, s[k])
	}
	if l, ok := s["anyOf"].([]any); ok {
		subs = append(subs, l...)
	}
	var out []map[string]any
	for _, sub := range subs {
		if m, ok := sub.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// keysValid returns the first property key, at any level of an input
// schema, that is not a valid input-schema property key, or "".
func keysValid(s map[string]any) string {
	if p, ok := s["properties"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(p)) {
			if !validKey(k) {
				return k
			}
		}
	}
	for _, m := range subschemas(s) {
		if bad := keysValid(m); bad != "" {
			return bad
		}
	}
	return ""
}

func jsonPointerEscape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			b = append(b, '~', '0')
		case '/':
			b = append(b, '~', '1')
		default:
			b = append(b, s[i])
		}
	}
	return string(b)
}
