package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/restmcp/restmcp/internal/redisinfo"
)

// benchChildEnv marks a process that `restmcp-bench` started from its own
// executable; the command's tests, whose executable is the test binary,
// run main for it (TestMain).
const benchChildEnv = "RESTMCP_BENCH_CHILD"

// benchProcessOptions are the flags of a bench run with the upstream and
// restmcp in processes of their own.
type benchProcessOptions struct {
	restmcp           string // the restmcp executable (--restmcp)
	calls             int
	levels            []int
	redisURL, upAddr  string
	peerURL, peerName string
	peerPID           int
	answerBytes       int    // --answer-bytes: passed to the upstream process
	bodyLen           int    // the length of the upstream's answer, for CPU per MB
	compare           string // --compare: another restmcp executable, served beside this one's
}

// serveBenchUpstream serves the benchmark's upstream at addr, writes
// "upstream <host:port>" to stdout, and serves until ctx ends or standard
// input closes (the bench process that started it is gone).
func serveBenchUpstream(ctx context.Context, addr string, body []byte, stdout io.Writer) error {
	up, err := listenServe(addr, benchUpstream(body))
	if err != nil {
		return err
	}
	defer up.close()
	if _, err := fmt.Fprintf(stdout, "upstream %s\n", up.addr); err != nil {
		return err
	}
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-ctx.Done():
	case <-eof:
	}
	return nil
}

// benchChild is a process of a bench run.
type benchChild struct {
	cmd   *exec.Cmd
	pid   int
	stdin io.WriteCloser // open while the child runs: the upstream child stops at its end
}

// restmcpExecutable is the restmcp executable to serve from: given
// (--restmcp), else restmcp beside this command, else restmcp on PATH.
func restmcpExecutable(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "restmcp")
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() {
			return beside, nil
		}
	}
	exe, err := exec.LookPath("restmcp")
	if err != nil {
		return "", errors.New("no restmcp executable beside restmcp-bench or on PATH: go build -o DIR ./cmd/restmcp, or pass --restmcp")
	}
	return exe, nil
}

// startBenchChild starts this executable with args and env added, and
// waits (up to 60 s) for a line of its standard output that addrOf
// accepts; the rest of its output, and all of its standard error (restmcp's
// access log), is read and discarded, as a log collector would.
func startBenchChild(ctx context.Context, args, env []string, addrOf func(line string) string) (*benchChild, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	return startBenchChildOf(ctx, exe, args, env, addrOf)
}

// startBenchChildOf is startBenchChild for the executable exe.
func startBenchChildOf(ctx context.Context, exe string, args, env []string, addrOf func(line string) string) (*benchChild, string, error) {
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Env = append(append(os.Environ(), benchChildEnv+"=1"), env...)
	dieWithParent(cmd)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, "", err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	errOut, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	child := &benchChild{cmd: cmd, pid: cmd.Process.Pid, stdin: stdin}
	go func() { _, _ = io.Copy(io.Discard, errOut) }()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		sent := false
		for sc.Scan() {
			if a := addrOf(sc.Text()); a != "" && !sent {
				found <- a
				sent = true
			}
		}
		if !sent {
			close(found)
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case a, ok := <-found:
		if ok {
			return child, a, nil
		}
		child.stop()
		return nil, "", fmt.Errorf("%s %s ended before it was ready", filepath.Base(exe), strings.Join(args, " "))
	case <-time.After(60 * time.Second):
		child.stop()
		return nil, "", fmt.Errorf("%s %s: not ready after 60 s", filepath.Base(exe), strings.Join(args, " "))
	}
}

// stop ends the child (SIGTERM, then SIGKILL after WaitDelay) and waits.
func (c *benchChild) stop() {
	_ = c.stdin.Close()
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	_ = c.cmd.Wait()
}

// bannerURL is the MCP URL of restmcp serve's startup banner.
var bannerURL = regexp.MustCompile(` at (http://127\.0\.0\.1:\d+/\S*)\s*$`)

// bannerMCPURL is the MCP URL in a line of restmcp serve's output, or ""
// (startBenchChildOf's addrOf).
func bannerMCPURL(line string) string {
	if m := bannerURL.FindStringSubmatch(line); m != nil {
		return m[1]
	}
	return ""
}

