package adapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/restmcp/restmcp/adapter/task"
	"github.com/restmcp/restmcp/internal/testenv"
	"github.com/restmcp/restmcp/metering"
)

// jobsUpstream is an API whose POST /v1/jobs/{kind} starts a job (202,
// Location: /v1/status/{kind}, Retry-After: 1) whose status resource
// answers running until its poll number ends[kind], then succeeded; "never"
// never ends. DELETE /v1/status/{kind} cancels (204). It records every
// request line with the key it carried.
type jobsUpstream struct {
	mu    sync.Mutex
	lines []string
	polls map[string][]time.Time
	ends  map[string]int
}

func newJobsUpstream(t *testing.T, ends map[string]int) (*jobsUpstream, string) {
	j := &jobsUpstream{polls: map[string][]time.Time{}, ends: ends}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		j.mu.Lock()
		defer j.mu.Unlock()
		j.lines = append(j.lines, r.Method+" "+r.URL.RequestURI()+" key="+r.Header.Get("X-Api-Key"))
		w.Header().Set("Content-Type", "application/json")
		kind := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
		switch {
		case r.Method == http.MethodPost:
			w.Header().Set("Location", "/v1/status/"+kind)
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"accepted":"` + kind + `"}`))
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		default:
			j.polls[kind] = append(j.polls[kind], time.Now())
			if n, ok := j.ends[kind]; ok && len(j.polls[kind]) >= n {
				_, _ = w.Write([]byte(`{"status":"succeeded","report":"` + kind + `"}`))
				return
			}
			w.Header().Set("Retry-After", "1")
			_, _ = w.Write([]byte(`{"status":"running"}`))
		}
	})
	return j, up.URL
}

func (j *jobsUpstream) requests() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.lines...)
}

// modernTaskCall is a 2026-07-28 tools/call of start_job that declares the
// tasks extension, with its headers for key.
func modernTaskCall(id int, kind, key string) (string, map[string]string) {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"start_job","arguments":{"kind":%q},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`, id, kind),
		map[string]string{"X-API-Key": key, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "start_job"}
}

// taskRequest is a 2026-07-28 tasks/* request for taskID by key.
func taskRequest(id int, method, taskID, key string) (string, map[string]string) {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"taskId":%q,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`, id, method, taskID),
		map[string]string{"X-API-Key": key, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": taskID}
}

// taskOf reads the task id and timestamps of a CreateTaskResult or a
// tasks/get answer.
func taskOf(t *testing.T, body string) (id, created, updated string) {
	t.Helper()
	var m struct {
		Result struct {
			TaskID        string `json:"taskId"`
			CreatedAt     string `json:"createdAt"`
			LastUpdatedAt string `json:"lastUpdatedAt"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Result.TaskID == "" {
		t.Fatalf("not a task answer: %s", body)
	}
	return m.Result.TaskID, m.Result.CreatedAt, m.Result.LastUpdatedAt
}

const serverInfoMeta = `"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"restmcp","version":"dev"}}`

