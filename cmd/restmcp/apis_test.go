package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/restmcp/restmcp/metering"
)

// federationDoc is a small document whose one security scheme is scheme
// (a securitySchemes entry) and whose operations are ops (paths entries).
func federationDoc(title, scheme, ops string) string {
	return `openapi: 3.0.3
info: {title: ` + title + `, version: "1"}
servers: [{url: "http://127.0.0.1:1"}]
components:
  securitySchemes:
    key: ` + scheme + `
security: [{key: []}]
paths:
` + ops
}

// fileWriter returns a function that writes content to the file name in
// dir and returns its path.
func fileWriter(t *testing.T, dir string) func(name, content string) string {
	return func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

const federationOps = `
  /status:
    get:
      operationId: getStatus
      x-mcp-name: status
      responses: {"200": {description: ok}}
  /items/{id}:
    get:
      operationId: getItem
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses: {"200": {description: ok}}
`

// TestAPIsOnOneEndpoint serves two documents whose security schemes put
// the key in different places, and a third that does not load: each call
// reaches its own upstream with the one key placed per its own scheme;
// x-mcp-name "status" in both keeps N6 across APIs; lenient mode serves
// the two and names the third, strict mode refuses to start naming it; and
// a reload of one document swaps only its tools.
func TestAPIsOnOneEndpoint(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	upstream := func(name string) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, name+": "+r.Method+" "+r.URL.RequestURI()+" | X-Api-Key: "+r.Header.Get("X-Api-Key")+" | Authorization: "+r.Header.Get("Authorization"))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"from":"` + name + `"}`))
		}))
		t.Cleanup(s.Close)
		return s.URL
	}
	dir := t.TempDir()
	write := fileWriter(t, dir)
	accounts := write("accounts.yaml", federationDoc("Accounts", "{type: apiKey, in: header, name: X-Api-Key}", federationOps))
	cards := write("cards.yaml", federationDoc("Cards", "{type: apiKey, in: query, name: api_key}", federationOps))
	broken := write("broken.yaml", "openapi: 3.0.3\ninfo: [not, a, mapping]\n")
	cfgFile := write("restmcp.yaml", `
apis:
  - name: accounts
    spec: `+accounts+`
    upstream: `+upstream("accounts")+`
  - name: cards
    spec: `+cards+`
    upstream: `+upstream("cards")+`/v2
  - name: ledger
    spec: `+broken+`
`)

	// Strict: the start is refused, naming the API.
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"--config", cfgFile, "--addr", "127.0.0.1:0", "--lenient=false"}, func(string) string { return "" }, &out, &errOut)
	if err == nil || !strings.HasPrefix(err.Error(), "api ledger: loading "+broken+": ") {
		t.Fatalf("strict start: %v", err)
	}

	logs := &syncBuffer{}
	mcpURL, _ := startRunningArgs(t, []string{"--config", cfgFile, "--addr", "127.0.0.1:0", "--watch"}, nil, logs)
	base := strings.TrimSuffix(mcpURL, "/mcp")
	// The log is written in batches (logbuf.go): wait for it.
	defer func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	}()
	waitFor(t, "the log naming the API that does not load", func() bool {
		return strings.Contains(logs.String(), `msg="an API does not load; its tools are not served (lenient mode), the others are" error="api ledger: loading `+broken+`: `)
	})
	list := func() string {
		t.Helper()
		r := postMCP(t, base, "k-123", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		var names []string
		for _, part := range strings.Split(r.body, `"name":"`)[1:] {
			names = append(names, part[:strings.IndexByte(part, '"')])
		}
		return strings.Join(names, " ")
	}
	if got, want := list(), "accounts_get_item cards_get_item status status_2"; got != want {
		t.Errorf("tools/list names: %q, want %q", got, want)
	}
	for i, c := range [][2]string{
		{"accounts_get_item", `{"id":"a1"}`}, {"cards_get_item", `{"id":"c1"}`}, {"status", `{}`}, {"status_2", `{}`},
	} {
		r := postMCP(t, base, "k-123", callBody(i+2, c[0], c[1]))
		if r.status != http.StatusOK || strings.Contains(r.body, `"isError":true`) {
			t.Errorf("%s: %d %s", c[0], r.status, r.body)
		}
	}
	mu.Lock()
	got := seen
	seen = nil
	mu.Unlock()
	want := []string{
		"accounts: GET /items/a1 | X-Api-Key: k-123 | Authorization: ",
		"cards: GET /v2/items/c1?api_key=k-123 | X-Api-Key:  | Authorization: ",
		"accounts: GET /status | X-Api-Key: k-123 | Authorization: ",
		"cards: GET /v2/status?api_key=k-123 | X-Api-Key:  | Authorization: ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("upstream requests (-want +got):\n%s", diff)
	}

	// Cards gains an operation and drops its status override: only its
	// tools change; its status tool now has its generated name, and
	// accounts keeps "status".
	write("cards.yaml", federationDoc("Cards", "{type: apiKey, in: query, name: api_key}", strings.Replace(federationOps, "      x-mcp-name: status\n", "", 1)+`
  /limits:
    get:
      operationId: getLimits
      responses: {"200": {description: ok}}
`))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cards reload", func() bool { return strings.Contains(list(), "cards_get_limits") })
	if got, want := list(), "accounts_get_item cards_get_item cards_get_limits cards_get_status status"; got != want {
		t.Errorf("tools/list after the cards reload: %q, want %q", got, want)
	}
	waitFor(t, "the log of the cards reload", func() bool {
		return strings.Contains(logs.String(), `msg="document reloaded" spec="api \"cards\" (`+cards+`)" tools=3`)
	})
	if want := `spec="api \"ledger\""`; strings.Contains(logs.String(), `msg="document reloaded" `+want) {
		t.Errorf("the broken API reloaded")
	}
}