// runBenchProcesses is runBench with the upstream and restmcp in processes
// of their own: `restmcp-bench --serve-upstream` and `restmcp serve` on
// the benchmark's document, with its access log on (info level, text, to a
// pipe this process reads). restmcp's CPU per call is its process's, from
// /proc, beside the upstream process's own in the direct run.
func runBenchProcesses(ctx context.Context, o benchProcessOptions, stdout io.Writer) error {
	b, err := startBenchProcesses(ctx, o)
	if err != nil {
		return err
	}
	defer b.stop()
	direct := func(c *http.Client) error {
		req, _ := http.NewRequest(http.MethodGet, "http://"+b.upAddr+"/v1/pets/p1", nil)
		req.Header.Set("X-API-Key", "bench-key")
		return drainOK(c, req)
	}
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_pet_by_id","arguments":{"petId":"p1"}}}`
	callAt := func(u string) func(c *http.Client) error {
		return func(c *http.Client) error {
			req := mcpPost(u, strings.NewReader(call))
			req.Header.Set("X-API-Key", "bench-key")
			return drainOK(c, req)
		}
	}
	through := callAt(b.mcpURL)
	var peer func(*http.Client) error
	if o.peerURL != "" {
		pctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if peer, err = peerCall(pctx, o.peerURL); err != nil {
			return fmt.Errorf("--peer %s: %w", o.peerURL, err)
		}
	}
	idleRSS := pidMemory(b.rm.pid, "VmRSS")
	warmRSS := idleRSS
	if o.answerBytes > 0 {
		// Small calls first, enough for several garbage collection cycles,
		// so that the code every call runs is loaded and the heap has grown
		// to its collector's goal: the memory a large answer adds is then
		// told apart from the process's own.
		warm := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_pet_by_id","arguments":{"petId":"warm"}}}`
		measure(ctx, "warm-up", 1, benchWarmCalls, func(c *http.Client) error {
			req := mcpPost(b.mcpURL, strings.NewReader(warm))
			req.Header.Set("X-API-Key", "bench-key")
			return drainOK(c, req)
		}, 0)
		warmRSS = pidMemory(b.rm.pid, "VmRSS")
	}
	var runs []benchRun
	for round, c := range o.levels {
		warm := min(o.calls, 1000, max(o.calls/10, 1))
		measure(ctx, "warm-up", c, warm, direct, 0)
		measure(ctx, "warm-up", c, warm, through, 0)
		if b.other != nil {
			measure(ctx, "warm-up", c, warm, callAt(b.otherURL), 0)
		}
		d := measureProcesses(ctx, "direct upstream", c, o.calls, direct, b.rm.pid, b.up.pid)
		var compared benchRun
		measureCompared := func() {
			compared = measureProcesses(ctx, b.otherTarget, c, o.calls, callAt(b.otherURL), b.other.pid, b.up.pid)
			compared.compared = true
		}
		if b.other != nil && round%2 == 1 { // every other round the compared executable goes first
			measureCompared()
		}
		before := readRedisUse(ctx, b.rdb)
		t := measureProcesses(ctx, "restmcp serve, "+b.meterName, c, o.calls, through, b.rm.pid, b.up.pid)
		t.throughRestmcp = true
		if after := readRedisUse(ctx, b.rdb); before != nil && after != nil {
			u := after.Sub(*before)
			t.redis = &u
		}
		if b.other != nil && round%2 == 0 {
			measureCompared()
		}
		runs = append(runs, d, t)
		if b.other != nil {
			runs = append(runs, compared)
		}
		if peer != nil {
			measure(ctx, "warm-up", c, min(o.calls, 1000), peer, o.peerPID)
			runs = append(runs, measure(ctx, o.peerName, c, o.calls, peer, o.peerPID))
		}
	}
	if err := ctx.Err(); err != nil {
		return err // interrupted: the figures are not whole
	}
	if pidCPU(b.up.pid) == 0 {
		return errors.New("process CPU is read from /proc/<pid>/stat, which this system does not have")
	}
	writeBenchProcesses(stdout, runs)
	if o.answerBytes > 0 {
		writeBigAnswers(stdout, runs, o.bodyLen, idleRSS, warmRSS, pidMemory(b.rm.pid, "VmHWM"))
	}
	return nil
}

// benchProcesses are a run's processes: the upstream, restmcp serve and
// the --compare executable's serve (other, or nil), with where they
// listen; rdb reads what Redis did (--redis), or is nil.
type benchProcesses struct {
	up, rm, other            *benchChild
	upAddr, mcpURL, otherURL string
	otherTarget, meterName   string
	rdb                      *redis.Client
	dir                      string
}

