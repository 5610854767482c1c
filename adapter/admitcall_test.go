package adapter

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/restmcp/restmcp/metering"
)

// TestAdmitCall runs the gate's one admission function with no HTTP at all,
// as kin-openapi tests ValidateRequest: each caller and Meter answer gives
// either an admission (key id, plan, cost, denial) or a typed refusal, the
// whole value compared.
func TestAdmitCall(t *testing.T) {
	tools := handTools()
	tool := tools[0] // get_pet
	free := testPlan("free", `"nothing_*"`)
	pro := testPlan("pro", `"*"`)
	limited := metering.Decision{Allowed: false, Limit: 2, Reset: 30 * time.Second, RetryAfter: 1500 * time.Millisecond, Plan: "pro", Policy: "per_minute", Window: time.Minute, RefusedBy: "per_minute"}
	meterSays := func(d metering.Decision, err error) *fakeMeter {
		return &fakeMeter{admit: func(metering.Call) (metering.Decision, error) { return d, err }}
	}
	challenge := `ApiKey realm="restmcp", Bearer realm="restmcp"`
	unknownKey := "unknown API key (key_id " + metering.KeyID("k-who") + "): this server does not know the key; check it, or ask the API provider for a key, and send it in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"
	type result struct {
		Refusal *refusal
		KeyID   string
		Plan    string
		Cost    int64
		Denied  string
		Metered bool
	}
	for _, tt := range []struct {
		name  string
		opts  Options
		key   string
		want  result
		calls int64 // Meter admissions
	}{
		{name: "no key", opts: Options{Meter: allowAll(0)}, want: result{Refusal: &refusal{status: 401, code: -31401, challenge: challenge,
			message: "authentication required: send your API key in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}}},
		{name: "no key, anonymous allowed", opts: Options{Meter: allowAll(0), AllowAnonymous: true}, want: result{KeyID: AnonymousKeyID, Cost: 1, Metered: true}, calls: 1},
		{name: "unsafe key", opts: Options{Meter: allowAll(0)}, key: "k\x7f1", want: result{Refusal: &refusal{status: 401, code: -31401, challenge: challenge,
			message: "invalid API key: it contains a control character (byte 0x7f), which no API key has; send the key exactly as issued, in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}}},
		{name: "admitted", opts: Options{Meter: allowAll(0), Keys: fakeKeys{"k-pro": pro}}, key: "k-pro",
			want: result{KeyID: metering.KeyID("k-pro"), Plan: "pro", Cost: 1, Metered: true}, calls: 1},
		{name: "outside the plan: denied, not metered", opts: Options{Meter: allowAll(0), Keys: fakeKeys{"k-free": free}}, key: "k-free",
			want: result{KeyID: metering.KeyID("k-free"), Plan: "free", Denied: free.DeniedMessage("get_pet")}},
		{name: "unknown key", opts: Options{Meter: allowAll(0), Keys: fakeKeys{}}, key: "k-who",
			want: result{KeyID: metering.KeyID("k-who"), Refusal: &refusal{status: 401, code: -31401, challenge: `ApiKey realm="restmcp", Bearer realm="restmcp", error="invalid_token"`,
				message: unknownKey, detail: unknownKey}}},
		{name: "registry down", opts: Options{Meter: allowAll(0), Keys: fakeKeys{}}, key: "down",
			want: result{KeyID: metering.KeyID("down"), Refusal: &refusal{status: 503, code: -31503, retryAfter: "5",
				message: "API key check is temporarily unavailable; retry in 5 seconds"}}},
		{name: "rate limited", opts: Options{Meter: meterSays(limited, nil), Keys: fakeKeys{"k-pro": pro}}, key: "k-pro",
			want: result{KeyID: metering.KeyID("k-pro"), Plan: "pro", Cost: 1, Refusal: &refusal{status: 429, code: -31429, retryAfter: "2",
				message: refusalMessage(pro, limited, 2), limits: []metering.Decision{limited}}}, calls: 1},
		{name: "meter down", opts: Options{Meter: meterSays(metering.Decision{}, errors.New("redis: connection refused")), Keys: fakeKeys{"k-pro": pro}}, key: "k-pro",
			want: result{KeyID: metering.KeyID("k-pro"), Plan: "pro", Cost: 1, Refusal: &refusal{status: 503, code: -31503, retryAfter: "5",
				message: "usage metering is temporarily unavailable; retry in 5 seconds"}}, calls: 1},
		{name: "public mode: the address is the caller, the key dropped", opts: Options{Meter: allowAll(0), PublicMode: true}, key: "k-pro",
			want: result{KeyID: AddressKeyID("2001:db8::7"), Cost: 1, Metered: true}, calls: 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Tools = tools
			s, err := New(tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			ex := &exchange{table: s.table.Load()}
			ex.cred = &ex.noCred
			if tt.key != "" {
				// The caller as the credential middleware makes it
				// (resolveCaller: public mode drops the key).
				caller, r := s.resolveCaller(context.Background(), newCredential(tt.key, "header"))
				if r != nil {
					t.Fatalf("resolveCaller: %+v", r)
				}
				ex.cred = caller
			}
			a := &admission{start: time.Now()}
			r := s.admitCall(context.Background(), ex, "2001:db8::7", tool, a)
			a.done()
			got := result{Refusal: r, KeyID: a.call.KeyID, Cost: a.call.Cost, Denied: a.denied, Metered: a.metered}
			if a.call.Plan != nil {
				got.Plan = a.call.Plan.Name
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(refusal{}), cmpopts.EquateComparable(metering.Decision{})); diff != "" {
				t.Errorf("admitCall (-want +got):\n%s", diff)
			}
			if m, ok := tt.opts.Meter.(*fakeMeter); ok && m.calls.Load() != tt.calls {
				t.Errorf("Meter admissions = %d, want %d", m.calls.Load(), tt.calls)
			}
			if tt.opts.PublicMode && ex.cred.key != "" {
				t.Errorf("public mode kept the credential")
			}
		})
	}
}
