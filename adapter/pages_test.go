package adapter

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestResponseHeadersAndPages: the headers an operation declares reach the
// model (a text item, and a "headers" member of an object
// structuredContent, which its outputSchema describes), never Set-Cookie
// or a token; a Link rel="next" / "prev" becomes the arguments of the same
// tool's next call, for GitHub's shape (absolute URLs, page and per_page)
// and a cursor API's (a relative URL, a cursor); the caller's key in a
// Link's query is neither an argument nor shown.
func TestResponseHeadersAndPages(t *testing.T) {
	var base string
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/repos/o/r/issues":
			w.Header().Set("Link", `<`+base+`/v1/repos/o/r/issues?page=3&per_page=30&api_key=k-secret>; rel="next", <`+base+`/v1/repos/o/r/issues?page=1&per_page=30&api_key=k-secret>; rel="prev", <`+base+`/v1/repos/o/r/issues?page=9&per_page=30&api_key=k-secret>; rel="last"`)
			_, _ = w.Write([]byte(`[{"number":1}]`))
		case "/v1/events":
			w.Header().Set("Link", `</v1/events?cursor=ev_42&limit=50>; rel="next"`)
			w.Header().Set("X-Request-Id", "req-7")
			w.Header().Set("Set-Cookie", "session=abc")
			w.Header().Set("X-Session-Token", "tok")
			_, _ = w.Write([]byte(`{"data":[{"id":"ev_41"}]}`))
		}
	})
	base = up.URL
	canon := func(s string) string {
		b, _ := json.Marshal(parseJSON(t, s))
		return string(b)
	}
	srv := serve(t, Options{Tools: loadTools(t, "testdata/pages.yaml", up.URL), Meter: allowAll(0)})
	key := map[string]string{"X-API-Key": "k-secret"}
	result := func(id int, tool, args string) string {
		got := post(t, srv.URL+"/mcp", toolsCallBody(id, tool, args), key)
		var m struct {
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal([]byte(got.body), &m)
		return string(m.Result)
	}
	redacted := "REDACTED"
	if got := result(1, "list_issues", `{"owner":"o","repo":"r","page":2,"per_page":30}`); true {
		want := `{"content":[{"type":"text","text":"[{\"number\":1}]"},{"type":"text","text":"response headers:\nlink: <` + base + `/v1/repos/o/r/issues?page=3\u0026per_page=30\u0026api_key=` + redacted + `>; rel=\"next\", <` + base + `/v1/repos/o/r/issues?page=1\u0026per_page=30\u0026api_key=` + redacted + `>; rel=\"prev\", <` + base + `/v1/repos/o/r/issues?page=9\u0026per_page=30\u0026api_key=` + redacted + `>; rel=\"last\"\nnext page: call list_issues with {\"owner\":\"o\",\"page\":3,\"per_page\":30,\"repo\":\"r\"}\nprev page: call list_issues with {\"owner\":\"o\",\"page\":1,\"per_page\":30,\"repo\":\"r\"}"}]}`
		if diff := cmp.Diff(canon(want), canon(got)); diff != "" {
			t.Errorf("GitHub shape (-want +got):\n%s", diff)
		}
	}
	if got := result(2, "list_events", `{"limit":50}`); true {
		want := `{"content":[{"type":"text","text":"{\"data\":[{\"id\":\"ev_41\"}]}"},{"type":"text","text":"response headers:\nlink: </v1/events?cursor=ev_42\u0026limit=50>; rel=\"next\"\nx-request-id: req-7\nnext page: call list_events with {\"cursor\":\"ev_42\",\"limit\":50}"}],` +
			`"structuredContent":{"data":[{"id":"ev_41"}],"headers":{"link":"</v1/events?cursor=ev_42\u0026limit=50>; rel=\"next\"","x-request-id":"req-7"}}}`
		if diff := cmp.Diff(canon(want), canon(got)); diff != "" {
			t.Errorf("cursor shape (-want +got):\n%s", diff)
		}
	}
	// The output schema describes the member, with the declared headers
	// that may be returned (not Set-Cookie, not a token).
	list := post(t, srv.URL+"/mcp", toolsListBody, nil)
	var l struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	_ = json.Unmarshal([]byte(list.body), &l)
	for _, tl := range l.Result.Tools {
		if tl.Name != "list_events" {
			continue
		}
		want := `{"type":"object","properties":{"data":{"anyOf":[{"type":"array","items":{"anyOf":[{"type":"object","properties":{"id":{"anyOf":[{"type":"string"},{"type":"null"}]}}},{"type":"null"}]}},{"type":"null"}]},` +
			`"headers":{"description":"Response headers the API sent with this answer, by lower-case name","anyOf":[{"type":"object","properties":{"link":{"anyOf":[{"type":"string"},{"type":"null"}]},"x-request-id":{"anyOf":[{"type":"string"},{"type":"null"}]}}},{"type":"null"}]}}}`
		if string(tl.OutputSchema) != want {
			t.Errorf("list_events outputSchema\n%s\nwant\n%s", tl.OutputSchema, want)
		}
	}
}
