package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/restmcp/restmcp/adapter/idp/idptest"
	"github.com/restmcp/restmcp/internal/testenv"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
	"github.com/restmcp/restmcp/adapter/oauth/oauthtest"
	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/metering"
	"gopkg.in/yaml.v3"
)

// settingRow is one row of the settings tables of docs/settings.md.
type settingRow struct {
	env, flag, key, def string
}

// docSettingRows reads every row of the settings tables in
// docs/settings.md, the page users read.
func docSettingRows(t *testing.T) []settingRow {
	t.Helper()
	data, err := os.ReadFile("../../docs/settings.md")
	if err != nil {
		t.Fatal(err)
	}
	cell := func(s string) string { return strings.Trim(strings.TrimSpace(s), "`") }
	var rows []settingRow
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "| `RESTMCP_") {
			continue
		}
		c := strings.Split(line, "|")
		if len(c) < 6 {
			t.Fatalf("docs/settings.md: a row with %d cells: %s", len(c), line)
		}
		rows = append(rows, settingRow{env: cell(c[1]), flag: strings.TrimPrefix(cell(c[2]), "--"), key: cell(c[3]), def: cell(c[4])})
	}
	return rows
}

// settingProbe says how TestEverySettingThroughServe sees one setting work.
// Placeholders in value and with: {dir} (the run's copy of
// testdata/settings), {up} and {upport} (the run's upstream, host:port and
// port), {files} (an http:// URL serving {dir}), {free} (a free loopback
// port), {redis} and {cluster} (the test Redis and Redis Cluster URLs),
// {mute} (a TCP address that accepts and never answers).
type settingProbe struct {
	value   string            // the value given, as in an environment variable or flag
	with    map[string]string // other settings (by key) for the baseline and every way
	without []string          // base settings (spec, upstream, addr) left out
	env     map[string]string // other environment variables (a key a setting names), for the baseline and every way
	redis   bool              // needs the test Redis
	cluster bool              // needs the test Redis Cluster
	// check looks for the setting's effect on a started restmcp serve and
	// returns what it saw instead when the effect is not there.
	check func(r *settingsRun) error
}

// baseSettings are given to every run (through the environment) unless a
// probe sets the same key or leaves them out.
var baseSettings = map[string]string{
	"spec":     "{dir}/settings.yaml",
	"upstream": "http://{up}",
	"addr":     "127.0.0.1:0",
}

// TestEverySettingThroughServe starts the restmcp executable for every row
// of docs/settings.md and sees the setting's effect, once with the flag,
// once with the environment variable and once with the config file key
// (each the row has), after seeing the effect absent from a run without
// the setting (the baseline), so that a check that cannot fail, or a
// setting parsed but not wired, fails here. A row without a probe fails.
func TestEverySettingThroughServe(t *testing.T) {
	rows := docSettingRows(t)
	types := map[string]string{}
	for _, s := range config.Settings() {
		types[s.Env] = s.Type
	}
	if len(rows) != len(types) {
		t.Errorf("docs/settings.md has %d rows, the settings table %d settings: regenerate it (go test ./config -run TestSettingsDocument -update-settings)", len(rows), len(types))
	}
	probes := settingProbes()
	bin := restmcpBinary(t)
	seen := map[string]bool{}
	sem := make(chan struct{}, 6)
	for _, row := range rows {
		name := row.key
		if name == "" {
			name = "config"
		}
		seen[name] = true
		p, ok := probes[name]
		if !ok {
			t.Errorf("docs/settings.md row %s (%s) has no probe in settingProbes", row.env, name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sem <- struct{}{}
			defer func() { <-sem }()
			env := testEnvFor(t, p)
			base := newSettingsRun(t, bin, env, row, types[row.env], p, "")
			if err := p.check(base); err == nil {
				t.Fatalf("baseline (without %s): the effect is there already; the check cannot fail\n%s", row.env, base.output())
			}
			base.stop()
			for _, way := range []string{"flag", "env", "config"} {
				switch {
				case way == "flag" && row.flag == "", way == "config" && row.key == "":
					continue
				}
				r := newSettingsRun(t, bin, env, row, types[row.env], p, way)
				if err := p.check(r); err != nil {
					t.Errorf("%s through the %s: %v\n%s", name, way, err, r.output())
				}
				r.stop()
			}
		})
	}
	for name := range probes {
		if !seen[name] {
			t.Errorf("probe %s matches no row of docs/settings.md", name)
		}
	}
}

