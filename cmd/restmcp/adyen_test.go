package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/restmcp/restmcp/examples"
	"github.com/restmcp/restmcp/internal/corpustest"
)

// adyenSpecs are the corpus documents of the adyen example, by API.
var adyenSpecs = [][2]string{
	{"checkout", "adyen-checkoutservice-v72"},
	{"transfers", "adyen-transferservice-v4"},
	{"balance_platform", "adyen-balanceplatformservice-v2"},
}

// TestAdyenExample serves examples/adyen/restmcp.yaml, three of Adyen's
// published documents on one endpoint, each with its own stub upstream,
// and drives it with the official TypeScript MCP SDK client: the tools of
// each API are listed under its prefix, a call of each API reaches its own
// upstream with the caller's one key in X-API-Key (the overlay's scheme),
// one plan meters both and refuses the API outside it, and GET /usage,
// the metrics and `restmcp tools` split by API.
func TestAdyenExample(t *testing.T) {
	node := requireTSClient(t)
	args := []string{"--config", "examples/adyen/restmcp.yaml", "--addr", "127.0.0.1:0"}
	var mu sync.Mutex
	var seen []string
	for _, a := range adyenSpecs {
		spec, err := filepath.Abs(corpustest.Path(t, a[1]))
		if err != nil {
			t.Fatal(err)
		}
		stub := examples.NewAdyenStub(a[0])
		up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			line := a[0] + ": " + r.Method + " " + r.URL.RequestURI()
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range r.Header {
					if k != "Accept-Encoding" && k != "User-Agent" && !yield(k) {
						return
					}
				}
			}) {
				line += " | " + k + ": " + strings.Join(r.Header[k], ",")
			}
			if len(body) > 0 {
				line += " | " + string(body)
			}
			mu.Lock()
			seen = append(seen, line)
			mu.Unlock()
			r.Body = io.NopCloser(bytes.NewReader(body))
			stub.ServeHTTP(w, r)
		}))
		t.Cleanup(up.Close)
		args = append(args, "--spec", a[0]+"="+spec, "--upstream", a[0]+"="+up.URL+"/"+a[0])
	}
	t.Chdir("../..")
	logs := &syncBuffer{}
	mcpURL, banner := startRunningArgs(t, args, nil, logs)
	if !strings.Contains(banner, `restmcp is serving "Adyen" (85 tools) at `+mcpURL) {
		t.Errorf("banner:\n%s", banner)
	}

	type checkOut struct {
		ServerName string          `json:"serverName"`
		Tools      []string        `json:"tools"`
		Result     json.RawMessage `json:"result"`
	}
	check := func(tool, arguments, how string) checkOut {
		t.Helper()
		out := runNode(t, "examples/ts-client", node, 30*time.Second, false, "check.mjs", mcpURL, examples.AdyenDemoKey, tool, arguments, how)
		var got checkOut
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("check.mjs output: %v\n%s", err, out)
		}
		return got
	}
	pay := check("checkout_post_payments", `{"amount":{"currency":"EUR","value":1000},"merchantAccount":"DemoShop","reference":"order-17","paymentMethod":{"type":"scheme"}}`, "header")
	perAPI := map[string]int{}
	for _, name := range pay.Tools {
		api, _, _ := strings.Cut(name, "_")
		if strings.HasPrefix(name, "balance_platform_") {
			api = "balance_platform"
		}
		perAPI[api]++
	}
	// Checkout's 28 operations, Transfers' 12, and the Configuration API's
	// 45 GET operations (include_methods: [get] in its apis entry), and
	// job_status, which waits for the jobs the operations that declare a
	// 202 start.
	if diff := cmp.Diff(map[string]int{"checkout": 28, "transfers": 12, "balance_platform": 45, "job": 1}, perAPI); diff != "" {
		t.Errorf("tools listed per API prefix (-want +got):\n%s", diff)
	}
	for _, name := range []string{"checkout_post_payments", "transfers_get_transactions", "balance_platform_get_balance_platforms_id"} {
		if !slices.Contains(pay.Tools, name) {
			t.Errorf("tools/list lacks %s", name)
		}
	}
	// Checkout declares an Idempotency-Key header: restmcp made one (a
	// UUID), sent it, and returns it in _meta.
	var payMeta struct {
		Meta map[string]string `json:"_meta"`
	}
	_ = json.Unmarshal(pay.Result, &payMeta)
	idemKey := payMeta.Meta["io.restmcp/idempotency-key"]
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(idemKey) {
		t.Errorf("idempotency key %q is not a UUID", idemKey)
	}
	wantPay := `{"_meta":{"io.restmcp/idempotency-key":"` + idemKey + `"},"content":[{"type":"text","text":"{\"api\":\"checkout\",\"body\":\"{\\\"amount\\\":{\\\"currency\\\":\\\"EUR\\\",\\\"value\\\":1000},\\\"merchantAccount\\\":\\\"DemoShop\\\",\\\"reference\\\":\\\"order-17\\\",\\\"paymentMethod\\\":{\\\"type\\\":\\\"scheme\\\"}}\",\"method\":\"POST\",\"path\":\"/checkout/payments\",\"query\":\"\"}\n"}],` +
		`"structuredContent":{"api":"checkout","body":"{\"amount\":{\"currency\":\"EUR\",\"value\":1000},\"merchantAccount\":\"DemoShop\",\"reference\":\"order-17\",\"paymentMethod\":{\"type\":\"scheme\"}}","method":"POST","path":"/checkout/payments","query":""}}`
	assertJSON(t, "checkout_post_payments result", wantPay, pay.Result)

	// The key presented on the URL this time; it still goes upstream in
	// X-API-Key, where the Transfers API's scheme says.
	tx := check("transfers_get_transactions", `{"balancePlatform":"DemoPlatform","createdSince":"2026-11-01T00:00:00Z","createdUntil":"2026-12-01T00:00:00Z"}`, "query")
	wantTx := `{"content":[{"type":"text","text":"{\"api\":\"transfers\",\"body\":\"\",\"method\":\"GET\",\"path\":\"/transfers/transactions\",\"query\":\"balancePlatform=DemoPlatform\u0026createdSince=2026-11-01T00%3A00%3A00Z\u0026createdUntil=2026-12-01T00%3A00%3A00Z\"}\n"}],` +
		`"structuredContent":{"api":"transfers","body":"","method":"GET","path":"/transfers/transactions","query":"balancePlatform=DemoPlatform\u0026createdSince=2026-11-01T00%3A00%3A00Z\u0026createdUntil=2026-12-01T00%3A00%3A00Z"}}`
	assertJSON(t, "transfers_get_transactions result", wantTx, tx.Result)

	// The Configuration API is outside the plan: refused, never sent.
	bp := check("balance_platform_get_balance_platforms_id", `{"id":"DemoPlatform"}`, "bearer")
	wantBP := `{"content":[{"type":"text","text":"tool \"balance_platform_get_balance_platforms_id\" is not included in plan \"payments\". The Configuration API is in the platform plan. Upgrade: https://example.com/pricing"}],"isError":true}`
	assertJSON(t, "balance_platform_get_balance_platforms_id result", wantBP, bp.Result)

	mu.Lock()
	got := seen
	mu.Unlock()
	want := []string{
		`checkout: POST /checkout/payments | Accept: application/json | Content-Length: 128 | Content-Type: application/json | Idempotency-Key: ` + idemKey + ` | X-Api-Key: adyen-demo-key | {"amount":{"currency":"EUR","value":1000},"merchantAccount":"DemoShop","reference":"order-17","paymentMethod":{"type":"scheme"}}`,
		`transfers: GET /transfers/transactions?balancePlatform=DemoPlatform&createdSince=2026-11-01T00%3A00%3A00Z&createdUntil=2026-12-01T00%3A00%3A00Z | Accept: application/json | X-Api-Key: adyen-demo-key`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("upstream requests (-want +got):\n%s", diff)
	}

	// One plan metered both APIs: 5 units for the payment, 1 for the
	// transactions; the refused call counts nothing.
	base := strings.TrimSuffix(mcpURL, "/mcp")
	req, _ := http.NewRequest(http.MethodGet, base+"/usage", nil)
	req.Header.Set("x-api-key", examples.AdyenDemoKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var usage struct {
		Plan    string `json:"plan"`
		Periods []struct {
			Period string                     `json:"period"`
			Used   int64                      `json:"used"`
			Tools  map[string]json.RawMessage `json:"tools"`
			APIs   map[string]json.RawMessage `json:"apis"`
		} `json:"periods"`
	}
	err = json.NewDecoder(resp.Body).Decode(&usage)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(usage.Periods) != 2 {
		t.Fatalf("GET /usage: %d %v %+v", resp.StatusCode, err, usage)
	}
	month := usage.Periods[1]
	gotUsage, _ := json.Marshal(map[string]any{"plan": usage.Plan, "period": month.Period, "used": month.Used, "tools": month.Tools, "apis": month.APIs})
	assertJSON(t, "GET /usage, the month", `{"plan":"payments","period":"month","used":6,`+
		`"tools":{"checkout_post_payments":{"calls":1,"cost":5},"transfers_get_transactions":{"calls":1,"cost":1}},`+
		`"apis":{"checkout":{"calls":1,"cost":5},"transfers":{"calls":1,"cost":1}}}`, gotUsage)

	resp, err = http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range []string{
		`restmcp_tool_info{api="checkout",tool="checkout_post_payments"} 1`,
		`restmcp_tool_info{api="transfers",tool="transfers_get_transactions"} 1`,
		`restmcp_tool_info{api="balance_platform",tool="balance_platform_get_balance_platforms_id"} 1`,
		`restmcp_tool_calls_total{outcome="ok",tool="checkout_post_payments"} 1`,
		`restmcp_tool_calls_total{outcome="not_in_plan",tool="balance_platform_get_balance_platforms_id"} 1`,
	} {
		if !strings.Contains(string(metrics), "\n"+line+"\n") {
			t.Errorf("GET /metrics lacks %s", line)
		}
	}
	if n := strings.Count(string(metrics), "\nrestmcp_tool_info{"); n != 85 {
		t.Errorf("restmcp_tool_info has %d series, want 85", n)
	}
	if want := "tool=checkout_post_payments api=checkout "; !strings.Contains(logs.String(), want) {
		t.Errorf("the access log lacks %q", want)
	}

	// restmcp tools shows each tool's API.
	var out, errOut bytes.Buffer
	toolArgs := append([]string{"tools"}, slices.DeleteFunc(slices.Clone(args), func(s string) bool { return s == "--addr" || s == "127.0.0.1:0" })...)
	if err := run(t.Context(), toolArgs, func(string) string { return "" }, &out, &errOut); err != nil {
		t.Fatalf("restmcp tools: %v\n%s", err, errOut.String())
	}
	lines := strings.Split(out.String(), "\n")
	if !strings.HasPrefix(lines[0], "API ") || !strings.Contains(lines[0], " NAME ") {
		t.Errorf("restmcp tools header: %q", lines[0])
	}
	rows := map[string]int{}
	for _, l := range lines[1:86] {
		f := strings.Fields(l)
		rows[f[0]]++
		if !strings.HasPrefix(f[1], f[0]+"_") {
			t.Errorf("restmcp tools row %q: the name does not start with its API", l)
		}
	}
	if diff := cmp.Diff(map[string]int{"checkout": 28, "transfers": 12, "balance_platform": 45}, rows); diff != "" {
		t.Errorf("restmcp tools rows per API (-want +got):\n%s", diff)
	}
}

// assertJSON compares two JSON texts as values.
func assertJSON(t *testing.T, what, want string, got []byte) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: the expected JSON does not parse: %v", what, err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: not JSON: %v: %s", what, err, got)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}
