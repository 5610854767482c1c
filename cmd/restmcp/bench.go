package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/restmcp/restmcp/adapter"
	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// benchSpec is the benchmark's API: one GET operation with a path
// parameter and an API key, answered with about 1 KB of JSON.
const benchSpec = `openapi: 3.0.3
info: {title: bench, version: "1"}
servers: [{url: "http://upstream.invalid/v1"}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-API-Key}
security: [{key: []}]
paths:
  /pets/{petId}:
    get:
      operationId: getPetById
      parameters: [{name: petId, in: path, required: true, schema: {type: string}}]
      responses:
        "200":
          description: OK
          content:
            application/json:
              schema:
                type: object
                properties: {id: {type: string}, name: {type: string}, tags: {type: array, items: {type: string}}, notes: {type: string}}
`

// benchRun is one measured run: calls at a concurrency, against one target.
type benchRun struct {
	target      string
	concurrency int
	calls       int
	elapsed     time.Duration
	p50, p99    time.Duration
	cpu         time.Duration // process CPU (user+system) over the run
	mallocs     uint64        // heap allocations over the run
	errors      int
}

// runBench implements `restmcp bench`: it starts a loopback upstream and
// restmcp in this process (memory metering, or Redis with --redis), drives
// a fixed number of calls at each concurrency against the upstream
// directly and through restmcp, and prints calls/s, p50/p99 latency, CPU
// and allocations per call, and restmcp's own share (through restmcp less
// direct, measured in the same run). Everything stays on loopback.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	calls := fs.Int("calls", 20000, "calls per run")
	conc := fs.String("concurrency", "1,8,32", "comma-separated concurrencies")
	redisURL := fs.String("redis", "", "meter in this Redis (redis://…) with a plan that has a rate limit and quotas; empty: in memory")
	sdkPath := fs.Bool("sdk-path", false, "send every call through the go-sdk's handler (adapter.Options.DisableFastPath), to compare")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var levels []int
	for _, s := range strings.Split(*conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return fmt.Errorf("--concurrency: %q is not a positive number", s)
		}
		levels = append(levels, n)
	}
	if *calls < 1 {
		return errors.New("--calls must be positive")
	}

	body := []byte(`{"id":"p1","name":"Rex","tags":["dog","brown","friendly"],"notes":"` + strings.Repeat("x", 900) + `"}`)
	up, err := listenServe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	if err != nil {
		return err
	}
	defer up.close()

	doc, err := openapi.LoadData(ctx, []byte(benchSpec), "", openapi.LoadOptions{Upstream: "http://" + up.addr})
	if err != nil {
		return err
	}
	plans, err := metering.ParsePlans([]byte("default_plan: bench\nkey_mode: open\nplans:\n  bench:\n    rate_limits: {per_second: 1000000}\n    quotas: {day: 1000000000}\n"), "bench.yaml")
	if err != nil {
		return err
	}
	mw, err := newBenchMeter(ctx, *redisURL, plans)
	if err != nil {
		return err
	}
	defer mw.close()
	srv, err := adapter.New(adapter.Options{Tools: doc.Tools, Keys: metering.NewRegistry(nil, plans, metering.RegistryOptions{}),
		Meter: mw.meter, Logger: slog.New(slog.DiscardHandler), DisableFastPath: *sdkPath})
	if err != nil {
		return err
	}
	rm, err := listenServe(srv.Handler())
	if err != nil {
		return err
	}
	defer rm.close()

	direct := func(c *http.Client) error {
		req, _ := http.NewRequest(http.MethodGet, "http://"+up.addr+"/v1/pets/p1", nil)
		req.Header.Set("X-API-Key", "bench-key")
		return drainOK(c, req)
	}
	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_pet_by_id","arguments":{"petId":"p1"}}}`)
	through := func(c *http.Client) error {
		req, _ := http.NewRequest(http.MethodPost, "http://"+rm.addr+"/mcp", bytes.NewReader(call))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("X-API-Key", "bench-key")
		return drainOK(c, req)
	}
	meterName := "memory metering"
	if *redisURL != "" {
		meterName = "Redis metering"
	}
	if *sdkPath {
		meterName += ", SDK path"
	}
	var runs []benchRun
	for _, c := range levels {
		// Warm up both paths, then measure them one after the other.
		measure("warm-up", c, min(*calls, 1000), direct)
		measure("warm-up", c, min(*calls, 1000), through)
		runs = append(runs, measure("direct upstream", c, *calls, direct), measure("restmcp, "+meterName, c, *calls, through))
	}
	writeBench(stdout, runs)
	return nil
}

