package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/restmcp/restmcp/adapter"
	"github.com/restmcp/restmcp/internal/benchdata"
	"github.com/restmcp/restmcp/internal/redisinfo"
	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// benchSpec is the benchmark's API: one GET operation with a path
// parameter and an API key, answered with about 1 KB of JSON.
const benchSpec = `openapi: 3.0.3
info: {title: bench, version: "1"}
servers: [{url: "http://UPSTREAM/v1"}]
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
	peerCPU     time.Duration // a peer's process CPU over the run (--peer-pid); 0 otherwise
	// With --in-process=false: the CPU of restmcp's process and of the
	// upstream's over the run (Linux /proc); 0 otherwise.
	restmcpCPU, upstreamCPU time.Duration
	// redis is what Redis did over the run with --redis, out of process;
	// nil otherwise.
	redis *redisinfo.Usage
	// compared marks the run of --compare's restmcp (its process's CPU in
	// restmcpCPU); throughRestmcp the run through this executable's
	// restmcp serve.
	compared, throughRestmcp bool
}

// runBench implements `restmcp-bench`: it starts a loopback upstream and
// restmcp (memory metering, or Redis with --redis), drives a fixed number
// of calls at each concurrency against the upstream directly and through
// restmcp, and prints calls/s, p50/p99 latency and CPU per call.
//
// By default the upstream and restmcp run as processes of their own
// (benchproc.go), restmcp as `restmcp serve` with its access log on, as a
// deployment runs it: the report gives restmcp's process CPU per call
// against the upstream process's own, and the throughput ratio. With
// --in-process everything runs in this process, the log discarded, and the
// report gives restmcp's share as the difference of the two runs, with
// allocations per call. Everything stays on loopback.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseBenchFlags(args, stderr)
	if err != nil {
		return err
	}
	if f.printSpec {
		_, err := io.WriteString(stdout, strings.Replace(benchSpec, "UPSTREAM", f.upAddr, 1))
		return err
	}
	if f.listSpec != "" {
		return runListBench(ctx, f, stdout)
	}
	body := benchBody(f.answerBytes)
	if f.serveUpstream {
		return serveBenchUpstream(ctx, f.upAddr, body, stdout)
	}
	if !f.inProcess {
		return runBenchProcesses(ctx, benchProcessOptions{calls: f.calls, levels: f.levels, redisURL: f.redisURL, upAddr: f.upAddr,
			peerURL: f.peerURL, peerName: f.peerName, peerPID: f.peerPID, answerBytes: f.answerBytes, bodyLen: len(body), compare: f.compare,
			restmcp: f.restmcp}, stdout)
	}
	return runBenchInProcess(ctx, f, body, stdout)
}

// benchFlags are restmcp-bench's flags, checked.
type benchFlags struct {
	calls                               int
	levels                              []int // --concurrency
	redisURL, upAddr, peerURL, peerName string
	compare, restmcp                    string
	listSpec                            string // --list-spec
	peerPID, answerBytes                int
	sdkPath, printSpec, inProcess       bool
	serveUpstream                       bool
}

// parseBenchFlags reads args; the error names the flag that is wrong.
func parseBenchFlags(args []string, stderr io.Writer) (*benchFlags, error) {
	fs := flag.NewFlagSet("restmcp-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var f benchFlags
	fs.IntVar(&f.calls, "calls", 20000, "calls per run")
	conc := fs.String("concurrency", "1,8,32", "comma-separated concurrencies")
	fs.StringVar(&f.redisURL, "redis", "", "meter in this Redis (redis://…) with a plan that has a rate limit and quotas; empty: in memory")
	fs.BoolVar(&f.sdkPath, "sdk-path", false, "send every call through the go-sdk's handler (adapter.Options.DisableFastPath), to compare")
	fs.StringVar(&f.upAddr, "upstream-addr", "127.0.0.1:0", "where the loopback upstream listens (host:port; port 0: any free one)")
	fs.BoolVar(&f.printSpec, "print-spec", false, "print the benchmark's OpenAPI document, its server the --upstream-addr, and exit (for a peer)")
	fs.StringVar(&f.peerURL, "peer", "", "also drive this MCP endpoint (Streamable HTTP, with a session), a peer serving the same document against --upstream-addr (scripts/bench-peers)")
	fs.StringVar(&f.peerName, "peer-name", "peer", "the peer's name in the report")
	fs.IntVar(&f.peerPID, "peer-pid", 0, "the peer's process id, for its CPU per call (Linux /proc)")
	fs.BoolVar(&f.inProcess, "in-process", false, "run the upstream and restmcp in this process, the log discarded (restmcp's share then is the difference of the two runs); default: each in a process of its own, restmcp with its access log on")
	fs.BoolVar(&f.serveUpstream, "serve-upstream", false, "serve only the benchmark's upstream at --upstream-addr, print its address and wait (the upstream process of a bench run)")
	fs.StringVar(&f.compare, "compare", "", "also serve from this other restmcp `executable` (an earlier build, say) beside this one, against the same upstream, and drive both in each round, alternating which goes first: an A/B on which the machine's drifting speed weighs alike")
	fs.StringVar(&f.restmcp, "restmcp", "", "the restmcp `executable` to serve from (default: restmcp beside this command, else on PATH)")
	fs.StringVar(&f.listSpec, "list-spec", "", "measure tools/list instead of tools/call: restmcp serve on this OpenAPI `document`, --calls lists at each --concurrency, once accepting only identity and once gzip")
	fs.IntVar(&f.answerBytes, "answer-bytes", 0, "the upstream answers a JSON object of about this many bytes (a list of items, as a large search answer); 0: the 1 KB object")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if f.compare != "" && f.inProcess {
		return nil, errors.New("--compare runs restmcp serve processes; it cannot go with --in-process")
	}
	if f.listSpec != "" && (f.inProcess || f.compare != "" || f.peerURL != "" || f.redisURL != "") {
		return nil, errors.New("--list-spec runs restmcp serve alone: it cannot go with --in-process, --compare, --peer or --redis")
	}
	if f.sdkPath && !f.inProcess {
		return nil, errors.New("--sdk-path needs --in-process (restmcp serve always takes the fast path)")
	}
	if f.printSpec {
		return &f, nil
	}
	for _, s := range strings.Split(*conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--concurrency: %q is not a positive number", s)
		}
		f.levels = append(f.levels, n)
	}
	if f.calls < 1 {
		return nil, errors.New("--calls must be positive")
	}
	if f.answerBytes < 0 || f.answerBytes > 1<<30 {
		return nil, fmt.Errorf("--answer-bytes: %d is not between 0 and 1 GiB", f.answerBytes)
	}
	return &f, nil
}

// runBenchInProcess is runBench with the upstream and restmcp in this
// process (--in-process).
func runBenchInProcess(ctx context.Context, f *benchFlags, body []byte, stdout io.Writer) error {
	up, err := listenServe(f.upAddr, benchUpstream(body))
	if err != nil {
		return err
	}
	defer up.close()

	doc, err := openapi.LoadData(ctx, []byte(strings.Replace(benchSpec, "UPSTREAM", up.addr, 1)), "", openapi.LoadOptions{})
	if err != nil {
		return err
	}
	plans, err := metering.ParsePlans([]byte("default_plan: bench\nkey_mode: open\nplans:\n  bench:\n    rate_limits: {per_second: 1000000}\n    quotas: {day: 1000000000}\n"), "bench.yaml")
	if err != nil {
		return err
	}
	mw, err := newBenchMeter(ctx, f.redisURL, plans)
	if err != nil {
		return err
	}
	defer mw.close()
	srv, err := adapter.New(adapter.Options{Tools: doc.Tools, Keys: metering.NewRegistry(nil, plans, metering.RegistryOptions{}),
		Meter: mw.meter, Logger: slog.New(slog.DiscardHandler), DisableFastPath: f.sdkPath})
	if err != nil {
		return err
	}
	rm, err := listenServe("127.0.0.1:0", srv.Handler())
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
		req := mcpPost("http://"+rm.addr+"/mcp", bytes.NewReader(call))
		req.Header.Set("X-API-Key", "bench-key")
		return drainOK(c, req)
	}
	meterName := "memory metering"
	if f.redisURL != "" {
		meterName = "Redis metering"
	}
	if f.sdkPath {
		meterName += ", SDK path"
	}
	var peer func(*http.Client) error
	if f.peerURL != "" {
		pctx, cancel := context.WithCancel(ctx)
		defer cancel() // ends the session's stream
		if peer, err = peerCall(pctx, f.peerURL); err != nil {
			return fmt.Errorf("--peer %s: %w", f.peerURL, err)
		}
	}
	var runs []benchRun
	for _, c := range f.levels {
		// Warm up each path, then measure them one after the other.
		measure(ctx, "warm-up", c, min(f.calls, 1000), direct, 0)
		measure(ctx, "warm-up", c, min(f.calls, 1000), through, 0)
		runs = append(runs, measure(ctx, "direct upstream", c, f.calls, direct, 0), measure(ctx, "restmcp, "+meterName, c, f.calls, through, 0))
		if peer != nil {
			measure(ctx, "warm-up", c, min(f.calls, 1000), peer, f.peerPID)
			runs = append(runs, measure(ctx, f.peerName, c, f.calls, peer, f.peerPID))
		}
	}
	if err := ctx.Err(); err != nil {
		return err // interrupted: the figures are not whole
	}
	writeBench(stdout, runs)
	return nil
}

// benchUpstream answers every request with body, a JSON object, and its
// Content-Length; a request for the pet "warm" gets the 1 KB pet instead
// (the calls that warm restmcp up before a large answer's run, for its
// memory baseline).
func benchUpstream(body []byte) http.Handler {
	length := strconv.Itoa(len(body))
	small := benchBody(0)
	smallLength := strconv.Itoa(len(small))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/pets/warm" {
			w.Header().Set("Content-Length", smallLength)
			_, _ = w.Write(small)
			return
		}
		w.Header().Set("Content-Length", length)
		_, _ = w.Write(body)
	})
}

// benchBody is the upstream's answer: with size 0 the benchmark's 1 KB
// pet, otherwise benchdata.Answer(size).
func benchBody(size int) []byte {
	if size == 0 {
		return []byte(`{"id":"p1","name":"Rex","tags":["dog","brown","friendly"],"notes":"` + strings.Repeat("x", 900) + `"}`)
	}
	return benchdata.Answer(size)
}

// peerCall opens a session on the MCP endpoint u (initialize, then
// notifications/initialized, and the session's GET stream), lists its
// tools, and returns a call of its only tool with petId p1 on that
// session, answered inline or (after 202) on the stream.
func peerCall(ctx context.Context, u string) (func(*http.Client) error, error) {
	post := func(c *http.Client, session, body string) (*http.Response, []byte, error) {
		req := mcpPost(u, strings.NewReader(body))
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, _, err := post(c, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"restmcp-bench","version":"1"}}}`)
	if err != nil {
		return nil, err
	}
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("initialize: status %d", resp.StatusCode)
	}
	if _, _, err := post(c, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return nil, err
	}
	_, list, err := post(c, session, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(list); len(t) > 0 && t[0] != '{' { // one server-sent event
		if i := bytes.Index(list, []byte("data: ")); i >= 0 {
			list = list[i+len("data: "):]
		}
	}
	var tools struct {
		Result struct {
			Tools []struct{ Name string } `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(list), &tools); err != nil {
		return nil, fmt.Errorf("tools/list: %v in %.200s", err, list)
	}
	// The benchmark's one operation, getPetById, under the peer's naming
	// (get_pet_by_id, getPetById, …); a peer may list tools of its own
	// beside it (jedisct1/openapi-mcp adds "info").
	var name []byte
	for _, t := range tools.Result.Tools {
		if strings.EqualFold(strings.NewReplacer("_", "", "-", "").Replace(t.Name), "getpetbyid") {
			name, _ = json.Marshal(t.Name)
		}
	}
	if name == nil {
		return nil, fmt.Errorf("tools/list: no tool for getPetById in %.200s", list)
	}
	st := openPeerStream(ctx, u, session)
	var nextID atomic.Int64
	nextID.Store(10)
	return func(c *http.Client) error {
		id := nextID.Add(1)
		call := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(id, 10) + `,"method":"tools/call","params":{"name":` + string(name) + `,"arguments":{"petId":"p1"}}}`
		wait := st.expect(id)
		req := mcpPost(u, strings.NewReader(call))
		req.Header.Set("Mcp-Session-Id", session)
		resp, err := c.Do(req)
		if err != nil {
			st.forget(id)
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusOK: // answered inline
			st.forget(id)
			return nil
		case http.StatusAccepted: // answered on the session's stream
			select {
			case <-wait:
				return nil
			case <-time.After(10 * time.Second):
				st.forget(id)
				return errors.New("no answer on the stream")
			}
		default:
			st.forget(id)
			return fmt.Errorf("status %d", resp.StatusCode)
		}
	}, nil
}

// mcpPost is a POST of a JSON-RPC message to the MCP endpoint u, accepting
// a JSON answer or a stream (Streamable HTTP).
func mcpPost(u string, body io.Reader) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, u, body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	return req
}

// peerStream is a session's GET stream, on which some servers answer
// requests they accepted with 202; answers are handed out by id.
type peerStream struct {
	mu      sync.Mutex
	waiting map[int64]chan struct{}
}

// openPeerStream opens the stream in the background (a server may send
// its headers only with the first event) until ctx ends.
func openPeerStream(ctx context.Context, u, session string) *peerStream {
	st := &peerStream{waiting: map[int64]chan struct{}{}}
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return // no stream: every answer must come inline
		}
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: "))
			if !ok {
				continue
			}
			var m struct{ ID int64 }
			if json.Unmarshal(data, &m) == nil {
				st.mu.Lock()
				if ch := st.waiting[m.ID]; ch != nil {
					close(ch)
					delete(st.waiting, m.ID)
				}
				st.mu.Unlock()
			}
		}
	}()
	return st
}

func (st *peerStream) expect(id int64) <-chan struct{} {
	ch := make(chan struct{})
	st.mu.Lock()
	st.waiting[id] = ch
	st.mu.Unlock()
	return ch
}

func (st *peerStream) forget(id int64) {
	st.mu.Lock()
	delete(st.waiting, id)
	st.mu.Unlock()
}

// pidCPU is process pid's user and system CPU time so far, from
// /proc/<pid>/stat (fields 14 and 15, in clock ticks of 1/100 s); 0 when
// unreadable.
func pidCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces; the fields after it follow the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// measure drives calls requests of do at concurrency c; with peerPID, it
// also takes that process's CPU over the run.
func measure(ctx context.Context, target string, c, calls int, do func(*http.Client) error, peerPID int) benchRun {
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
	var peer0 time.Duration
	if peerPID > 0 {
		peer0 = pidCPU(peerPID)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= calls || ctx.Err() != nil {
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
	var peerCPU time.Duration
	if peerPID > 0 {
		peerCPU = pidCPU(peerPID) - peer0
	}
	runtime.ReadMemStats(&ms1)
	slices.Sort(lat)
	return benchRun{target: target, concurrency: c, calls: calls, elapsed: elapsed, p50: lat[calls/2], p99: lat[calls*99/100],
		cpu: cpu, mallocs: ms1.Mallocs - ms0.Mallocs, errors: errs, peerCPU: peerCPU}
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
// (client and upstream are in both), and a peer's CPU per call in its own
// process with its throughput beside restmcp's.
func writeBench(w io.Writer, runs []benchRun) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tCONCURRENCY\tCALLS\tCALLS/S\tP50\tP99\tCPU/CALL\tALLOCS/CALL\tERRORS")
	for _, r := range runs {
		cpu := r.cpu
		if r.peerCPU > 0 {
			cpu += r.peerCPU
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%d\t%d\n", r.target, r.concurrency, r.calls,
			r.rate(), r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond),
			(cpu / time.Duration(r.calls)).Round(time.Microsecond), r.mallocs/uint64(r.calls), r.errors)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	for i := 0; i < len(runs); {
		d, t := runs[i], runs[i+1]
		own := (t.cpu/time.Duration(t.calls) - d.cpu/time.Duration(d.calls)).Round(time.Microsecond)
		fmt.Fprintf(w, "concurrency %d: restmcp itself %s CPU and %d allocations per call; throughput %.2f of direct\n",
			t.concurrency, own, int64(t.mallocs/uint64(t.calls))-int64(d.mallocs/uint64(d.calls)), t.rate()/d.rate())
		i += 2
		for ; i < len(runs) && runs[i].concurrency == t.concurrency && runs[i].target != d.target; i++ {
			p := runs[i]
			peerCPU := "not measured (no --peer-pid)"
			if p.peerCPU > 0 {
				peerCPU = (p.peerCPU / time.Duration(p.calls)).Round(time.Microsecond).String() + " CPU per call in its process"
			}
			fmt.Fprintf(w, "concurrency %d: %s %s; throughput %.2f of direct; restmcp %.1f× its throughput\n",
				p.concurrency, p.target, peerCPU, p.rate()/d.rate(), t.rate()/p.rate())
		}
	}
}

// rate is the run's calls per second.
func (r benchRun) rate() float64 { return float64(r.calls) / r.elapsed.Seconds() }

// loopServer is an HTTP server on a free loopback port.
type loopServer struct {
	addr string
	srv  *http.Server
}

func listenServe(addr string, h http.Handler) (*loopServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.Serve(ln) }()
	return &loopServer{addr: ln.Addr().String(), srv: s}, nil
}

func (l *loopServer) close() { _ = l.srv.Close() }

// benchMeter is the meter of a benchmark run.
type benchMeter struct {
	meter metering.Meter
	close func()
}

func newBenchMeter(ctx context.Context, redisURL string, plans *metering.Plans) (*benchMeter, error) {
	if redisURL == "" {
		return &benchMeter{meter: metering.NewMemory(metering.Options{EventMaxLen: -1}), close: func() {}}, nil
	}
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, fmt.Errorf("--redis: %w", err)
	}
	client := redis.NewClient(opt)
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
