package clip

import "testing"

func TestString(t *testing.T) {
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"}, {"exactly10!", 10, "exactly10!"}, {"abcdefghijk", 3, "abc…"},
		{"café au lait", 4, "caf…"}, {"café", 5, "café"}, {"日本語", 4, "日…"}, {"日本語", 0, "…"},
	} {
		if got := String(tt.s, tt.n); got != tt.want {
			t.Errorf("String(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}
