package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/restmcp/restmcp/internal/corpustest"
	"github.com/restmcp/restmcp/internal/testenv"
)

// restmcpBin is the restmcp executable TestMain builds for these tests.
var restmcpBin string

func TestMain(m *testing.M) {
	if os.Getenv(benchChildEnv) == "1" {
		// A process restmcp-bench started from its own executable (the
		// benchmark's upstream), which is this test binary: be
		// restmcp-bench.
		main()
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "restmcp-bench-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	restmcpBin = filepath.Join(dir, "restmcp")
	build := exec.Command("go", "build", "-o", restmcpBin, "../restmcp")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building restmcp for the bench tests:", err)
		os.Exit(1)
	}
	testenv.Main(m) // exits; the built restmcp stays in the system's temporary folder
}

// run runs restmcp-bench with args (after a leading "bench", as the
// command was once called) against restmcpBin.
func run(ctx context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "bench" {
		args = args[1:]
	}
	return runBench(ctx, append([]string{"--restmcp", restmcpBin}, args...), stdout, stderr)
}

// testRedisURL is testenv.RedisURL.
func testRedisURL(t testing.TB) string { t.Helper(); return testenv.RedisURL(t) }

// TestBenchCommand runs a small `restmcp-bench`, with the upstream and
// restmcp serve in processes of their own (the default; here the test
// binary is the executable, and TestMain runs main for it) and with
// --in-process, and checks each report: both targets at each concurrency,
// every call answered 200, the summary computed (figures themselves are
// not asserted: timing belongs to benchmarks, not tests).
func TestBenchCommand(t *testing.T) {
	for _, tc := range []struct {
		flags   []string
		through string // the restmcp row's target
		summary string // the start of each concurrency's summary line
	}{
		{nil, "restmcp serve, memory metering", ": restmcp's process "},
		{[]string{"--in-process"}, "restmcp, memory metering", ": restmcp itself "},
		{[]string{"--answer-bytes", "300000"}, "restmcp serve, memory metering", ": restmcp's process "},
	} {
		var stdout, stderr strings.Builder
		args := append([]string{"bench", "--calls", "300", "--concurrency", "1,4"}, tc.flags...)
		if err := run(context.Background(), args, func(string) string { return "" }, &stdout, &stderr); err != nil {
			t.Fatalf("bench %v: %v\n%s", tc.flags, err, stderr.String())
		}
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		// The columns after TARGET, whose value has spaces ("RESTMCP CPU/CALL" is one column).
		cols := len(strings.Fields(strings.ReplaceAll(lines[0], " CPU/CALL", "_CPU/CALL"))) - 1
		var targets []string
		for _, l := range lines[1:5] {
			f := strings.Fields(l)
			if f[len(f)-1] != "0" {
				t.Errorf("errors in %q", l)
			}
			targets = append(targets, strings.Join(f[:len(f)-cols], " ")+" c="+f[len(f)-cols])
		}
		want := []string{"direct upstream c=1", tc.through + " c=1", "direct upstream c=4", tc.through + " c=4"}
		if diff := cmp.Diff(want, targets); diff != "" {
			t.Errorf("bench %v runs (-want +got):\n%s\n%s", tc.flags, diff, stdout.String())
		}
		for _, c := range []string{"1", "4"} {
			if !strings.Contains(stdout.String(), "\nconcurrency "+c+tc.summary) {
				t.Errorf("bench %v: no summary for concurrency %s:\n%s", tc.flags, c, stdout.String())
			}
			// A large answer (300,103 bytes, the whole of it returned:
			// max_response_bytes is raised above it) adds its cost per MB.
			if got := strings.Contains(stdout.String(), " ms CPU per MB of upstream JSON (") && strings.Contains(stdout.String(), "-byte answer)"); got != (len(tc.flags) > 0 && tc.flags[0] == "--answer-bytes") {
				t.Errorf("bench %v: CPU per MB line present: %v\n%s", tc.flags, got, stdout.String())
			}
		}
		if len(tc.flags) > 0 && tc.flags[0] == "--answer-bytes" {
			if !strings.Contains(stdout.String(), " ms per 300103-byte answer)") || !strings.Contains(stdout.String(), "\nrestmcp's peak RSS ") {
				t.Errorf("bench --answer-bytes: no per-answer or RSS line:\n%s", stdout.String())
			}
		}
	}
}

