package openapi

import (
	"context"
	"testing"
)

// TestNameStyles: N1 under each tool_name_style; N3 to N7 apply to all.
func TestNameStyles(t *testing.T) {
	for _, tc := range []struct{ opID, snake, kebab, asIs string }{
		{"etfs.topHoldings", "etfs_top_holdings", "etfs-top-holdings", "etfs_topHoldings"},
		{"get-accounts", "get_accounts", "get-accounts", "get-accounts"},
		{"recipientsByName", "recipients_by_name", "recipients-by-name", "recipientsByName"},
		{"2fa.verify", "op_2_fa_verify", "op_2-fa-verify", "op_2fa_verify"},
	} {
		for style, want := range map[string]string{NameSnake: tc.snake, NameKebab: tc.kebab, NameAsIs: tc.asIs, "": tc.snake} {
			if got := StyledToolName(tc.opID, "GET", "/x", 64, style); got != want {
				t.Errorf("StyledToolName(%q, %q) = %q, want %q", tc.opID, style, got, want)
			}
		}
	}
}

// TestStrictArguments: the input schema's root is closed, and a call with
// an argument the operation does not take is refused.
func TestStrictArguments(t *testing.T) {
	doc, err := LoadData(context.Background(), []byte(`openapi: 3.1.0
info: {title: t, version: "1"}
servers: [{url: http://upstream.test}]
paths:
  /x:
    get:
      operationId: getX
      parameters: [{name: q, in: query, schema: {type: string}}]
      responses: {"200": {description: ok}}
  /empty:
    get:
      operationId: getEmpty
      responses: {"200": {description: ok}}
`), "", LoadOptions{StrictArguments: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tl := range doc.Tools {
		got[tl.Name] = string(tl.InputSchema)
	}
	want := map[string]string{
		"get_x":     `{"type":"object","properties":{"q":{"type":"string"}},"additionalProperties":false}`,
		"get_empty": `{"type":"object","properties":{},"additionalProperties":false}`,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s input schema:\n got %s\nwant %s", name, got[name], w)
		}
	}
	for _, tl := range doc.Tools {
		if tl.Name != "get_x" {
			continue
		}
		if _, err := tl.NewRequest(context.Background(), []byte(`{"q":"a"}`), ""); err != nil {
			t.Errorf("known argument: %v", err)
		}
		if _, err := tl.NewRequest(context.Background(), []byte(`{"q":"a","extra":1}`), ""); err == nil || err.Error() != "invalid arguments: extra: unknown argument" {
			t.Errorf("an unknown argument: %v", err)
		}
	}
}
