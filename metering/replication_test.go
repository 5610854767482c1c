package metering

import (
	"reflect"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseReplication(t *testing.T) {
	for _, tc := range []struct {
		name, info string
		want       replicationInfo
	}{{
		name: "master with two online replicas: the lower offset",
		info: "# Replication\r\nrole:master\r\nconnected_slaves:2\r\n" +
			"slave0:ip=127.0.0.1,port=7004,state=online,offset=1200,lag=0\r\n" +
			"slave1:ip=127.0.0.1,port=7005,state=online,offset=1100,lag=1\r\n" +
			"master_failover_state:no-failover\r\nmaster_replid:8a5c\r\nmaster_repl_offset:1300\r\nrepl_backlog_active:1\r\n",
		want: replicationInfo{master: true, offset: 1300, acked: 1100, ok: true},
	}, {
		name: "a replica still syncing does not count",
		info: "role:master\r\nslave0:ip=127.0.0.1,port=7004,state=wait_bgsave,offset=0,lag=0\r\nslave1:ip=127.0.0.1,port=7005,state=online,offset=900,lag=0\r\nmaster_repl_offset:950\r\n",
		want: replicationInfo{master: true, offset: 950, acked: 900, ok: true},
	}, {
		name: "no replica",
		info: "role:master\r\nconnected_slaves:0\r\nmaster_repl_offset:77\r\n",
		want: replicationInfo{master: true, offset: 77},
	}, {
		name: "a replica now",
		info: "role:slave\r\nmaster_host:127.0.0.1\r\nslave_repl_offset:500\r\nslave_read_repl_offset:500\r\nmaster_repl_offset:500\r\n",
		want: replicationInfo{offset: 500},
	}, {
		name: "a malformed replica line counts for nothing",
		info: "role:master\r\nslave0:ip=127.0.0.1,state=online,offset=x\r\nslave_x:state=online,offset=5\r\nmaster_repl_offset:10\r\n",
		want: replicationInfo{master: true, offset: 10},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseReplication(tc.info); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// journalIDs are the call ids in shard's journal, oldest first.
func journalIDs(j *replJournal, shard string) []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	var ids []string
	if s := j.shards[shard]; s != nil {
		entries := make([]journalEntry, s.n)
		s.copyTo(entries)
		for _, e := range entries {
			ids = append(ids, e.op.ref.id)
		}
	}
	return ids
}

func TestReplJournal(t *testing.T) {
	at := time.Date(2026, 12, 6, 23, 59, 59, 0, time.UTC)
	var j replJournal
	admit := func(shard, id string) {
		j.add(shard, settleOp{keyID: "k-" + shard, tool: "get_quote", ref: callRef{id: id, minutes: [3]int64{29_934_719}}, cost: 2, calls: 1}, at)
	}
	admit("", "single") // one Redis: no journal
	admit("?", "nomap") // no slot map: no shard to watch
	admit("a:1", "a1")
	admit("a:1", "a2")
	admit("b:2", "b1")
	if got, want := j.pending(), map[string]pendingShard{"a:1": {probe: "k-a:1", seq: 2}, "b:2": {probe: "k-b:2", seq: 1}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("pending %v, want %v", got, want)
	}

	// A poll at offset 100, the replica at 90: a1 and a2 wait.
	j.confirm("a:1", 2, 100, 90, true)
	admit("a:1", "a3")
	if got := journalIDs(&j, "a:1"); !reflect.DeepEqual(got, []string{"a1", "a2", "a3"}) {
		t.Fatalf("after the first poll: %v", got)
	}
	// The next poll: offset 150, the replica acknowledged 120 ≥ 100: the
	// entries of the first poll go; a3 (written before offset 150) waits.
	j.confirm("a:1", 3, 150, 120, true)
	if got := journalIDs(&j, "a:1"); !reflect.DeepEqual(got, []string{"a3"}) {
		t.Fatalf("after the second poll: %v", got)
	}
	// No replica online: nothing is confirmed or marked.
	admit("a:1", "a4")
	j.confirm("a:1", 4, 180, 0, false)
	if got := journalIDs(&j, "a:1"); !reflect.DeepEqual(got, []string{"a3", "a4"}) {
		t.Fatalf("with no replica online: %v", got)
	}
	// The replica back and caught up past 180: everything goes.
	j.confirm("a:1", 4, 180, 180, true)
	if got := journalIDs(&j, "a:1"); got != nil {
		t.Fatalf("caught up: %v", got)
	}

	// b:2 replaced: its entries come back as the settles that count them,
	// each on the day it was admitted, and its journal is gone.
	got := j.takeAll("b:2")
	want := []settleOp{{keyID: "k-b:2", tool: "get_quote", ref: callRef{id: "b1", minutes: [3]int64{29_934_719}}, cost: 2, calls: 1, day: "20261206"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("takeAll: %+v, want %+v", got, want)
	}
	if p := j.pending(); len(p) != 0 {
		t.Fatalf("pending after takeAll: %v", p)
	}

	// A master with no replica configured forgets what it wrote.
	admit("c:3", "c1")
	j.forget("c:3", 1)
	if got := journalIDs(&j, "c:3"); got != nil {
		t.Fatalf("forget: %v", got)
	}
	if j.droppedEntries() != 0 {
		t.Fatalf("dropped %d", j.droppedEntries())
	}
}

func TestReplJournalBound(t *testing.T) {
	var j replJournal
	for i := range maxJournal + 3 {
		j.add("a:1", settleOp{keyID: "k", ref: callRef{id: "x"}, calls: int64(i)}, time.Time{})
	}
	j.mu.Lock()
	s := j.shards["a:1"]
	n, base, first := s.n, s.base, s.ring[s.head].op.calls
	j.mu.Unlock()
	if n != maxJournal || base != 3 || first != 3 || j.droppedEntries() != 3 {
		t.Fatalf("entries %d, base %d, first %d, dropped %d; want %d, 3, 3, 3", n, base, first, j.droppedEntries(), maxJournal)
	}
	// A mark from before the drop still confirms by sequence number.
	j.confirm("a:1", 10, 5, 5, true)
	j.mu.Lock()
	base, n = s.base, s.n
	j.mu.Unlock()
	if base != 10 || n != maxJournal+3-10 {
		t.Fatalf("after confirm: base %d, entries %d", base, n)
	}
}

func TestReplJournalMarksBounded(t *testing.T) {
	var j replJournal
	for i := range maxMarks + 10 {
		j.add("a:1", settleOp{keyID: "k", ref: callRef{id: strconv.Itoa(i)}}, time.Time{})
		j.confirm("a:1", int64(i+1), int64(100*(i+1)), 0, true) // the replica never catches up
	}
	j.mu.Lock()
	marks, entries := slices.Clone(j.shards["a:1"].marks), j.shards["a:1"].n
	j.mu.Unlock()
	if len(marks) != maxMarks || marks[0] != (replMark{seq: 11, offset: 1100}) || entries != maxMarks+10 {
		t.Fatalf("%d marks from %+v, %d entries; want %d from {11 1100}, %d", len(marks), marks[0], entries, maxMarks, maxMarks+10)
	}
	// Caught up to the 20th poll's offset: the entries before it go.
	j.confirm("a:1", int64(maxMarks+10), 99_999, 2000, true)
	if got := journalIDs(&j, "a:1"); len(got) != maxMarks+10-20 || got[0] != "20" {
		t.Fatalf("after catching up to offset 2000: %d entries from %v", len(got), got[:1])
	}
}

func TestReplicaUsable(t *testing.T) {
	for line, want := range map[string]bool{
		"07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected":         true,
		"07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave,fail? e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected":   true,
		"07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave,fail e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 disconnected": false,
		"": true,
	} {
		if got := replicaUsable(line); got != want {
			t.Errorf("replicaUsable(%q) = %v, want %v", line, got, want)
		}
	}
}

// BenchmarkReplJournalAdd is what the journal adds to each admission on a
// Cluster: one entry kept, callers in parallel, a poll confirming every
// 4,096 entries as replicas would.
func BenchmarkReplJournalAdd(b *testing.B) {
	var j replJournal
	var seq atomic.Int64
	op := settleOp{keyID: "k", tool: "get_quote", ref: callRef{id: "0123456789abcdef", minutes: [3]int64{29_934_719}}, cost: 1, calls: 1}
	at := time.Now()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			j.add("a:1", op, at)
			if n := seq.Add(1); n%4096 == 0 {
				j.confirm("a:1", n, n, n, true)
			}
		}
	})
}
