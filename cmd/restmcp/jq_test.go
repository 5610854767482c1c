package main

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestJQFilterThroughServe: jq_filter (RESTMCP_JQ_FILTER) reaches the
// tools restmcp serve lists, and a filter from any key holder cannot take
// the server down or hold it: each hostile filter (deep nesting, a regular
// expression on a large string, a gigabyte string, output without end,
// recursion without end) is stopped at its bound, named in the error
// result, while /health keeps answering and a plain filter still works.
func TestJQFilterThroughServe(t *testing.T) {
	mcpURL, _ := startRunningArgs(t, nil, map[string]string{"RESTMCP_JQ_FILTER": "true", "RESTMCP_MAX_RESPONSE_BYTES": "65536"}, io.Discard)
	base := strings.TrimSuffix(mcpURL, "/mcp")
	call := func(filter string) (string, bool) {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"symbol": "AAPL", "jq_filter": filter})
		r := postMCP(t, base, "demo-key", callBody(1, "equities_quote", string(args)))
		var m struct {
			Result struct {
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(r.body), &m); err != nil || len(m.Result.Content) == 0 {
			t.Fatalf("%s: %d %s", filter, r.status, r.body)
		}
		return m.Result.Content[len(m.Result.Content)-1].Text, m.Result.IsError
	}
	list := postMCP(t, base, "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if !strings.Contains(list.body, `"jq_filter":{"type":"string"`) {
		t.Fatalf("tools/list has no jq_filter argument: %s", list.body)
	}
	if text, isErr := call(`{symbol, price}`); isErr || text != `{"price":212.49,"symbol":"AAPL"}` {
		t.Errorf("a plain filter: %q (isError %v)", text, isErr)
	}
	const budget = "jq_filter: the filter ran past its 2s budget and was stopped"
	const memory = "jq_filter: the filter needed more than 536870912 bytes of memory (jq_max_memory_bytes) and was stopped"
	for _, c := range []struct {
		filter string
		want   []string // the error result's text: one of these
	}{
		{`reduce range(3000000) as $i (0; [.]) | tojson | length`, []string{budget, "jq_filter: the filter nests values or calls too deeply and was stopped; make it flatter"}},
		// Stopped by the stack bound in 0.2 s here (0.6 s under -race); a
		// loaded machine may reach the time budget first.
		{`reduce range(100000) as $i (0; [.]) | tojson | length`, []string{"jq_filter: the filter nests values or calls too deeply and was stopped; make it flatter", budget}},
		{`("x" * 1000000) | [match(""; "g")] | length`, []string{budget, memory}},
		{`[range(5) | "x" * 1000000000] | length`, []string{memory, budget}},
		{`range(1e9)`, []string{"jq_filter: the filter's output is larger than 65536 bytes (max_response_bytes); narrow it"}},
		{`def f: def g: 1 + f; g; f`, []string{budget, "jq_filter: the filter nests values or calls too deeply and was stopped; make it flatter", memory}},
	} {
		start := time.Now()
		text, isErr := call(c.filter)
		if !isErr || !slices.Contains(c.want, text) {
			t.Errorf("%s: %q (isError %v), want one of %q", c.filter, text, isErr, c.want)
		}
		t.Logf("%-60s stopped after %v: %s", c.filter, time.Since(start).Round(time.Millisecond), text)
		resp, err := http.Get(base + "/health")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("/health after %s: %v %v", c.filter, resp, err)
		}
		resp.Body.Close()
	}
	if text, isErr := call(`.symbol`); isErr || text != `"AAPL"` {
		t.Errorf("a plain filter after the hostile ones: %q (isError %v)", text, isErr)
	}
}
