package metering

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRedisPlanKeysAndTTLs checks the exact keys one AdmitCall writes, all
// under the caller's {keyID} hash tag, and their expiry.
func TestRedisPlanKeysAndTTLs(t *testing.T) {
	c := testRedis(t)
	id := newKeyID(t, c)
	m := NewRedis(c, Options{})
	clk := newFakeClock(testStart)
	m.serverNow, m.clientNow = clk.Now, clk.Now
	p := mustParsePlans(t, "default_plan: p\nplans:\n  p:\n    rate_limits: {per_minute: 60, per_hour: 600}\n    quotas: {day: 10}\n").Plan("p")
	mustAdmitCall(t, m, Call{KeyID: id, Plan: p, Tool: "equities_quote", Cost: 2})

	ctx := context.Background()
	tag := "restmcp:{" + id + "}:"
	month := tag + "month:202611"
	want := map[string]string{
		"m": "2", "d:15": "2", "calls:equities_quote": "1", "cost:equities_quote": "2",
		"rl:60s":   itoa(testStart.UnixMicro() + 1_000_000),
		"rl:3600s": itoa(testStart.UnixMicro() + 6_000_000),
	}
	if got := c.HGetAll(ctx, month).Val(); !maps.Equal(got, want) {
		t.Errorf("HGETALL %s =\n%v, want\n%v", month, got, want)
	}
	if ttl := c.PTTL(ctx, month).Val(); ttl <= UsageTTL-time.Minute || ttl > UsageTTL {
		t.Errorf("PTTL %s = %v, want in (%v, %v]", month, ttl, UsageTTL-time.Minute, UsageTTL)
	}
	// The call's record (settle.go): one field, the call id, in the hash of
	// the admission's minute and the id's first hex digit.
	recs := c.Keys(ctx, tag+"calls:*").Val()
	if len(recs) != 1 || !strings.HasPrefix(recs[0], tag+"calls:"+itoa(testStart.Unix()/60)+":") {
		t.Fatalf("record hashes %q, want one, %scalls:%d:<hex digit>", recs, tag, testStart.Unix()/60)
	}
	rec := recs[0]
	fields := c.HGetAll(ctx, rec).Val()
	if len(fields) != 1 {
		t.Errorf("HGETALL %s = %v, want one call record", rec, fields)
	}
	for f, v := range fields {
		if len(f) != 16 || strings.Trim(f, "0123456789abcdef") != "" || v != "20261115:2" || rec != tag+"calls:"+itoa(testStart.Unix()/60)+":"+f[:1] {
			t.Errorf("record %q = %q in %s, want a 16-hex-digit call id = \"20261115:2\" in the hash named after its first digit", f, v, rec)
		}
	}
	if ttl := c.PTTL(ctx, rec).Val(); ttl <= CallRecordTTL-time.Minute || ttl > CallRecordTTL {
		t.Errorf("PTTL %s = %v, want in (%v, %v]", rec, ttl, CallRecordTTL-time.Minute, CallRecordTTL)
	}
	if keys := c.Keys(ctx, Key(id, "*")).Val(); len(keys) != 2 {
		t.Errorf("keys of %s = %q, want exactly the month hash and the record hash", id, keys)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestRedisPlanMonthFromRedisTime checks that the day and month are
// Redis's, not the replica's, and that a replica more than a month off is
// an error rather than a count in the wrong period.
func TestRedisPlanMonthFromRedisTime(t *testing.T) {
	c := testRedis(t)
	id := newKeyID(t, c)
	m := NewRedis(c, Options{})
	replica := newFakeClock(time.Date(2026, time.November, 30, 23, 59, 58, 0, time.UTC))
	server := newFakeClock(time.Date(2026, time.December, 1, 0, 0, 1, 0, time.UTC))
	m.clientNow, m.serverNow = replica.Now, server.Now
	p := PlansFromRateLimit(0, 0).Default()

	if d := mustAdmitCall(t, m, Call{KeyID: id, Plan: p, Tool: "t", Cost: 1}); !d.Allowed || !d.At.Equal(server.Now()) {
		t.Fatalf("got %+v, want allowed at Redis's time", d)
	}
	ctx := context.Background()
	if got, want := c.HGetAll(ctx, Key(id, "month:202612")).Val(), map[string]string{"m": "1", "d:01": "1", "calls:t": "1", "cost:t": "1", "rl:60s": itoa(server.Now().UnixMicro() + 600_000)}; !maps.Equal(got, want) {
		t.Errorf("December's hash = %v, want %v", got, want)
	}
	if n := c.Exists(ctx, Key(id, "month:202611")).Val(); n != 0 {
		t.Errorf("the replica's November hash exists")
	}
	if r := mustReport(t, m, id, p); r.Periods[0].Name != "20261201" || r.Periods[0].Used != 1 {
		t.Errorf("Report = %+v, want December 1 with 1 used", r.Periods)
	}
	server.Advance(31 * 24 * time.Hour) // Redis is in January, past the replica's candidate months
	if _, err := m.AdmitCall(ctx, Call{KeyID: id, Plan: p, Tool: "t", Cost: 1}); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "more than a month apart") {
		t.Errorf("AdmitCall with a one-month skew: %v, want ErrUnavailable about the clocks", err)
	}
	if _, err := m.Report(ctx, id, p); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Report with a one-month skew: %v, want ErrUnavailable", err)
	}
}

// TestLuaPick checks the scripts' choice of period at and around its
// boundaries, to the microsecond.
func TestLuaPick(t *testing.T) {
	c := testRedis(t)
	script := luaPrelude + `
local out = {}
for i = 5, #ARGV do
  local p = pick(tonumber(ARGV[i]), 1)
  if p == nil then p = -1 end
  out[#out + 1] = p
end
return out
`
	b := []int64{1_000_000, 2_000_000, 3_000_000, 4_000_000}
	nows := []int64{999_999, 1_000_000, 1_999_999, 2_000_000, 3_999_999, 4_000_000}
	args := []any{b[0], b[1], b[2], b[3]}
	for _, n := range nows {
		args = append(args, n)
	}
	got, err := c.Eval(context.Background(), script, nil, args...).Int64Slice()
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{-1, 0, 0, 1, 2, -1}; !slices.Equal(got, want) {
		t.Errorf("pick = %v, want %v", got, want)
	}
}
