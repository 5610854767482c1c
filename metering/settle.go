package metering

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Exact counts under faults (docs/security.md H29).
//
// A script's reply can be lost after Redis has applied it: the connection
// breaks, Redis is killed after writing its append-only file, a network cut
// swallows the answer. The replica then does not know whether its call
// counted. Answered 503 (fail_closed), it would stay counted though never
// served; admitted Degraded (fail_open) and replayed, it would count twice.
//
// So every admission is recorded under its call id. The admission script
// writes "<yyyymmdd>:<cost>" to the field <call id> of the hash
// restmcp:{keyID}:calls:<minute>:<d> (the Unix minute of Redis TIME, and d
// the id's first hex digit, so that a busy key's records are 16 small
// hashes a minute, each cheap to search; the hash lives CallRecordTTL), in the same atomic step as the counters, and an
// admission whose id is already recorded changes nothing. A call whose
// outcome is unknown is then settled by id, as soon as Redis answers, by
// settleScript, which is idempotent:
//
//   - undo (a call not served: 503, the client gone; and every refund):
//     if the call is recorded as counted, its cost and call are taken back
//     from the counters it was charged and the record becomes "u"; if it
//     is not recorded, "u" is written, so that it can never count later.
//   - count (a call served Degraded under fail_open whose admission may
//     have reached Redis; and each replayed aggregate under its own id):
//     if the id is recorded, nothing happens; else the counts are added
//     and the id recorded.
//
// Past CallRecordTTL a record is gone and a call still unsettled is settled
// as if it had not counted (at most one count more or less per call in
// flight when the fault began).

// CallRecordTTL is how long Redis keeps the record of each admitted call,
// and so the longest outage through which counts stay exact. A record is
// about 40 bytes (a hash field per call, one hash per key and minute).
const CallRecordTTL = 10 * time.Minute

// errSettled is the admission script's answer for a call already settled
// as not counted.
const errSettled = "restmcp: call already settled; nothing counted"

// callRef names the record of one call: its id and the minutes whose
// record hash may hold it (the first is where a new mark goes; 0: none).
type callRef struct {
	id      string
	minutes [3]int64
}

// minuteOf is the Unix minute of t, the suffix of a record hash.
func minuteOf(t time.Time) int64 { return t.Unix() / 60 }

// settleOp is one call to settle, or one aggregate of replayed counts.
type settleOp struct {
	keyID, tool string
	ref         callRef
	undo        bool   // undo the call if counted; else count it if not recorded
	cost, calls int64  // count: what to add
	day         string // count: the day (yyyymmdd) the counts belong to
}

// unsettledError is an admission whose outcome is unknown: it was sent,
// and no reply came back. It wraps ErrUnavailable.
type unsettledError struct {
	err error
	op  settleOp // the undo that settles it
}

func (e *unsettledError) Error() string { return e.err.Error() }
func (e *unsettledError) Unwrap() error { return e.err }

// unsettled returns the settle operation for an admission error whose
// outcome is unknown, or nil.
func unsettled(err error) *settleOp {
	var ue *unsettledError
	if errors.As(err, &ue) {
		return &ue.op
	}
	return nil
}

// ambiguous reports whether err leaves a script's outcome unknown: no
// reply came (a network error, a timeout, a cancelled wait). A reply, even
// an error reply (a Lua error, NOSCRIPT, the deadline passed), means the
// script's writes did not happen, since every script checks before it
// writes.
func ambiguous(err error) bool {
	var re redis.Error
	return err != nil && !errors.As(err, &re)
}

// settleScript settles one call by id, or counts one aggregate (see
// above).
//
//	KEYS[1]   restmcp:{keyID}:calls, the prefix of the record hashes
//	ARGV[1]   "undo" or "count"
//	ARGV[2]   the call id
//	ARGV[3..5] the minutes whose record hash may hold the id ("" for none);
//	          a new mark goes into the first
//	ARGV[6]   tool
//	ARGV[7]   count: cost units to add
//	ARGV[8]   count: calls to add
//	ARGV[9]   count: the day (yyyymmdd)
//	ARGV[10]  month hash TTL, s
//	ARGV[11]  record TTL, s
//
// It returns 1 when it changed the counters, else 0. The month hash is
// named from KEYS[1]'s prefix; it shares its hash tag, so one Cluster
// slot.
var settleScript = redis.NewScript(luaMonth + luaAdjust + `
local base = string.sub(KEYS[1], 1, -6)
local id = ARGV[2]
local rkey, rec = nil, false
for i = 3, 5 do
  if ARGV[i] ~= "" then
    local k = KEYS[1] .. ":" .. ARGV[i] .. ":" .. string.sub(id, 1, 1)
    if not rkey then rkey = k end
    local v = redis.call("HGET", k, id)
    if v then rkey, rec = k, v; break end
  end
end
local function mark(v)
  redis.call("HSET", rkey, id, v)
  redis.call("EXPIRE", rkey, ARGV[11], "NX")
end
if ARGV[1] == "undo" then
  if not rec then mark("u"); return 0 end
  if rec == "u" then return 0 end
  local day, cost = string.match(rec, "^(%d+):(%d+)$")
  if day then charge(base, day, -tonumber(cost), -1, ARGV[6], ARGV[10]) end
  mark("u")
  return 1
end
if rec then return 0 end
charge(base, ARGV[9], tonumber(ARGV[7]), tonumber(ARGV[8]), ARGV[6], ARGV[10])
mark(ARGV[9] .. ":" .. ARGV[7])
return 1
`)

// settleArgs are settleScript's keys and arguments for op.
func settleArgs(op settleOp) ([]string, []any) {
	action := "count"
	if op.undo {
		action = "undo"
	}
	args := []any{action, op.ref.id}
	for _, m := range op.ref.minutes {
		if m == 0 {
			args = append(args, "")
		} else {
			args = append(args, strconv.FormatInt(m, 10))
		}
	}
	args = append(args, op.tool, op.cost, op.calls, op.day, usageTTLArg, callRecordTTLArg)
	return []string{Key(op.keyID, "calls")}, args
}

// settle runs one settle operation. Redis failures are wrapped with
// [ErrUnavailable]; settling is idempotent, so a failed one may simply be
// run again.
func (m *RedisMeter) settle(ctx context.Context, op settleOp) error {
	var shard string
	if m.journal != nil {
		shard = m.shardOf(op.keyID)
	}
	keys, args := settleArgs(op)
	if err := settleScript.Run(ctx, m.rdb, keys, args...).Err(); err != nil {
		return fmt.Errorf("%w: settling call %s of key_id %s: %w", ErrUnavailable, op.ref.id, op.keyID, err)
	}
	if m.journal != nil {
		m.journal.add(shard, op, time.Time{}) // replication.go
	}
	return nil
}

// undoOp is the settle operation that gives back an admitted call: by its
// record when the admission was recorded (ref set), which is exact and
// idempotent.
func undoOp(c Call, d Decision) settleOp {
	return settleOp{keyID: c.KeyID, tool: c.Tool, ref: d.ref, undo: true}
}

// estimatedMinutes are the record minutes an admission sent at t (by the
// replica's clock, moved to Redis time by the measured offset) may have
// used: that minute, then the one before and the one after.
func (m *RedisMeter) estimatedMinutes(t time.Time) [3]int64 {
	if m.serverNow != nil {
		t = m.serverNow()
	} else if m.offset.known.Load() {
		t = t.Add(time.Duration(m.offset.us.Load()) * time.Microsecond)
	}
	n := minuteOf(t)
	return [3]int64{n, n - 1, n + 1}
}