// TestUsageCommandByAPI: with several APIs, `restmcp usage` reads the
// documents named in the config file and splits the month by API, as GET
// /usage does.
func TestUsageCommandByAPI(t *testing.T) {
	redisURL := testRedisURL(t)
	dir := t.TempDir()
	write := fileWriter(t, dir)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(up.Close)
	cfgFile := write("restmcp.yaml", `
redis_url: `+redisURL+`
apis:
  - name: accounts
    spec: `+write("accounts.yaml", federationDoc("Accounts", "{type: apiKey, in: header, name: X-Api-Key}", federationOps))+`
    upstream: `+up.URL+`
  - name: cards
    spec: `+write("cards.yaml", federationDoc("Cards", "{type: apiKey, in: query, name: api_key}", federationOps))+`
    upstream: `+up.URL+`
`)
	mcpURL, _ := startRunningArgs(t, []string{"--config", cfgFile, "--addr", "127.0.0.1:0"}, nil, io.Discard)
	base := strings.TrimSuffix(mcpURL, "/mcp")
	key := "k-fed-" + strconv.FormatInt(time.Now().UnixNano(), 36) // a fresh key: fresh counters
	for i, c := range [][2]string{{"accounts_get_item", `{"id":"a1"}`}, {"cards_get_item", `{"id":"c1"}`}, {"cards_get_item", `{"id":"c2"}`}, {"status_2", `{}`}} {
		if r := postMCP(t, base, key, callBody(i+1, c[0], c[1])); r.status != http.StatusOK || strings.Contains(r.body, `"isError":true`) {
			t.Fatalf("%s: %d %s", c[0], r.status, r.body)
		}
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"usage", metering.KeyID(key), "--config", cfgFile}, func(string) string { return "" }, &out, &errOut); err != nil {
		t.Fatalf("restmcp usage: %v\n%s", err, errOut.String())
	}
	var r metering.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || len(r.Periods) != 2 {
		t.Fatalf("restmcp usage output: %v\n%s", err, out.String())
	}
	want := map[string]metering.ToolUsage{"accounts": {Calls: 1, Cost: 1}, "cards": {Calls: 3, Cost: 3}}
	if diff := cmp.Diff(want, r.Periods[1].APIs); diff != "" {
		t.Errorf("usage by API (-want +got):\n%s", diff)
	}
	if r.Periods[0].APIs != nil {
		t.Errorf("the day has APIs: %v", r.Periods[0].APIs)
	}
}

