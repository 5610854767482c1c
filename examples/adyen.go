package examples

import (
	"encoding/json"
	"io"
	"net/http"
)

// AdyenDemoKey is the API key the Adyen example's stub upstreams accept
// and its plans file gives a plan to. It is a demo value, published on
// purpose.
const AdyenDemoKey = "adyen-demo-key"

// NewAdyenStub is a stand-in for one Adyen API (api names it: "checkout",
// "transfers", "balance_platform"), for the adyen example: every request
// with X-API-Key AdyenDemoKey is answered 200 with a JSON object that
// echoes what arrived, {"api", "method", "path", "query", "body"} (body:
// the request body as sent, "" when none; & < > unescaped); any other key gets 401
// {"status":401,"errorCode":"000","message":"HTTP Status Response -
// Unauthorized","errorType":"security"}, as Adyen answers.
func NewAdyenStub(api string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("X-API-Key") != AdyenDemoKey {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"status":401,"errorCode":"000","message":"HTTP Status Response - Unauthorized","errorType":"security"}`)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(map[string]string{
			"api": api, "method": r.Method, "path": r.URL.Path, "query": r.URL.RawQuery, "body": string(body),
		})
	})
}
