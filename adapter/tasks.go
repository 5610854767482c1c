package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/adapter/task"
	"github.com/restmcp/restmcp/internal/clip"
	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// Jobs that outlive their call (Options.Tasks). A call whose upstream
// answers 202 Accepted with a status resource (async.go) becomes a task
// that the caller, and only the caller, follows:
//
//   - A client that declares the tasks extension on its 2026-07-28
//     tools/call (params._meta["io.modelcontextprotocol/clientCapabilities"]
//     .extensions["io.modelcontextprotocol/tasks"], SEP-2663:
//     https://modelcontextprotocol.io/seps/2663-tasks-extension) gets a
//     CreateTaskResult at once (resultType "task"), and follows the job
//     with tasks/get; tasks/cancel sends the operation's cancel request
//     when the document has one; tasks/update is acknowledged (restmcp
//     never asks for input).
//   - Any other client gets the call waited for (Options.AsyncWait); a job
//     still running then comes with a job handle, and the companion tool
//     (jobToolName, listed when an operation declares a 202) waits for it
//     again.
//
// A task is polled when its caller asks (tasks/get, the companion tool),
// never in the background, and never more often than the API's
// Retry-After (at least Options.AsyncPollInterval): with the caller's own
// credential, so no credential is stored, and any replica sharing the
// Redis task store can answer. Polls, cancels and the companion tool are
// not metered; the job's end is recorded once as a usage event
// (metering.OutcomeJobOK, OutcomeJobError, OutcomeJobCancelled), with cost
// 0: the call that started it was metered.

// extTasks is the tasks extension's identifier.
const extTasks = "io.modelcontextprotocol/tasks"

// jobToolName is the companion tool's name, with "_2", "_3" … when an
// operation has it.
const jobToolName = "job_status"

// maxTaskIDLength bounds the task ids looked up: restmcp's are 22
// characters (task.NewID).
const maxTaskIDLength = 64

// taskMethods are the extension's methods, served when tasks are on.
var taskMethods = map[string]bool{"tasks/get": true, "tasks/update": true, "tasks/cancel": true}

// tasksOn reports whether jobs can outlive their call.
func (s *Server) tasksOn() bool { return s.opts.Tasks != nil && s.opts.AsyncWait > 0 }

// jobToolFor is the companion tool's name in a table of tools ("" when
// none of them declares a 202, or tasks are off).
func (s *Server) jobToolFor(tools map[string]*openapi.Tool) string {
	if !s.tasksOn() || s.opts.Compact {
		return ""
	}
	starts := false
	for _, t := range tools {
		starts = starts || t.StartsJobs
	}
	if !starts {
		return ""
	}
	name := jobToolName
	for i := 2; tools[name] != nil; i++ {
		name = jobToolName + "_" + strconv.Itoa(i)
	}
	return name
}