// settingsEnv holds what a probe's placeholders stand for.
type settingsEnv struct {
	redis, cluster string
}

func testEnvFor(t *testing.T, p settingProbe) settingsEnv {
	var e settingsEnv
	if p.redis {
		e.redis = testRedisURL(t)
	}
	if p.cluster {
		e.cluster = testClusterURL(t)
	}
	return e
}

// settingsRun is one started restmcp serve.
type settingsRun struct {
	t        *testing.T
	dir      string
	up       *settingsUpstream
	files    string
	bin      string
	args     []string
	env      []string
	cmd      *exec.Cmd
	base     string // http://127.0.0.1:PORT; "" when it did not start serving
	mcp      string // the MCP URL the banner gives for this machine
	out, err *syncBuffer
	done     chan struct{}
	exitErr  error
	free     int
	redisURL string
	idp      *idptest.Provider // an OpenID provider of the run's own
}

var bannerURLRE = regexp.MustCompile(`at (http://127\.0\.0\.1:\d+)(/\S*)?\n`)

// newSettingsRun starts the restmcp executable with the base settings and
// the probe's, and the setting of row given the way named ("" for none),
// and waits until its banner says where it serves, or it exits.
func newSettingsRun(t *testing.T, bin string, e settingsEnv, row settingRow, typ string, p settingProbe, way string) *settingsRun {
	t.Helper()
	r := &settingsRun{t: t, dir: t.TempDir(), up: newSettingsUpstream(t), bin: bin, out: &syncBuffer{}, err: &syncBuffer{},
		done: make(chan struct{}), redisURL: e.redis, idp: idptest.New(t)}
	if err := os.CopyFS(r.dir, os.DirFS("testdata/settings")); err != nil {
		t.Fatal(err)
	}
	fs := httptest.NewServer(http.FileServer(http.Dir(r.dir)))
	t.Cleanup(fs.Close)
	r.files = fs.URL
	mute := muteListener(t)
	// {free} is a port found free and closed again: another socket (a
	// connection's local port, another test's listener) may take it before
	// restmcp listens on it. Then the run is made again on another port,
	// at most three times in all (no probe expects that refusal: the base
	// settings listen on port 0).
	for attempt := 1; ; attempt++ {
		r.startOn(t, freePort(t), e, row, typ, p, way, mute)
		if attempt == 3 || r.base != "" || !strings.Contains(r.err.String(), "the address is already in use") {
			return r
		}
		r.stop()
	}
}

// startOn fills the probe's placeholders, with free as {free}, and starts
// the run (newSettingsRun).
func (r *settingsRun) startOn(t *testing.T, free int, e settingsEnv, row settingRow, typ string, p settingProbe, way string, mute string) {
	t.Helper()
	r.free = free
	r.out, r.err = &syncBuffer{}, &syncBuffer{}
	fill := strings.NewReplacer("{dir}", r.dir, "{upport}", r.up.port(), "{up}", r.up.host(), "{files}", r.files,
		"{free}", strconv.Itoa(r.free), "{redis}", e.redis, "{cluster}", e.cluster, "{mute}", mute, "{idp}", r.idp.URL).Replace

	settings := map[string]string{}
	for k, v := range baseSettings {
		if k != row.key && !slices.Contains(p.without, k) {
			settings[k] = v
		}
	}
	for k, v := range p.with {
		settings[k] = v
	}
	envOf := map[string]string{}
	for _, s := range config.Settings() {
		envOf[s.Key] = s.Env
	}
	r.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range settings {
		if envOf[k] == "" {
			t.Fatalf("probe names unknown setting %q", k)
		}
		r.env = append(r.env, envOf[k]+"="+fill(v))
	}
	for k, v := range p.env {
		r.env = append(r.env, k+"="+fill(v))
	}
	r.args = []string{"serve"}
	value := fill(p.value)
	switch way {
	case "flag":
		r.args = append(r.args, "--"+row.flag+"="+value)
	case "env":
		r.env = append(r.env, row.env+"="+value)
	case "config":
		path := filepath.Join(r.dir, "way.yaml")
		data, err := yaml.Marshal(map[string]any{row.key: yamlValue(t, typ, value)})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		r.args = append(r.args, "--config="+path)
	}
	r.start()
}

