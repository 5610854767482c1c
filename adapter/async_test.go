package adapter

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/restmcp/restmcp/openapi"
)

// TestLongRunningOperations: a 202 that names a status resource is watched
// within the call (Options.AsyncWait) and the call answers with the job's
// end, as a synchronous call would: a status resource that finishes, a 303
// to the result, an Operation-Location whose finished status points to the
// result (resourceLocation), a job that fails, and one that never finishes
// (the 202 and where the job is). One POST a call, the key on every poll,
// polls spaced as Retry-After says, the call metered once.
func TestLongRunningOperations(t *testing.T) {
	var mu sync.Mutex
	posts := map[string]int{}
	polls := map[string][]time.Time{}
	keys := map[string]bool{}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		keys[r.Header.Get("X-Api-Key")] = true
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			kind := strings.TrimPrefix(r.URL.Path, "/v1/jobs/")
			posts[kind]++
			switch kind {
			case "status", "fails", "never":
				w.Header().Set("Location", "/v1/status/"+kind)
				w.Header().Set("Retry-After", "1")
			case "redirect":
				w.Header().Set("Location", "/v1/status/redirect")
			case "operation":
				w.Header().Set("Operation-Location", up2(r)+"/v1/operations/5")
				w.Header().Set("Retry-After", "2")
			}
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"accepted":true}`))
			return
		}
		polls[r.URL.Path] = append(polls[r.URL.Path], time.Now())
		n := len(polls[r.URL.Path])
		switch r.URL.Path {
		case "/v1/status/status":
			if n < 2 {
				_, _ = w.Write([]byte(`{"status":"running"}`))
				return
			}
			_, _ = w.Write([]byte(`{"status":"succeeded","result":{"id":"r1"}}`))
		case "/v1/status/redirect":
			if n < 2 {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.Header().Set("Location", "/v1/files/9")
			w.WriteHeader(http.StatusSeeOther)
		case "/v1/files/9":
			_, _ = w.Write([]byte(`{"file":"9"}`))
		case "/v1/operations/5":
			if n < 2 {
				w.Header().Set("Retry-After", "1")
				_, _ = w.Write([]byte(`{"status":"Running"}`))
				return
			}
			_, _ = w.Write([]byte(`{"status":"Succeeded","resourceLocation":"/v1/documents/5"}`))
		case "/v1/documents/5":
			_, _ = w.Write([]byte(`{"doc":"5"}`))
		case "/v1/status/fails":
			_, _ = w.Write([]byte(`{"status":"failed","error":{"message":"disk full"}}`))
		case "/v1/status/never":
			_, _ = w.Write([]byte(`{"status":"running"}`))
		}
	})
	meter := allowAll(0)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/jobs.yaml", up.URL), Meter: meter, AsyncWait: 8 * time.Second, UpstreamTimeout: 30 * time.Second})
	// A job that never ends, watched for 2.5 s: polls at 1 s and 2 s.
	short := serve(t, Options{Tools: loadTools(t, "testdata/jobs.yaml", up.URL), Meter: meter, AsyncWait: 2500 * time.Millisecond, UpstreamTimeout: 30 * time.Second})
	key := map[string]string{"X-API-Key": "k-1"}
	for i, c := range []struct{ kind, want string }{
		{"status", `{"content":[{"type":"text","text":"{\"status\":\"succeeded\",\"result\":{\"id\":\"r1\"}}"}],"structuredContent":{"status":"succeeded","result":{"id":"r1"}}}`},
		{"redirect", `{"content":[{"type":"text","text":"{\"file\":\"9\"}"}],"structuredContent":{"file":"9"}}`},
		{"operation", `{"content":[{"type":"text","text":"{\"doc\":\"5\"}"}],"structuredContent":{"doc":"5"}}`},
		{"fails", `{"content":[{"type":"text","text":"the job failed (its status at ` + up.URL + `/v1/status/fails):\n{\"status\":\"failed\",\"error\":{\"message\":\"disk full\"}}"}],"isError":true}`},
		{"never", `{"content":[{"type":"text","text":"{\"accepted\":true}"},{"type":"text","text":"response headers:\nlocation: /v1/status/never"},{"type":"text","text":"the API accepted the request and is still working on it: restmcp watched its status for 2 s (2 polls) and did not send the request again; the job's status is at ` + up.URL + `/v1/status/never"}],"structuredContent":{"accepted":true}}`},
	} {
		target := srv
		if c.kind == "never" {
			target = short
		}
		got := post(t, target.URL+"/mcp", toolsCallBody(i+1, "start_job", `{"kind":"`+c.kind+`"}`), key)
		var m struct {
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal([]byte(got.body), &m)
		if string(m.Result) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.kind, m.Result, c.want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for kind, n := range posts {
		if n != 1 {
			t.Errorf("%s: %d POSTs, want 1", kind, n)
		}
	}
	if len(posts) != 5 || len(keys) != 1 || !keys["k-1"] {
		t.Errorf("posts %v, keys upstream %v", posts, keys)
	}
	// Retry-After: 2 on the 202, then 1 on the running status.
	if p := polls["/v1/operations/5"]; len(p) != 2 || p[1].Sub(p[0]) < 950*time.Millisecond {
		t.Errorf("operation polls %v", p)
	}
	if n := meter.calls.Load(); n != 5 {
		t.Errorf("%d calls metered, want 5: polls are not calls", n)
	}
}

// up2 is the scheme and host the request came to.
func up2(r *http.Request) string { return "http://" + r.Host }

// TestStoredStatusURL: a task keeps a job's status URL without the query
// parameters the operation's security puts the caller's key in, the first
// URL and any later one a 202 names alike; other parameters stay.
func TestStoredStatusURL(t *testing.T) {
	tools := loadTools(t, "testdata/pages.yaml", "http://api.example")
	var tool *openapi.Tool
	for _, tl := range tools {
		if tl.Name == "list_issues" {
			tool = tl
		}
	}
	if tool == nil {
		t.Fatal("no list_issues")
	}
	for in, want := range map[string]string{
		"https://api.example/status/7?api_key=k-secret&page=2": "https://api.example/status/7?page=2",
		"https://api.example/status/7?api_key=k-secret":        "https://api.example/status/7",
		"https://api.example/status/7?page=2":                  "https://api.example/status/7?page=2",
		"https://api.example/status/7":                         "https://api.example/status/7",
	} {
		u, _ := url.Parse(in)
		if got := storedStatusURL(tool, u); got != want {
			t.Errorf("storedStatusURL(%s) = %s, want %s", in, got, want)
		}
	}
}
