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
//	KEYS[1..3]   month hashes (luaMonth) of the previous, current, next month by the replica's clock
//	KEYS[4..]    each sliding-window rate limit's log (a sorted set of call times, µs), in the plan's order
//
// Arguments:
//
//	ARGV[1]              "" (use Redis TIME) or now in µs (tests only)
//	ARGV[2]              n, the number of rate limits
//	ARGV[3i..3i+2]       rate limit i (1..n): GCRA's emission interval and tau (µs)
//	                     and its state's field in the month hash ("rl:<window>");
//	                     for a sliding window, -limit, the window (µs) and ""
//	ARGV[b], b = 3+3n    day quota, -1 for none
//	ARGV[b+1]            month quota, -1 for none
//	ARGV[b+2]            cost, units
//	ARGV[b+3]            tool name
//	ARGV[b+4]            month hash TTL, s
//	ARGV[b+5..b+8]       starts of the previous, current, next month and the
//	                     month after, µs: candidate i holds [ARGV[b+5+i], ARGV[b+6+i])
//	ARGV[b+9]            deadline, µs in the script's clock, "" for none: a
//	                     script that runs later changes nothing and answers
//	                     the error errDeadlinePassed (see scriptDeadline)
//	ARGV[b+10]           the call id, unique per call: the sliding logs'
//	                     member and the field of the call's record
//	ARGV[b+11]           record TTL, s (CallRecordTTL)
//
// An admitted call is recorded as "<yyyymmdd>:<cost>" under its id in the
// hash restmcp:{keyID}:calls:<Unix minute of now>:<the id's first hex
// digit> (settle.go); a call whose id is already recorded there is
// answered as admitted and changes nothing, or, when it was settled as not
// counted ("u"), refused with errSettled.
//
// Choosing the month by comparing Redis TIME with boundaries computed by
// the client (exact calendar arithmetic in Go) costs far less per call than
// a calendar in Lua.
//
// It returns {allowed, now µs, day units used, month units used,
// rel_1 … rel_n, aux_1 … aux_n}, the state before the call, where for GCRA
// rel_i = max(TAT_i, now) - now and aux_i = 0, and for a sliding window
// rel_i is the calls in (now - window, now] and aux_i the µs until the
// oldest of them leaves it (0: none); decide() builds the Decision from it
// with the same arithmetic. Integers stay below 2^53, exact in Lua, and
// are written with %d (Lua would write 16 digits as 1.79e+15).
//
// Redis commands, for a call admitted under GCRA limits in a month whose
// hash exists: TIME, HMGET, HSETNX and EXPIRE of the record, HSET.
var planAdmitScript = redis.NewScript(luaPrelude + luaMonth + `
local now = now_us(ARGV[1])
local n = tonumber(ARGV[2])
local b = 3 + 3 * n
local mi = pick(now, b + 5)
if not mi then return redis.error_reply(skew_error) end
if ARGV[b + 9] ~= "" and now > tonumber(ARGV[b + 9]) then return redis.error_reply("` + errDeadlinePassed + `") end
local h, prev = KEYS[1 + mi], nil
if mi > 0 then prev = KEYS[mi] end
local base = base_of(h)
local cost, tool = tonumber(ARGV[b + 2]), ARGV[b + 3]
local dd = day_of(now, tonumber(ARGV[b + 5 + mi]))

-- One HMGET reads the month's and day's units, the tool's counts and
-- every GCRA limit's state (a sliding window's log is a sorted set, read
-- below).
local f, at = {"m", "d:" .. dd, "cost:" .. tool, "calls:" .. tool}, {}
for i = 1, n do
  if tonumber(ARGV[3 * i]) >= 0 then f[#f + 1] = ARGV[3 * i + 2]; at[i] = #f end
end
local vals = redis.call("HMGET", h, unpack(f))
if not vals[1] then
  open_month(h, ARGV[b + 4], true)
  vals = redis.call("HMGET", h, unpack(f))
end

local ok, out, set, s = true, {0, now, 0, 0}, {}, 3
for i = 1, n do
  local interval, tau = tonumber(ARGV[3 * i]), tonumber(ARGV[3 * i + 1])
  out[4 + n + i] = 0
  if interval < 0 then
    s = s + 1
    redis.call("ZREMRANGEBYSCORE", KEYS[s], "-inf", now - tau)
    local count = redis.call("ZCARD", KEYS[s])
    out[4 + i] = count
    local oldest = redis.call("ZRANGE", KEYS[s], 0, 0, "WITHSCORES")
    if oldest[2] then out[4 + n + i] = tonumber(oldest[2]) + tau - now end
    if count + 1 > -interval then ok = false end
  else
    local tat = tonumber(vals[at[i]] or carried(base, prev, f[at[i]]))
    if tat < now then tat = now end
    out[4 + i] = tat - now
    set[#set + 1] = f[at[i]]
    set[#set + 1] = string.format("%d", tat + interval)
    if tat + interval - tau > now then ok = false end
  end
end
local mu, du = tonumber(vals[1] or 0), tonumber(vals[2] or 0)
out[3], out[4] = du, mu
local dq, mq = tonumber(ARGV[b]), tonumber(ARGV[b + 1])
if (dq >= 0 and du + cost > dq) or (mq >= 0 and mu + cost > mq) then ok = false end

local id = ARGV[b + 10]
local rkey = base .. "calls:" .. string.format("%d", math.floor(now / 60000000)) .. ":" .. string.sub(id, 1, 1)
if not ok then
  local rec = redis.call("HGET", rkey, id)
  if rec == "u" then return redis.error_reply("` + errSettled + `") end
  if rec then out[1] = 1 end
  return out
end
if redis.call("HSETNX", rkey, id, string.sub(h, -6) .. dd .. ":" .. string.format("%d", cost)) == 0 then
  if redis.call("HGET", rkey, id) == "u" then return redis.error_reply("` + errSettled + `") end
  out[1] = 1
  return out
end
redis.call("EXPIRE", rkey, ARGV[b + 11], "NX")

s = 3
for i = 1, n do
  local interval, tau = tonumber(ARGV[3 * i]), tonumber(ARGV[3 * i + 1])
  if interval < 0 then
    s = s + 1
    redis.call("ZADD", KEYS[s], now, string.format("%d", now) .. ":" .. id)
    redis.call("PEXPIRE", KEYS[s], math.ceil(tau / 1000))
  end
end
set[#set + 1] = f[4]
set[#set + 1] = string.format("%d", tonumber(vals[4] or 0) + 1)
if cost > 0 then
  set[#set + 1] = "m"
  set[#set + 1] = string.format("%d", mu + cost)
  set[#set + 1] = f[2]
  set[#set + 1] = string.format("%d", du + cost)
  set[#set + 1] = f[3]
  set[#set + 1] = string.format("%d", tonumber(vals[3] or 0) + cost)
end
redis.call("HSET", h, unpack(set))
out[1] = 1
return out
`)