// TestBenchCommandPairs: a concurrency repeated in --concurrency runs
// the direct upstream and restmcp in alternated pairs, and the report adds
// the medians and ranges over the pairs; every row gives the bench
// process's own CPU per call (the client's). With --compare, a second
// restmcp serve (here this same executable) runs in every round, with its
// process's CPU, and the report gives each round's ratios and their
// medians.
func TestBenchCommandPairs(t *testing.T) {
	exe, err := restmcpBin, error(nil)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if err := run(context.Background(), []string{"bench", "--calls", "200", "--concurrency", "2,1,2,2", "--compare", exe}, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	lines := strings.Split(out, "\n")
	if want := "TARGET                          CONCURRENCY  CALLS  CALLS/S  P50"; !strings.HasPrefix(lines[0], want) || !strings.HasSuffix(lines[0], "RESTMCP CPU/CALL  UPSTREAM CPU/CALL  CLIENT CPU/CALL  ERRORS") {
		t.Fatalf("header %q", lines[0])
	}
	compared := "compared: " + filepath.Base(exe) + " serve"
	// Process CPU is read in 10 ms ticks: over 200 calls a process may read
	// as none ("-").
	cpu := `(-|[0-9.]+(µs|ms))`
	row := regexp.MustCompile(`^(direct upstream|restmcp serve, memory metering|` + regexp.QuoteMeta(compared) + `) +([12]) +200 +[0-9]+ +\S+ +\S+ +` + cpu + ` +` + cpu + ` +[0-9.]+(µs|ms) +0$`)
	var got []string
	for _, l := range lines[1:13] {
		m := row.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("row %q\n%s", l, out)
		}
		got = append(got, m[1]+" c="+m[2])
	}
	var want []string
	for _, c := range []string{"2", "1", "2", "2"} {
		want = append(want, "direct upstream c="+c, "restmcp serve, memory metering c="+c, compared+" c="+c)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	perRound := regexp.MustCompile(`\nconcurrency [12]: ` + regexp.QuoteMeta(compared) + `, its process [0-9.]+(s|µs|ms) CPU per call; throughput [0-9.]+ of direct; restmcp [0-9.]+× its calls/s, (-|[0-9.]+×) its CPU per call\n`)
	if n := len(perRound.FindAllString(out, -1)); n != 4 {
		t.Errorf("%d lines comparing a round, want 4:\n%s", n, out)
	}
	summary := regexp.MustCompile(`\nconcurrency 2, 3 pairs: restmcp's process [0-9.]+(s|µs|ms) CPU per call \([0-9.]+(s|µs|ms)–[0-9.]+(s|µs|ms)\), (-|[0-9.]+× \([0-9.]+–[0-9.]+×\)) the upstream process's own; throughput [0-9.]+ of direct \([0-9.]+–[0-9.]+\); medians and ranges\n` +
		`concurrency 2, 3 rounds against ` + regexp.QuoteMeta(compared) + `: restmcp [0-9.]+× \([0-9.]+–[0-9.]+\) its calls/s, (-|[0-9.]+× \([0-9.]+–[0-9.]+\)) its CPU per call; medians and ranges of each round's ratio\n$`)
	if !summary.MatchString(out) {
		t.Errorf("no summary of the three rounds at concurrency 2 at the end:\n%s", out)
	}
	if strings.Contains(out, "concurrency 1, ") {
		t.Errorf("a summary for concurrency 1, measured once:\n%s", out)
	}
	err = run(context.Background(), []string{"bench", "--in-process", "--compare", exe}, func(string) string { return "" }, &stdout, &stderr)
	if want := "--compare runs restmcp serve processes; it cannot go with --in-process"; err == nil || err.Error() != want {
		t.Errorf("--compare with --in-process: %v, want %q", err, want)
	}
}

// TestBenchCommandCompareLargeAnswers: with --answer-bytes and --compare,
// each round's CPU per MB is restmcp's own run (the row of restmcp serve),
// and the compared executable's follows it.
func TestBenchCommandCompareLargeAnswers(t *testing.T) {
	exe, err := restmcpBin, error(nil)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	if err := run(context.Background(), []string{"bench", "--calls", "40", "--concurrency", "1,2", "--answer-bytes", "300000", "--compare", exe}, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	compared := "compared: " + filepath.Base(exe) + " serve"
	row := regexp.MustCompile(`\n(restmcp serve, memory metering|` + regexp.QuoteMeta(compared) + `) +([12]) +40 +[0-9]+ +\S+ +\S+ +(\S+) `)
	perMB := regexp.MustCompile(`\nconcurrency ([12]): (restmcp's process|` + regexp.QuoteMeta(compared) + `, its process) [0-9.]+ ms CPU per MB of upstream JSON \(([0-9.]+) ms per 300103-byte answer\)`)
	rows, lines := row.FindAllStringSubmatch(out, -1), perMB.FindAllStringSubmatch(out, -1)
	if len(rows) != 4 || len(lines) != 4 {
		t.Fatalf("%d rows and %d CPU per MB lines, want 4 and 4:\n%s", len(rows), len(lines), out)
	}
	for i, r := range rows {
		who := "restmcp's process"
		if r[1] == compared {
			who = compared + ", its process"
		}
		d, err := time.ParseDuration(r[3])
		if err != nil {
			t.Fatalf("row %q: CPU %q", r[0], r[3])
		}
		if l := lines[i]; l[1] != r[2] || l[2] != who || l[3] != fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) {
			t.Errorf("CPU per MB line %q for the row %q", l[0], r[0])
		}
	}
}

func TestCPURatio(t *testing.T) {
	for _, c := range []struct {
		a, b time.Duration
		want string
	}{
		{150 * time.Microsecond, 100 * time.Microsecond, "1.50×"},
		{100 * time.Microsecond, 300 * time.Microsecond, "0.33×"},
		{0, 100 * time.Microsecond, "-"}, // less than a tick over the run
		{100 * time.Microsecond, 0, "-"},
	} {
		if got := cpuRatio(c.a, c.b); got != c.want {
			t.Errorf("cpuRatio(%v, %v) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{1, 2, 9}, 2},
		{[]float64{1, 2, 4, 9}, 3},
	} {
		if got := median(c.v); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.v, got, c.want)
		}
	}
	if got := median([]time.Duration{1, 2, 4, 9}); got != 3 {
		t.Errorf("median of durations = %v, want 3ns", got)
	}
	if got := spread([]float64{0.31, 0.25, 0.28}, "%.2f (%.2f–%.2f)"); got != "0.28 (0.25–0.31)" {
		t.Errorf("spread = %q", got)
	}
	if got := spread(nil, "%.2f (%.2f–%.2f)"); got != "-" {
		t.Errorf("spread(nil) = %q, want -", got)
	}
}

// TestShort: CPU times in the bench report keep at most 4 significant
// digits, and are rounded to 100 ns at least.
func TestShort(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{27166700 * time.Nanosecond, "27.17ms"},
		{554640 * time.Nanosecond, "554.6µs"},
		{61349 * time.Nanosecond, "61.3µs"},
		{999999 * time.Nanosecond, "1ms"},
		{1234567890 * time.Nanosecond, "1.235s"},
		{40, "0s"},
		{0, "0s"},
	} {
		if got := short(c.d).String(); got != c.want {
			t.Errorf("short(%d ns) = %s, want %s", int64(c.d), got, c.want)
		}
	}
}

