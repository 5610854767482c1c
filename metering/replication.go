package metering

import (
	"bufio"
	"context"
	"slices"
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
// A master with no replica the Cluster does not mark failed can lose
// nothing this way (no replica can take over without a full
// resynchronisation first), so its entries are dropped at once. A journal
// keeps at most maxJournal entries per master; beyond that the oldest are
// dropped (counted in OutageStats.JournalDropped), and a failover right
// then could lose that many counts. Rate-limit state (GCRA) is not journalled: a
// promoted replica may allow a burst of at most the lost writes again.

const (
	// replicationPoll is how often each master's replication offsets are
	// read and the slot map is checked for a new master.
	replicationPoll = 250 * time.Millisecond
	// maxJournal is the most entries one master's journal keeps (about
	// 150 bytes each).
	maxJournal = 1 << 17
	// maxMarks is the most polls a journal remembers while its replicas
	// catch up.
	maxMarks = 64
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

// shardJournal is one master's journal: a ring of entries, grown by
// doubling up to maxJournal, so that keeping an entry never allocates once
// it has grown to the calls of a second or two.
type shardJournal struct {
	ring  []journalEntry // len a power of two (or 0)
	head  int            // index of the oldest entry
	n     int            // entries held
	base  int64          // sequence number of the oldest entry
	marks []replMark     // oldest first
	probe string         // a key id held by this master, to find its slot's master
}

// push adds e, growing the ring or, at maxJournal, dropping the oldest
// entry; it reports whether it dropped one.
func (s *shardJournal) push(e journalEntry) (dropped bool) {
	if s.n == len(s.ring) {
		if len(s.ring) == maxJournal {
			s.dropTo(s.base + 1)
			dropped = true
		} else {
			grown := make([]journalEntry, max(64, 2*len(s.ring)))
			s.copyTo(grown)
			s.ring, s.head = grown, 0
		}
	}
	s.ring[(s.head+s.n)&(len(s.ring)-1)] = e
	s.n++
	return dropped
}

// copyTo copies the entries, oldest first, to dst (len ≥ s.n).
func (s *shardJournal) copyTo(dst []journalEntry) {
	k := copy(dst, s.ring[s.head:min(len(s.ring), s.head+s.n)])
	copy(dst[k:s.n], s.ring)
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
	if s.push(journalEntry{op: op, at: at}) {
		j.dropped++
	}
	j.mu.Unlock()
}

// pendingShard is a shard with entries, as a poll starts: a key id it
// holds and the sequence number after its last entry.
type pendingShard struct {
	probe string
	seq   int64
}

// pending lists the shards with entries.
func (j *replJournal) pending() map[string]pendingShard {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make(map[string]pendingShard, len(j.shards))
	for shard, s := range j.shards {
		if s.n > 0 {
			out[shard] = pendingShard{probe: s.probe, seq: s.base + int64(s.n)}
		}
	}
	return out
}

// confirm applies one poll of shard, which had written the entries before
// seq at replication offset offset: entries that every replica has are
// dropped, and the mark is kept for later polls (at most maxMarks, the
// oldest dropped: later marks cover their entries too, a little later).
// acked is the lowest offset acknowledged by an online replica; ok is
// false when no replica is online, and then nothing is confirmed or
// marked: the first poll with a replica back marks everything before it.
func (j *replJournal) confirm(shard string, seq, offset, acked int64, ok bool) {
	if !ok {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.shards[shard]
	if s == nil {
		return
	}
	upTo := s.base
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
	} else {
		if len(s.marks) == maxMarks {
			s.marks = append(s.marks[:0], s.marks[1:]...)
		}
		s.marks = append(s.marks, replMark{seq: seq, offset: offset})
	}
	s.dropTo(upTo)
}

// dropTo drops the entries before sequence number seq.
func (s *shardJournal) dropTo(seq int64) {
	n := min(int(seq-s.base), s.n)
	if n <= 0 {
		return
	}
	for i := range n { // let the key ids and tool names go
		s.ring[(s.head+i)&(len(s.ring)-1)] = journalEntry{}
	}
	s.head = (s.head + n) & (len(s.ring) - 1)
	s.n -= n
	s.base += int64(n)
	if s.n == 0 && len(s.ring) > 1<<14 {
		s.ring, s.head = nil, 0 // a burst's ring goes; the next grows again
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
	entries := make([]journalEntry, s.n)
	s.copyTo(entries)
	ops := make([]settleOp, len(entries))
	for i, e := range entries {
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

// masterMoved is a master whose slots another now holds: its address,
// the new one's, and its entries, to be sent again.
type masterMoved struct {
	from, to string
	ops      []settleOp
}

// checkReplication polls every master with journal entries once (see
// above) and returns the masters whose slots another master now holds,
// with their entries. Only a Cluster meter has a journal.
func (m *RedisMeter) checkReplication(ctx context.Context) (moved []masterMoved) {
	cc, ok := m.rdb.(*redis.ClusterClient)
	if !ok || m.journal == nil {
		return nil
	}
	for shard, mark := range m.journal.pending() {
		c, err := cc.MasterForKey(ctx, Key(mark.probe, "day"))
		if err != nil {
			m.refreshTopology()
			continue
		}
		if now := c.Options().Addr; now != shard {
			moved = append(moved, masterMoved{from: shard, to: now, ops: m.journal.takeAll(shard)})
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
	return moved
}

// hasReplica reports whether the Cluster knows a replica of the master c
// (CLUSTER REPLICAS, https://redis.io/docs/latest/commands/cluster-replicas/)
// that is not marked failed, online or not: one that could be promoted in
// its place without a full resynchronisation first. When it cannot tell,
// it says yes.
func (m *RedisMeter) hasReplica(ctx context.Context, c *redis.Client) bool {
	id, err := c.Do(ctx, "CLUSTER", "MYID").Text()
	if err != nil {
		return true
	}
	replicas, err := c.Do(ctx, "CLUSTER", "REPLICAS", id).StringSlice()
	if err != nil {
		return true
	}
	return slices.ContainsFunc(replicas, replicaUsable)
}

// replicaUsable reports whether a CLUSTER NODES line of a replica
// (https://redis.io/docs/latest/commands/cluster-nodes/: id, address,
// flags, …) has no "fail" flag ("fail?", only suspected, counts as usable).
func replicaUsable(line string) bool {
	fields := strings.Fields(line)
	return len(fields) < 3 || !slices.Contains(strings.Split(fields[2], ","), "fail")
}