// measure drives calls requests of do at concurrency c.
func measure(target string, c, calls int, do func(*http.Client) error) benchRun {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c, DisableCompression: true}}
	defer client.CloseIdleConnections()
	lat := make([]time.Duration, calls)
	var next int
	var mu sync.Mutex
	errs := 0
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	cpu0 := processCPU()
	start := time.Now()
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= calls {
					return
				}
				t := time.Now()
				if err := do(client); err != nil {
					mu.Lock()
					errs++
					mu.Unlock()
				}
				lat[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&ms1)
	slices.Sort(lat)
	return benchRun{target: target, concurrency: c, calls: calls, elapsed: elapsed, p50: lat[calls/2], p99: lat[calls*99/100],
		cpu: cpu, mallocs: ms1.Mallocs - ms0.Mallocs, errors: errs}
}

// processCPU is this process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func drainOK(c *http.Client, req *http.Request) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

// writeBench prints the runs, and for each concurrency restmcp's own CPU
// and allocations per call: the through-restmcp run less the direct run
// (client and upstream are in both).
func writeBench(w io.Writer, runs []benchRun) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tCONCURRENCY\tCALLS\tCALLS/S\tP50\tP99\tCPU/CALL\tALLOCS/CALL\tERRORS")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%d\t%d\n", r.target, r.concurrency, r.calls,
			float64(r.calls)/r.elapsed.Seconds(), r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond),
			(r.cpu / time.Duration(r.calls)).Round(time.Microsecond), r.mallocs/uint64(r.calls), r.errors)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	for i := 0; i+1 < len(runs); i += 2 {
		d, t := runs[i], runs[i+1]
		own := (t.cpu/time.Duration(t.calls) - d.cpu/time.Duration(d.calls)).Round(time.Microsecond)
		fmt.Fprintf(w, "concurrency %d: restmcp itself %s CPU and %d allocations per call; throughput %.2f of direct\n",
			t.concurrency, own, int64(t.mallocs/uint64(t.calls))-int64(d.mallocs/uint64(d.calls)),
			(float64(t.calls)/t.elapsed.Seconds())/(float64(d.calls)/d.elapsed.Seconds()))
	}
}

// loopback is an HTTP server on a free loopback port.
type loopback struct {
	addr string
	srv  *http.Server
}

func listenServe(h http.Handler) (*loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.Serve(ln) }()
	return &loopback{addr: ln.Addr().String(), srv: s}, nil
}

func (l *loopback) close() { _ = l.srv.Close() }

// benchMeter is the meter of a benchmark run.
type benchMeter struct {
	meter metering.Meter
	close func()
}

func newBenchMeter(ctx context.Context, redisURL string, plans *metering.Plans) (*benchMeter, error) {
	if redisURL == "" {
		return &benchMeter{meter: metering.NewMemory(metering.Options{EventMaxLen: -1}), close: func() {}}, nil
	}
	client, _, err := newRedisClient(config.RedisSingle, config.Secret(redisURL))
	if err != nil {
		return nil, err
	}
	rm := metering.NewRedis(client, metering.Options{})
	if err := rm.Ping(ctx); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("--redis: %w", err)
	}
	return &benchMeter{meter: rm, close: func() { _ = client.Close() }}, nil
}