// startBenchProcesses starts the upstream process, then restmcp serve
// (and the --compare executable's) on the benchmark's document against it.
func startBenchProcesses(ctx context.Context, o benchProcessOptions) (_ *benchProcesses, err error) {
	b := &benchProcesses{meterName: "memory metering"}
	defer func() {
		if err != nil {
			b.stop()
		}
	}()
	if b.up, b.upAddr, err = startBenchChild(ctx, []string{"--serve-upstream", "--upstream-addr", o.upAddr, "--answer-bytes", strconv.Itoa(o.answerBytes)}, nil,
		func(l string) string { return strings.TrimPrefix(l, "upstream ") }); err != nil {
		return nil, fmt.Errorf("starting the upstream process: %w", err)
	}
	if b.dir, err = os.MkdirTemp("", "restmcp-bench-"); err != nil {
		return nil, err
	}
	spec := filepath.Join(b.dir, "bench.yaml")
	if err := os.WriteFile(spec, []byte(strings.Replace(benchSpec, "UPSTREAM", b.upAddr, 1)), 0o600); err != nil {
		return nil, err
	}
	env := []string{"RESTMCP_CONFIG=", "RESTMCP_LOG_LEVEL=info", "RESTMCP_LOG_FORMAT=text"}
	if o.bodyLen > 100<<10 {
		env = append(env, "RESTMCP_MAX_RESPONSE_BYTES="+strconv.Itoa(o.bodyLen+1)) // the whole answer, not cut at the default cap
	}
	if o.redisURL != "" {
		env, b.meterName = append(env, "RESTMCP_REDIS_URL="+o.redisURL), "Redis metering"
		opt, err := redis.ParseURL(o.redisURL)
		if err != nil {
			return nil, fmt.Errorf("--redis: %w", err)
		}
		b.rdb = redis.NewClient(opt)
	}
	serveArgs := []string{"serve", "--spec", spec, "--addr", "127.0.0.1:0", "--rate-limit", "-1"}
	exe, err := restmcpExecutable(o.restmcp)
	if err != nil {
		return nil, err
	}
	if b.rm, b.mcpURL, err = startBenchChildOf(ctx, exe, serveArgs, env, bannerMCPURL); err != nil {
		return nil, fmt.Errorf("starting restmcp serve: %w", err)
	}
	if o.compare != "" {
		if b.other, b.otherURL, err = startBenchChildOf(ctx, o.compare, serveArgs, env, bannerMCPURL); err != nil {
			return nil, fmt.Errorf("--compare: starting %s serve: %w", o.compare, err)
		}
		b.otherTarget = "compared: " + filepath.Base(o.compare) + " serve"
	}
	return b, nil
}

// stop ends the processes and removes the document's directory.
func (b *benchProcesses) stop() {
	for _, c := range []*benchChild{b.other, b.rm, b.up} {
		if c != nil {
			c.stop()
		}
	}
	if b.rdb != nil {
		_ = b.rdb.Close()
	}
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
	}
}

// benchWarmCalls is how many calls of a 1 KB answer run before a large
// answer's run (--answer-bytes), for its memory baseline.
const benchWarmCalls = 2000

// writeBigAnswers prints, for a run with --answer-bytes, restmcp's process
// CPU per MB (2^20 bytes) of the upstream's answer at each concurrency
// (and --compare's restmcp's),
// and its peak resident memory (VmHWM) against the answer's size, with the
// resident memory it had, idle, before the first call and after
// benchWarmCalls calls of a 1 KB answer (warm).
func writeBigAnswers(w io.Writer, runs []benchRun, bodyLen int, idle, warm, peak int64) {
	mb := float64(bodyLen) / (1 << 20)
	for _, t := range runs {
		who := "restmcp's process"
		switch {
		case t.compared:
			who = t.target + ", its process"
		case !t.throughRestmcp: // the direct and --peer runs
			continue
		}
		perCall := t.restmcpCPU / time.Duration(t.calls)
		fmt.Fprintf(w, "concurrency %d: %s %.2f ms CPU per MB of upstream JSON (%.2f ms per %d-byte answer)\n",
			t.concurrency, who, float64(perCall)/float64(time.Millisecond)/mb, float64(perCall)/float64(time.Millisecond), bodyLen)
	}
	if peak > 0 {
		fmt.Fprintf(w, "restmcp's peak RSS %.1f MB, %.1f× the answer (idle before the first call: %.1f MB, peak minus that %.1f× the answer; "+
			"after %d calls of a 1 KB answer: %.1f MB, peak minus that %.1f× the answer)\n",
			float64(peak)/(1<<20), float64(peak)/float64(bodyLen), float64(idle)/(1<<20), float64(peak-idle)/float64(bodyLen), benchWarmCalls,
			float64(warm)/(1<<20), float64(peak-warm)/float64(bodyLen))
	}
}

