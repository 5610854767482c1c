package metering

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// planAdmitScript checks every rate limit and quota of a plan and, when all
// allow, applies them and counts the call, atomically. Keys (all with the
// caller's {keyID} hash tag):
//
//	KEYS[1..n]       state of each rate limit: GCRA's TAT (µs), or a sliding
//	                 window's log (a sorted set of call times, µs)
//	KEYS[n+1..n+3]   day counters of the previous, current, next day by the replica's clock
//	KEYS[n+4..n+6]   month counters of the previous, current, next month
//	KEYS[n+7..n+9]   per-tool hashes of the previous, current, next month
//
// Arguments:
//
//	ARGV[1]              "" (use Redis TIME) or now in µs (tests only)
//	ARGV[2]              n, the number of rate limits
//	ARGV[3..2+2n]        emission interval and tau of each rate limit, µs; for a
//	                     sliding window, -limit and the window, µs
//	ARGV[b], b = 3+2n    day quota, -1 for none
//	ARGV[b+1]            month quota, -1 for none
//	ARGV[b+2]            cost, units
//	ARGV[b+3]            tool name
//	ARGV[b+4], ARGV[b+5] day and month counter TTL, s
//	ARGV[b+6..b+9]       starts of the previous, current, next day and the
//	                     day after, µs: day candidate i holds [ARGV[b+6+i], ARGV[b+7+i])
//	ARGV[b+10..b+13]     the same for the months
//	ARGV[b+14]           deadline, µs in the script's clock, "" for none: a
//	                     script that runs later changes nothing and answers
//	                     the error errDeadlinePassed (see scriptDeadline)
//	ARGV[b+15]           the call id, unique per call: the sliding logs'
//	                     member and the field of the call's record
//	ARGV[b+16]           restmcp:{keyID}:calls, the prefix of the record hashes
//	ARGV[b+17]           record TTL, s (CallRecordTTL)
//
// An admitted call is recorded as "<yyyymmdd>:<cost>" under its id in the
// hash <ARGV[b+16]>:<Unix minute of now>:<the id's first hex digit>
// (settle.go); a call whose id is already recorded there is answered as
// admitted and changes nothing, or, when it was settled as not counted
// ("u"), refused with errSettled.
//
// Choosing the period by comparing Redis TIME with boundaries computed by
// the client (exact calendar arithmetic in Go) costs far less per call than
// a calendar in Lua.
//
// It returns {allowed, now µs, day index, month index, day units used,
// month units used, rel_1 … rel_n, aux_1 … aux_n}, the state before the
// call, where for GCRA rel_i = max(TAT_i, now) - now and aux_i = 0, and
// for a sliding window rel_i is the calls in (now - window, now] and aux_i
// the µs until the oldest of them leaves it (0: none); decide() builds the
// Decision from it with the same arithmetic. Integers stay below 2^53,
// exact in Lua.
var planAdmitScript = redis.NewScript(luaPrelude + `
local now = now_us(ARGV[1])
local n = tonumber(ARGV[2])
local b = 3 + 2 * n
local di, mi = pick(now, b + 6), pick(now, b + 10)
if not di or not mi then return redis.error_reply(skew_error) end
if ARGV[b + 14] ~= "" and now > tonumber(ARGV[b + 14]) then return redis.error_reply("` + errDeadlinePassed + `") end
local dkey, mkey, tkey = KEYS[n + 1 + di], KEYS[n + 4 + mi], KEYS[n + 7 + mi]
local cost = tonumber(ARGV[b + 2])

-- One MGET reads every GCRA limit's TAT and the day and month counters
-- (a sliding window's log is a sorted set, read below).
local mk, at = {}, {}
for i = 1, n do
  if tonumber(ARGV[1 + 2 * i]) >= 0 then mk[#mk + 1] = KEYS[i]; at[i] = #mk end
end
mk[#mk + 1] = dkey
mk[#mk + 1] = mkey
local vals = redis.call("MGET", unpack(mk))

local ok = true
local out = {0, now, di, mi, 0, 0}
local tats = {}
for i = 1, n do
  local interval, tau = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  out[6 + n + i] = 0
  if interval < 0 then
    redis.call("ZREMRANGEBYSCORE", KEYS[i], "-inf", now - tau)
    local count = redis.call("ZCARD", KEYS[i])
    out[6 + i] = count
    local oldest = redis.call("ZRANGE", KEYS[i], 0, 0, "WITHSCORES")
    if oldest[2] then out[6 + n + i] = tonumber(oldest[2]) + tau - now end
    if count + 1 > -interval then ok = false end
  else
    local tat = tonumber(vals[at[i]] or 0)
    if tat < now then tat = now end
    out[6 + i] = tat - now
    tats[i] = tat + interval
    if tats[i] - tau > now then ok = false end
  end
end
local rkey = ARGV[b + 16] .. ":" .. string.format("%d", math.floor(now / 60000000)) .. ":" .. string.sub(ARGV[b + 15], 1, 1)
local rec = redis.call("HGET", rkey, ARGV[b + 15])
if rec == "u" then return redis.error_reply("` + errSettled + `") end
local du = tonumber(vals[#mk - 1] or 0)
local mu = tonumber(vals[#mk] or 0)
out[5], out[6] = du, mu
local dq, mq = tonumber(ARGV[b]), tonumber(ARGV[b + 1])
if (dq >= 0 and du + cost > dq) or (mq >= 0 and mu + cost > mq) then ok = false end
if rec then out[1] = 1; return out end
if not ok then return out end

for i = 1, n do
  local interval, tau = tonumber(ARGV[1 + 2 * i]), tonumber(ARGV[2 + 2 * i])
  if interval < 0 then
    redis.call("ZADD", KEYS[i], now, string.format("%d", now) .. ":" .. ARGV[b + 15])
    redis.call("PEXPIRE", KEYS[i], math.ceil(tau / 1000))
  else
    redis.call("SET", KEYS[i], string.format("%d", tats[i]), "PX", math.ceil((tats[i] - now) / 1000))
  end
end
local field = ARGV[b + 3]
if cost > 0 then
  if redis.call("INCRBY", dkey, cost) == cost then redis.call("EXPIRE", dkey, ARGV[b + 4]) end
  if redis.call("INCRBY", mkey, cost) == cost then redis.call("EXPIRE", mkey, ARGV[b + 5]) end
  redis.call("HINCRBY", tkey, "cost:" .. field, cost)
end
if redis.call("HINCRBY", tkey, "calls:" .. field, 1) == 1 then redis.call("EXPIRE", tkey, ARGV[b + 5]) end
redis.call("HSET", rkey, ARGV[b + 15], string.sub(dkey, -8) .. ":" .. cost)
redis.call("EXPIRE", rkey, ARGV[b + 17], "NX")
out[1] = 1
return out
`)