// yamlValue is value (as in an environment variable) as a config file
// gives it: a YAML sequence for a list, a mapping for a map, a number or
// boolean for those types.
func yamlValue(t *testing.T, typ, value string) any {
	switch typ {
	case "list":
		return strings.Split(value, ",")
	case "map":
		m := map[string]string{}
		for _, kv := range strings.Split(value, ",") {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		return m
	case "int":
		n, err := strconv.Atoi(value)
		if err != nil {
			t.Fatal(err)
		}
		return n
	case "bool":
		return value == "true"
	}
	return value
}

// start runs the process and waits for its banner (or its end).
func (r *settingsRun) start() {
	t := r.t
	t.Helper()
	r.cmd = exec.Command(r.bin, r.args...)
	r.cmd.Env = r.env
	r.cmd.Dir = r.dir
	r.cmd.Stdout = r.out
	r.cmd.Stderr = r.err
	r.done = make(chan struct{})
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.exitErr = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(r.stop)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := bannerURLRE.FindStringSubmatch(r.out.String()); m != nil {
			r.base, r.mcp = m[1], m[1]+m[2]
			return
		}
		select {
		case <-r.done:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("restmcp %s did not print its banner in 30 s\n%s", strings.Join(r.args, " "), r.output())
}

// twin starts a second process with the same arguments and environment.
func (r *settingsRun) twin() *settingsRun {
	c := *r
	c.out, c.err = &syncBuffer{}, &syncBuffer{}
	c.base, c.mcp = "", ""
	c.start()
	return &c
}

// stop ends the process (SIGTERM, then SIGKILL after 10 s).
func (r *settingsRun) stop() {
	if r.cmd == nil || r.cmd.Process == nil {
		return
	}
	select {
	case <-r.done:
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
	}
}

// exited says whether the process has ended, waiting up to d.
func (r *settingsRun) exited(d time.Duration) bool {
	select {
	case <-r.done:
		return true
	case <-time.After(d):
		return false
	}
}

func (r *settingsRun) output() string {
	return fmt.Sprintf("restmcp %s\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.out.String(), r.err.String())
}

// serving is an error unless the process printed its banner.
func (r *settingsRun) serving() error {
	if r.base == "" {
		return fmt.Errorf("not serving (exit: %v): %s", r.exitErr, lastLines(r.err.String(), 3))
	}
	return nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// settingsKey is the API key runs send.
const settingsKey = "settings-key"

// httpAnswer is one HTTP exchange's answer.
type httpAnswer struct {
	status int
	header http.Header
	body   []byte
}

// do sends method to path (or an absolute URL) with body and headers
// given as name, value pairs.
func (r *settingsRun) do(method, target, body string, hdr ...string) (httpAnswer, error) {
	if err := r.serving(); err != nil {
		return httpAnswer{}, err
	}
	u := target
	if !strings.HasPrefix(u, "http") {
		u = r.base + target
	}
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		return httpAnswer{}, err
	}
	setHeaders(req, hdr)
	c := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return httpAnswer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return httpAnswer{resp.StatusCode, resp.Header, b}, err
}

// setHeaders sets headers given as name, value pairs; an empty value
// removes the header.
func setHeaders(req *http.Request, hdr []string) {
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
}

// openStream sends a GET (with the key and hdr) and returns the answer
// without reading its body; the caller closes it.
func (r *settingsRun) openStream(target string, hdr ...string) (*http.Response, error) {
	if err := r.serving(); err != nil {
		return nil, err
	}
	u := target
	if !strings.HasPrefix(u, "http") {
		u = r.base + target
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	setHeaders(req, append([]string{"X-Api-Key", settingsKey, "MCP-Protocol-Version", "2025-06-18"}, hdr...))
	return (&http.Client{Timeout: 0}).Do(req)
}

// rpcHeaders are what an MCP client sends on every POST, with the key.
func rpcHeaders(extra ...string) []string {
	return append([]string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream",
		"MCP-Protocol-Version", "2025-06-18", "X-Api-Key", settingsKey}, extra...)
}

// rpc posts a JSON-RPC request to the MCP endpoint (or path, when the
// request names one with "path", value).
func (r *settingsRun) rpc(body string, hdr ...string) (httpAnswer, error) {
	return r.do(http.MethodPost, r.mcp, body, rpcHeaders(hdr...)...)
}

// rpcAt is rpc to another URL path.
func (r *settingsRun) rpcAt(path, body string, hdr ...string) (httpAnswer, error) {
	return r.do(http.MethodPost, path, body, rpcHeaders(hdr...)...)
}

// jsonBody reads an answer's JSON-RPC message: the body, or the data of an
// event stream's first message event.
func jsonBody(a httpAnswer) map[string]any {
	b := a.body
	if strings.HasPrefix(a.header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(b), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				b = []byte(d)
				break
			}
		}
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// tools lists the tools (tools/list).
func (r *settingsRun) tools(hdr ...string) ([]map[string]any, error) {
	a, err := r.rpc(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, hdr...)
	if err != nil {
		return nil, err
	}
	res, _ := jsonBody(a)["result"].(map[string]any)
	list, ok := res["tools"].([]any)
	if !ok {
		return nil, fmt.Errorf("tools/list: HTTP %d %s", a.status, a.body)
	}
	var out []map[string]any
	for _, x := range list {
		out = append(out, x.(map[string]any))
	}
	return out, nil
}

func (r *settingsRun) toolNames(hdr ...string) ([]string, error) {
	ts, err := r.tools(hdr...)
	var names []string
	for _, x := range ts {
		names = append(names, x["name"].(string))
	}
	slices.Sort(names)
	return names, err
}

func (r *settingsRun) tool(name string) (map[string]any, error) {
	ts, err := r.tools()
	if err != nil {
		return nil, err
	}
	for _, x := range ts {
		if x["name"] == name {
			return x, nil
		}
	}
	names, _ := r.toolNames()
	return nil, fmt.Errorf("no tool %s in %v", name, names)
}

// callResult is a tools/call answer: its HTTP status, the JSON-RPC error
// or result, and the text of the result's last content item (the first
// may be a note about it).
type callResult struct {
	httpAnswer
	msg    map[string]any
	result map[string]any
	text   string
}

func (c callResult) errorCode() float64 {
	e, _ := c.msg["error"].(map[string]any)
	n, _ := e["code"].(float64)
	return n
}

func (r *settingsRun) call(tool, args string, hdr ...string) (callResult, error) {
	a, err := r.rpc(callBody(1, tool, args), hdr...)
	if err != nil {
		return callResult{}, err
	}
	c := callResult{httpAnswer: a, msg: jsonBody(a)}
	c.result, _ = c.msg["result"].(map[string]any)
	if content, ok := c.result["content"].([]any); ok && len(content) > 0 {
		c.text, _ = content[len(content)-1].(map[string]any)["text"].(string)
	}
	return c, nil
}

// callOK is call, an error unless it answered a result that is not an
// error result.
func (r *settingsRun) callOK(tool, args string, hdr ...string) (callResult, error) {
	c, err := r.call(tool, args, hdr...)
	if err == nil && (c.result == nil || c.result["isError"] == true) {
		err = fmt.Errorf("tools/call %s: HTTP %d %s", tool, c.status, c.body)
	}
	return c, err
}

// initialize sends initialize and returns the answer.
func (r *settingsRun) initialize(hdr ...string) (httpAnswer, error) {
	return r.rpc(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"settings-probe","version":"1"}}}`, hdr...)
}

// serverInfo is initialize's serverInfo.
func (r *settingsRun) serverInfo() (map[string]any, error) {
	a, err := r.initialize()
	if err != nil {
		return nil, err
	}
	res, _ := jsonBody(a)["result"].(map[string]any)
	info, ok := res["serverInfo"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("initialize: HTTP %d %s", a.status, a.body)
	}
	return info, nil
}

// expect compares got with want.
func expect(what string, got, want any) error {
	if fmt.Sprint(got) != fmt.Sprint(want) {
		return fmt.Errorf("%s: got %v, want %v", what, got, want)
	}
	return nil
}

// upstreamSaw waits up to 5 s for the upstream to have received a request
// whose line (method and URI) is line, and returns it.
func (r *settingsRun) upstreamSaw(line string) (*http.Request, error) {
	var found *http.Request
	err := testenv.Poll(5*time.Second, func() error {
		var lines []string
		for _, q := range r.up.requests() {
			if q.Method+" "+q.URL.RequestURI() == line {
				found = q
				return nil
			}
			lines = append(lines, q.Method+" "+q.URL.RequestURI())
		}
		return fmt.Errorf("upstream never got %q; it got %q", line, lines)
	})
	return found, err
}

// pollUntil calls f until it returns nil or d has passed, and returns its
// last error.
func pollUntil(d time.Duration, f func() error) error { return testenv.Poll(d, f) }

// settingsUpstream is the REST API behind the runs: it answers the paths
// of testdata/settings/settings.yaml and records every request.
type settingsUpstream struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func newSettingsUpstream(t *testing.T) *settingsUpstream {
	u := &settingsUpstream{}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		u.mu.Lock()
		u.reqs = append(u.reqs, req.Clone(context.Background()))
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch p := req.URL.Path; {
		case strings.HasPrefix(p, "/v1/items/"):
			_, _ = fmt.Fprintf(w, `{"id":%q,"name":"thing"}`, strings.TrimPrefix(p, "/v1/items/"))
		case p == "/v1/items":
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":"new"}`)
		case p == "/v1/status":
			if req.Header.Get("X-Api-Key") == "refused-key" {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"error":"unknown key"}`)
				return
			}
			_, _ = io.WriteString(w, `{"ok":true}`)
		case p == "/v1/slow":
			ms, _ := strconv.Atoi(req.URL.Query().Get("ms"))
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-req.Context().Done():
			}
			_, _ = io.WriteString(w, `{"slow":true}`)
		case p == "/v1/jobs" && req.Method == http.MethodPost:
			w.Header().Set("Location", "/v1/jobs/1")
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, `{"accepted":true}`)
		case p == "/v1/longjobs" && req.Method == http.MethodPost:
			w.Header().Set("Location", "/v1/longjobs/1")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusAccepted)
			_, _ = io.WriteString(w, `{"accepted":true}`)
		case p == "/v1/longjobs/1":
			_, _ = io.WriteString(w, `{"status":"running"}`)
		case p == "/v1/jobs/1":
			_, _ = io.WriteString(w, `{"status":"succeeded","id":"1"}`)
		case p == "/v1/file":
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = io.WriteString(w, "%PDF-1.7\n"+strings.Repeat("x", 4991))
		case p == "/v1/big":
			_, _ = io.WriteString(w, `{"data":"`+strings.Repeat("x", 5000)+`"}`)
		case p == "/v1/fail":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"code":"bad","retryable":false}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":"no such path"}`)
		}
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *settingsUpstream) host() string { return strings.TrimPrefix(u.srv.URL, "http://") }
func (u *settingsUpstream) port() string { _, p, _ := net.SplitHostPort(u.host()); return p }

