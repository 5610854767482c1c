package metering

import (
	"bufio"
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Writes a Redis Cluster master had not replicated (docs/security.md H36).
//
// A master acknowledges a write before its replicas have it (replication is
// asynchronous: https://redis.io/docs/latest/operate/oss_and_stack/management/replication/).
// A master killed outright, or cut off and replaced, takes with it the
// admissions, settles and replays it had acknowledged and not yet sent on:
// the replica promoted in its place never counted them, though the calls
// were served.
//
// So on a Cluster every counter write a master acknowledged is kept in a
// journal of that master (its address, the shard: shards.go), as the
// settle operation that would make it again (an admission as a "count" of
// its call id; a settle or replay as itself). Every replicationPoll, each
// master with journal entries is asked for its replication offset and its
// replicas' acknowledged offsets (INFO replication); an entry is dropped once
// every online replica has acknowledged an offset the master had reached
// after the entry was written (replicas acknowledge about once a second, so
// an entry lives one to two seconds). When a key's slot names another
// master than the one its entries were written to, the old master's
// entries are sent again to the new one, through the OutageMeter's settle
// queue. Each is idempotent (settle.go): one the new master already holds,
// by its call record, changes nothing; one it lost is counted, or undone,
// once.
//
// A master whose slots no replica is configured to take over can lose
// nothing this way, so its entries are dropped at once. A journal keeps at
// most maxJournal entries per master; beyond that the oldest are dropped
// (counted in OutageStats.JournalDropped), and a failover right then could
// lose that many counts. Rate-limit state (GCRA) is not journalled: a
// promoted replica may allow a burst of at most the lost writes again.

const (
	// replicationPoll is how often each master's replication offsets are
	// read and the slot map is checked for a new master.
	replicationPoll = 250 * time.Millisecond
	// maxJournal is the most entries one master's journal keeps (about
	// 150 bytes each).
	maxJournal = 1 << 17
)

// journalEntry is one acknowledged counter write: the settle operation
// that makes it again. An admission's day is filled from at when it is
// sent again.
type journalEntry struct {
	op settleOp
	at time.Time
}

// replMark is what one poll saw: entries before seq had been written when
// the master's replication offset was offset.
type replMark struct {
	seq, offset int64
}

// shardJournal is one master's journal.
type shardJournal struct {
	entries []journalEntry // oldest first
	base    int64          // sequence number of entries[0]
	marks   []replMark     // oldest first
	probe   string         // a key id held by this master, to find its slot's master
}

// replJournal is a RedisMeter's journals, by shard. The zero value is
// ready to use.
type replJournal struct {
	mu      sync.Mutex
	shards  map[string]*shardJournal
	dropped int64
}

// add keeps op, written to shard at at.
func (j *replJournal) add(shard string, op settleOp, at time.Time) {
	if shard == "" || shard == "?" {
		return
	}
	j.mu.Lock()
	s := j.shards[shard]
	if s == nil {
		if j.shards == nil {
			j.shards = map[string]*shardJournal{}
		}
		s = &shardJournal{probe: op.keyID}
		j.shards[shard] = s
	}
	if len(s.entries) == maxJournal {
		s.entries[0] = journalEntry{}
		s.entries = s.entries[1:]
		s.base++
		j.dropped++
	}
	s.entries = append(s.entries, journalEntry{op: op, at: at})
	j.mu.Unlock()
}

// pending lists the shards with entries, each with a key id it holds and
// the sequence number after its last entry.
func (j *replJournal) pending() map[string]replMark {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make(map[string]replMark, len(j.shards))
	for shard, s := range j.shards {
		if len(s.entries) > 0 {
			out[shard] = replMark{seq: s.base + int64(len(s.entries))}
		}
	}
	return out
}

// probeOf is a key id held by shard, or "".
func (j *replJournal) probeOf(shard string) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	if s := j.shards[shard]; s != nil {
		return s.probe
	}
	return ""
}

// confirm applies one poll of shard, which had written the entries before
// seq at replication offset offset: entries that every replica has are
// dropped, and the mark is kept for later polls. acked is the lowest
// offset acknowledged by an online replica; ok is false when no replica is
// online.
func (j *replJournal) confirm(shard string, seq, offset, acked int64, ok bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.shards[shard]
	if s == nil {
		return
	}
	upTo := s.base
	if ok {
		kept := s.marks[:0]
		for _, mk := range s.marks {
			if mk.offset <= acked {
				upTo = max(upTo, mk.seq)
			} else {
				kept = append(kept, mk)
			}
		}
		s.marks = kept
		if offset <= acked {
			upTo = max(upTo, seq)
		}
	}
	if offset > acked || !ok {
		s.marks = append(s.marks, replMark{seq: seq, offset: offset})
	}
	s.dropTo(upTo)
}

