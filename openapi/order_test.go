package openapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKeyOrderYAML: property and mapping orders come from the YAML node
// tree, in block and flow style, with quoted keys, and a "properties:" line
// inside a block scalar is text, not a key.
func TestKeyOrderYAML(t *testing.T) {
	o := newKeyOrder()
	o.scanYAML([]byte(`
components:
  schemas:
    Pet:
      description: |
        properties:
          zeta: not a key
          alpha: not a key
      properties:
        "b key": {type: string}
        a: {type: string}
        'c''s': {type: string}
    Flow: {properties: {z: {}, y: {}, x: {}}}
    Shared: &shared
      properties: {m: {}, l: {}}
    Alias: *shared
  discriminator:
    mapping:
      dog: '#/d'
      cat: '#/c'
`))
	for _, tc := range []struct{ keys, want []string }{
		{[]string{"a", "b key", "c's"}, []string{"b key", "a", "c's"}},
		{[]string{"x", "y", "z"}, []string{"z", "y", "x"}},
		{[]string{"l", "m"}, []string{"m", "l"}},
		{[]string{"cat", "dog"}, []string{"dog", "cat"}},
		{[]string{"alpha", "zeta"}, []string{"alpha", "zeta"}}, // never declared: byte order
	} {
		if diff := cmp.Diff(tc.want, o.sorted(tc.keys)); diff != "" {
			t.Errorf("sorted(%q) (-want +got):\n%s", tc.keys, diff)
		}
	}
}
