package openapi

import "testing"

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