// jobTool is the companion tool as tools/list shows it.
func jobTool(name string) *mcp.Tool {
	return &mcp.Tool{
		Name:        name,
		Title:       "Wait for a job",
		Description: "Waits for a job that an earlier tool call started and that was still running when that call answered (its answer gave the job's handle), and returns the job's result as the starting call would have. Call it again while it says the job is still running. It does not start anything and is not counted as a call.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"job":{"type":"string","description":"The job handle the starting call's answer gave."}},"required":["job"],"additionalProperties":false}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}
}

// msgStillWorking is a task's message while its job runs; job_status
// does not repeat it.
const msgStillWorking = "the API is still working on it"

// storedStatusURL is a job's status URL as a task keeps it: without the
// query parameters t's security places the caller's credential in, which
// each poll places again (a task store never holds a key).
func storedStatusURL(t *openapi.Tool, u *url.URL) string {
	names := t.CredentialQueryNames()
	if len(names) == 0 || u.RawQuery == "" {
		return u.String()
	}
	status := *u
	q := status.Query()
	for _, n := range names {
		q.Del(n)
	}
	status.RawQuery = q.Encode()
	return status.String()
}

// newTask records a task for job, which a's caller started by calling t
// (polls already made); nil, nil when the caller cannot have one (tasks
// off, no table companion and no task mode, an anonymous caller). Its
// error says, for the model, why no handle was kept.
func (s *Server) newTask(ctx context.Context, t *openapi.Tool, a *admission, job *asyncJob, polls int) (*task.Task, error) {
	if !s.tasksOn() || a == nil || a.anonymous || a.call.KeyID == "" {
		return nil, nil
	}
	now := time.Now()
	every := s.pollWait(job.retry, taskMaxPoll)
	tk := &task.Task{
		ID: task.NewID(), Owner: a.call.KeyID, API: t.API, Tool: t.Name, Status: task.Working,
		StatusURL: storedStatusURL(t, job.status), CreatedAt: now, UpdatedAt: now, NextPoll: now.Add(every), PollEvery: every,
		Polls: polls, ExpiresAt: now.Add(s.opts.TaskTTL),
	}
	if a.call.Plan != nil {
		tk.Plan = a.call.Plan.Name
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.MeterTimeout)
	defer cancel()
	if err := s.opts.Tasks.Create(sctx, tk, s.opts.MaxTasksPerKey, s.opts.MaxTasks); err != nil {
		var le *task.LimitError
		if errors.As(err, &le) {
			return nil, fmt.Errorf("restmcp keeps no handle for it: %s", le.Error())
		}
		s.logger.Error("task store: creating a task failed", "tool", t.Name, "key_id", a.call.KeyID, "error", err.Error())
		return nil, errors.New("restmcp could not keep a handle for it (its task store did not answer)")
	}
	return tk, nil
}

// taskFollower builds a task's follow-up requests with the caller's
// credential as t's security requirement places it, and the headers the
// deployment forwards.
func (s *Server) taskFollower(ctx context.Context, t *openapi.Tool, ex *exchange) follower {
	scheme := ""
	up := ex.upstreamCred()
	if up.source == "bearer" || up.source == sourceIdP {
		scheme = "Bearer"
	}
	return func(method string, u *url.URL) (*http.Request, error) {
		req, err := t.NewFollowRequest(withUpstreamCaller(ctx, up.key), method, u, up.key, scheme)
		if err != nil {
			return nil, err
		}
		for name, vs := range ex.forward {
			if _, own := req.Header[name]; !own {
				req.Header[name] = vs
			}
		}
		req.Header.Set("Accept-Encoding", acceptEncoding)
		req.Header.Set("User-Agent", s.userAgent)
		return req, nil
	}
}

// advanceTask polls tk once if its next poll is due, and returns it as it
// then is (saved when it changed). A task whose tool is no longer served
// ends with an error result.
func (s *Server) advanceTask(ctx context.Context, ex *exchange, tk *task.Task) *task.Task {
	now := time.Now()
	if tk.Ended() || now.Before(tk.NextPoll) {
		return tk
	}
	t := s.tableFor(ctx).tools[tk.Tool]
	status, err := url.Parse(tk.StatusURL)
	if t == nil || err != nil {
		return s.endTask(ctx, tk, task.Completed, errorResult("the job's tool "+tk.Tool+" is no longer served; restmcp stopped watching the job at "+tk.StatusURL), 0)
	}
	pctx, stop := context.WithTimeout(ctx, s.opts.UpstreamTimeout)
	defer stop()
	mapResp := func(resp *http.Response) (*mcp.CallToolResult, error) { return s.mapResponse(resp, t, nil, false) }
	host := status.Host
	next, end, err := s.pollJob(pctx, &asyncJob{status: status}, host, s.taskFollower(pctx, t, ex), ex.upstreamCred().key, mapResp)
	next2 := *tk
	next2.Polls++
	next2.UpdatedAt = time.Now()
	switch {
	case err != nil:
		next2.Message = "the last poll of the job's status failed, restmcp polls again: " + transportFailure(pctx, err, s.opts.UpstreamTimeout, ex.upstreamCred().key)
		next2.NextPoll = next2.UpdatedAt.Add(tk.PollEvery)
	case end != nil:
		return s.endTask(ctx, tk, task.Completed, conformToOutputSchema(t, end.res, s.opts.ErrorStructuredContent), end.status)
	default:
		next2.Message = msgStillWorking
		if u := storedStatusURL(t, next.status); u != tk.StatusURL {
			next2.StatusURL = u
		}
		next2.PollEvery = s.pollWait(next.retry, taskMaxPoll)
		next2.NextPoll = next2.UpdatedAt.Add(next2.PollEvery)
	}
	s.saveTask(ctx, &next2)
	return &next2
}

// endTask ends tk with res, and records the end once (the first to end
// it records it; a task ended meanwhile is returned as stored).
func (s *Server) endTask(ctx context.Context, tk *task.Task, status string, res *mcp.CallToolResult, httpStatus int) *task.Task {
	ended := *tk
	ended.Status, ended.UpdatedAt, ended.Message = status, time.Now(), ""
	if res != nil {
		if res.Content == nil {
			res.Content = []mcp.Content{}
		}
		b, err := appendToolResult(nil, res)
		if err != nil {
			b, _ = appendToolResult(nil, errorResult("encoding the job's result: "+err.Error()))
		}
		ended.Result = b
	}
	if !s.saveTask(ctx, &ended) {
		if cur, err := s.getTask(ctx, tk.Owner, tk.ID); err == nil && cur != nil {
			return cur
		}
		return &ended
	}
	outcome := metering.OutcomeJobOK
	switch {
	case status == task.Cancelled:
		outcome = metering.OutcomeJobCancelled
	case res == nil || res.IsError:
		outcome = metering.OutcomeJobError
	}
	s.callDone(ctx, tk.Tool, outcome)
	if s.opts.Meter != nil {
		s.queueUsage(usageJob{hasEvent: true, event: metering.Event{
			KeyID: tk.Owner, Plan: tk.Plan, API: tk.API, Tool: tk.Tool, Outcome: outcome,
			UpstreamStatus: httpStatus, Latency: ended.UpdatedAt.Sub(tk.CreatedAt), Time: tk.CreatedAt,
		}})
	}
	return &ended
}

// saveTask stores tk over its working self; false when it was not saved
// (ended or expired meanwhile, or the store failed: logged).
func (s *Server) saveTask(ctx context.Context, tk *task.Task) bool {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.MeterTimeout)
	defer cancel()
	ok, err := s.opts.Tasks.Put(sctx, tk)
	if err != nil {
		s.logger.Error("task store: saving a task failed", "task", tk.ID, "error", err.Error())
	}
	return ok
}

