package openapi

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

func loadAPI(t *testing.T, api, doc string) *Document {
	t.Helper()
	d, err := LoadData(context.Background(), []byte(doc), "", LoadOptions{API: api, Upstream: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestMergeAPIs checks federation naming: generated names get the API
// prefix, the N5 cap keeps the prefix and hashes the tail, overrides are
// used as given, N6 holds across APIs in order, and a merge after a reload
// keeps the names served before (A6): no name moves to another tool.
func TestMergeAPIs(t *testing.T) {
	long := strings.Repeat("getTheVeryLongResource", 4)
	a := loadAPI(t, "checkout", `{"openapi":"3.0.3","info":{"title":"Checkout API","version":"72"},"paths":{
		"/payments":{"post":{"operationId":"post-payments","responses":{"200":{"description":"ok"}}}},
		"/sessions":{"get":{"operationId":"getSessions","x-mcp-name":"sessions","responses":{"200":{"description":"ok"}}}},
		"/x":{"get":{"operationId":"`+long+`","responses":{"200":{"description":"ok"}}}}}}`)
	b := loadAPI(t, "transfers", `{"openapi":"3.0.3","info":{"title":"Transfers API","version":"4"},"paths":{
		"/sessions":{"get":{"operationId":"listSessions","x-mcp-name":"sessions","responses":{"200":{"description":"ok"}}}},
		"/transfers":{"post":{"operationId":"transferFunds","responses":{"200":{"description":"ok"}}}}}}`)
	names := func(d *Document) (out [][2]string) {
		for _, t := range d.Tools {
			out = append(out, [2]string{t.API, t.Name})
		}
		return out
	}
	m := Merge([]*Document{a, b}, 0, nil, nil)
	want := [][2]string{
		{"checkout", "checkout_post_payments"},
		{"checkout", "sessions"},
		// N5 over the whole name: 55 characters, "_", sha256(operationId)[:8]
		// (strcase writes "Resourceget" as one word).
		{"checkout", "checkout_get_the_very_long_resourceget_the_very_long_re_a55fb79b"},
		{"transfers", "sessions_2"},
		{"transfers", "transfers_transfer_funds"},
	}
	if got := names(m); !reflect.DeepEqual(got, want) {
		t.Errorf("merged names:\n got %q\nwant %q", got, want)
	}
	if n := len(want[2][1]); n != 64 {
		t.Errorf("capped name has %d characters, want 64", n)
	}
	if m.Title != "Checkout API, Transfers API" {
		t.Errorf("Title %q", m.Title)
	}
	wantDesc := "The tools of 2 APIs; each tool's name starts with its API's name:\n- checkout: Checkout API (version 72)\n- transfers: Transfers API (version 4)"
	if m.Description != wantDesc {
		t.Errorf("Description %q", m.Description)
	}
	rep := m.Report(ReportOptions{})
	wantColl := []Collision{{Tool: "sessions_2", Wanted: "sessions", OperationID: "listSessions", Method: "GET", Path: "/sessions"}}
	if !reflect.DeepEqual(rep.Collisions, wantColl) {
		t.Errorf("collisions %+v", rep.Collisions)
	}

	// checkout is reloaded without its sessions override: transfers' tool
	// keeps sessions_2 (a client that listed "sessions" must not reach
	// transfers' operation under it), and "sessions" is given to no one.
	a2 := loadAPI(t, "checkout", `{"openapi":"3.0.3","info":{"title":"Checkout API","version":"72"},"paths":{
		"/payments":{"post":{"operationId":"post-payments","responses":{"200":{"description":"ok"}}}}}}`)
	served := MergedNames(nil, m)
	m = Merge([]*Document{a2, b}, 0, served, nil)
	want = [][2]string{{"checkout", "checkout_post_payments"}, {"transfers", "sessions_2"}, {"transfers", "transfers_transfer_funds"}}
	if got := names(m); !reflect.DeepEqual(got, want) {
		t.Errorf("after reload:\n got %q\nwant %q", got, want)
	}
	// Reloaded again with its sessions override back: checkout's operation
	// gets its own name again, transfers' keeps sessions_2.
	served = MergedNames(served, m)
	m = Merge([]*Document{a, b}, 0, served, nil)
	want = [][2]string{{"checkout", "checkout_post_payments"}, {"checkout", "sessions"},
		{"checkout", "checkout_get_the_very_long_resourceget_the_very_long_re_a55fb79b"}, {"transfers", "sessions_2"}, {"transfers", "transfers_transfer_funds"}}
	if got := names(m); !reflect.DeepEqual(got, want) {
		t.Errorf("after the second reload:\n got %q\nwant %q", got, want)
	}
	// A new process (no served names) names from scratch.
	m = Merge([]*Document{a2, b}, 0, nil, nil)
	want = [][2]string{{"checkout", "checkout_post_payments"}, {"transfers", "sessions"}, {"transfers", "transfers_transfer_funds"}}
	if got := names(m); !reflect.DeepEqual(got, want) {
		t.Errorf("a first merge without checkout's sessions:\n got %q\nwant %q", got, want)
	}
	if rep := m.Report(ReportOptions{}); len(rep.Collisions) != 0 {
		t.Errorf("collisions: %+v", rep.Collisions)
	}

	if _, err := LoadData(context.Background(), []byte(`{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{}}`), "x.json", LoadOptions{API: "9lives"}); err == nil ||
		err.Error() != `loading x.json: API name "9lives" must start with a letter and hold only A-Z a-z 0-9 _ -` {
		t.Errorf("bad API name: %v", err)
	}
}
