package adapter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/openapi"
)

// Long-running operations (Options.AsyncWait). An upstream that starts a
// job answers 202 Accepted with where to watch it: Operation-Location,
// Azure-AsyncOperation or Location (same host as the call only). restmcp
// then polls that status resource within the same tools/call, with the
// caller's credential as the call carried it, every Retry-After (from
// Options.AsyncPollInterval, 1 s by default, to 10 s), until the job ends or AsyncWait passes, and
// returns the end as a synchronous call would: the status resource's final
// answer, the result a 303 (or a finished status's resourceLocation)
// points to, or the failure. It never sends the request again. Polls are
// not calls: the tools/call is metered once, with its final outcome.

// asyncMaxPoll is the longest wait between two polls within a call; a
// task's polls wait up to taskMaxPoll (the client spaces them).
const (
	asyncMaxPoll = 10 * time.Second
	taskMaxPoll  = time.Minute
)

// asyncJob is where a 202 says its job can be watched.
type asyncJob struct {
	status *url.URL
	retry  time.Duration // the answer's Retry-After; 0 when not said
}

// readAsyncJob reads a 202 answer to req: nil unless it names a status
// resource on the same scheme and host.
func readAsyncJob(resp *http.Response) *asyncJob {
	if resp.StatusCode != http.StatusAccepted || resp.Request == nil {
		return nil
	}
	for _, h := range []string{"Operation-Location", "Azure-Asyncoperation", "Location"} {
		v := strings.TrimSpace(resp.Header.Get(h))
		if v == "" {
			continue
		}
		u, err := resp.Request.URL.Parse(v)
		if err != nil || u.Scheme != resp.Request.URL.Scheme || u.Host != resp.Request.URL.Host {
			return nil
		}
		return &asyncJob{status: u, retry: retryAfter(resp.Header)}
	}
	return nil
}

// retryAfter is h's Retry-After (seconds or a date, retryAfterSeconds) as a
// duration, or 0 when it is not said.
func retryAfter(h http.Header) time.Duration {
	return time.Duration(max(retryAfterSeconds(h, time.Now()), 0)) * time.Second
}

// jobState is what a status resource's JSON body says: "running",
// "succeeded", "failed", or "" when it says nothing of a state.
func jobState(body []byte) (state, resultLocation string) {
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return "", ""
	}
	loc, _ := m["resourceLocation"].(string)
	if d, ok := m["done"].(bool); ok { // Google's long-running operations
		if !d {
			return "running", ""
		}
		if m["error"] != nil {
			return "failed", ""
		}
		return "succeeded", loc
	}
	s, _ := m["status"].(string)
	if s == "" {
		s, _ = m["state"].(string)
	}
	switch strings.ToLower(strings.ReplaceAll(s, "_", "")) {
	case "":
		return "", ""
	case "succeeded", "success", "successful", "completed", "complete", "done", "finished", "ready":
		return "succeeded", loc
	case "failed", "failure", "error", "errored", "canceled", "cancelled", "aborted", "rejected", "expired":
		return "failed", ""
	}
	return "running", ""
}

// follower builds a follow-up request of a call (a poll, a result, a
// cancel) carrying the caller's credential.
type follower func(method string, u *url.URL) (*http.Request, error)

// pollWait is how long to wait before the next poll of a job that asked
// for retry (Retry-After; 0 when not said): at least the deployment's
// poll interval (Options.AsyncPollInterval), at most most.
func (s *Server) pollWait(retry, most time.Duration) time.Duration {
	return min(max(retry, s.opts.AsyncPollInterval), max(most, s.opts.AsyncPollInterval))
}

// waitDeadline is when a call that began waiting for a job at start stops
// waiting: after AsyncWait, and a second before the call's own end (ctx's
// deadline, else UpstreamTimeout after start), so that it still answers
// in time.
func (s *Server) waitDeadline(ctx context.Context, start time.Time) time.Time {
	deadline := start.Add(s.opts.AsyncWait)
	end, ok := ctx.Deadline()
	if !ok && s.opts.UpstreamTimeout > 0 {
		end, ok = start.Add(s.opts.UpstreamTimeout), true
	}
	if ok && end.Add(-time.Second).Before(deadline) {
		deadline = end.Add(-time.Second)
	}
	return deadline
}

// awaitJob polls out's job until it ends or the wait passes, and returns
// what the call answers: the job's end mapped by mapResp, or the 202 with
// a note that the job is still running (and, when the caller can have one,
// a handle to resume watching it with: stillRunning).
func (s *Server) awaitJob(ctx context.Context, t *openapi.Tool, a *admission, orig *http.Request, out sent, key string, mapResp func(*http.Response) (*mcp.CallToolResult, error)) sent {
	job, start := out.async, time.Now()
	deadline := s.waitDeadline(ctx, start)
	follow := func(method string, u *url.URL) (*http.Request, error) { return pollRequest(t, orig, u), nil }
	polls := 0
	for {
		wait := s.pollWait(job.retry, asyncMaxPoll)
		if time.Now().Add(wait).After(deadline) {
			return s.stillRunning(ctx, t, a, out, job, polls, time.Since(start), key)
		}
		select {
		case <-ctx.Done():
			return s.stillRunning(ctx, t, a, out, job, polls, time.Since(start), key)
		case <-time.After(wait):
		}
		polls++
		next, end, err := s.pollJob(ctx, job, orig.URL.Host, follow, key, mapResp)
		switch {
		case err != nil:
			return sent{res: errorResult(transportFailure(ctx, err, s.opts.UpstreamTimeout, key) + "\nthe job was started (HTTP 202) and may still be running; restmcp did not send the request again"), failed: true, status: out.status}
		case end != nil:
			return *end
		}
		job = next
	}
}