// TestAPIsValidateAndCompact: restmcp validate checks each API in turn and
// fails naming the ones serve would not serve as published; compact mode's
// search and describe name each operation's API.
func TestAPIsValidateAndCompact(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	accounts := write("accounts.yaml", federationDoc("Accounts", "{type: apiKey, in: header, name: X-Api-Key}", federationOps))
	hooks := write("hooks.yaml", "openapi: 3.1.0\ninfo: {title: Hooks, version: \"2\"}\nwebhooks: {}\n")
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"validate", "--spec", "accounts=" + accounts, "--spec", "hooks=" + hooks}, func(string) string { return "" }, &out, &errOut)
	if err == nil || err.Error() != "validate api hooks: no operation to serve (a webhooks-only document?); serve does not serve this API: "+errUsage.Error() {
		t.Errorf("validate error: %v", err)
	}
	want := "api accounts: " + accounts + "\nok: \"Accounts\" version 1, 2 tools, 0 warning(s)\n" +
		"api hooks: " + hooks + "\n\"Hooks\" version 2: no operation to serve (a webhooks-only document?); serve does not serve this API\n"
	if out.String() != want {
		t.Errorf("validate output:\n%s\nwant:\n%s", out.String(), want)
	}

	cards := write("cards.yaml", federationDoc("Cards", "{type: apiKey, in: query, name: api_key}", federationOps))
	mcpURL, _ := startRunningArgs(t, []string{"--spec", "accounts=" + accounts, "--spec", "cards=" + cards, "--upstream", "accounts=http://127.0.0.1:1", "--upstream", "cards=http://127.0.0.1:1", "--addr", "127.0.0.1:0", "--tool-mode", "compact"}, nil, io.Discard)
	base := strings.TrimSuffix(mcpURL, "/mcp")
	r := postMCP(t, base, "k-123", callBody(1, "search_operations", `{"query":"item"}`))
	wantSearch := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"operations\":[` +
		`{\"name\":\"accounts_get_item\",\"api\":\"accounts\",\"method\":\"GET\",\"path\":\"/items/{id}\",\"description\":\"GET /items/{id}\"},` +
		`{\"name\":\"cards_get_item\",\"api\":\"cards\",\"method\":\"GET\",\"path\":\"/items/{id}\",\"description\":\"GET /items/{id}\"}]}"}],` +
		`"structuredContent":{"operations":[{"api":"accounts","description":"GET /items/{id}","method":"GET","name":"accounts_get_item","path":"/items/{id}"},{"api":"cards","description":"GET /items/{id}","method":"GET","name":"cards_get_item","path":"/items/{id}"}]}}}`
	assertJSON(t, "search_operations", wantSearch, []byte(r.body))
}

// TestAPIPrefixesAreEachAPIsOwn: a name an API's document gives its own
// operation (x-mcp-name) that falls inside another API's names (cards_…)
// is refused at startup naming both APIs, since plans grant tools by served
// name; API names that begin with one another and "_" are refused by the
// configuration (config.TestAPIErrors).
func TestAPIPrefixesAreEachAPIsOwn(t *testing.T) {
	dir := t.TempDir()
	write := fileWriter(t, dir)
	ops := `
  /lookup:
    get:
      operationId: lookupCard
      x-mcp-name: cards_lookup
      responses: {"200": {description: ok}}
`
	accounts := write("accounts.yaml", federationDoc("Accounts", "{type: apiKey, in: header, name: X-Api-Key}", ops))
	cards := write("cards.yaml", federationDoc("Cards", "{type: apiKey, in: query, name: api_key}", federationOps))
	cfgFile := write("restmcp.yaml", "apis:\n  - name: accounts\n    spec: "+accounts+"\n  - name: cards\n    spec: "+cards+"\n")
	for _, cmd := range []string{"serve", "tools"} {
		var stdout, stderr strings.Builder
		err := run(context.Background(), []string{cmd, "--config", cfgFile}, func(k string) string { return map[string]string{"RESTMCP_ADDR": "127.0.0.1:0"}[k] }, &stdout, &stderr)
		want := `api accounts: tool "cards_lookup" (GET /lookup) would be served inside API cards's names (cards_…), so a plan pattern such as cards_* would grant it; give it a name outside that prefix (x-mcp-name or tool_names)`
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", cmd, err, want)
		}
	}
}