// TestJobTasks: a 2026-07-28 client that declares the tasks extension
// gets a task for a call whose upstream answers 202 (SEP-2663), follows it
// with tasks/get to the result, polls reaching the API no faster than its
// Retry-After and with the caller's key; another key finds no such task
// (get and cancel); tasks/cancel sends the document's cancel operation;
// the call is metered once and the job's end recorded once.
func TestJobTasks(t *testing.T) {
	up, upURL := newJobsUpstream(t, map[string]int{"report": 2})
	meter := &fakeMeter{admit: func(metering.Call) (metering.Decision, error) {
		return metering.Decision{Allowed: true, Cost: 1}, nil
	}}
	srv, s := serveServer(t, Options{Tools: loadTools(t, "testdata/jobs.yaml", upURL), Meter: meter,
		AsyncWait: 5 * time.Second, Tasks: task.NewMemoryStore(nil)})

	body, h := modernTaskCall(1, "report", "k-1")
	got := post(t, srv.URL+"/mcp", body, h)
	id, created, _ := taskOf(t, got.body)
	want := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"` + id + `","status":"working","createdAt":"` + created + `","lastUpdatedAt":"` + created + `","ttlMs":3600000,"pollIntervalMs":1000,` + serverInfoMeta + `}}`
	if got.status != 200 || got.body != want {
		t.Fatalf("tools/call: %d\n got %s\nwant %s", got.status, got.body, want)
	}

	// Before Retry-After has passed, tasks/get answers without a poll.
	body, h = taskRequest(2, "tasks/get", id, "k-1")
	got = post(t, srv.URL+"/mcp", body, h)
	if want := `{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete","taskId":"` + id + `","status":"working","createdAt":"` + created + `","lastUpdatedAt":"` + created + `","ttlMs":3600000,"pollIntervalMs":1000,` + serverInfoMeta + `}}`; got.body != want {
		t.Fatalf("first tasks/get:\n got %s\nwant %s", got.body, want)
	}
	// Another key: no such task, for get and cancel alike.
	for i, method := range []string{"tasks/get", "tasks/cancel"} {
		body, h = taskRequest(10+i, method, id, "k-2")
		got = post(t, srv.URL+"/mcp", body, h)
		if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"unknown task \"%s\": no task of this caller has that id (it may have expired)"}}`, 10+i, id); got.body != want {
			t.Errorf("%s by another key:\n got %s\nwant %s", method, got.body, want)
		}
	}
	// No key: the gate's 401, as for a tools/call.
	body, h = taskRequest(12, "tasks/get", id, "")
	if got := post(t, srv.URL+"/mcp", body, h); got.status != 401 || got.body != `{"jsonrpc":"2.0","id":12,"error":{"code":-31401,"message":"authentication required: send your API key in the x-api-key header, as ?api_key=<key> on the MCP URL, or as Authorization: Bearer <key>"}}` {
		t.Errorf("tasks/get without a key: %d %s", got.status, got.body)
	}
	// Asked far more often than pollIntervalMs, restmcp still polls the
	// API only when Retry-After says (the polls are checked below).
	var final string
	asks := 20
	testenv.Eventually(t, 10*time.Second, "the task completed", func() bool {
		body, h = taskRequest(asks, "tasks/get", id, "k-1")
		asks++
		final = post(t, srv.URL+"/mcp", body, h).body
		return strings.Contains(final, `"status":"completed"`)
	})
	_, _, updated := taskOf(t, final)
	if want := `"result":{"resultType":"complete","taskId":"` + id + `","status":"completed","createdAt":"` + created + `","lastUpdatedAt":"` + updated + `","ttlMs":3600000,"pollIntervalMs":1000,"result":{"content":[{"type":"text","text":"{\"status\":\"succeeded\",\"report\":\"report\"}"}],"structuredContent":{"status":"succeeded","report":"report"},"resultType":"complete"},` + serverInfoMeta + `}}`; !strings.HasSuffix(final, want) {
		t.Fatalf("final tasks/get:\n got %s\nwant …%s", final, want)
	}
	wantLines := []string{"POST /v1/jobs/report key=k-1", "GET /v1/status/report key=k-1", "GET /v1/status/report key=k-1"}
	if got := up.requests(); strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("upstream saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantLines, "\n"))
	}
	if p := up.polls["report"]; len(p) != 2 || p[1].Sub(p[0]) < time.Second {
		t.Errorf("polls %v: want two, Retry-After (1 s) apart", p)
	}

	// Cancel: the document's DELETE of the status resource, with the key.
	body, h = modernTaskCall(3, "never", "k-1")
	cid, _, _ := taskOf(t, post(t, srv.URL+"/mcp", body, h).body)
	body, h = taskRequest(4, "tasks/cancel", cid, "k-1")
	if got := post(t, srv.URL+"/mcp", body, h); got.body != `{"jsonrpc":"2.0","id":4,"result":{"resultType":"complete",`+serverInfoMeta+`}}` {
		t.Errorf("tasks/cancel: %s", got.body)
	}
	body, h = taskRequest(5, "tasks/get", cid, "k-1")
	if got := post(t, srv.URL+"/mcp", body, h); !strings.Contains(got.body, `"status":"cancelled"`) {
		t.Errorf("tasks/get after cancel: %s", got.body)
	}
	if got := up.requests()[3:]; strings.Join(got, "\n") != "POST /v1/jobs/never key=k-1\nDELETE /v1/status/never key=k-1" {
		t.Errorf("cancel upstream: %q", got)
	}

	if n := meter.calls.Load(); n != 2 {
		t.Errorf("%d calls metered, want 2: polls and cancels are not calls", n)
	}
	events := meter.settledEvents(t, s, 4)
	var outcomes []string
	for _, e := range events {
		outcomes = append(outcomes, fmt.Sprintf("%s %s %s cost=%d status=%d", e.KeyID, e.Tool, e.Outcome, e.Cost, e.UpstreamStatus))
	}
	k1 := metering.KeyID("k-1")
	wantEvents := []string{
		k1 + " start_job ok cost=1 status=202",
		k1 + " start_job " + string(metering.OutcomeJobOK) + " cost=0 status=200",
		k1 + " start_job ok cost=1 status=202",
		k1 + " start_job " + string(metering.OutcomeJobCancelled) + " cost=0 status=204",
	}
	if strings.Join(outcomes, "\n") != strings.Join(wantEvents, "\n") {
		t.Errorf("usage events:\n%s\nwant\n%s", strings.Join(outcomes, "\n"), strings.Join(wantEvents, "\n"))
	}
}

// TestJobHandleForOlderClients: a client without the tasks extension gets
// the call waited for (AsyncWait); a job still running then comes with a
// handle, and the companion tool job_status (listed beside the operations)
// waits for it again and answers its result as the call would have. Only
// the caller's own handle works; the companion is not metered.
func TestJobHandleForOlderClients(t *testing.T) {
	up, upURL := newJobsUpstream(t, map[string]int{"late": 4})
	meter := allowAll(0)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/jobs.yaml", upURL), Meter: meter,
		AsyncWait: 2500 * time.Millisecond, Tasks: task.NewMemoryStore(nil)})
	key := map[string]string{"X-API-Key": "k-1"}

	list := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, key)
	wantTool := `{"annotations":{"idempotentHint":true,"readOnlyHint":true},"description":"Waits for a job that an earlier tool call started and that was still running when that call answered (its answer gave the job's handle), and returns the job's result as the starting call would have. Call it again while it says the job is still running. It does not start anything and is not counted as a call.","inputSchema":{"type":"object","properties":{"job":{"type":"string","description":"The job handle the starting call's answer gave."}},"required":["job"],"additionalProperties":false},"name":"job_status","title":"Wait for a job"}`
	if !strings.Contains(list.body, wantTool) {
		t.Fatalf("tools/list has no companion tool %s:\n%s", wantTool, list.body)
	}

	got := post(t, srv.URL+"/mcp", toolsCallBody(2, "start_job", `{"kind":"late"}`), key)
	var m struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(got.body), &m)
	last := m.Result.Content[len(m.Result.Content)-1].Text
	handle := last[strings.LastIndex(last, `{"job": "`)+9 : len(last)-2]
	wantLast := `the API accepted the request and is still working on it: restmcp watched its status for 2 s (2 polls) and did not send the request again; the job's status is at ` + upURL + `/v1/status/late` +
		"\nto wait for its result, call the tool job_status with {\"job\": \"" + handle + "\"}"
	if last != wantLast || len(handle) != 22 {
		t.Fatalf("waited call's last item:\n got %q\nwant %q", last, wantLast)
	}
	// Another key's call of the handle finds nothing.
	other := post(t, srv.URL+"/mcp", toolsCallBody(3, "job_status", `{"job":"`+handle+`"}`), map[string]string{"X-API-Key": "k-2"})
	if want := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"unknown job \"` + handle + `\": no job of this caller has that handle (it may have ended more than 3600s ago)"}],"isError":true}}`; other.body != want {
		t.Errorf("another key:\n got %s\nwant %s", other.body, want)
	}
	done := post(t, srv.URL+"/mcp", toolsCallBody(4, "job_status", `{"job":"`+handle+`"}`), key)
	if want := `{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"{\"status\":\"succeeded\",\"report\":\"late\"}"}],"structuredContent":{"status":"succeeded","report":"late"}}}`; done.body != want {
		t.Errorf("job_status:\n got %s\nwant %s", done.body, want)
	}
	if n := len(up.polls["late"]); n != 4 {
		t.Errorf("%d polls, want 4", n)
	}
	if n := meter.calls.Load(); n != 1 {
		t.Errorf("%d calls metered, want 1", n)
	}
}

// TestTaskCaps: past max_tasks_per_key a task-taking call is waited for
// and its answer says why it has no handle.
func TestTaskCaps(t *testing.T) {
	_, upURL := newJobsUpstream(t, nil)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/jobs.yaml", upURL), Meter: allowAll(0),
		AsyncWait: 1500 * time.Millisecond, Tasks: task.NewMemoryStore(nil), MaxTasksPerKey: 1})
	body, h := modernTaskCall(1, "a", "k-1")
	taskOf(t, post(t, srv.URL+"/mcp", body, h).body)
	body, h = modernTaskCall(2, "b", "k-1")
	got := post(t, srv.URL+"/mcp", body, h)
	want := `{"jsonrpc":"2.0","id":2,"result":{` + serverInfoMeta + `,"content":[{"type":"text","text":"{\"accepted\":\"b\"}"},{"type":"text","text":"response headers:\nlocation: /v1/status/b"},{"type":"text","text":"the API accepted the request and is still working on it: restmcp watched its status for 1 s (1 polls) and did not send the request again; the job's status is at ` + upURL + `/v1/status/b; restmcp keeps no handle for it: this key already has 1 jobs being watched (max_tasks_per_key)"}],"structuredContent":{"accepted":"b"},"resultType":"complete"}}`
	if got.body != want {
		t.Errorf("second call:\n got %s\nwant %s", got.body, want)
	}
	// Another key has its own place.
	body, h = modernTaskCall(3, "c", "k-2")
	taskOf(t, post(t, srv.URL+"/mcp", body, h).body)
}

// TestJobTasksCompact: in compact mode a call_operation whose operation
// answers 202 becomes a task too (2026-07-28, tasks extension), followed
// with tasks/get to the operation's result; no job_status is listed.
func TestJobTasksCompact(t *testing.T) {
	_, upURL := newJobsUpstream(t, map[string]int{"report": 1})
	srv := serve(t, Options{Tools: loadTools(t, "testdata/jobs.yaml", upURL), Meter: allowAll(0), Compact: true,
		AsyncWait: 5 * time.Second, Tasks: task.NewMemoryStore(nil)})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_operation","arguments":{"name":"start_job","arguments":{"kind":"report"}},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}}}`
	got := post(t, srv.URL+"/mcp", body, map[string]string{"X-API-Key": "k-1", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "call_operation"})
	id, created, _ := taskOf(t, got.body)
	if want := `{"jsonrpc":"2.0","id":1,"result":{"resultType":"task","taskId":"` + id + `","status":"working","createdAt":"` + created + `","lastUpdatedAt":"` + created + `","ttlMs":3600000,"pollIntervalMs":1000,` + serverInfoMeta + `}}`; got.body != want {
		t.Fatalf("call_operation:\n got %s\nwant %s", got.body, want)
	}
	var last string
	testenv.Eventually(t, 10*time.Second, "the task completed", func() bool {
		b, h := taskRequest(2, "tasks/get", id, "k-1")
		last = post(t, srv.URL+"/mcp", b, h).body
		return strings.Contains(last, `"status":"completed"`)
	})
	if !strings.Contains(last, `"structuredContent":{"status":"succeeded","report":"report"}`) {
		t.Errorf("tasks/get: %s", last)
	}
	if list := post(t, srv.URL+"/mcp", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, nil); strings.Contains(list.body, "job_status") {
		t.Errorf("compact mode lists job_status: %s", list.body)
	}
}