// luaAdjust is the Lua function adjustScript and settleScript share:
// adjust(key, field, delta, ttl) adds delta to a counter (field nil) or a
// hash field, never below zero, never creating a counter for a negative
// delta, and sets ttl on a key that has none.
const luaAdjust = `
local function adjust(key, field, delta, ttl)
  if delta == 0 then return end
  if delta < 0 then
    if field then
      if redis.call("HEXISTS", key, field) == 0 then return end
    elseif redis.call("EXISTS", key) == 0 then
      return
    end
  end
  local v
  if field then v = redis.call("HINCRBY", key, field, delta) else v = redis.call("INCRBY", key, delta) end
  if v < 0 then
    if field then redis.call("HSET", key, field, 0) else redis.call("SET", key, 0, "KEEPTTL") end
  end
  if redis.call("TTL", key) == -1 then redis.call("EXPIRE", key, ttl) end
end
`

// adjustScript adds deltas to the counters of one call's periods, for
// Refund (negative deltas) and for replaying calls counted while Redis was
// down (positive deltas). Counters never go below zero, and a negative
// delta never creates a counter that has expired.
//
//	KEYS[1]  day counter
//	KEYS[2]  month counter
//	KEYS[3]  month per-tool hash
//	ARGV[1]  cost delta, units
//	ARGV[2]  calls delta
//	ARGV[3]  tool name
//	ARGV[4]  day counter TTL, s
//	ARGV[5]  month counter TTL, s
//	ARGV[6]  deadline, µs in the script's clock, "" for none (as planAdmitScript)
//	ARGV[7]  "" (use Redis TIME) or now in µs (tests only)
var adjustScript = redis.NewScript(luaPrelude + luaAdjust + `
if ARGV[6] ~= "" and now_us(ARGV[7]) > tonumber(ARGV[6]) then return redis.error_reply("` + errDeadlinePassed + `") end
local cost, calls, tool = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3]
adjust(KEYS[1], nil, cost, ARGV[4])
adjust(KEYS[2], nil, cost, ARGV[5])
adjust(KEYS[3], "cost:" .. tool, cost, ARGV[5])
adjust(KEYS[3], "calls:" .. tool, calls, ARGV[5])
return 1
`)

