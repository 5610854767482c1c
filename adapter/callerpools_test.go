package adapter

import (
	"net/http"
	"testing"
)

// TestCallerPools: one Transport per key, the same one for the key's every
// call; past max keys the least recently used key's is dropped, and that
// key gets a new one on its next call.
func TestCallerPools(t *testing.T) {
	made := 0
	p := newCallerPools(2, func() *http.Transport { made++; return &http.Transport{} })
	a, b := p.pool("key-a"), p.pool("key-b")
	if a == b || p.pool("key-a") != a || p.pool("key-b") != b || made != 2 {
		t.Fatalf("two keys: %p %p, %d made; want two Transports, each kept", a, b, made)
	}
	_ = p.pool("key-a")  // a is now the most recent
	c := p.pool("key-c") // drops b, the least recent
	if c == a || c == b || made != 3 || p.pool("key-a") != a {
		t.Errorf("a third key: %d made, a kept %v", made, p.pool("key-a") == a)
	}
	if p.pool("key-b") == b || made != 4 {
		t.Errorf("the dropped key: got its old Transport back (made %d), want a new one", made)
	}
	if none := p.pool(""); none == a || p.pool("") != none {
		t.Errorf("calls without a key share one Transport of their own")
	}
}