// dropTo drops the entries before sequence number seq.
func (s *shardJournal) dropTo(seq int64) {
	n := min(int(seq-s.base), len(s.entries))
	if n <= 0 {
		return
	}
	clear(s.entries[:n])
	s.entries = s.entries[n:]
	s.base += int64(n)
	if len(s.entries) == 0 {
		s.entries = nil // let the backing array go
	}
}

// forget drops the entries of shard written before seq: its master has no
// replica to lose them to.
func (j *replJournal) forget(shard string, seq int64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if s := j.shards[shard]; s != nil {
		s.dropTo(seq)
		s.marks = nil
	}
}

// takeAll removes shard's journal and returns its entries as the settle
// operations that make them again, oldest first.
func (j *replJournal) takeAll(shard string) []settleOp {
	j.mu.Lock()
	s := j.shards[shard]
	delete(j.shards, shard)
	j.mu.Unlock()
	if s == nil {
		return nil
	}
	ops := make([]settleOp, len(s.entries))
	for i, e := range s.entries {
		ops[i] = e.op
		if ops[i].day == "" {
			ops[i].day = dayPeriod(e.at)
		}
	}
	return ops
}

// droppedEntries is how many entries were dropped past maxJournal.
func (j *replJournal) droppedEntries() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.dropped
}

// replicationInfo is what INFO replication says of a master: its role, its
// replication offset, and the lowest offset its online replicas have
// acknowledged (ok false: no replica online).
type replicationInfo struct {
	master bool
	offset int64
	acked  int64
	ok     bool
}

// parseReplication reads the INFO replication section
// (https://redis.io/docs/latest/commands/info/): role, master_repl_offset
// and each slaveN line's state and offset.
func parseReplication(info string) replicationInfo {
	var r replicationInfo
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, value, found := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !found {
			continue
		}
		switch {
		case name == "role":
			r.master = value == "master"
		case name == "master_repl_offset":
			r.offset, _ = strconv.ParseInt(value, 10, 64)
		case strings.HasPrefix(name, "slave") && strings.TrimLeft(name[len("slave"):], "0123456789") == "" && len(name) > len("slave"):
			online, offset, hasOffset := false, int64(0), false
			for field := range strings.SplitSeq(value, ",") {
				k, v, _ := strings.Cut(field, "=")
				switch k {
				case "state":
					online = v == "online"
				case "offset":
					var err error
					offset, err = strconv.ParseInt(v, 10, 64)
					hasOffset = err == nil
				}
			}
			if online && hasOffset {
				if !r.ok || offset < r.acked {
					r.acked = offset
				}
				r.ok = true
			}
		}
	}
	return r
}

// checkReplication polls every master with journal entries once (see
// above) and returns the entries of the masters whose slots another master
// now holds, to be sent again, with the old and new addresses for the log.
// Only a Cluster meter has a journal.
func (m *RedisMeter) checkReplication(ctx context.Context) (resend []settleOp, moved map[string]string) {
	cc, ok := m.rdb.(*redis.ClusterClient)
	if !ok || m.journal == nil {
		return nil, nil
	}
	for shard, mark := range m.journal.pending() {
		probe := m.journal.probeOf(shard)
		c, err := cc.MasterForKey(ctx, Key(probe, "day"))
		if err != nil {
			m.refreshTopology()
			continue
		}
		if now := c.Options().Addr; now != shard {
			if moved == nil {
				moved = map[string]string{}
			}
			moved[shard] = now
			resend = append(resend, m.journal.takeAll(shard)...)
			continue
		}
		info, err := c.Info(ctx, "replication").Result()
		if err != nil {
			m.refreshTopology()
			continue
		}
		r := parseReplication(info)
		if !r.master {
			m.refreshTopology() // the slot map is behind: a replica now
			continue
		}
		if !r.ok && !m.hasReplica(ctx, c) {
			m.journal.forget(shard, mark.seq)
			continue
		}
		m.journal.confirm(shard, mark.seq, r.offset, r.acked, r.ok)
	}
	return resend, moved
}

// hasReplica reports whether the Cluster knows a replica of the master c
// (CLUSTER REPLICAS, https://redis.io/docs/latest/commands/cluster-replicas/),
// online or not: one that could be promoted in its place. When it cannot
// tell, it says yes.
func (m *RedisMeter) hasReplica(ctx context.Context, c *redis.Client) bool {
	id, err := c.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return true
	}
	replicas, err := c.Do(ctx, "CLUSTER", "REPLICAS", id).StringSlice()
	return err != nil || len(replicas) > 0
}