// pollJob polls job once, with a request follow builds, and returns
// either where and when to poll next (the job runs), or the call's answer
// (the job ended: its final status, the result a 303, a 201 or a finished
// status's resourceLocation on host points to, fetched, or the failure),
// or the transport error of the poll (the job may still run).
func (s *Server) pollJob(ctx context.Context, job *asyncJob, host string, follow follower, key string, mapResp func(*http.Response) (*mcp.CallToolResult, error)) (*asyncJob, *sent, error) {
	req, err := follow(http.MethodGet, job.status)
	if err != nil {
		return nil, nil, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case resp.StatusCode == http.StatusAccepted:
		next := readAsyncJob(resp)
		drainClose(resp)
		if next == nil {
			next = &asyncJob{status: job.status}
		}
		next.retry = retryAfter(resp.Header)
		return next, nil, nil
	case resp.StatusCode == http.StatusSeeOther, resp.StatusCode == http.StatusCreated && resp.Header.Get("Location") != "":
		loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
		drainClose(resp)
		if err != nil || loc.Host != host {
			return nil, &sent{res: errorResult(fmt.Sprintf("the job ended (HTTP %d) with its result on another host, which restmcp does not fetch", resp.StatusCode)), status: resp.StatusCode}, nil
		}
		end := s.fetchResult(ctx, loc, follow, key, mapResp)
		return nil, &end, nil
	case resp.StatusCode == http.StatusOK:
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(s.opts.MaxResponseBytes)+1))
		resp.Body.Close()
		if err != nil {
			return nil, nil, err
		}
		state, loc := jobState(body)
		switch state {
		case "running":
			return &asyncJob{status: job.status, retry: retryAfter(resp.Header)}, nil, nil
		case "succeeded":
			if u, err := resp.Request.URL.Parse(loc); loc != "" && err == nil && u.Host == host {
				end := s.fetchResult(ctx, u, follow, key, mapResp)
				return nil, &end, nil
			}
		case "failed":
			return nil, &sent{res: errorResult("the job failed (its status at " + redact(job.status.String(), key) + "):\n" + redact(string(body), key)), status: resp.StatusCode}, nil
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		end := s.mapped(resp, key, mapResp)
		return nil, &end, nil
	default:
		end := s.mapped(resp, key, mapResp)
		return nil, &end, nil
	}
}

// fetchResult GETs a finished job's result and maps it.
func (s *Server) fetchResult(ctx context.Context, u *url.URL, follow follower, key string, mapResp func(*http.Response) (*mcp.CallToolResult, error)) sent {
	req, err := follow(http.MethodGet, u)
	var resp *http.Response
	if err == nil {
		resp, err = s.client.Do(req)
	}
	if err != nil {
		return sent{res: errorResult(transportFailure(ctx, err, s.opts.UpstreamTimeout, key) + "\nthe job has ended; its result is at " + redact(u.String(), key)), failed: true}
	}
	return s.mapped(resp, key, mapResp)
}

// mapped maps resp as send does, and closes it.
func (s *Server) mapped(resp *http.Response, key string, mapResp func(*http.Response) (*mcp.CallToolResult, error)) sent {
	defer resp.Body.Close()
	res, err := mapResp(resp)
	if err != nil {
		return sent{res: errorResult(transportFailure(resp.Request.Context(), err, s.opts.UpstreamTimeout, key)), status: resp.StatusCode, failed: true}
	}
	if res.IsError || len(res.Content) > 1 {
		redactResult(res, key)
	}
	return sent{res: res, status: resp.StatusCode}
}

// stillRunning is the answer when the wait passed: the 202's result, and
// where the job is, since restmcp does not send the request again; with a
// task store, a job handle too, which the companion tool (jobTool)
// resumes watching with.
func (s *Server) stillRunning(ctx context.Context, t *openapi.Tool, a *admission, out sent, job *asyncJob, polls int, waited time.Duration, key string) sent {
	text := fmt.Sprintf("the API accepted the request and is still working on it: restmcp watched its status for %d s (%d polls) and did not send the request again; the job's status is at %s",
		int(waited.Round(time.Second).Seconds()), polls, redact(job.status.String(), key))
	if name := s.tableFor(ctx).jobTool; name != "" {
		if tk, err := s.newTask(ctx, t, a, job, polls); err != nil {
			text += "; " + err.Error()
		} else if tk != nil {
			text += fmt.Sprintf("\nto wait for its result, call the tool %s with {\"job\": %q}", name, tk.ID)
		}
	}
	out.res.Content = append(out.res.Content, &mcp.TextContent{Text: text})
	out.async = nil
	return out
}

// pollRequest is a GET of u carrying what the original call carried to
// authenticate: its headers (not its body's), and its credential query
// parameters when u lacks them; on the original's context, so it goes
// through the caller's own connection pool (callerpools.go) and ends with
// the call.
func pollRequest(t *openapi.Tool, orig *http.Request, u *url.URL) *http.Request {
	ctx := orig.Context()
	target := *u
	q := target.Query()
	changed := false
	for _, name := range t.CredentialQueryNames() {
		if v := orig.URL.Query().Get(name); v != "" && q.Get(name) == "" {
			q.Set(name, v)
			changed = true
		}
	}
	if changed {
		target.RawQuery = q.Encode()
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, target.String(), nil)
	for k, vs := range orig.Header {
		switch k {
		case "Content-Type", "Content-Length", "Content-Encoding", "Idempotency-Key", "X-Idempotency-Key":
			continue
		}
		req.Header[k] = vs
	}
	return req
}

// drainClose reads a little of a body and closes it, so the connection
// can be reused.
func drainClose(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}
