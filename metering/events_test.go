package metering

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRedisRecordEvent checks the stream record's fields exactly, and that
// the stream is capped.
func TestRedisRecordEvent(t *testing.T) {
	c := testRedis(t)
	id := newKeyID(t, c)
	stream := Key(id, "events") // removed with the test's keys
	m := NewRedis(c, Options{EventStream: stream, EventMaxLen: 100})
	ctx := context.Background()
	e := Event{KeyID: "9f86d081884c", Plan: "pro", Tool: "etfs_top_holdings", Cost: 5, Outcome: OutcomeUpstreamError,
		UpstreamStatus: 503, Latency: 12345678 * time.Nanosecond, Bytes: 2048,
		Time: time.Date(2026, time.November, 15, 13, 0, 0, 123456789, time.FixedZone("CET", 3600))}
	if err := m.RecordEvent(ctx, e); err != nil {
		t.Fatal(err)
	}
	msgs, err := c.XRange(ctx, stream, "-", "+").Result()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("XRANGE = %v, %v; want one entry", msgs, err)
	}
	want := map[string]any{
		"key_id": "9f86d081884c", "plan": "pro", "tool": "etfs_top_holdings", "cost": "5",
		"outcome": "upstream_error", "upstream_status": "503", "latency_ms": "12.345", "bytes": "2048",
		"time": "2026-11-15T12:00:00.123456789Z",
	}
	if diff := cmp.Diff(want, msgs[0].Values); diff != "" {
		t.Errorf("event fields (-want +got):\n%s", diff)
	}

	// Field order is part of the format.
	raw, err := c.Do(ctx, "XRANGE", stream, "-", "+").Slice()
	if err != nil {
		t.Fatal(err)
	}
	fields := raw[0].([]any)[1].([]any)
	var names []string
	for i := 0; i < len(fields); i += 2 {
		names = append(names, fields[i].(string))
	}
	if diff := cmp.Diff([]string{"key_id", "plan", "tool", "cost", "outcome", "upstream_status", "latency_ms", "bytes", "time"}, names); diff != "" {
		t.Errorf("field order (-want +got):\n%s", diff)
	}

	// MAXLEN ~ 100: Redis trims whole macro nodes (100 entries each by
	// default), so the stream holds between 100 and 200 entries.
	for range 1000 {
		if err := m.RecordEvent(ctx, Event{KeyID: "k", Outcome: OutcomeOK}); err != nil {
			t.Fatal(err)
		}
	}
	if n := c.XLen(ctx, stream).Val(); n < 100 || n > 200 {
		t.Errorf("XLEN after 1001 events with MaxLen 100 = %d, want 100..200", n)
	}
}

// TestRedisRecordEventAPI: an event of a tool among several APIs carries
// the API after the plan; the other fields are as without it.
func TestRedisRecordEventAPI(t *testing.T) {
	c := testRedis(t)
	id := newKeyID(t, c)
	stream := Key(id, "events")
	m := NewRedis(c, Options{EventStream: stream, EventMaxLen: 100})
	ctx := context.Background()
	e := Event{KeyID: "41a68812f218", Plan: "payments", API: "checkout", Tool: "checkout_post_payments", Cost: 5, Outcome: OutcomeOK,
		UpstreamStatus: 200, Latency: 2500 * time.Microsecond, Bytes: 120, Time: time.Date(2026, time.December, 2, 4, 27, 30, 0, time.UTC)}
	if err := m.RecordEvent(ctx, e); err != nil {
		t.Fatal(err)
	}
	raw, err := c.Do(ctx, "XRANGE", stream, "-", "+").Slice()
	if err != nil || len(raw) != 1 {
		t.Fatalf("XRANGE = %v, %v; want one entry", raw, err)
	}
	want := []any{"key_id", "41a68812f218", "plan", "payments", "api", "checkout", "tool", "checkout_post_payments", "cost", "5",
		"outcome", "ok", "upstream_status", "200", "latency_ms", "2.500", "bytes", "120", "time", "2026-12-02T04:27:30Z"}
	if diff := cmp.Diff(want, raw[0].([]any)[1]); diff != "" {
		t.Errorf("event fields in order (-want +got):\n%s", diff)
	}
}

func TestRedisRecordEventDisabledAndDefaults(t *testing.T) {
	c := testRedis(t)
	id := newKeyID(t, c)
	stream := Key(id, "events")
	m := NewRedis(c, Options{EventStream: stream, EventMaxLen: -1})
	if err := m.RecordEvent(context.Background(), Event{KeyID: "k"}); err != nil {
		t.Fatal(err)
	}
	if n := c.Exists(context.Background(), stream).Val(); n != 0 {
		t.Errorf("events off: the stream exists")
	}
	if d := NewRedis(c, Options{}); d.eventStream != "restmcp:events" || d.eventMaxLen != 1_000_000 {
		t.Errorf("defaults = %q, %d; want restmcp:events, 1000000", d.eventStream, d.eventMaxLen)
	}
}

func TestMemoryRecordEvent(t *testing.T) {
	clk := newFakeClock(testStart)
	m := NewMemory(Options{Now: clk.Now, EventMaxLen: 3})
	for i := range 5 {
		_ = m.RecordEvent(context.Background(), Event{KeyID: "k", Cost: int64(i)})
	}
	got := m.Events()
	if len(got) != 3 || got[0].Cost != 2 || got[2].Cost != 4 || !got[0].Time.Equal(testStart) {
		t.Errorf("Events() = %+v, want the last three (cost 2, 3, 4) at the clock's time", got)
	}
	if off := NewMemory(Options{EventMaxLen: -1}); off.RecordEvent(context.Background(), Event{}) != nil || len(off.Events()) != 0 {
		t.Errorf("events off: kept %d", len(off.Events()))
	}
}

// TestRedisRecordEventsPipelined: RecordEvents writes, in one pipelined
// round trip, exactly the entries RecordEvent writes one by one, in order.
func TestRedisRecordEventsPipelined(t *testing.T) {
	c := testRedis(t)
	id := newKeyID(t, c)
	one, many := Key(id, "events-one"), Key(id, "events-many")
	ctx := context.Background()
	at := time.Date(2026, time.November, 15, 12, 0, 0, 0, time.UTC)
	var events []Event
	for i := range 5 {
		events = append(events, Event{KeyID: "9f86d081884c", Plan: "pro", Tool: "t" + string(rune('a'+i)), Cost: int64(i), Outcome: OutcomeOK,
			UpstreamStatus: 200, Latency: time.Duration(i) * time.Millisecond, Bytes: int64(10 * i), Time: at.Add(time.Duration(i) * time.Second)})
	}
	single := NewRedis(c, Options{EventStream: one})
	for _, e := range events {
		if err := single.RecordEvent(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if err := NewRedis(c, Options{EventStream: many}).RecordEvents(ctx, events); err != nil {
		t.Fatal(err)
	}
	values := func(stream string) []map[string]any {
		msgs, err := c.XRange(ctx, stream, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]any
		for _, m := range msgs {
			out = append(out, m.Values)
		}
		return out
	}
	want := values(one)
	if len(want) != 5 {
		t.Fatalf("RecordEvent wrote %d entries, want 5", len(want))
	}
	if diff := cmp.Diff(want, values(many)); diff != "" {
		t.Errorf("RecordEvents entries (-one by one +pipelined):\n%s", diff)
	}
}