// getTask reads owner's task id under MeterTimeout.
func (s *Server) getTask(ctx context.Context, owner, id string) (*task.Task, error) {
	if owner == "" || id == "" || len(id) > maxTaskIDLength {
		return nil, nil // no task has such an id: the store is not asked
	}
	sctx, cancel := context.WithTimeout(ctx, s.opts.MeterTimeout)
	defer cancel()
	return s.opts.Tasks.Get(sctx, owner, id)
}

// taskOwner is who follows tasks on this request: the caller's key id; ""
// for no key, as always in public mode, where resolveCaller makes the
// caller no one (anonymous callers have no tasks).
func (s *Server) taskOwner(ex *exchange) string { return ex.cred.keyID }

// authenticateFollower is the gate's check of a caller who follows a job
// (tasks/*, the companion tool): a usable key, which the key registry
// (Options.Keys) still knows; nothing is metered.
func (s *Server) authenticateFollower(ctx context.Context, ex *exchange, clientIP string) *refusal {
	if r := s.admitCall(ctx, ex, clientIP, nil, &admission{start: time.Now()}); r != nil {
		return r
	}
	if ex.cred.idp != nil {
		_, r := s.idpAdmit(ctx, ex)
		return r
	}
	if s.opts.Keys == nil || ex.cred.key == "" { // no key: none sent, or public mode
		return nil
	}
	_, r := s.resolveKey(ctx, ex.cred, "")
	return r
}

