package adapter

import (
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/restmcp/restmcp/internal/procpace"
)

// TestCallsReportedToThePacer: each tools/call is reported to
// adaptive_procs' pacer (internal/procpace) while it runs: a call that
// starts while another waits for its upstream counts as overlapping, and
// none is left in progress after both answer. Other methods are not calls.
func TestCallsReportedToThePacer(t *testing.T) {
	arrived := make(chan struct{}, 2)
	release := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"p1","name":"Rex"}`))
	})
	srv := serve(t, Options{Tools: loadTools(t, "testdata/petstore.yaml", up.URL)})
	key := map[string]string{"X-API-Key": "k1"}

	s0, o0, p0 := procpace.CallCounts()
	post(t, srv.URL+"/mcp", toolsListBody, key)
	post(t, srv.URL+"/mcp", pingBody, key)
	if s, o, p := procpace.CallCounts(); s != s0 || o != o0 || p != p0 {
		t.Fatalf("tools/list and ping: %d started, %d overlapping, %d in progress; want none", s-s0, o-o0, p-p0)
	}
	var wg sync.WaitGroup
	results := make([]rpcResponse, 2)
	for i := range 2 {
		wg.Go(func() { results[i] = post(t, srv.URL+"/mcp", toolsCallBody(10+i, "get_pet", `{"petId":"p1"}`), key) })
		<-arrived // the first call waits at the upstream when the second starts
	}
	if s, o, p := procpace.CallCounts(); s-s0 != 2 || o-o0 != 1 || p-p0 != 2 {
		t.Fatalf("two calls at the upstream: %d started, %d overlapping, %d in progress; want 2, 1, 2", s-s0, o-o0, p-p0)
	}
	close(release)
	wg.Wait()
	for i, r := range results {
		want := `{"jsonrpc":"2.0","id":` + strconv.Itoa(10+i) + `,"result":{"content":[{"type":"text","text":"{\"id\":\"p1\",\"name\":\"Rex\"}"}],"structuredContent":{"id":"p1","name":"Rex"}}}`
		if r.status != http.StatusOK || r.body != want {
			t.Fatalf("call %d: %d\n%s\nwant 200\n%s", i, r.status, r.body, want)
		}
	}
	if s, o, p := procpace.CallCounts(); s-s0 != 2 || o-o0 != 1 || p-p0 != 0 {
		t.Fatalf("after both answered: %d started, %d overlapping, %d in progress; want 2, 1, 0", s-s0, o-o0, p-p0)
	}
}