// TestNoTasksInPublicMode: in public mode a caller is its address, so a
// job gets no task even for a client that takes tasks and sends a key; the
// call is waited for, and tasks/get knows no task of that key.
func TestNoTasksInPublicMode(t *testing.T) {
	_, upURL := newJobsUpstream(t, map[string]int{})
	doc, err := os.ReadFile("testdata/jobs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	public := filepath.Join(t.TempDir(), "jobs.yaml") // the same API without security: public mode serves no other
	if err := os.WriteFile(public, bytes.Replace(doc, []byte("security: [{key: []}]"), []byte("security: []"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := serve(t, Options{Tools: loadTools(t, public, upURL), Meter: allowAll(0), PublicMode: true,
		AsyncWait: time.Second, Tasks: task.NewMemoryStore(nil)})
	body, h := modernTaskCall(1, "never", "k-1")
	got := post(t, srv.URL+"/mcp", body, h)
	if strings.Contains(got.body, `"resultType":"task"`) || !strings.Contains(got.body, "is still working on it") {
		t.Fatalf("a job in public mode: %s", got.body)
	}
	body, h = taskRequest(2, "tasks/get", "t0000000000000000000000", "k-1")
	if got := post(t, srv.URL+"/mcp", body, h); !strings.Contains(got.body, `"code":-32602`) {
		t.Errorf("tasks/get in public mode: %s", got.body)
	}
}