// planReportScript reads what a Report needs, with the time from Redis.
//
//	KEYS        as planAdmitScript
//	ARGV[1]     "" (use Redis TIME) or now in µs (tests only)
//	ARGV[2]     n, the number of rate limits
//	ARGV[3..6]  day boundaries, as planAdmitScript's ARGV[b+6..b+9]
//	ARGV[7..10] month boundaries
//	ARGV[11..10+2n] each rate limit's parameters, as planAdmitScript's
//
// It returns {now µs, day units, month units, HGETALL of the month's
// per-tool hash, rel_1 … rel_n, aux_1 … aux_n}, as planAdmitScript does
// (it only reads: a sliding log is counted, not trimmed).
var planReportScript = redis.NewScript(luaPrelude + `
local now = now_us(ARGV[1])
local n = tonumber(ARGV[2])
local di, mi = pick(now, 3), pick(now, 7)
if not di or not mi then return redis.error_reply(skew_error) end
local out = {now,
  tonumber(redis.call("GET", KEYS[n + 1 + di]) or 0),
  tonumber(redis.call("GET", KEYS[n + 4 + mi]) or 0),
  redis.call("HGETALL", KEYS[n + 7 + mi])}
for i = 1, n do
  local interval, tau = tonumber(ARGV[9 + 2 * i]), tonumber(ARGV[10 + 2 * i])
  out[4 + n + i] = 0
  if interval < 0 then
    local from = "(" .. string.format("%d", now - tau)
    out[4 + i] = redis.call("ZCOUNT", KEYS[i], from, "+inf")
    local oldest = redis.call("ZRANGEBYSCORE", KEYS[i], from, "+inf", "WITHSCORES", "LIMIT", 0, 1)
    if oldest[2] then out[4 + n + i] = tonumber(oldest[2]) + tau - now end
  else
    local tat = tonumber(redis.call("GET", KEYS[i]) or 0)
    if tat < now then tat = now end
    out[4 + i] = tat - now
  end
end
return out
`)

// replicaNow is the replica's clock, used only to name candidate periods.
func (m *RedisMeter) replicaNow() time.Time {
	if m.clientNow != nil {
		return m.clientNow()
	}
	return time.Now()
}

// AdmitCall checks every rate limit and quota of c.Plan and, when all
// allow, applies every rate limit and adds c.Cost to the day and month
// counters and to the month's per-tool counters, in one atomic script
// (one round trip, shared with concurrent calls' admissions: batch.go)
// with the time from Redis TIME. When any limit refuses,
// nothing changes and the Decision says which limit refused and when to
// retry: the longest wait over the refusing limits, which for a quota is
// the end of its period. An invalid call is an error before any Redis
// access; Redis failures are wrapped with [ErrUnavailable].
func (m *RedisMeter) AdmitCall(ctx context.Context, c Call) (Decision, error) {
	return m.admitOn(ctx, c, m.shardOf(c.KeyID))
}

