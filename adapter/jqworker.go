package adapter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"runtime/debug"
	"strings"

	"github.com/itchyny/gojq"
)

// A jq filter is code from any key holder, and gojq bounds none of what
// it costs: a filter can recurse until Go's stack overflows (which ends
// the whole process; `reduce range(3000000) as $i (0; [.]) | tojson`), run
// one builtin for minutes (a regular expression on a large string), or
// build gigabytes. So each filter runs in a process of its own, the restmcp
// executable started as a jq worker (JQWorkerEnv), with bounds the kernel
// enforces: jqTimeout of CPU (RLIMIT_CPU) and of wall time (the parent
// kills it), Options.JQMaxMemoryBytes of data (RLIMIT_DATA), a stack of
// jqMaxStack, an empty environment, no files, its output cut at
// MaxResponseBytes. Whatever a filter does, the server goes on; the call
// gets an error result naming the bound it hit.

// JQWorkerEnv, set to "1" in a process's environment, makes the restmcp
// executable (and a test binary of a package that starts jq workers) a jq
// worker: it runs ServeJQWorker and exits.
const JQWorkerEnv = "RESTMCP_JQ_WORKER"

// DefaultJQMaxMemoryBytes is a jq worker's data bound when
// Options.JQMaxMemoryBytes is 0: room for a 16 MiB answer decoded several
// times over, far below what one call may take of a server.
const DefaultJQMaxMemoryBytes int64 = 512 << 20

// jqWorkers is how many jq workers run at once; a filtered call waits for
// one within its budget.
const jqWorkers = 4

// jqMaxStack is a jq worker's largest goroutine stack: a filter that nests
// deeper stops there (a fatal error of the worker alone) long before the
// memory bound.
const jqMaxStack = 16 << 20

// jqRequest is the first line a jq worker reads; the JSON input follows it.
type jqRequest struct {
	Filter    string `json:"filter"`
	MaxOutput int    `json:"max_output"`
	MaxMemory int64  `json:"max_memory"`
	CPU       int    `json:"cpu_seconds"`
}

// Exit codes of a jq worker, beside Go's own 2 for a fatal error.
const (
	jqExitFailed   = 1 // the filter failed; stderr says why
	jqExitTooLarge = 3 // the output passed max_output
)

// ServeJQWorker is a jq worker's whole life: it sets its bounds, reads
// one request and its input from r, writes each value the filter yields as
// one line of JSON to w, and returns the process's exit code (a filter
// error is on errw).
func ServeJQWorker(r io.Reader, w, errw io.Writer) int {
	br := bufio.NewReader(r)
	line, err := br.ReadBytes('\n')
	var req jqRequest
	if err != nil || json.Unmarshal(line, &req) != nil {
		fmt.Fprintln(errw, "jq_filter: the worker got no request")
		return jqExitFailed
	}
	setWorkerLimits(req.CPU, req.MaxMemory)
	debug.SetMaxStack(jqMaxStack)
	input, err := io.ReadAll(io.LimitReader(br, jqMaxInput+1))
	if err != nil || len(input) > jqMaxInput {
		fmt.Fprintln(errw, "jq_filter: the input could not be read")
		return jqExitFailed
	}
	code, err := compileJQ(req.Filter)
	if err != nil {
		fmt.Fprintln(errw, "jq_filter: "+err.Error())
		return jqExitFailed
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.Decode(new(any)) != io.EOF {
		fmt.Fprintln(errw, "jq_filter: the upstream's 2xx answer is not one JSON value, so it was not filtered")
		return jqExitFailed
	}
	out := bufio.NewWriter(w)
	written := 0
	iter := code.Run(jqNumbers(v))
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := v.(error); ok {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				break
			}
			fmt.Fprintln(errw, "jq_filter: "+err.Error())
			return jqExitFailed
		}
		b, err := gojq.Marshal(v)
		if err != nil {
			fmt.Fprintln(errw, "jq_filter: "+err.Error())
			return jqExitFailed
		}
		if written += len(b) + 1; written > req.MaxOutput+1 {
			return jqExitTooLarge
		}
		_, _ = out.Write(b)
		_ = out.WriteByte('\n')
	}
	if err := out.Flush(); err != nil {
		return jqExitFailed
	}
	return 0
}