// serveTaskMethod answers tasks/get, tasks/update and tasks/cancel
// (SEP-2663 "Task Polling", "Task Update Requests", "Task Cancellation")
// for the authenticated caller: the gate's refusals for one without a
// usable key, -32602 for a task id that is not one of the caller's live
// tasks (another caller's is not found either), -32603 when the task
// store does not answer.
func (s *Server) serveTaskMethod(c *gin.Context, ex *exchange) {
	defer c.Abort() // answered here: nothing after the gate runs
	ctx := c.Request.Context()
	m := ex.msg
	if r := s.authenticateFollower(ctx, ex, c.ClientIP()); r != nil {
		s.renderRefusal(c, m.id, r)
		return
	}
	jsonMode := ex.handler != s.sseHandler
	fail := func(code int, msg string) {
		writeFast(c, jsonMode, m.id, fastResult{err: &jsonrpc.Error{Code: int64(code), Message: msg}})
	}
	if m.taskID == "" {
		fail(codeInvalidParams, "invalid params: "+m.method+` needs params.taskId, the "taskId" of the task`)
		return
	}
	tk, err := s.getTask(ctx, s.taskOwner(ex), m.taskID)
	switch {
	case err != nil:
		s.logger.Error("task store: reading a task failed", "task", clip.String(m.taskID, 64), "error", err.Error())
		fail(codeInternalError, "the task store did not answer; retry")
		return
	case tk == nil:
		fail(codeInvalidParams, "unknown task "+strconv.Quote(clip.String(m.taskID, 64))+": no task of this caller has that id (it may have expired)")
		return
	}
	var out []byte
	switch m.method {
	case "tasks/get":
		out = s.taskWire(s.advanceTask(ctx, ex, tk), "complete")
	case "tasks/cancel":
		s.cancelTask(ctx, ex, tk)
		out = s.ackWire()
	default: // tasks/update: restmcp's tasks never ask for input
		out = s.ackWire()
	}
	writeFast(c, jsonMode, m.id, fastResult{result: out})
}

// cancelTask asks the API to cancel tk's job when the document has an
// operation for it (cancelRequest), and ends the task cancelled when the
// API accepted (2xx). Cancellation is cooperative (SEP-2663): otherwise
// the task goes on, its status message saying why.
func (s *Server) cancelTask(ctx context.Context, ex *exchange, tk *task.Task) {
	if tk.Ended() {
		return
	}
	tbl := s.tableFor(ctx)
	t := tbl.tools[tk.Tool]
	status, err := url.Parse(tk.StatusURL)
	if t == nil || err != nil {
		return
	}
	method, target := cancelRequest(tbl, t, status)
	next := *tk
	next.UpdatedAt = time.Now()
	if method == "" {
		next.Message = "the API offers no operation to cancel this job; it goes on"
		s.saveTask(ctx, &next)
		return
	}
	cctx, stop := context.WithTimeout(ctx, s.opts.UpstreamTimeout)
	defer stop()
	req, err := s.taskFollower(cctx, t, ex)(method, target)
	var resp *http.Response
	if err == nil {
		resp, err = s.client.Do(req)
	}
	switch {
	case err != nil:
		next.Message = "cancelling failed, the job may go on: " + transportFailure(cctx, err, s.opts.UpstreamTimeout, ex.upstreamCred().key)
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		drainClose(resp)
		s.endTask(ctx, tk, task.Cancelled, nil, resp.StatusCode)
		return
	default:
		drainClose(resp)
		next.Message = fmt.Sprintf("the API refused to cancel the job (HTTP %d %s to %s); it goes on", resp.StatusCode, method, redact(target.String(), ex.upstreamCred().key))
	}
	s.saveTask(ctx, &next)
}