// admitOn is AdmitCall for a caller that already knows the shard of
// c.KeyID (shards.go), which names the batch the admission joins.
func (m *RedisMeter) admitOn(ctx context.Context, c Call, shard string) (Decision, error) {
	if err := c.validate(); err != nil {
		return Decision{}, err
	}
	deadline, err := m.scriptDeadline(ctx)
	if err != nil {
		return Decision{}, fmt.Errorf("%w: admitting key_id %s: reading the Redis clock: %w", ErrUnavailable, c.KeyID, err)
	}
	n := len(c.Plan.RateLimits)
	keys, cal := m.planKeys(c.KeyID, c.Plan)
	id := nonce()
	args := make([]any, 0, 2*n+20)
	args = append(args, m.serverClock(), n)
	args = appendRateArgs(args, c.Plan)
	args = append(args,
		c.Plan.quota(PeriodDay), c.Plan.quota(PeriodMonth), c.Cost, c.Tool, dayUsageTTLArg, usageTTLArg)
	args = append(args, cal.args[:]...)
	args = append(args, deadline, id, Key(c.KeyID, "calls"), callRecordTTLArg)
	t0 := time.Now()
	rep := m.runAdmission(ctx, shard, keys, args) // batch.go
	r, err := rep.r, rep.err
	if err == nil && len(r) > 1 && m.serverNow == nil && !rep.sent.IsZero() {
		m.offset.observe(rep.sent, rep.answered, r[1])
	}
	if err != nil {
		err = fmt.Errorf("%w: admitting key_id %s: %w", ErrUnavailable, c.KeyID, err)
		if ambiguous(err) {
			// Sent, and no reply: the call may have counted. Whoever does
			// not serve it settles it by id (settle.go).
			ref := callRef{id: id, minutes: m.estimatedMinutes(t0)}
			return Decision{}, &unsettledError{err: err, op: settleOp{keyID: c.KeyID, tool: c.Tool, ref: ref, undo: true}}
		}
		return Decision{}, err
	}
	if len(r) != 6+2*n {
		return Decision{}, fmt.Errorf("%w: admitting key_id %s: script returned %d values, want %d", ErrUnavailable, c.KeyID, len(r), 6+2*n)
	}
	s := callState{now: r[1], rel: r[6 : 6+n], aux: r[6+n:], dayUsed: r[4], monthUsed: r[5]}
	d := decide(c, s, r[0] == 1)
	if d.Allowed {
		d.ref = callRef{id: id, minutes: [3]int64{r[1] / 60_000_000}}
	}
	return d, nil
}

// Refund gives back what an allowed call was charged: d.Cost units from
// the day and month counters of d.At and one call and d.Cost units from
// the tool's counters, never going below zero. It is for counting policy
// [CountSuccess]; call it once per refunded call. Rate limits are not
// refunded: a failed call still used upstream capacity, and refunding it
// would let a failing upstream be retried at full speed. A refused or
// Degraded decision needs no refund here (an OutageMeter refunds its own).
// Redis failures are wrapped with [ErrUnavailable].
func (m *RedisMeter) Refund(ctx context.Context, c Call, d Decision) error {
	if !d.Allowed || d.Degraded {
		return nil
	}
	if !validKeyID(c.KeyID) {
		return fmt.Errorf("%w: %q", ErrInvalidKeyID, c.KeyID)
	}
	if d.ref.id != "" {
		return m.settle(ctx, undoOp(c, d))
	}
	return m.adjust(ctx, c.KeyID, c.Tool, d.At, -d.Cost, -1)
}

// adjust runs adjustScript for the periods containing at.
func (m *RedisMeter) adjust(ctx context.Context, keyID, tool string, at time.Time, cost, calls int64) error {
	k := keysAt(keyID, at)
	deadline, err := m.scriptDeadline(ctx)
	if err == nil {
		err = adjustScript.Run(ctx, m.rdb, []string{k.day, k.month, k.tools},
			cost, calls, tool, int64(DayUsageTTL/time.Second), int64(UsageTTL/time.Second), deadline, m.serverClock()).Err()
	}
	if err != nil {
		return fmt.Errorf("%w: adjusting counters of key_id %s: %w", ErrUnavailable, keyID, err)
	}
	return nil
}