// pidMemory is the field ("VmRSS", "VmHWM") of /proc/<pid>/status, in
// bytes; 0 when it cannot be read.
func pidMemory(pid int, field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// measureProcesses is measure, taking the CPU of restmcp's process and of
// the upstream's over the run.
func measureProcesses(ctx context.Context, target string, c, calls int, do func(*http.Client) error, restmcpPID, upstreamPID int) benchRun {
	r0, u0 := pidCPU(restmcpPID), pidCPU(upstreamPID)
	r := measure(ctx, target, c, calls, do, 0)
	r.restmcpCPU, r.upstreamCPU = pidCPU(restmcpPID)-r0, pidCPU(upstreamPID)-u0
	return r
}

// readRedisUse is what rdb's Redis reports of its work so far, or nil
// without a Redis (rdb nil) or when it does not answer.
func readRedisUse(ctx context.Context, rdb *redis.Client) *redisinfo.Usage {
	if rdb == nil {
		return nil
	}
	u, err := redisinfo.Read(ctx, rdb)
	if err != nil {
		return nil
	}
	return &u
}

// writeBenchProcesses prints the runs of runBenchProcesses, then for each
// concurrency restmcp's process CPU per call, as a multiple of the
// upstream process's own CPU per call in the direct run, and the
// throughput through restmcp as a share of direct. CPU is read in clock
// ticks (10 ms): with 20,000 calls a figure is exact to 0.5 µs per call.
func writeBenchProcesses(w io.Writer, runs []benchRun) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tCONCURRENCY\tCALLS\tCALLS/S\tP50\tP99\tRESTMCP CPU/CALL\tUPSTREAM CPU/CALL\tCLIENT CPU/CALL\tERRORS")
	per := func(d time.Duration, n int) string {
		if d == 0 {
			return "-"
		}
		return short(d / time.Duration(n)).String()
	}
	for _, r := range runs {
		rcpu := per(r.restmcpCPU, r.calls)
		if r.peerCPU > 0 {
			rcpu = per(r.peerCPU, r.calls) + " (peer)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%d\n", r.target, r.concurrency, r.calls, r.rate(),
			r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), rcpu, per(r.upstreamCPU, r.calls), per(r.cpu, r.calls), r.errors)
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	pairs := map[int][]benchPair{}
	var order []int
	for i := 0; i+1 < len(runs); {
		d, t := runs[i], runs[i+1]
		if pairs[t.concurrency] == nil {
			order = append(order, t.concurrency)
		}
		pairs[t.concurrency] = append(pairs[t.concurrency], benchPair{direct: d, through: t})
		upPer := d.upstreamCPU / time.Duration(d.calls)
		rmPer := t.restmcpCPU / time.Duration(t.calls)
		ratio := "-"
		if upPer > 0 {
			ratio = fmt.Sprintf("%.1f×", float64(rmPer)/float64(upPer))
		}
		fmt.Fprintf(w, "concurrency %d: restmcp's process %s CPU per call, %s the upstream process's own %s; throughput %.2f of direct\n",
			t.concurrency, short(rmPer), ratio, short(upPer), t.rate()/d.rate())
		if u := t.redis; u != nil {
			n := float64(t.calls)
			fmt.Fprintf(w, "concurrency %d: Redis's process %s CPU per call (INFO cpu); per call restmcp sent it %.2f EVALSHA, %.2f EVAL and %.2f XADD (INFO commandstats)\n",
				t.concurrency, short(u.CPU/time.Duration(t.calls)),
				float64(u.Calls["evalsha"])/n, float64(u.Calls["eval"])/n, float64(u.Calls["xadd"])/n)
		}
		i += 2
		for ; i < len(runs) && runs[i].concurrency == t.concurrency && runs[i].target != d.target; i++ {
			p := runs[i]
			if p.compared {
				pairs[t.concurrency][len(pairs[t.concurrency])-1].compared = &runs[i]
				pPer := p.restmcpCPU / time.Duration(p.calls)
				fmt.Fprintf(w, "concurrency %d: %s, its process %s CPU per call; throughput %.2f of direct; restmcp %.2f× its calls/s, %s its CPU per call\n",
					p.concurrency, p.target, short(pPer), p.rate()/d.rate(), t.rate()/p.rate(), cpuRatio(rmPer, pPer))
				continue
			}
			fmt.Fprintf(w, "concurrency %d: %s throughput %.2f of direct; restmcp %.1f× its throughput\n",
				p.concurrency, p.target, p.rate()/d.rate(), t.rate()/p.rate())
		}
	}
	for _, c := range order {
		if ps := pairs[c]; len(ps) > 1 {
			writePairsSummary(w, c, ps)
		}
	}
}