func (u *settingsUpstream) requests() []*http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.reqs)
}

// muteListener is a TCP address that accepts connections and never
// answers (a Redis that hangs).
func muteListener(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// rawConn opens a TCP connection to the run's listener.
func (r *settingsRun) rawConn() (net.Conn, error) {
	if err := r.serving(); err != nil {
		return nil, err
	}
	return net.Dial("tcp", strings.TrimPrefix(r.base, "http://"))
}

// closedWithin says whether the server closes (or answers and closes) conn
// within d; nil when it did.
func closedWithin(conn net.Conn, d time.Duration) error {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, conn)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("the connection was still open after %v", d)
	}
	return nil
}

// registerClient registers an OAuth client with redirect URIs and returns
// the answer.
func (r *settingsRun) registerClient(redirects ...string) (httpAnswer, error) {
	body, _ := json.Marshal(map[string]any{"client_name": "settings probe", "redirect_uris": redirects,
		"token_endpoint_auth_method": "none", "grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}})
	return r.do(http.MethodPost, "/oauth/register", string(body), "Content-Type", "application/json")
}

// oauthClient registers a client with a loopback redirect URI and returns
// its id.
func (r *settingsRun) oauthClient() (string, error) {
	a, err := r.registerClient("http://127.0.0.1:1/callback")
	if err != nil {
		return "", err
	}
	var m struct {
		ClientID string `json:"client_id"`
	}
	if err := json.Unmarshal(a.body, &m); err != nil || m.ClientID == "" {
		return "", fmt.Errorf("registration: HTTP %d %s", a.status, a.body)
	}
	return m.ClientID, nil
}

// authorizeURL is the sign-in page's URL for client, with a PKCE
// challenge of verifier.
func (r *settingsRun) authorizeURL(client, verifier, resourcePath string) string {
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {"http://127.0.0.1:1/callback"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"},
		"state": {"s1"}, "resource": {r.base + resourcePath}, "scope": {"mcp"}}
	return r.base + "/oauth/authorize?" + q.Encode()
}

// oauthToken signs in with key through the whole OAuth flow and returns
// an access token.
func (r *settingsRun) oauthToken(key, resourcePath string) (string, error) {
	client, err := r.oauthClient()
	if err != nil {
		return "", err
	}
	verifier := strings.Repeat("v", 50)
	back, err := oauthtest.Authorize(context.Background(), http.DefaultClient, r.authorizeURL(client, verifier, resourcePath), key)
	if err != nil {
		return "", err
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {back.Query().Get("code")}, "client_id": {client},
		"redirect_uri": {"http://127.0.0.1:1/callback"}, "code_verifier": {verifier}, "resource": {r.base + resourcePath}}
	a, err := r.do(http.MethodPost, "/oauth/token", form.Encode(), "Content-Type", "application/x-www-form-urlencoded")
	if err != nil {
		return "", err
	}
	var m struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(a.body, &m); err != nil || m.AccessToken == "" {
		return "", fmt.Errorf("token: HTTP %d %s", a.status, a.body)
	}
	return m.AccessToken, nil
}

// signInPage opens the sign-in page for a new client.
func (r *settingsRun) signInPage() (httpAnswer, error) {
	client, err := r.oauthClient()
	if err != nil {
		return httpAnswer{}, err
	}
	return r.do(http.MethodGet, r.authorizeURL(client, strings.Repeat("v", 50), "/oauth/mcp"), "")
}

// eventOf waits up to 3 s for a usage event of key in Redis's
// restmcp:events stream.
func eventOf(redisURL, key string) error {
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return err
	}
	c := redis.NewClient(opt)
	defer c.Close()
	id := metering.KeyID(key)
	return pollUntil(3*time.Second, func() error {
		msgs, err := c.XRevRangeN(context.Background(), "restmcp:events", "+", "-", 500).Result()
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if m.Values["key_id"] == id {
				return nil
			}
		}
		return fmt.Errorf("no usage event of key id %s in restmcp:events", id)
	})
}

