package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// aliasBomb is the 565-byte "billion laughs" of the issue: nine levels of
// nine aliases, a billion strings once expanded.
func aliasBomb(indent string) string {
	var b strings.Builder
	b.WriteString(`a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]`)
	prev := "a"
	for _, c := range "bcdefghi" {
		fmt.Fprintf(&b, "\n%s%c: &%c [", indent, c, c)
		for i := range 9 {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString("*" + prev)
		}
		b.WriteByte(']')
		prev = string(c)
	}
	return b.String()
}

// bombSpec is an OpenAPI document carrying the bomb in an extension.
func bombSpec() string {
	return "openapi: 3.0.3\ninfo: {title: t, version: \"1\"}\npaths: {}\nx-bomb:\n  " + aliasBomb("  ") + "\n"
}

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// restmcpBinary builds restmcp once per test run, without -race (whose
// shadow memory no address-space limit would allow), for the tests that
// run it as its own process under a memory bound.
func restmcpBinary(t *testing.T) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "restmcp-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "restmcp")
		out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput()
		if err != nil {
			binaryErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binaryPath
}

// memoryBoundKB is the address-space limit (ulimit -v) the processes of
// these tests run under: 4 GiB. A Go program reserves from 0.6 to over 1 GB
// of address space for its heap arenas, whatever it uses (1 GiB failed
// now and then with 4 MB in use); the bomb, unchecked, grew past 24 GB.
// What the process really used is checked apart: its peak RSS.
const memoryBoundKB = 4 << 20

// boundedCommand runs the restmcp binary with args under ulimit -v
// memoryBoundKB, in dir.
func boundedCommand(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	script := "ulimit -v " + strconv.Itoa(memoryBoundKB) + ` && exec "$0" "$@"`
	cmd := exec.Command("bash", append([]string{"-c", script, restmcpBinary(t)}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RESTMCP_ADDR=127.0.0.1:0")
	return cmd
}

// watchPeakRSS reads the peak resident set (VmHWM) of the started process
// cmd every 2 ms until it exits; the returned func gives the largest value
// seen, in MB (-1: none read). The process's rusage cannot say it: a child
// of this (large, under -race) test process starts its ru_maxrss from the
// parent's memory, which the kernel counts up to the exec.
func watchPeakRSS(cmd *exec.Cmd) func() int64 {
	var mu sync.Mutex
	peak := int64(-1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		path := "/proc/" + strconv.Itoa(cmd.Process.Pid) + "/status"
		tick := time.NewTicker(2 * time.Millisecond) // the sampling rate
		defer tick.Stop()
		for ; ; <-tick.C {
			b, err := os.ReadFile(path)
			if err != nil {
				return
			}
			for line := range strings.SplitSeq(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
					kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
					mu.Lock()
					peak = max(peak, kb/1024)
					mu.Unlock()
				}
			}
			if strings.Contains(string(b), "State:\tZ") {
				return
			}
		}
	}()
	return func() int64 {
		<-done
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// TestAliasBombRefused runs validate, tools and serve on the bomb as their
// own processes under a 4 GiB address-space limit: each refuses the
// document, naming the file and the budget, and stays under 300 MB of
// resident memory (read from /proc while it runs). The
// same budget refuses it in the plans file. (The time each takes is in
// the issue note: about 0.1 s.)
func TestAliasBombRefused(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bomb.yaml"), []byte(bombSpec()), 0o600); err != nil {
		t.Fatal(err)
	}
	plans := "x:\n  " + aliasBomb("  ") + "\ndefault_plan: free\nplans:\n  free:\n    tools: *i\n"
	if err := os.WriteFile(filepath.Join(dir, "plans.yaml"), []byte(plans), 0o600); err != nil {
		t.Fatal(err)
	}
	const budget = "YAML aliases expand the document past its budget: its 72 aliases (*name) make its 112 written nodes read as more than 1000112; at most 1000000 more are allowed"
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "--spec", "bomb.yaml"}, "bomb.yaml does not load as published: loading bomb.yaml: " + budget + "\n"},
		{[]string{"tools", "--spec", "bomb.yaml"}, "restmcp: loading bomb.yaml: " + budget + "\n"},
		{[]string{"serve", "--spec", "bomb.yaml"}, "restmcp: loading bomb.yaml: " + budget + "\n"},
		{[]string{"serve", "--plans-file", "plans.yaml"}, "restmcp: plans.yaml: YAML aliases expand the document past its budget: its 73 aliases (*name) make its 110 written nodes read as more than 1000110; at most 1000000 more are allowed\n"},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := boundedCommand(t, dir, tt.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			peakRSS := watchPeakRSS(cmd)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var err error
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute): // a safety net, not a timing
				_ = cmd.Process.Kill()
				t.Fatalf("still running after 2 minutes; stderr so far:\n%s", stderr.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Errorf("exit: %v, want exit status 1", err)
			}
			if !strings.Contains(stderr.String()+stdout.String(), tt.want) {
				t.Errorf("output lacks %q\nstdout:\n%s\nstderr:\n%s", tt.want, stdout.String(), stderr.String())
			}
			rss := peakRSS()
			if rss >= 300 {
				t.Errorf("peak RSS %d MB, want under 300 MB", rss)
			}
			t.Logf("exit %v; peak RSS %d MB as last read (-1: ended before the first read)", err, rss)
		})
	}
}

