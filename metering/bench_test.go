package metering

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/restmcp/restmcp/internal/redisinfo"
)

// BenchmarkPlanAdmit measures AdmitCall against the real Redis with a
// realistic plan (two rate limits, day and month quotas, a per-tool cost),
// from many goroutines at once over 64 keys, every call admitted. It
// reports throughput, the latency percentiles of single admissions, and
// Redis's own CPU per admission (user+sys from INFO cpu, µs), whose
// inverse is how many admissions one Redis core serves when the clients
// run elsewhere (here they share the machine's two cores with it):
//
//	go test -run '^$' -bench PlanAdmit -benchtime 5s ./metering/
func BenchmarkPlanAdmit(b *testing.B) {
	c, m, p, ids := admitBench(b)
	for _, par := range []int{1, 8, 32} {
		b.Run(map[int]string{1: "parallel-2", 8: "parallel-16", 32: "parallel-64"}[par], func(b *testing.B) {
			var next atomic.Int64
			var mu sync.Mutex
			var lat []time.Duration
			b.SetParallelism(par)
			before := redisUse(b, c)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				own := make([]time.Duration, 0, 1024)
				id := ids[next.Add(1)%int64(len(ids))]
				call := Call{KeyID: id, Plan: p, Tool: "heavy", Cost: 3}
				for pb.Next() {
					start := time.Now()
					d, err := m.AdmitCall(context.Background(), call)
					own = append(own, time.Since(start))
					if err != nil || !d.Allowed {
						b.Errorf("AdmitCall = %+v, %v", d, err)
						return
					}
				}
				mu.Lock()
				lat = append(lat, own...)
				mu.Unlock()
			})
			b.StopTimer()
			redisUS := redisUse(b, c).Sub(before).CPU.Seconds() * 1e6 / float64(b.N)
			b.ReportMetric(redisUS, "redis-µs/admission")
			slices.Sort(lat)
			if len(lat) > 0 {
				pct := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) }
				b.ReportMetric(pct(0.50), "p50-µs")
				b.ReportMetric(pct(0.99), "p99-µs")
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "admissions/s")
		})
	}
}

// BenchmarkAdmissionScript measures what one Redis serves: the admission
// script alone, with the keys and arguments AdmitCall sends (the plan of
// BenchmarkPlanAdmit, 64 keys, every call admitted), from 16 goroutines
// that each send pipelines of 16 EVALSHA, a caller cheap enough that Redis
// is the bound. It reports admissions a second, Redis's CPU per admission
// (INFO cpu) and the script's own time per run (INFO commandstats):
//
//	go test -run '^$' -bench AdmissionScript -benchtime 5s ./metering/
func BenchmarkAdmissionScript(b *testing.B) {
	c, m, p, ids := admitBench(b)
	ctx := context.Background()
	if err := planAdmitScript.Load(ctx, c).Err(); err != nil {
		b.Fatal(err)
	}
	const pipeline = 16
	var next atomic.Int64
	b.SetParallelism(8) // 16 goroutines on 2 cores
	before := redisUse(b, c)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for more := true; more; {
			pipe := c.Pipeline()
			for range pipeline {
				if more = pb.Next(); !more {
					break
				}
				call := Call{KeyID: ids[next.Add(1)%int64(len(ids))], Plan: p, Tool: "heavy", Cost: 3}
				keys, args := m.admitArgs(call, nonce(), "")
				planAdmitScript.EvalSha(ctx, pipe, keys, args...)
			}
			if pipe.Len() == 0 {
				return
			}
			cmds, err := pipe.Exec(ctx)
			for _, cmd := range cmds {
				if r, _ := cmd.(*redis.Cmd).Int64Slice(); err != nil || len(r) == 0 || r[0] != 1 {
					b.Errorf("admission: %v %v", r, err)
					return
				}
			}
		}
	})
	b.StopTimer()
	d := redisUse(b, c).Sub(before)
	b.ReportMetric(d.CPU.Seconds()*1e6/float64(b.N), "redis-µs/admission")
	if n := d.Calls["evalsha"]; n > 0 {
		b.ReportMetric(float64(d.Usec["evalsha"])/float64(n), "script-µs")
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "admissions/s")
}

// admitBench is what the admission benchmarks share: the test Redis, a
// meter on it, a plan of two rate limits, day and month quotas and a
// per-tool cost that admits every call, and 64 fresh key ids.
func admitBench(b *testing.B) (*redis.Client, *RedisMeter, *Plan, []string) {
	c := testRedis(b)
	p := mustParsePlansB(b, "default_plan: p\nplans:\n  p:\n    rate_limits: {per_second: 1000000000, per_minute: 1000000000}\n    quotas: {day: 1000000000000, month: 1000000000000}\n    costs: {heavy: 3}\n").Plan("p")
	ids := make([]string, 64)
	for i := range ids {
		ids[i] = newKeyID(b, c)
	}
	return c, NewRedis(c, Options{}), p, ids
}

// redisUse reads Redis's CPU and command counts (internal/redisinfo).
func redisUse(b *testing.B, c *redis.Client) redisinfo.Usage {
	b.Helper()
	u, err := redisinfo.Read(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	return u
}

// BenchmarkMemoryPlanAdmit is the in-memory baseline.
func BenchmarkMemoryPlanAdmit(b *testing.B) {
	m := NewMemory(Options{})
	p := mustParsePlansB(b, "default_plan: p\nplans:\n  p:\n    rate_limits: {per_second: 1000000000, per_minute: 1000000000}\n    quotas: {day: 1000000000000, month: 1000000000000}\n").Plan("p")
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := m.AdmitCall(context.Background(), Call{KeyID: "bench", Plan: p, Tool: "t", Cost: 1}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "admissions/s")
}

func mustParsePlansB(b *testing.B, yaml string) *Plans {
	b.Helper()
	ps, err := ParsePlans([]byte(yaml), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	return ps
}