// benchPair is one direct run and the run through restmcp after it, and
// with --compare the compared executable's run in the same round.
type benchPair struct {
	direct, through benchRun
	compared        *benchRun
}

// writePairsSummary prints, for a concurrency measured in several pairs
// (the level repeated in --concurrency, "8,8,8,8,8": the direct upstream
// and restmcp alternated, so that a machine whose speed drifts weighs on
// both alike), the median and range over the pairs of restmcp's process
// CPU per call, its ratio to the upstream process's own, and the
// throughput as a share of direct.
func writePairsSummary(w io.Writer, c int, ps []benchPair) {
	var cpu []time.Duration
	var ratio, share []float64
	for _, p := range ps {
		rm := p.through.restmcpCPU / time.Duration(p.through.calls)
		cpu = append(cpu, rm)
		if up := p.direct.upstreamCPU / time.Duration(p.direct.calls); up > 0 {
			ratio = append(ratio, float64(rm)/float64(up))
		}
		share = append(share, p.through.rate()/p.direct.rate())
	}
	slices.Sort(cpu)
	fmt.Fprintf(w, "concurrency %d, %d pairs: restmcp's process %s CPU per call (%s–%s), %s the upstream process's own; throughput %s; medians and ranges\n",
		c, len(ps), short(median(cpu)), short(cpu[0]), short(cpu[len(cpu)-1]),
		spread(ratio, "%.1f× (%.1f–%.1f×)"), spread(share, "%.2f of direct (%.2f–%.2f)"))
	// --compare: each round's ratios, restmcp's over the compared one's
	// (CPU where both processes' CPU over the round was read as more than
	// nothing: it is counted in 10 ms ticks).
	var rate, use []float64
	target := ""
	for _, p := range ps {
		q := p.compared
		if q == nil {
			continue
		}
		target = q.target
		rate = append(rate, p.through.rate()/q.rate())
		if p.through.restmcpCPU > 0 && q.restmcpCPU > 0 {
			use = append(use, float64(p.through.restmcpCPU/time.Duration(p.through.calls))/float64(q.restmcpCPU/time.Duration(q.calls)))
		}
	}
	if len(rate) > 1 {
		fmt.Fprintf(w, "concurrency %d, %d rounds against %s: restmcp %s its calls/s, %s its CPU per call; medians and ranges of each round's ratio\n",
			c, len(rate), target, spread(rate, "%.2f× (%.2f–%.2f)"), spread(use, "%.2f× (%.2f–%.2f)"))
	}
}

// spread sorts v and writes its median, lowest and highest with format
// (three verbs), or "-" when v is empty.
func spread(v []float64, format string) string {
	if len(v) == 0 {
		return "-"
	}
	slices.Sort(v)
	return fmt.Sprintf(format, median(v), v[0], v[len(v)-1])
}

// cpuRatio is a/b as "1.23×", or "-" when either is 0 (less than a clock
// tick over the run).
func cpuRatio(a, b time.Duration) string {
	if a <= 0 || b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", float64(a)/float64(b))
}

// median is the middle of sorted v (the mean of the two middle ones for
// an even count); v is not empty.
func median[T ~float64 | ~int64](v []T) T {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// short rounds d to at most 4 significant digits, and at least to 100 ns,
// so that a CPU time reads 27.17ms, 554.6µs or 61.3µs.
func short(d time.Duration) time.Duration {
	unit := 100 * time.Nanosecond
	for d >= 10000*unit {
		unit *= 10
	}
	return d.Round(unit)
}