// uniqueKey is an API key no other run uses.
func uniqueKey() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "settings-" + hex.EncodeToString(b)
}

// concurrently runs n calls of f at once and returns their statuses.
func concurrently(n int, f func() (callResult, error)) []int {
	var wg sync.WaitGroup
	statuses := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c, err := f(); err == nil {
				statuses[i] = c.status
			}
		}()
	}
	wg.Wait()
	slices.Sort(statuses)
	return statuses
}

// TestExampleConfigsThroughServe starts the restmcp executable with each
// example config file under examples/ (from the repository root, as their
// comments say) and sees that the settings it runs with, as its starting
// log line reports them, are the file's (TestEverySettingThroughServe
// shows each of those settings at work), and that initialize names the
// file's server_name. examples/adyen is left out: its documents are
// fetched from GitHub, which TestAdyenExample replaces with the corpus
// copies in process.
func TestExampleConfigsThroughServe(t *testing.T) {
	bin := restmcpBinary(t)
	files, err := filepath.Glob("../../examples/*/restmcp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../examples/restmcp.yaml")
	for _, f := range files {
		rel, _ := filepath.Rel("../..", f)
		if strings.HasPrefix(rel, "examples/adyen/") {
			continue
		}
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			abs, err := filepath.Abs(f)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"--config", abs, "--log-format", "json", "--addr", "127.0.0.1:0"}
			want, err := config.Load(args, func(string) string { return "" })
			if err != nil {
				t.Fatal(err)
			}
			r := &settingsRun{t: t, dir: "../..", bin: bin, out: &syncBuffer{}, err: &syncBuffer{},
				args: append([]string{"serve"}, args...),
				env:  []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}}
			r.start()
			if err := r.serving(); err != nil {
				t.Fatalf("%v\n%s", err, r.output())
			}
			var logged struct {
				Msg    string         `json:"msg"`
				Config map[string]any `json:"config"`
			}
			// The log reaches the test apart from the banner (two pipes).
			var first string
			if err := pollUntil(5*time.Second, func() error {
				line, complete := strings.CutSuffix(strings.SplitAfter(r.err.String(), "\n")[0], "\n")
				if !complete {
					return fmt.Errorf("no log line yet")
				}
				first = line
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(first), &logged); err != nil || logged.Msg != "starting" {
				t.Fatalf("the first log line is not the starting line: %s", first)
			}
			var b bytes.Buffer
			slog.New(slog.NewJSONHandler(&b, nil)).Info("starting", "config", want)
			var expected struct {
				Config map[string]any `json:"config"`
			}
			if err := json.Unmarshal(b.Bytes(), &expected); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(expected.Config, logged.Config); diff != "" {
				t.Errorf("settings the executable runs with (-file +logged):\n%s", diff)
			}
			name := want.ServerName
			if name == "" {
				name = "restmcp"
			}
			if err := infoField("name", name)(r); err != nil {
				t.Error(err)
			}
		})
	}
}