// luaAdjust is what adjustScript and settleScript share (after luaMonth):
// charge(base, day, cost, calls, tool, ttl) adds cost units and calls to
// the counts of day ("yyyymmdd") and its month and tool in the month hash
// of base ("restmcp:{keyID}:"), each never below zero; a negative delta
// neither creates a hash nor a field that does not exist (it has expired,
// or never counted).
const luaAdjust = `
local function adjust(h, field, delta)
  if delta == 0 then return end
  if delta < 0 and redis.call("HEXISTS", h, field) == 0 then return end
  if redis.call("HINCRBY", h, field, delta) < 0 then redis.call("HSET", h, field, 0) end
end
local function charge(base, day, cost, calls, tool, ttl)
  if cost == 0 and calls == 0 then return end
  local h = base .. "month:" .. string.sub(day, 1, 6)
  if not open_month(h, ttl, cost > 0 or calls > 0) then return end
  adjust(h, "m", cost)
  adjust(h, "d:" .. string.sub(day, 7, 8), cost)
  adjust(h, "cost:" .. tool, cost)
  adjust(h, "calls:" .. tool, calls)
end
`

// adjustScript adds deltas to the counts of one call's day, for Refund
// (negative deltas) of a call admitted without a record. Counts never go
// below zero, and a negative delta never creates a count that has expired.
//
//	KEYS[1]  the month hash of the call's day (luaMonth)
//	ARGV[1]  cost delta, units
//	ARGV[2]  calls delta
//	ARGV[3]  tool name
//	ARGV[4]  the call's day, yyyymmdd (UTC)
//	ARGV[5]  month hash TTL, s
//	ARGV[6]  deadline, µs in the script's clock, "" for none (as planAdmitScript)
//	ARGV[7]  "" (use Redis TIME) or now in µs (tests only)
var adjustScript = redis.NewScript(luaPrelude + luaMonth + luaAdjust + `
if ARGV[6] ~= "" and now_us(ARGV[7]) > tonumber(ARGV[6]) then return redis.error_reply("` + errDeadlinePassed + `") end
charge(base_of(KEYS[1]), ARGV[4], tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[5])
return 1
`)