// Report reads keyID's usage under plan: each rate limit's state, the
// current day's and month's units against the plan's quotas, and the
// month's per-tool counts, at Redis TIME, in one round trip. Redis
// failures are wrapped with [ErrUnavailable].
func (m *RedisMeter) Report(ctx context.Context, keyID string, plan *Plan) (Report, error) {
	if !validKeyID(keyID) {
		return Report{}, fmt.Errorf("%w: %q", ErrInvalidKeyID, keyID)
	}
	keys, cal := m.planKeys(keyID, plan)
	n := len(plan.RateLimits)
	args := append([]any{m.serverClock(), n}, cal.args[:]...)
	r, err := planReportScript.Run(ctx, m.rdb, keys, appendRateArgs(args, plan)...).Slice()
	if err != nil {
		return Report{}, fmt.Errorf("%w: reading usage of key_id %s: %w", ErrUnavailable, keyID, err)
	}
	if len(r) != 4+2*n {
		return Report{}, fmt.Errorf("%w: reading usage of key_id %s: script returned %d values, want %d", ErrUnavailable, keyID, len(r), 4+2*n)
	}
	ints := make([]int64, 0, 3+2*n)
	for i, v := range r {
		if i == 3 {
			continue
		}
		x, ok := v.(int64)
		if !ok {
			return Report{}, fmt.Errorf("%w: reading usage of key_id %s: value %d is %T", ErrUnavailable, keyID, i, v)
		}
		ints = append(ints, x)
	}
	hash, _ := r[3].([]any)
	s := callState{now: ints[0], dayUsed: ints[1], monthUsed: ints[2], rel: ints[3 : 3+n], aux: ints[3+n:]}
	return buildReport(keyID, plan, s, parseHash(hash)), nil
}

// RecordEvents appends events to the event stream in order, as
// RecordEvent would one by one, in one pipelined round trip: the Redis work
// per call no longer grows with a round trip per event. Redis failures are
// wrapped with [ErrUnavailable]; on one, any of the events may be missing.
func (m *RedisMeter) RecordEvents(ctx context.Context, events []Event) error {
	if m.eventMaxLen < 0 || len(events) == 0 {
		return nil
	}
	_, err := m.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, e := range events {
			if e.Time.IsZero() {
				e.Time = m.replicaNow()
			}
			p.XAdd(ctx, &redis.XAddArgs{Stream: m.eventStream, MaxLen: m.eventMaxLen, Approx: true, Values: e.values()})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%w: recording %d usage events: %w", ErrUnavailable, len(events), err)
	}
	return nil
}

// RecordEvent appends e to the event stream (see [Event] for the record
// format), trimming the stream to about Options.EventMaxLen entries. A
// zero e.Time is the replica's clock. It does nothing when events are off
// (EventMaxLen < 0). Redis failures are wrapped with [ErrUnavailable].
func (m *RedisMeter) RecordEvent(ctx context.Context, e Event) error {
	if m.eventMaxLen < 0 {
		return nil
	}
	if e.Time.IsZero() {
		e.Time = m.replicaNow()
	}
	err := m.rdb.XAdd(ctx, &redis.XAddArgs{
		Stream: m.eventStream,
		MaxLen: m.eventMaxLen,
		Approx: true,
		Values: e.values(),
	}).Err()
	if err != nil {
		return fmt.Errorf("%w: recording event of key_id %s: %w", ErrUnavailable, e.KeyID, err)
	}
	return nil
}

// The TTL arguments of every admission, boxed once.
var (
	dayUsageTTLArg   any = int64(DayUsageTTL / time.Second)
	usageTTLArg      any = int64(UsageTTL / time.Second)
	callRecordTTLArg any = int64(CallRecordTTL / time.Second)
)

// appendRateArgs appends each rate limit's two script arguments: GCRA's
// emission interval and tau (µs), or a sliding window's -limit and window
// (µs).
func appendRateArgs(args []any, plan *Plan) []any {
	for _, rl := range plan.RateLimits {
		if rl.Sliding {
			args = append(args, -rl.Limit, rl.Window.Microseconds())
			continue
		}
		args = append(args, rl.p.interval, rl.p.tau)
	}
	return args
}

// nonce is a call's unique member in sliding-window logs (beside its time).
func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
