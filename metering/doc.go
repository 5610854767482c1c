// Package metering decides whether one MCP tools/call may proceed for an API
// key, and counts the calls it admits.
//
// Its main type is [Meter], implemented by [RedisMeter] (shared by every
// replica, one atomic Lua script per call) and [MemoryMeter] (one process,
// for tests, demos and single-replica deployments). Both give the same
// answers for the same sequence of calls and times.
//
// # Rate limit
//
// The per-key rate limit is a GCRA (generic cell rate algorithm, the
// algorithm of github.com/go-redis/redis_rate) with burst equal to the limit:
// a key that has been idle may spend its whole [Options.Limit] at once, and
// then gets one more call every Window/Limit. With the defaults (100 calls
// per 60 s) 200 simultaneous calls admit exactly 100, and the 101st may come
// 600 ms later. GCRA was chosen over a sliding-window log because it keeps one
// integer per key (the theoretical arrival time) instead of one entry per
// call, costs one GET and one SET per call whatever the limit, refills
// smoothly instead of all at once at a window edge, and yields an exact
// Retry-After. The price, stated honestly: the bound is "Limit calls at once,
// then Limit per Window on average", so over any interval of length d at most
// Limit + d·Limit/Window calls are admitted (up to about 2×Limit within one
// Window right after an idle period), where a sliding log would cap any
// Window at exactly Limit.
//
// Time is taken from Redis (TIME inside the script), never from the replica's
// clock, so replicas with skewed clocks agree. Times are kept in whole
// microseconds; the emission interval Window/Limit is rounded down to a whole
// microsecond (at least 1 µs).
//
// # Counting
//
// Every admitted call increments the key's counter for the current calendar
// month (UTC) in the same script; refused calls are not counted. Counters
// expire [UsageTTL] after their first call, so Redis does not grow forever
// and last month's counter stays readable throughout the following month.
//
// # Redis key layout
//
// Every key is built by [Key] and starts with [KeyPrefix]; all keys of one
// caller share the hash tag {keyID}, so the multi-key script runs on Redis
// Cluster:
//
//	restmcp:{<keyID>}:rl               GCRA state: theoretical arrival time, µs since the Unix epoch; PX ≤ Window
//	restmcp:{<keyID>}:usage:<yyyymm>   admitted calls in that calendar month (UTC); EX UsageTTL
//
// keyID is a short hash of the API key, never the key itself.
//
// # Errors
//
// A Redis failure is returned, wrapped with [ErrUnavailable], and never
// panics; the caller answers 503 or fails open by policy.
//
// # Imports
//
// metering must not import gin, the MCP go-sdk or restmcp's adapter package:
// the adapter declares the small interface it needs and metering satisfies it.
package metering