// TestAliasBombOnReload serves a good document with watch on, as its own
// process under the memory bound, then writes the bomb over it: the
// reload fails naming the budget, and the tools served stay.
func TestAliasBombOnReload(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "api.yaml")
	good, err := os.ReadFile("testdata/plans_api.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(spec, good, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := boundedCommand(t, dir, "serve", "--spec", "api.yaml", "--upstream", "http://127.0.0.1:1",
		"--watch", "--reload-interval", "50ms", "--addr", "127.0.0.1:0")
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	peakRSS := watchPeakRSS(cmd)
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	// The port the kernel gave, from the banner (a port found free first
	// may be taken before restmcp listens on it).
	var mcpURL string
	waitFor(t, "restmcp's banner", func() bool {
		m := bannerURLRE.FindStringSubmatch(logs.String())
		if m != nil {
			mcpURL = m[1] + m[2]
		}
		return m != nil
	})
	list := func() string {
		req, _ := http.NewRequest(http.MethodPost, mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return b.String()
	}
	var before string
	waitFor(t, "restmcp to serve", func() bool { before = list(); return strings.Contains(before, `"get_quote"`) })
	if err := os.WriteFile(spec, []byte(bombSpec()), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the refused reload in the log", func() bool {
		return strings.Contains(logs.String(), `msg="reloading the document failed; the current tools stay"`) &&
			strings.Contains(logs.String(), `YAML aliases expand the document past its budget`)
	})
	if after := list(); after != before {
		t.Errorf("tools/list after the bomb:\n%s\nwant as before:\n%s", after, before)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	if rss := peakRSS(); rss < 0 || rss >= 300 {
		t.Errorf("peak RSS %d MB, want under 300 MB", rss)
	}
}

// TestCommandsStopOnSIGTERM: validate and tools, waiting on a spec URL
// that never answers, end on SIGTERM, killed by it, as a supervisor
// expects; serve stops gracefully and exits 0.
func TestCommandsStopOnSIGTERM(t *testing.T) {
	asked := make(chan struct{}, 4)
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		<-release
	}))
	t.Cleanup(func() { close(release); hang.Close() })
	for _, command := range []string{"validate", "tools"} {
		t.Run(command, func(t *testing.T) {
			cmd := boundedCommand(t, t.TempDir(), command, "--spec", hang.URL+"/openapi.yaml")
			out := &syncBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-asked:
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				t.Fatalf("the document was never asked for; output:\n%s", out.String())
			}
			_ = cmd.Process.Signal(syscall.SIGTERM)
			err := cmd.Wait()
			ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
				t.Errorf("%s after SIGTERM: %v, want killed by SIGTERM", command, err)
			}
		})
	}
}
