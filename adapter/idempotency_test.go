package adapter

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestIdempotencyKey: an operation that declares an Idempotency-Key header
// gets one on every call (the model's, else a UUID restmcp makes and
// returns in _meta); a request that net/http resends after a reused
// connection died carries the same key; a failed call says whether its
// request was sent and, when it was, the key to retry with.
func TestIdempotencyKey(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	drop := 0 // requests of createPayment to drop (connection closed, no answer)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		if r.URL.Path == "/v1/payments" {
			keys = append(keys, r.Header.Get("Idempotency-Key"))
		}
		d := r.URL.Path == "/v1/payments" && drop > 0
		if d {
			drop--
		}
		mu.Unlock()
		if d {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		if r.URL.Path == "/v1/status" {
			_, _ = w.Write([]byte(`{}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"pay_1"}`))
	})
	srv := serve(t, Options{Tools: loadTools(t, "testdata/idempotency.yaml", up.URL), Meter: allowAll(0)})
	key := map[string]string{"X-API-Key": "k-1"}
	call := func(id int, args string) map[string]any {
		t.Helper()
		got := post(t, srv.URL+"/mcp", toolsCallBody(id, "create_payment", args), key)
		var m struct {
			Result map[string]any `json:"result"`
		}
		if err := json.Unmarshal([]byte(got.body), &m); err != nil || m.Result == nil {
			t.Fatalf("call %d: %d %s", id, got.status, got.body)
		}
		return m.Result
	}
	taken := func() []string {
		mu.Lock()
		defer mu.Unlock()
		k := keys
		keys = nil
		return k
	}

	// The model gives no key: restmcp makes one, sends it, returns it.
	res := call(1, `{"amount":5}`)
	sent := taken()
	meta, _ := res["_meta"].(map[string]any)
	if len(sent) != 1 || !uuidRE.MatchString(sent[0]) || meta["io.restmcp/idempotency-key"] != sent[0] || res["isError"] == true {
		t.Errorf("made key: sent %q, result %v", sent, res)
	}
	// The model's own key goes as it is, and nothing is added.
	res = call(2, `{"amount":5,"Idempotency-Key":"order-77"}`)
	if sent := taken(); len(sent) != 1 || sent[0] != "order-77" || res["_meta"] != nil {
		t.Errorf("given key: sent %q, result %v", sent, res)
	}

	// A reused connection that dies before the answer: net/http sends the
	// request again, with the same key, and the call succeeds.
	if got := post(t, srv.URL+"/mcp", toolsCallBody(3, "get_status", `{}`), key); got.status != 200 {
		t.Fatalf("get_status: %d %s", got.status, got.body)
	}
	mu.Lock()
	drop = 1
	mu.Unlock()
	res = call(4, `{"amount":5}`)
	sent = taken()
	meta, _ = res["_meta"].(map[string]any)
	if len(sent) != 2 || sent[0] != sent[1] || !uuidRE.MatchString(sent[0]) || meta["io.restmcp/idempotency-key"] != sent[0] || res["isError"] == true {
		t.Errorf("resent request: keys %q, result %v", sent, res)
	}

	// Every attempt dropped: the request was sent, and the result says
	// which key a retry must reuse.
	mu.Lock()
	drop = 2
	mu.Unlock()
	res = call(5, `{"amount":5}`)
	sent = taken()
	content, _ := res["content"].([]any)
	if len(sent) == 0 || res["isError"] != true || len(content) != 2 {
		t.Fatalf("dropped: keys %q, result %v", sent, res)
	}
	first := content[0].(map[string]any)["text"].(string)
	note := content[1].(map[string]any)["text"].(string)
	wantNote := `the request was sent before the failure: the API may have acted on it; it carried Idempotency-Key ` + sent[0] +
		`: to retry it, pass the same key ("Idempotency-Key": "` + sent[0] + `") so the API acts at most once`
	if !strings.HasPrefix(first, "upstream request failed: ") || note != wantNote {
		t.Errorf("dropped:\n%q\n%q\nwant note %q", first, note, wantNote)
	}

	// An upstream that is not there: the request was not sent.
	down := serve(t, Options{Tools: loadTools(t, "testdata/idempotency.yaml", "http://127.0.0.1:1"), Meter: allowAll(0)})
	got := post(t, down.URL+"/mcp", toolsCallBody(6, "create_payment", `{"amount":5,"Idempotency-Key":"order-78"}`), key)
	var m struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(got.body), &m)
	if c := m.Result.Content; len(c) != 2 || c[1].Text != "the request was not sent: the API did not act on it, and retrying is safe" {
		t.Errorf("closed port: %s", got.body)
	}
}