// cancelRequest is how the document cancels the job watched at status:
// a DELETE of the status resource, or a POST to <status>/cancel or
// <status>:cancel, when an operation of the API that started it serves
// that request; "" when none does.
func cancelRequest(tbl *toolTable, started *openapi.Tool, status *url.URL) (string, *url.URL) {
	bare := *status
	bare.RawQuery = ""
	candidates := []struct {
		method string
		u      url.URL
	}{{http.MethodDelete, bare}}
	for _, suffix := range []string{"/cancel", ":cancel"} {
		u := bare
		u.Path, u.RawPath = bare.Path+suffix, ""
		candidates = append(candidates, struct {
			method string
			u      url.URL
		}{http.MethodPost, u})
	}
	names := make([]string, 0, len(tbl.tools))
	for name := range tbl.tools {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, c := range candidates {
		for _, name := range names {
			t := tbl.tools[name]
			if t.API == started.API && t.Method == c.method && t.Serves(&c.u) {
				u := c.u
				u.RawQuery = status.RawQuery
				return c.method, &u
			}
		}
	}
	return "", nil
}

// taskWire encodes tk as the extension's Task (a DetailedTask: the result
// of a completed task inlined, a 2026-07-28 CallToolResult with its
// resultType), with resultType ("task" for a
// CreateTaskResult, "complete" for tasks/get) and the server's identity in
// _meta as every 2026-07-28 result has it.
func (s *Server) taskWire(tk *task.Task, resultType string) []byte {
	type wireTask struct {
		ResultType     string          `json:"resultType"`
		TaskID         string          `json:"taskId"`
		Status         string          `json:"status"`
		StatusMessage  string          `json:"statusMessage,omitempty"`
		CreatedAt      string          `json:"createdAt"`
		LastUpdatedAt  string          `json:"lastUpdatedAt"`
		TTLMs          int64           `json:"ttlMs"`
		PollIntervalMs int64           `json:"pollIntervalMs"`
		Result         json.RawMessage `json:"result,omitempty"`
		Meta           mcp.Meta        `json:"_meta"`
	}
	w := wireTask{
		ResultType: resultType, TaskID: tk.ID, Status: tk.Status, StatusMessage: tk.Message,
		CreatedAt: tk.CreatedAt.UTC().Format(time.RFC3339), LastUpdatedAt: tk.UpdatedAt.UTC().Format(time.RFC3339),
		TTLMs: tk.ExpiresAt.Sub(tk.CreatedAt).Milliseconds(), PollIntervalMs: tk.PollEvery.Milliseconds(),
		Meta: mcp.Meta{metaKeyServerInfo: s.impl},
	}
	if resultType != "task" && tk.Status == task.Completed && len(tk.Result) > 0 {
		// The tools/call result as the 2026-07-28 wire has it, typed.
		w.Result = completeResult(slices.Clip(tk.Result))
	}
	b, _ := sdkJSON(w)
	return b
}

// ackWire is the empty acknowledgement of tasks/update and tasks/cancel.
func (s *Server) ackWire() []byte {
	b, _ := sdkJSON(struct {
		ResultType string   `json:"resultType"`
		Meta       mcp.Meta `json:"_meta"`
	}{"complete", mcp.Meta{metaKeyServerInfo: s.impl}})
	return b
}

// jobToolHandler is the companion tool: it waits for the caller's job
// (advanceTask at each due poll) until it ends or Options.AsyncWait
// passes, and answers the job's result as the starting call would have,
// or that it is still running.
func (s *Server) jobToolHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ex := exchangeFrom(ctx)
		var args struct {
			Job *string `json:"job"`
		}
		if req.Params == nil || json.Unmarshal(req.Params.Arguments, &args) != nil || args.Job == nil {
			return errorResult(`invalid arguments: job: required, the job handle (a string) the starting call's answer gave`), nil
		}
		tk, err := s.getTask(ctx, s.taskOwner(ex), *args.Job)
		switch {
		case err != nil:
			return errorResult("restmcp's task store did not answer; retry"), nil
		case tk == nil:
			return errorResult("unknown job " + strconv.Quote(clip.String(*args.Job, 64)) + ": no job of this caller has that handle (it may have ended more than " + formatSeconds(s.opts.TaskTTL) + " ago)"), nil
		}
		start := time.Now()
		deadline := s.waitDeadline(ctx, start)
		for !tk.Ended() {
			if wait := time.Until(tk.NextPoll); wait > 0 {
				if time.Now().Add(wait).After(deadline) {
					break
				}
				select {
				case <-ctx.Done():
					return errorResult("the client went away"), nil
				case <-time.After(wait):
				}
			}
			tk = s.advanceTask(ctx, ex, tk)
		}
		switch tk.Status {
		case task.Completed:
			var res mcp.CallToolResult
			if err := json.Unmarshal(tk.Result, &res); err != nil {
				return errorResult("the job's stored result is unreadable: " + err.Error()), nil
			}
			if sc, _ := memberValue(tk.Result, "structuredContent", ""); sc != nil {
				res.StructuredContent = json.RawMessage(sc) // as stored: member order kept
			}
			return &res, nil
		case task.Cancelled:
			return errorResult("the job was cancelled"), nil
		}
		msg := fmt.Sprintf("the job is still running: restmcp watched its status for %d s more (%d polls in all) and did not send the request again; call %s again with {\"job\": %q} to go on waiting",
			int(time.Since(start).Round(time.Second).Seconds()), tk.Polls, name, tk.ID)
		if tk.Message != "" && tk.Message != msgStillWorking {
			msg += "\n" + tk.Message
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: msg}}}, nil
	}
}