// TestBenchCommandRedis: with --redis, restmcp serve meters in Redis, and
// the report adds Redis's own CPU per call and the admission scripts and
// events restmcp sent it per call. The test Redis is shared with other
// packages' tests running at the same time, so its counts are at least
// restmcp's: one EVALSHA per call.
func TestBenchCommandRedis(t *testing.T) {
	url := testRedisURL(t)
	var stdout, stderr strings.Builder
	if err := run(context.Background(), []string{"bench", "--calls", "300", "--concurrency", "2", "--redis", url}, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("bench --redis: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	if !strings.Contains(out, "\nrestmcp serve, Redis metering  2 ") {
		t.Errorf("no Redis metering row:\n%s", out)
	}
	m := regexp.MustCompile(`\nconcurrency 2: Redis's process [0-9.]+(µs|ms) CPU per call \(INFO cpu\); per call restmcp sent it ([0-9]+\.[0-9]{2}) EVALSHA, [0-9]+\.[0-9]{2} EVAL and [0-9]+\.[0-9]{2} XADD \(INFO commandstats\)\n`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no Redis line:\n%s", out)
	}
	if n, _ := strconv.ParseFloat(m[2], 64); n < 1 {
		t.Errorf("%s EVALSHA per call, want at least 1.00 (one admission per call)", m[2])
	}
}

// TestBenchCommandPeer drives a peer beside restmcp in the same run: a
// stand-in MCP server with sessions that accepts each tools/call with 202
// and answers it on the session's GET stream, as
// @ivotoby/openapi-mcp-server does (scripts/bench-peers runs the real one).
// Its tools/list has a tool of its own beside the benchmark's, with
// "data: " in a description, as jedisct1/openapi-mcp's does. Every peer
// call must be answered, and the report has its row and its summary line.
func TestBenchCommandPeer(t *testing.T) {
	var mu sync.Mutex
	var stream chan string
	var calls atomic.Int64
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			mu.Lock()
			ch := stream
			mu.Unlock()
			for {
				select {
				case msg := <-ch:
					_, _ = io.WriteString(w, "event: message\ndata: "+msg+"\n\n")
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &m)
		w.Header().Set("Content-Type", "application/json")
		switch m.Method {
		case "initialize":
			mu.Lock()
			stream = make(chan string, 64)
			mu.Unlock()
			w.Header().Set("Mcp-Session-Id", "s-1")
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"peer","version":"1"}}}`)
		case "tools/list":
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"describe","description":"lists the tools; metadata: names","inputSchema":{"type":"object"}},{"name":"get-pet-by-id","inputSchema":{"type":"object"}}]}}`)
		case "tools/call":
			if r.Header.Get("Mcp-Session-Id") != "s-1" || !strings.Contains(string(body), `"name":"get-pet-by-id","arguments":{"petId":"p1"}`) {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			calls.Add(1)
			w.WriteHeader(http.StatusAccepted)
			mu.Lock()
			stream <- `{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"content":[]}}`
			mu.Unlock()
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer peer.Close()
	var stdout, stderr strings.Builder
	if err := run(context.Background(), []string{"bench", "--calls", "200", "--concurrency", "2", "--peer", peer.URL, "--peer-name", "stand-in"}, func(string) string { return "" }, &stdout, &stderr); err != nil {
		t.Fatalf("bench: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if f := strings.Fields(lines[3]); f[0] != "stand-in" || f[1] != "2" || f[2] != "200" || f[len(f)-1] != "0" {
		t.Errorf("peer row %q\n%s", lines[3], stdout.String())
	}
	if !strings.Contains(stdout.String(), "\nconcurrency 2: stand-in throughput ") {
		t.Errorf("no peer summary:\n%s", stdout.String())
	}
	// 200 measured, up to 200 warming up.
	if n := calls.Load(); n != 400 {
		t.Errorf("peer answered %d calls, want 400", n)
	}
}

// TestBenchCommandList: --list-spec on GitHub's REST document runs
// tools/list against restmcp serve, identity and gzip in turn, the order
// alternating from one concurrency to the next, every list answered 200 in
// the encoding asked for (measureList checks Content-Encoding), and the
// bytes sent each answer: the identity list's 683,193, and in gzip the same
// count in both runs, a seventh to a tenth of that (the exact bytes are
// compress/flate's, which may change with Go; TestToolsListGzip decodes
// them).
func TestBenchCommandList(t *testing.T) {
	spec := corpustest.Path(t, "github-rest-v1.1.3")
	var stdout, stderr strings.Builder
	if err := run(context.Background(), []string{"--list-spec", spec, "--calls", "20", "--concurrency", "1,3"}, nil, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var got []string
	gzipBytes := map[string]bool{}
	for _, l := range lines[2:] {
		f := strings.Fields(l) // encoding, concurrency, lists, errors, lists/s, bytes, CPU, "µs"
		if f[0] == "gzip" {
			if n, _ := strconv.Atoi(f[5]); n < 683193/10 || n > 683193/7 {
				t.Errorf("gzip: %d bytes sent", n)
			}
			gzipBytes[f[5]], f[5] = true, "(gzip)"
		}
		got = append(got, strings.Join(append(f[:4:4], f[5]), " "))
	}
	if len(gzipBytes) != 1 {
		t.Errorf("gzip answers of different sizes: %v", gzipBytes)
	}
	want := []string{"identity 1 20 0 683193", "gzip 1 20 0 (gzip)", "gzip 3 20 0 (gzip)", "identity 3 20 0 683193"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s\n%s", diff, stdout.String())
	}
	for _, bad := range [][]string{{"--list-spec", spec, "--in-process"}, {"--list-spec", spec, "--redis", "redis://127.0.0.1:6379"}} {
		err := run(context.Background(), bad, nil, io.Discard, io.Discard)
		if err == nil || err.Error() != "--list-spec runs restmcp serve alone: it cannot go with --in-process, --compare, --peer or --redis" {
			t.Errorf("%v: %v", bad, err)
		}
	}
}
