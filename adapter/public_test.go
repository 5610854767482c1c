package adapter

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/restmcp/restmcp/metering"
)

// limitMeter allows limit[keyID] calls per key id (unlimited when absent)
// and records admissions and refunds by key id.
type limitMeter struct {
	mu       sync.Mutex
	limit    map[string]int
	admitted map[string]int
	refunded map[string]int
}

func newLimitMeter(limit map[string]int) *limitMeter {
	return &limitMeter{limit: limit, admitted: map[string]int{}, refunded: map[string]int{}}
}

func (m *limitMeter) AdmitCall(_ context.Context, c metering.Call) (metering.Decision, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l, ok := m.limit[c.KeyID]; ok && m.admitted[c.KeyID]-m.refunded[c.KeyID] >= l {
		return metering.Decision{Limit: int64(l), RetryAfter: 30e9, RefusedBy: "per_minute", Policy: "per_minute", Window: 60e9}, nil
	}
	m.admitted[c.KeyID]++
	return metering.Decision{Allowed: true, Cost: c.Cost}, nil
}

func (m *limitMeter) Refund(_ context.Context, c metering.Call, _ metering.Decision) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.refunded[c.KeyID]++
	return nil
}

func (m *limitMeter) RecordEvent(context.Context, metering.Event) error { return nil }
func (m *limitMeter) Report(context.Context, string, *metering.Plan) (metering.Report, error) {
	return metering.Report{}, errors.New("limitMeter has no usage report")
}

func (m *limitMeter) counts() (map[string]int, map[string]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, r := map[string]int{}, map[string]int{}
	for k, v := range m.admitted {
		a[k] = v
	}
	for k, v := range m.refunded {
		r[k] = v
	}
	return a, r
}

// TestPublicModeCredentialsNeverChangeTheCaller: in public mode a made-up
// bearer token, x-api-key or ?api_key= is metered under the client's
// address like no credential at all (no fresh budget), and never reaches
// the upstream; a spoofed X-Forwarded-For from an untrusted peer is
// ignored.
func TestPublicModeCredentialsNeverChangeTheCaller(t *testing.T) {
	up := newUpstream(t, petstoreAPI)
	addr := AddressKeyID("127.0.0.1")
	meter := newLimitMeter(map[string]int{addr: 2})
	srv := serve(t, Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL), Meter: meter, PublicMode: true})
	body := toolsCallBody(1, "get_pet", `{"petId":"p1"}`)
	calls := []struct {
		query   string
		headers map[string]string
		status  int
	}{
		{"", nil, 200},
		{"", map[string]string{"Authorization": "Bearer made-up-1"}, 200},
		{"", map[string]string{"Authorization": "Bearer made-up-2"}, 429},
		{"", map[string]string{"X-API-Key": "made-up-3"}, 429},
		{"?api_key=made-up-4", nil, 429},
		{"", map[string]string{"X-Forwarded-For": "203.0.113.9"}, 429},
	}
	for i, c := range calls {
		got := post(t, srv.URL+"/mcp"+c.query, body, c.headers)
		if got.status != c.status {
			t.Errorf("call %d (%v %s) = %d %s, want %d", i, c.headers, c.query, got.status, got.body, c.status)
		}
	}
	admitted, _ := meter.counts()
	if diff := cmp.Diff(map[string]int{addr: 2}, admitted); diff != "" {
		t.Errorf("admissions by key id (-want +got):\n%s", diff)
	}
	for _, r := range up.take() {
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Api-Key") != "" || strings.Contains(r.RequestURI, "made-up") {
			t.Errorf("upstream got a caller credential: %+v", r)
		}
	}
}

// TestPublicModeGlobalPlan: behind a trusted proxy each X-Forwarded-For
// address has its own budget, and PublicGlobalPlan limits all of them
// together; a call the global limit refuses gives its per-address
// admission back.
func TestPublicModeGlobalPlan(t *testing.T) {
	up := newUpstream(t, petstoreAPI)
	meter := newLimitMeter(map[string]int{PublicKeyID: 3, AddressKeyID("198.51.100.1"): 2})
	s, err := New(Options{Tools: loadTools(t, "testdata/c23.yaml", up.URL), Meter: meter, PublicMode: true,
		Keys: planKeys(), PublicGlobalPlan: testPlan("public"), TrustedProxies: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := serveHandler(t, s)
	body := toolsCallBody(1, "get_pet", `{"petId":"p1"}`)
	from := func(ip string) rpcResponse {
		return post(t, srv.URL+"/mcp", body, map[string]string{"X-Forwarded-For": ip})
	}
	for i, tt := range []struct {
		ip     string
		status int
	}{
		{"198.51.100.1", 200}, {"198.51.100.1", 200}, {"198.51.100.1", 429}, // the address's own limit
		{"2001:db8::1", 200},  // the third call of all: the global limit is 3
		{"2001:db8::2", 429},  // refused by the global limit
		{"198.51.100.7", 429}, // likewise
	} {
		got := from(tt.ip)
		if got.status != tt.status {
			t.Errorf("call %d from %s = %d %s, want %d", i, tt.ip, got.status, got.body, tt.status)
		}
		if i == 4 {
			want := `{"jsonrpc":"2.0","id":1,"error":{"code":-31429,"message":"the public limit for all anonymous callers together: rate limit exceeded: 3 calls per minute of plan \"public\"; retry after 30 seconds"}}`
			if got.body != want {
				t.Errorf("global refusal = %s\nwant %s", got.body, want)
			}
		}
	}
	// Refunds are written after the response; Close waits for them.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	// The two global refusals gave their per-address admissions back; the
	// IPv6 addresses share one /64.
	if _, r := meter.counts(); !cmp.Equal(map[string]int{AddressKeyID("2001:db8::2"): 1, AddressKeyID("198.51.100.7"): 1}, r) {
		t.Errorf("refunds by key id = %v", r)
	}
	if AddressKeyID("2001:db8::1") != AddressKeyID("2001:db8::2") || AddressKeyID("2001:db8::1") == AddressKeyID("2001:db8:0:1::1") {
		t.Error("IPv6 addresses are not grouped by /64")
	}
	admitted, _ := meter.counts()
	want := map[string]int{PublicKeyID: 3, AddressKeyID("198.51.100.1"): 2, AddressKeyID("2001:db8::1"): 2, AddressKeyID("198.51.100.7"): 1}
	if diff := cmp.Diff(want, admitted); diff != "" {
		t.Errorf("admissions by key id (-want +got):\n%s", diff)
	}
	if n := len(up.take()); n != 3 {
		t.Errorf("%d upstream calls, want 3", n)
	}
}
