package seal

import (
	"bytes"
	"testing"
)

// TestSealOpens: a sealed key opens for its owner with its encryption key
// only, and altered bytes do not open.
func TestSealOpens(t *testing.T) {
	s, err := New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := New(bytes.Repeat([]byte{8}, 32))
	sealed := s.Seal("grant-1", "rmk_secret")
	if got, err := s.Open("grant-1", sealed); err != nil || got != "rmk_secret" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	if bytes.Contains(sealed, []byte("rmk_secret")) || bytes.Equal(sealed, s.Seal("grant-1", "rmk_secret")) {
		t.Error("the key shows in the sealed bytes, or the nonce repeats")
	}
	for name, open := range map[string]func() (string, error){
		"another owner":          func() (string, error) { return s.Open("grant-2", sealed) },
		"another encryption key": func() (string, error) { return other.Open("grant-1", sealed) },
		"altered bytes":          func() (string, error) { b := bytes.Clone(sealed); b[len(b)-1] ^= 1; return s.Open("grant-1", b) },
		"too short":              func() (string, error) { return s.Open("grant-1", sealed[:5]) },
	} {
		if got, err := open(); err == nil {
			t.Errorf("%s: opened %q", name, got)
		}
	}
	if _, err := New([]byte("short")); err == nil || err.Error() != "encryption key must be 32 bytes, got 5" {
		t.Errorf("New(short) = %v", err)
	}
}
