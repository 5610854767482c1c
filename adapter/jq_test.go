package adapter

import (
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// githubIssues and stripeCustomers are answers shaped as GitHub's issue
// list and Stripe's customer list are.
const (
	githubIssues = `[{"id":1,"number":1347,"title":"Found a bug","state":"open","user":{"login":"octocat","id":1},"labels":[{"name":"bug"}],"body":"I'm having a problem with this."},` +
		`{"id":2,"number":1348,"title":"Docs","state":"closed","user":{"login":"hubot","id":2},"labels":[],"body":"Fix the docs."}]`
	stripeCustomers = `{"object":"list","url":"/v1/customers","has_more":false,"data":[{"id":"cus_1","object":"customer","email":"a@example.com","balance":0,"metadata":{}},` +
		`{"id":"cus_2","object":"customer","email":"b@example.com","balance":9007199254740993,"metadata":{"tier":"gold"}}]}`
)

// TestJQFilter: with Options.JQFilter, JSON tools list an optional
// jq_filter argument, and a call with one is answered with the filter's
// output, computed on the whole answer; bad filters are invalid arguments
// before anything is sent; runtime errors, loops and huge outputs are error
// results; a filtered call is metered once.
func TestJQFilter(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/repos/big/"):
			w.Header().Set("Content-Type", "application/json")
			items := make([]string, 300)
			for i := range items {
				items[i] = `{"number":` + strconv.Itoa(i+1) + `,"title":"issue ` + strconv.Itoa(i+1) + `","body":"` + strings.Repeat("x", 100) + `"}`
			}
			_, _ = w.Write([]byte("[" + strings.Join(items, ",") + "]"))
		case strings.HasPrefix(r.URL.Path, "/repos/"):
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = w.Write([]byte(githubIssues))
		case r.URL.Path == "/v1/customers":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(stripeCustomers))
		default:
			w.Header().Set("Content-Type", "text/csv")
			_, _ = w.Write([]byte("a,b\n1,2\n"))
		}
	})
	meter := allowAll(0)
	srv := serve(t, Options{Tools: loadTools(t, "testdata/jq.yaml", up.URL), Meter: meter, JQFilter: true, JQWorker: testExecutable(t), MaxResponseBytes: 4096})

	list := post(t, srv.URL+"/mcp", toolsListBody, nil)
	jqProp := `"jq_filter":{"type":"string","description":"Optional jq filter applied to the JSON response; only its output is returned. Example: .items[] | {id, name}"}`
	if !strings.Contains(list.body, `"properties":{"owner":{"type":"string"},"repo":{"type":"string"},`+jqProp+`},"required":["owner","repo"]`) ||
		!strings.Contains(list.body, `"inputSchema":{"type":"object","properties":{`+jqProp+`}}`) {
		t.Errorf("tools/list lacks jq_filter on the JSON tools:\n%s", list.body)
	}
	if n := strings.Count(list.body, `"jq_filter"`); n != 2 {
		t.Errorf("jq_filter listed %d times, want 2 (not on the CSV tool)", n)
	}

	for _, tt := range []struct {
		name, tool, args string
		want             string // the whole result
		sent             int    // upstream requests
	}{
		{"GitHub list: three fields", "issues_list_for_repo", `{"owner":"o","repo":"r","jq_filter":"[.[] | {number, title, user: .user.login}]"}`,
			`{"content":[{"type":"text","text":"[{\"number\":1347,\"title\":\"Found a bug\",\"user\":\"octocat\"},{\"number\":1348,\"title\":\"Docs\",\"user\":\"hubot\"}]"}]}`, 1},
		{"GitHub list: one value per line", "issues_list_for_repo", `{"owner":"o","repo":"r","jq_filter":".[] | select(.state == \"open\") | .title"}`,
			`{"content":[{"type":"text","text":"\"Found a bug\""}]}`, 1},
		{"Stripe list: an object that fits the output schema", "get_customers", `{"jq_filter":"{data: [.data[] | {id, email}], has_more}"}`,
			`{"content":[{"type":"text","text":"{\"data\":[{\"email\":\"a@example.com\",\"id\":\"cus_1\"},{\"email\":\"b@example.com\",\"id\":\"cus_2\"}],\"has_more\":false}"}],"structuredContent":{"data":[{"email":"a@example.com","id":"cus_1"},{"email":"b@example.com","id":"cus_2"}],"has_more":false}}`, 1},
		{"Stripe: big integers stay exact, nested members", "get_customers", `{"jq_filter":".data[1] | [.balance, .metadata.tier]"}`,
			`{"content":[{"type":"text","text":"the jq_filter output is not one JSON object, so structuredContent is empty; the output follows."},{"type":"text","text":"[9007199254740993,\"gold\"]"}],"structuredContent":{}}`, 1},
		{"an answer past max_response_bytes: filtered whole", "issues_list_for_repo", `{"owner":"big","repo":"r","jq_filter":"[length, .[-1].number]"}`,
			`{"content":[{"type":"text","text":"[300,300]"}]}`, 1},
		{"null filter: the whole answer", "get_customers", `{"jq_filter":null}`,
			`{"content":[{"type":"text","text":` + quoteJSON(stripeCustomers) + `}],"structuredContent":` + stripeCustomers + `}`, 1},
		{"syntax error: invalid arguments, nothing sent", "get_customers", `{"jq_filter":".data[] | {id,"}`,
			`{"content":[{"type":"text","text":"invalid arguments: jq_filter: the filter does not parse at byte 14 (\"\"): unexpected EOF"}],"isError":true}`, 0},
		{"not a string", "get_customers", `{"jq_filter":7}`,
			`{"content":[{"type":"text","text":"invalid arguments: jq_filter: must be a string: a jq filter"}],"isError":true}`, 0},
		{"runtime error", "get_customers", `{"jq_filter":".object | keys"}`,
			`{"content":[{"type":"text","text":"jq_filter: keys cannot be applied to: string (\"list\")"}],"isError":true}`, 1},
		{"no environment", "get_customers", `{"jq_filter":"[$ENV, env]"}`,
			`{"content":[{"type":"text","text":"the jq_filter output is not one JSON object, so structuredContent is empty; the output follows."},{"type":"text","text":"[{},{}]"}],"structuredContent":{}}`, 1},
		{"no input functions: refused before anything is sent", "get_customers", `{"jq_filter":"input"}`,
			`{"content":[{"type":"text","text":"invalid arguments: jq_filter: the filter does not compile: input(s)/0 is not allowed"}],"isError":true}`, 0},
		{"huge output: stopped at max_response_bytes", "get_customers", `{"jq_filter":"range(1e9)"}`,
			`{"content":[{"type":"text","text":"jq_filter: the filter's output is larger than 4096 bytes (max_response_bytes); narrow it"}],"isError":true}`, 1},
		{"a loop: stopped by the time budget", "get_customers", `{"jq_filter":"last(range(1e15))"}`,
			`{"content":[{"type":"text","text":"jq_filter: the filter ran past its 2s budget and was stopped"}],"isError":true}`, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := meter.calls.Load()
			got := post(t, srv.URL+"/mcp", toolsCallBody(1, tt.tool, tt.args), map[string]string{"X-API-Key": "k-1"})
			if diff := cmp.Diff(parseJSON(t, tt.want), parseJSON(t, resultOf(t, got.body))); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if n := len(up.take()); n != tt.sent {
				t.Errorf("upstream requests %d, want %d", n, tt.sent)
			}
			if n := meter.calls.Load() - before; n != 1 {
				t.Errorf("admissions %d, want 1 (a filtered call counts once)", n)
			}
		})
	}
	// Compact mode: call_operation takes jq_filter among the operation's
	// arguments.
	compact := serve(t, Options{Tools: loadTools(t, "testdata/jq.yaml", up.URL), Meter: allowAll(0), JQFilter: true, JQWorker: testExecutable(t), Compact: true})
	got := post(t, compact.URL+"/mcp", toolsCallBody(2, "call_operation", `{"name":"get_customers","arguments":{"jq_filter":".data | map(.id)"}}`), map[string]string{"X-API-Key": "k-1"})
	if want := `{"content":[{"type":"text","text":"the jq_filter output is not one JSON object, so structuredContent is empty; the output follows."},{"type":"text","text":"[\"cus_1\",\"cus_2\"]"}],"structuredContent":{}}`; resultOf(t, got.body) != want {
		t.Errorf("call_operation with jq_filter: %s\nwant result %s", got.body, want)
	}
	// Without the option the argument is unknown, as any other.
	plain := serve(t, Options{Tools: loadTools(t, "testdata/jq.yaml", up.URL), Meter: allowAll(0)})
	got = post(t, plain.URL+"/mcp", toolsCallBody(1, "get_customers", `{"jq_filter":".data"}`), map[string]string{"X-API-Key": "k-1"})
	if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"invalid arguments: jq_filter: unknown argument"}],"isError":true}}`; got.body != want {
		t.Errorf("without JQFilter: %s", got.body)
	}
}

// resultOf is the "result" member of a JSON-RPC response, as JSON.
func resultOf(t *testing.T, body string) string {
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || m.Result == nil {
		t.Fatalf("no result in %s", body)
	}
	return string(m.Result)
}

// testExecutable is this test binary, which TestMain makes a jq worker
// when started with JQWorkerEnv.
func testExecutable(tb testing.TB) string {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return exe
}

// BenchmarkJQFilter runs a typical filter over a GitHub-issue-shaped list of
// about 1 MB (decode, filter, encode, as sendFiltered does): ns/op is the
// CPU per MB; "bytes-out" what the model then reads instead of "bytes-in".
func BenchmarkJQFilter(b *testing.B) {
	items := make([]string, 0, 2600)
	for i := 0; len(strings.Join(items, ",")) < 1<<20; i++ {
		items = append(items, `{"id":`+strconv.Itoa(1000000+i)+`,"number":`+strconv.Itoa(i)+`,"title":"Found a bug in the parser `+strconv.Itoa(i)+`","state":"open",`+
			`"user":{"login":"octocat","id":1,"avatar_url":"https://github.com/images/error/octocat_happy.gif","type":"User","site_admin":false},`+
			`"labels":[{"id":208045946,"name":"bug","color":"f29513","default":true}],"comments":3,"created_at":"2011-04-22T13:33:48Z",`+
			`"body":"I'm having a problem with this. `+strings.Repeat("More detail. ", 8)+`"}`)
	}
	body := []byte("[" + strings.Join(items, ",") + "]")
	f := &jqFilter{src: "[.[] | {number, title, user: .user.login}]"}
	s := &Server{opts: Options{MaxResponseBytes: 1 << 30}, jq: &jqProcess{exe: testExecutable(b), slots: make(chan struct{}, jqWorkers), maxMemory: DefaultJQMaxMemoryBytes}}
	tool := loadTools(b, "testdata/jq.yaml", "http://upstream.test")[1]
	var out int
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		res := s.runJQ(b.Context(), f, body, tool)
		out = len(res.Content[0].(*mcp.TextContent).Text)
	}
	b.ReportMetric(float64(len(body)), "bytes-in")
	b.ReportMetric(float64(out), "bytes-out")
}

// FuzzJQFilter runs arbitrary filters on a small answer through a jq
// worker: whatever the filter, the server's process is unharmed and the
// call ends in a result, the filter's output or an error result naming
// why (jq_filter: …, or an invalid filter). The seeds are the hostile
// filters of TestJQFilterThroughServe and ordinary ones.
func FuzzJQFilter(f *testing.F) {
	for _, seed := range []string{
		`.`, `.items[] | {id}`, `[.[] | select(.n > 1)]`, `keys`, `tojson`, `..`, `input`, `$ENV`, `env`,
		`reduce range(100000) as $i (0; [.]) | tojson`, `("x" * 100000) | [match(""; "g")] | length`,
		`[range(3) | "x" * 100000000] | length`, `range(1e9)`, `def f: def g: 1 + f; g; f`, `limit(3; repeat(1))`,
		`"\(1,2)"`, `[.[]?]`, `.a.b.c = 1`, `error("x")`, `halt_error`, `@base64d`, `ltrimstr(1)`, `splits("a";"g")`,
	} {
		f.Add(seed)
	}
	s := &Server{opts: Options{MaxResponseBytes: 1 << 16}, jq: &jqProcess{exe: testExecutable(f), slots: make(chan struct{}, jqWorkers), maxMemory: DefaultJQMaxMemoryBytes}}
	tool := loadTools(f, "testdata/jq.yaml", "http://upstream.test")[1]
	body := []byte(`{"items":[{"id":1,"n":2},{"id":2,"n":0}],"a":{"b":null}}`)
	f.Fuzz(func(t *testing.T, filter string) {
		args, _ := json.Marshal(map[string]string{"jq_filter": filter})
		jq, _, err := takeJQFilter(args)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "invalid arguments") && !strings.Contains(err.Error(), "jq_filter") {
				t.Fatalf("%q: refusal %q does not name the argument", filter, err)
			}
			return
		}
		if jq == nil {
			return // null
		}
		res := s.runJQ(t.Context(), jq, body, tool)
		if res == nil || len(res.Content) == 0 {
			t.Fatalf("%q: no result", filter)
		}
		if res.IsError {
			text := res.Content[len(res.Content)-1].(*mcp.TextContent).Text
			if !strings.HasPrefix(text, "jq_filter: ") || strings.Contains(text, "did not name") {
				t.Fatalf("%q: error result %q does not say why", filter, text)
			}
		}
	})
}