// jqProcess runs filters in jq workers: the executable exe started with
// JQWorkerEnv, at most cap(slots) at once (a call waits for a slot within
// its own deadline).
type jqProcess struct {
	exe       string
	slots     chan struct{}
	maxMemory int64
}

// run runs filter on input in a worker and returns its output (one JSON
// value a line), or the text of the error result when the filter failed or
// hit a bound.
func (p *jqProcess) run(ctx context.Context, filter string, input []byte, maxOutput int) ([]byte, string) {
	ctx, cancel := context.WithTimeout(ctx, jqTimeout)
	defer cancel()
	select {
	case p.slots <- struct{}{}:
		defer func() { <-p.slots }()
	case <-ctx.Done():
		return nil, fmt.Sprintf("jq_filter: no filter could start within its %v budget (every worker was busy); retry", jqTimeout)
	}
	head, _ := json.Marshal(jqRequest{Filter: filter, MaxOutput: maxOutput, MaxMemory: p.maxMemory, CPU: int(jqTimeout.Seconds())})
	cmd := exec.CommandContext(ctx, p.exe)
	cmd.Env = []string{JQWorkerEnv + "=1"}
	cmd.Stdin = io.MultiReader(bytes.NewReader(head), strings.NewReader("\n"), bytes.NewReader(input))
	stdout := &capped{max: maxOutput + 1}
	stderr := &capped{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		return nil, "jq_filter: the jq worker did not start: " + err.Error()
	}
	stop := make(chan struct{})
	over := watchMemory(cmd.Process, p.maxMemory, stop)
	err := cmd.Wait()
	close(stop)
	if over.Load() {
		return nil, fmt.Sprintf("jq_filter: the filter needed more than %d bytes of memory (jq_max_memory_bytes) and was stopped", p.maxMemory)
	}
	if err == nil {
		return stdout.b.Bytes(), ""
	}
	msg := stderr.b.String()
	var exit *exec.ExitError
	code := -1
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	}
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Sprintf("jq_filter: the filter ran past its %v budget and was stopped", jqTimeout)
	case code == jqExitFailed && strings.HasPrefix(msg, "jq_filter: "):
		return nil, strings.TrimSpace(strings.SplitN(msg, "\n", 2)[0])
	case code == jqExitTooLarge:
		return nil, fmt.Sprintf("jq_filter: the filter's output is larger than %d bytes (max_response_bytes); narrow it", maxOutput)
	case strings.Contains(msg, "stack exceeds"):
		return nil, "jq_filter: the filter nests values or calls too deeply and was stopped; make it flatter"
	case strings.Contains(msg, "out of memory") || strings.Contains(msg, "cannot allocate memory") || strings.Contains(msg, "failed to allocate"):
		// The Go runtime's words, or the race detector's when the worker is
		// a race-instrumented test binary.
		return nil, fmt.Sprintf("jq_filter: the filter needed more than %d bytes of memory (jq_max_memory_bytes) and was stopped", p.maxMemory)
	case exit != nil && !exit.Exited():
		// Killed by a signal: SIGXCPU at the CPU bound, which is the
		// same budget as the wall-time one.
		return nil, fmt.Sprintf("jq_filter: the filter ran past its %v budget and was stopped", jqTimeout)
	}
	return nil, fmt.Sprintf("jq_filter: the filter stopped with an error the worker did not name (exit %d: %.200q)", code, msg)
}

// capped keeps the first max bytes written to it and drops the rest.
type capped struct {
	b   bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