// planReportScript reads what a Report needs, with the time from Redis.
//
//	KEYS        as planAdmitScript
//	ARGV[1]     "" (use Redis TIME) or now in µs (tests only)
//	ARGV[2]     n, the number of rate limits
//	ARGV[3..6]  month boundaries, as planAdmitScript's ARGV[b+5..b+8]
//	ARGV[4+3i..6+3i] rate limit i's three arguments, as planAdmitScript's
//
// It returns {now µs, day units, month units, the month hash's fields and
// values (HGETALL), rel_1 … rel_n, aux_1 … aux_n}, as planAdmitScript does.
// It only reads: a sliding log is counted, not trimmed, and a month hash
// not made yet is read from the earlier layout's keys.
var planReportScript = redis.NewScript(luaPrelude + luaMonth + `
local now = now_us(ARGV[1])
local n = tonumber(ARGV[2])
local mi = pick(now, 3)
if not mi then return redis.error_reply(skew_error) end
local h, prev = KEYS[1 + mi], nil
if mi > 0 then prev = KEYS[mi] end
local flat = redis.call("HGETALL", h)
local v = {}
for i = 1, #flat, 2 do v[flat[i]] = flat[i + 1] end
if not v.m then
  flat = earlier(h)
  for i = 1, #flat, 2 do v[flat[i]] = flat[i + 1] end
end
local out = {now, tonumber(v["d:" .. day_of(now, tonumber(ARGV[3 + mi]))] or 0), tonumber(v.m), flat}
local s = 3
for i = 1, n do
  local interval, tau = tonumber(ARGV[4 + 3 * i]), tonumber(ARGV[5 + 3 * i])
  out[4 + n + i] = 0
  if interval < 0 then
    s = s + 1
    local from = "(" .. string.format("%d", now - tau)
    out[4 + i] = redis.call("ZCOUNT", KEYS[s], from, "+inf")
    local oldest = redis.call("ZRANGEBYSCORE", KEYS[s], from, "+inf", "WITHSCORES", "LIMIT", 0, 1)
    if oldest[2] then out[4 + n + i] = tonumber(oldest[2]) + tau - now end
  else
    local field = ARGV[6 + 3 * i]
    local tat = tonumber(v[field] or carried(base_of(h), prev, field))
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
	id := nonce()
	keys, args := m.admitArgs(c, id, deadline)
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
	if len(r) != 4+2*n {
		return Decision{}, fmt.Errorf("%w: admitting key_id %s: script returned %d values, want %d", ErrUnavailable, c.KeyID, len(r), 4+2*n)
	}
	s := callState{now: r[1], rel: r[4 : 4+n], aux: r[4+n:], dayUsed: r[2], monthUsed: r[3]}
	d := decide(c, s, r[0] == 1)
	if d.Allowed {
		d.ref = callRef{id: id, minutes: [3]int64{r[1] / 60_000_000}}
		if m.journal != nil {
			m.journal.add(shard, settleOp{keyID: c.KeyID, tool: c.Tool, ref: d.ref, cost: c.Cost, calls: 1}, d.At)
		}
	}
	return d, nil
}

// admitArgs are planAdmitScript's keys and arguments for call c with call
// id id and script deadline deadline.
func (m *RedisMeter) admitArgs(c Call, id, deadline string) ([]string, []any) {
	keys, cal := m.planKeys(c.KeyID, c.Plan)
	args := make([]any, 0, 3*len(c.Plan.RateLimits)+14)
	args = append(args, m.serverClock(), len(c.Plan.RateLimits))
	args = appendRateArgs(args, c.Plan)
	args = append(args, c.Plan.quota(PeriodDay), c.Plan.quota(PeriodMonth), c.Cost, c.Tool, usageTTLArg)
	args = append(args, cal.args[:]...)
	return keys, append(args, deadline, id, callRecordTTLArg)
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

// adjust runs adjustScript for the day containing at.
func (m *RedisMeter) adjust(ctx context.Context, keyID, tool string, at time.Time, cost, calls int64) error {
	deadline, err := m.scriptDeadline(ctx)
	if err == nil {
		keys, args := m.adjustArgs(keyID, tool, at, cost, calls, deadline)
		err = adjustScript.Run(ctx, m.rdb, keys, args...).Err()
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
	args := append(make([]any, 0, 6+3*n), m.serverClock(), n)
	args = append(args, cal.args[:]...)
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
	usageTTLArg      any = int64(UsageTTL / time.Second)
	callRecordTTLArg any = int64(CallRecordTTL / time.Second)
)

// appendRateArgs appends each rate limit's three script arguments: GCRA's
// emission interval and tau (µs) and its state's field in the month hash,
// or a sliding window's -limit, window (µs) and "".
func appendRateArgs(args []any, plan *Plan) []any {
	for _, rl := range plan.RateLimits {
		if rl.Sliding {
			args = append(args, -rl.Limit, rl.Window.Microseconds(), "")
			continue
		}
		args = append(args, rl.p.interval, rl.p.tau, rl.field)
	}
	return args
}

// adjustArgs are adjustScript's keys and arguments: cost units and calls
// added to tool's counts of keyID on at's day (UTC).
func (m *RedisMeter) adjustArgs(keyID, tool string, at time.Time, cost, calls int64, deadline string) ([]string, []any) {
	return []string{monthKey(keyID, at)}, []any{cost, calls, tool, dayPeriod(at), usageTTLArg, deadline, m.serverClock()}
}

// nonce is a call's unique member in sliding-window logs (beside its time).
func nonce() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
