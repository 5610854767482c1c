package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/restmcp/restmcp/internal/testenv"
)

// reportsUpstream answers POST /v1/reports/{name} with 202 and Location
// /v1/status/{name} (Retry-After: 1); the status resource says running
// until its second poll, then succeeded. It records each request line with
// the key it carried and the time.
type reportsUpstream struct {
	mu    sync.Mutex
	lines []string
	at    []time.Time
}

func newReportsUpstream(t *testing.T) (*reportsUpstream, string) {
	u := &reportsUpstream{}
	polls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.lines = append(u.lines, r.Method+" "+r.URL.Path+" key="+r.Header.Get("X-Api-Key"))
		u.at = append(u.at, time.Now())
		name := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.Header().Set("Location", "/v1/status/"+name)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"accepted":true}`))
			return
		}
		if polls[name]++; polls[name] < 2 {
			w.Header().Set("Retry-After", "1")
			_, _ = w.Write([]byte(`{"status":"running"}`))
			return
		}
		_, _ = w.Write([]byte(`{"status":"succeeded","report":"` + name + `","rows":3}`))
	}))
	t.Cleanup(srv.Close)
	return u, srv.URL
}

func (u *reportsUpstream) seen() ([]string, []time.Time) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.lines...), append([]time.Time(nil), u.at...)
}

// TestTypeScriptClientTasks: restmcp serve (tasks on by default) driven
// by the official TypeScript client v2 on 2026-07-28 with the tasks
// extension: the call of an operation answered 202 returns a task, which
// the client polls with tasks/get to completion and the result; one POST
// upstream, polls a Retry-After apart, each with the caller's key. Then
// the SDK v1 client (2025-06-18, no tasks) calling the same operation gets
// the job waited for and its result, as from a synchronous call.
func TestTypeScriptClientTasks(t *testing.T) {
	node := requireTSClient(t)
	up, upURL := newReportsUpstream(t)
	mcpURL, _ := startServe(t, map[string]string{"RESTMCP_SPEC": "testdata/jobs/jobs.yaml", "RESTMCP_UPSTREAM": upURL + "/v1"})

	out := runTSClient(t, node, "tasks-check.mjs", mcpURL, "k-tasks", "reports_start", `{"name":"q3"}`)
	var got struct {
		Kind      string
		Exchanges []struct {
			Method string
			HTTP   int
			Result map[string]any
			Error  map[string]any
		}
		Result map[string]any
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("tasks-check.mjs output: %v\n%s", err, out)
	}
	wantResult := map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": `{"status":"succeeded","report":"q3","rows":3}`}},
		"structuredContent": map[string]any{"status": "succeeded", "report": "q3", "rows": 3.0},
	}
	if got.Kind != "task" || len(got.Exchanges) < 2 {
		t.Fatalf("execution %q with %d exchanges, want a task:\n%s", got.Kind, len(got.Exchanges), out)
	}
	typed := map[string]any{"content": wantResult["content"], "structuredContent": wantResult["structuredContent"], "resultType": "complete"}
	if diff := cmp.Diff(typed, got.Result); diff != "" {
		t.Errorf("the task's result (-want +got):\n%s", diff)
	}
	created := got.Exchanges[0].Result
	id, _ := created["taskId"].(string)
	at0, _ := created["createdAt"].(string)
	meta := map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "restmcp", "version": version}}
	wantCreated := map[string]any{"resultType": "task", "taskId": id, "status": "working", "createdAt": at0, "lastUpdatedAt": at0,
		"ttlMs": 3.6e6, "pollIntervalMs": 1000.0, "_meta": meta}
	if diff := cmp.Diff(wantCreated, created); diff != "" || len(id) != 22 || got.Exchanges[0].Method != "tools/call" {
		t.Errorf("tools/call answered (-want +got):\n%s", diff)
	}
	var statuses []string
	for _, e := range got.Exchanges[1:] {
		st, _ := e.Result["status"].(string)
		statuses = append(statuses, e.Method+" "+st)
	}
	if diff := cmp.Diff([]string{"tasks/get working", "tasks/get completed"}, statuses); diff != "" {
		t.Errorf("tasks/get answers (-want +got):\n%s", diff)
	}
	final := got.Exchanges[len(got.Exchanges)-1].Result
	updated, _ := final["lastUpdatedAt"].(string)
	wantFinal := map[string]any{"resultType": "complete", "taskId": id, "status": "completed", "createdAt": at0, "lastUpdatedAt": updated,
		"ttlMs": 3.6e6, "pollIntervalMs": 1000.0, "_meta": meta, "result": typed}
	if diff := cmp.Diff(wantFinal, final); diff != "" {
		t.Errorf("the last tasks/get (-want +got):\n%s", diff)
	}
	lines, at := up.seen()
	if diff := cmp.Diff([]string{"POST /v1/reports/q3 key=k-tasks", "GET /v1/status/q3 key=k-tasks", "GET /v1/status/q3 key=k-tasks"}, lines); diff != "" {
		t.Errorf("upstream requests (-want +got):\n%s", diff)
	}
	if len(at) == 3 && at[2].Sub(at[1]) < time.Second {
		t.Errorf("polls %v apart, want at least the Retry-After (1 s)", at[2].Sub(at[1]))
	}

	// An older client: the job waited for within the call.
	out = runTSClient(t, node, "check.mjs", mcpURL, "k-old", "reports_start", `{"name":"q4"}`)
	var old struct {
		Result map[string]any `json:"result"`
	}
	if err := json.Unmarshal(out, &old); err != nil {
		t.Fatalf("check.mjs output: %v\n%s", err, out)
	}
	wantOld := map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": `{"status":"succeeded","report":"q4","rows":3}`}},
		"structuredContent": map[string]any{"status": "succeeded", "report": "q4", "rows": 3.0},
	}
	if diff := cmp.Diff(wantOld, old.Result); diff != "" {
		t.Errorf("SDK v1 (2025-06-18) result (-want +got):\n%s", diff)
	}
}

// TestTasksAcrossReplicas: two restmcp serve processes share Redis
// (tasks: auto with redis_url): a task started through one is followed to
// its result through the other, for its own key only (another key gets
// -32602); one POST and two polls upstream.
func TestTasksAcrossReplicas(t *testing.T) {
	redisURL := testRedisURL(t)
	up, upURL := newReportsUpstream(t)
	env := map[string]string{"RESTMCP_SPEC": "testdata/jobs/jobs.yaml", "RESTMCP_UPSTREAM": upURL + "/v1", "RESTMCP_REDIS_URL": redisURL}
	a, _ := startServe(t, env)
	b, _ := startServe(t, env)
	key := "k-replicas-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reports_start","arguments":{"name":"r1"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
	got := postModern(t, a, call, key, "tools/call", "reports_start")
	var created struct {
		Result struct {
			TaskID string `json:"taskId"`
			Status string `json:"status"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(got), &created); err != nil || created.Result.TaskID == "" || created.Result.Status != "working" {
		t.Fatalf("tools/call on replica A: %s", got)
	}
	id := created.Result.TaskID
	get := `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"` + id + `","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
	if got := postModern(t, b, get, "k-someone-else", "tasks/get", id); !strings.Contains(got, `"code":-32602`) {
		t.Errorf("another key on replica B: %s", got)
	}
	// Asked more often than its pollIntervalMs, either replica polls the
	// API only when the API's Retry-After (1 s) says: 2 polls in all.
	var final string
	testenv.Eventually(t, 10*time.Second, "the task completed", func() bool {
		final = postModern(t, b, get, key, "tasks/get", id)
		return strings.Contains(final, `"status":"completed"`)
	})
	if !strings.Contains(final, `"result":{"content":[{"type":"text","text":"{\"status\":\"succeeded\",\"report\":\"r1\",\"rows\":3}"}],"structuredContent":{"status":"succeeded","report":"r1","rows":3},"resultType":"complete"}`) {
		t.Fatalf("tasks/get on replica B: %s", final)
	}
	if lines, _ := up.seen(); len(lines) != 3 || lines[0] != "POST /v1/reports/r1 key="+key {
		t.Errorf("upstream: %q", lines)
	}
}

// postModern posts a 2026-07-28 request (its standard headers) to url.
func postModern(t *testing.T, url, body, key, method, name string) string {
	t.Helper()
	return postJSON(t, url, body, map[string]string{"X-Api-Key": key, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name})
}
