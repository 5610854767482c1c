package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"
)

// listRun is one measured run of tools/list: calls lists at a concurrency,
// in one Accept-Encoding.
type listRun struct {
	encoding    string // the Accept-Encoding sent: "identity" or "gzip"
	concurrency int
	calls       int
	elapsed     time.Duration
	restmcpCPU  time.Duration // restmcp's process CPU over the run (Linux /proc)
	wireBytes   int64         // the answer's bytes as sent (its Content-Length)
	errors      int
}

// runListBench implements --list-spec: restmcp serve on the document spec
// (an upstream that is never called), and at each concurrency two runs of
// calls tools/list, one accepting only identity and one accepting gzip (as
// Go's, Node's and Python's HTTP clients do by default), in alternating
// order from one level to the next so that the machine's drift weighs on
// both alike. It prints restmcp's process CPU per tools/list, the calls/s
// and the bytes of one answer as sent.
func runListBench(ctx context.Context, f *benchFlags, stdout io.Writer) error {
	exe, err := restmcpExecutable(f.restmcp)
	if err != nil {
		return err
	}
	env := []string{"RESTMCP_CONFIG=", "RESTMCP_LOG_LEVEL=info", "RESTMCP_LOG_FORMAT=text"}
	args := []string{"serve", "--spec", f.listSpec, "--upstream", "http://127.0.0.1:9", "--addr", "127.0.0.1:0", "--rate-limit", "-1"}
	rm, mcpURL, err := startBenchChildOf(ctx, exe, args, env, bannerMCPURL)
	if err != nil {
		return fmt.Errorf("starting restmcp serve --spec %s: %w", f.listSpec, err)
	}
	defer rm.stop()
	var runs []listRun
	for i, c := range f.levels {
		order := []string{"identity", "gzip"}
		if i%2 == 1 {
			order = []string{"gzip", "identity"}
		}
		for _, enc := range order {
			r, err := measureList(ctx, mcpURL, enc, c, f.calls, rm.pid)
			if err != nil {
				return err
			}
			runs = append(runs, r)
		}
	}
	writeListBench(stdout, f.listSpec, runs)
	return nil
}

// measureList sends calls tools/list at concurrency c with Accept-Encoding
// enc through measure (restmcp's process as the one whose CPU it takes),
// reading each answer whole as sent (not decompressed: the client's work
// is not restmcp's).
func measureList(ctx context.Context, mcpURL, enc string, c, calls, pid int) (listRun, error) {
	list := func(client *http.Client) (int64, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, mcpURL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Accept-Encoding", enc)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("tools/list: status %d", resp.StatusCode)
		}
		if got := resp.Header.Get("Content-Encoding"); err == nil && (got == "gzip") != (enc == "gzip") {
			err = fmt.Errorf("tools/list with Accept-Encoding %s: Content-Encoding %q", enc, got)
		}
		return n, err
	}
	r := listRun{encoding: enc, concurrency: c, calls: calls}
	probe := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	defer probe.CloseIdleConnections()
	var err error
	if r.wireBytes, err = list(probe); err != nil { // also the first gzip, compressed once
		return r, err
	}
	run := measure(ctx, "tools/list", c, calls, func(client *http.Client) error {
		_, err := list(client)
		return err
	}, pid)
	r.elapsed, r.restmcpCPU, r.errors = run.elapsed, run.peerCPU, run.errors
	return r, ctx.Err()
}

// writeListBench prints the runs, one line each.
func writeListBench(w io.Writer, spec string, runs []listRun) {
	fmt.Fprintf(w, "tools/list of %s through restmcp serve (its process CPU from /proc, 10 ms ticks)\n", spec)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "Accept-Encoding\tconcurrency\tlists\terrors\tlists/s\tbytes sent\trestmcp CPU/list\t")
	for _, r := range runs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.0f\t%d\t%.1f µs\t\n", r.encoding, r.concurrency, r.calls, r.errors,
			float64(r.calls)/r.elapsed.Seconds(), r.wireBytes, float64(r.restmcpCPU.Microseconds())/float64(r.calls))
	}
	_ = tw.Flush()
}
