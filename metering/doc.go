// Package metering decides whether one MCP tools/call may proceed for an API
// key under its plan, and counts what it admits: plans, the key registry,
// rate limits and quotas, usage read-out and usage events.
//
// Its main type is [Meter], implemented by [RedisMeter] (shared by every
// replica, one atomic Lua script per call), [MemoryMeter] (one process, for
// tests, demos and single-replica deployments) and [OutageMeter] (a
// RedisMeter under the plans' outage policy). RedisMeter and MemoryMeter
// give the same answers for the same sequence of calls and times.
//
// The value types of one call are declared here and nowhere else: [KeyID]
// (the only key id function), [Plan], [Call], [Decision], [Event] and
// [Outcome], and the key sentinels [ErrUnknownKey] and [ErrRevokedKey]. The
// adapter package uses them directly and declares only the small
// interfaces it calls, which [Registry] and the meters satisfy.
//
// # Plans
//
// A plans file ([LoadPlans], [ParsePlans]) gives each plan several rate
// limits (per second, minute, hour), quotas of cost units per calendar day
// and month (UTC), the tools it allows (globs, tag: patterns and !
// negations, last match wins; [Plan.Allows]), per-tool costs
// ([Plan.Cost]) and an upgrade message and URL; and, at the top,
// default_plan, key_mode (registry | open), counting (admitted | success;
// the refund rule is [Counting.Refunds]), outage (fail_closed | fail_open)
// and static keys. [PlansFromRateLimit] is the single implicit plan of a
// deployment without a plans file.
//
// # Rate limit
//
// Each rate limit is a GCRA (generic cell rate algorithm, the algorithm of
// github.com/go-redis/redis_rate) with burst equal to the limit: a key that
// has been idle may spend its whole limit at once, and then gets one more
// call every Window/Limit. With the defaults (100 calls per 60 s) 200
// simultaneous calls admit exactly 100, and the 101st may come 600 ms
// later. GCRA was chosen over a sliding-window log because it keeps one
// integer per key and window (the theoretical arrival time) instead of one
// entry per call, costs one GET and one SET per call whatever the limit,
// refills smoothly instead of all at once at a window edge, and yields an
// exact Retry-After. The price, stated honestly: the bound is "Limit calls
// at once, then Limit per Window on average", so over any interval of
// length d at most Limit + d·Limit/Window calls are admitted (up to about
// 2×Limit within one Window right after an idle period), where a sliding
// log would cap any Window at exactly Limit.
//
// Time is taken from Redis (TIME inside the script), never from the
// replica's clock, so replicas with skewed clocks agree. Times are kept in
// whole microseconds; the emission interval Window/Limit is rounded down to
// a whole microsecond (at least 1 µs).
//
// A plan may choose a sliding-window log instead (rate_limits: {…,
// algorithm: sliding_window}) when it must promise "at most Limit calls in
// any Window" exactly: each limit is then a sorted set of the calls of the
// last Window (one ZREMRANGEBYSCORE, ZCARD and ZRANGE per call in the same
// script, and a ZADD when admitted), a slot comes back exactly Window
// after its call, and Retry-After runs until the oldest call leaves the
// window. It costs one entry per call in the window.
//
// # Admission
//
// [Meter].AdmitCall admits one tools/call under its plan in one atomic
// Lua script (one round trip, time from Redis TIME): it checks every rate
// limit and quota, and only when all allow it applies every limit and adds
// the call's cost to the day and month counters and to the month's
// per-tool counters. A refusal changes nothing and carries the exact
// Retry-After (the longest over the refusing limits; for a quota, the end
// of its period) and the refusing limit's name; every Decision carries the
// most restrictive limit for the RateLimit headers. Refund gives a call's
// cost back for counting policy success (rate limits are not refunded).
// Report reads a key's usage; RecordEvent appends a usage [Event] to a
// capped stream. Counters expire ([UsageTTL]) after their month's
// first call, so Redis does not grow forever and last month's counter
// stays readable throughout the following month. [Registry] maps API keys
// to plans. On a Redis Cluster the outage policy keeps its state per
// shard (shards.go): a dead master stops only the keys it holds.
//
// # Redis key layout
//
// Every key is built by [Key] and starts with [KeyPrefix]; all keys of one
// caller share the hash tag {keyID}, so the multi-key scripts run on Redis
// Cluster:
//
//	restmcp:{<keyID>}:month:<yyyymm>     hash: that calendar month's (UTC) usage: m (cost units that month), d:<dd> (cost units that day), cost:<tool> and calls:<tool>, rl:<window> (GCRA state of one rate limit, theoretical arrival time in µs since the Unix epoch; window "1s", "60s", "3600s"); EX UsageTTL
//	restmcp:{<keyID>}:rl:sw<window>      sliding-window log of one rate limit (sorted set: member "<µs>:<nonce>", score the call's µs); PX = window
//	restmcp:{<keyID>}:calls:<minute>:<d> hash: call id → "<yyyymmdd>:<cost>" ("u": given back) per call admitted that Unix minute whose id starts with hex digit d; EX CallRecordTTL (settle.go)
//	restmcp:{<keyID>}:key                registry record (hash): sha256, key_id, plan, status, label, created, revoked
//	restmcp:keys                         set of registry key ids (RegistryOptions.IndexKey)
//	restmcp:events                       usage event stream (Options.EventStream), MAXLEN ~ Options.EventMaxLen
//
// A month hash that does not exist yet starts from what the earlier
// layout's keys hold (usage:<yyyymm>, usage:<yyyymmdd>, tools:<yyyymm>,
// rl:<window>), which are read, never written (luaMonth in redis.go).
//
// keyID is a short hash of the API key (the first 12 hex digits of its
// SHA-256), never the key itself; the registry stores only the full
// SHA-256.
//
// # Errors
//
// A Redis failure is returned, wrapped with [ErrUnavailable], and never
// panics; the caller answers 503 or fails open by policy ([OutageMeter]).
// The registry's errors are [ErrUnknownKey], [ErrRevokedKey],
// [ErrUnknownPlan], [ErrStaticKey] and [ErrNoRegistry].
//
// # Imports
//
// metering must not import gin, the MCP go-sdk or restmcp's adapter package:
// the adapter declares the small interface it needs and metering satisfies it.
package metering
