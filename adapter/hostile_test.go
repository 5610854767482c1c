package adapter

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The hostile shapes: tools/call bodies of at most 1 MiB (DefaultMaxBodyBytes)
// that a caller with any key can send, each aimed at a cost of the
// argument path (decoding, the type check, the schema library's exact
// arithmetic, uniqueItems, patterns, request building). TestHostileInput
// asserts what each is answered; BenchmarkHostileInput measures what each
// costs (docs/security.md H26).

// hostileLimit is the largest body a shape may build: the default body cap.
const hostileLimit = DefaultMaxBodyBytes

// hostileShape is one hostile tools/call: its arguments object, built to
// fill at most hostileLimit bytes of body.
type hostileShape struct {
	name string
	args func(room int) string // room: bytes left for the arguments object
}

// fill repeats item (joined by ",") inside open…close for as long as the
// whole stays within room bytes.
func fill(open, close string, room int, item func(i int) string) string {
	var b strings.Builder
	b.WriteString(open)
	for i := 0; ; i++ {
		it := item(i)
		if b.Len()+len(it)+1+len(close) > room {
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(it)
	}
	b.WriteString(close)
	return b.String()
}

var hostileShapes = []hostileShape{
	// 16 numbers with huge exponents, the 247-byte body.
	{"huge-exponents-16", func(int) string {
		return fill(`{"amounts":[`, `]}`, 250, func(i int) string { return fmt.Sprintf("1e99999%d", i%10) })
	}},
	// As many huge-exponent integers as fit, under uniqueItems.
	{"huge-exponents-1MiB", func(room int) string {
		return fill(`{"ids":[`, `]}`, room, func(i int) string { return fmt.Sprintf("%de999999", i+1) })
	}},
	// One integer of nearly 1 MiB of digits, checked against minimum.
	{"digits-1MiB", func(room int) string {
		return `{"count":1` + strings.Repeat("7", room-len(`{"count":1}`)) + `}`
	}},
	// The largest numbers restmcp accepts, as many as fit, under uniqueItems.
	{"numbers-at-the-bound-1MiB", func(room int) string {
		return fill(`{"ids":[`, `]}`, room, func(i int) string { return fmt.Sprintf("%d%se400", i+1, strings.Repeat("0", 30)) })
	}},
	// A fraction with many digits against multipleOf.
	{"multipleOf-digits", func(int) string {
		return `{"ratio":0.` + strings.Repeat("5", 399) + `}`
	}},
	// Values nested as deep as a message may nest (maxMessageDepth), as
	// many as fit.
	{"deep-nesting", func(room int) string {
		deep := strings.Repeat("[", maxMessageDepth-10) + strings.Repeat("]", maxMessageDepth-10)
		return fill(`{"extra":{"a":[`, `]}}`, room, func(int) string { return deep })
	}},
	// One level deeper than a message may nest: refused before decoding.
	{"too-deep", func(room int) string {
		return `{"extra":` + strings.Repeat("[", maxMessageDepth) + strings.Repeat("]", maxMessageDepth) + `}`
	}},
	// Distinct strings with a long shared prefix, under uniqueItems and a pattern.
	{"shared-prefix-unique-strings", func(room int) string {
		prefix := strings.Repeat("a", 4000)
		return fill(`{"tags":[`, `]}`, room, func(i int) string { return `"` + prefix + fmt.Sprint(i) + `"` })
	}},
	// Short distinct strings, as many as fit, under uniqueItems.
	{"many-unique-strings", func(room int) string {
		return fill(`{"tags":[`, `]}`, room, func(i int) string { return fmt.Sprintf(`"t%d"`, i) })
	}},
	// A string of \u escapes (each decodes to one character).
	{"escapes", func(room int) string {
		n := (room - len(`{"note":""}`)) / 6
		return `{"note":"` + strings.Repeat(`\u0041`, n) + `"}`
	}},
	// Surrogate pairs, each escape a 12-byte 4-byte character.
	{"surrogate-escapes", func(room int) string {
		n := (room - len(`{"note":""}`)) / 12
		return `{"note":"` + strings.Repeat(`\ud83d\udc4d`, n) + `"}`
	}},
	// Many members in a free-form object.
	{"many-members", func(room int) string {
		return fill(`{"extra":{`, `}}`, room, func(i int) string { return fmt.Sprintf(`"k%d":%d`, i, i) })
	}},
}

// hostileBody is the tools/call body of shape s, at most hostileLimit bytes.
func hostileBody(t testing.TB, s hostileShape) string {
	const head = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"put_things","arguments":`
	const tail = `}}`
	body := head + s.args(hostileLimit-len(head)-len(tail)) + tail
	if len(body) > hostileLimit {
		t.Fatalf("shape %s builds %d bytes, over %d", s.name, len(body), hostileLimit)
	}
	return body
}

// hostileServer serves testdata/hostile.yaml in front of an upstream that
// records what it receives.
func hostileServer(t testing.TB) (*httptest.Server, *recorder) {
	rec := &recorder{}
	up := httptest.NewServer(rec)
	t.Cleanup(up.Close)
	return serve(t, Options{Tools: loadTools(t, "testdata/hostile.yaml", up.URL+"/v1"), Meter: allowAll(0)}), rec
}

// recorder is an upstream that keeps each request's line and body and
// answers {}.
type recorder struct {
	mu   sync.Mutex
	seen []string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.seen = append(r.seen, req.Method+" "+req.URL.RequestURI()+" "+req.Header.Get("Cookie")+" "+string(b))
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{}`)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.seen
	r.seen = nil
	return s
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHostileInput sends each hostile shape through the whole
// tools/call path (HTTP, decoding, validation, request building, the
// upstream call when admitted) and reports the process's CPU seconds per
// call ("cpu-s/op": server and in-process client together, so an upper
// bound on restmcp's share).
func BenchmarkHostileInput(b *testing.B) {
	srv, _ := hostileServer(b)
	c := benchClient()
	for _, s := range hostileShapes {
		body := hostileBody(b, s)
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			start := cpuTime(b)
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
				req.Header.Set("X-API-Key", "k-123")
				resp, err := c.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			b.ReportMetric((cpuTime(b)-start).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// TestHostileInput sends each hostile shape and compares the whole answer:
// a number past the bounds is refused as invalid arguments naming it, and
// nothing reaches the upstream; a shape within the bounds is sent upstream
// as the client wrote it. The cost of each is BenchmarkHostileInput's.
func TestHostileInput(t *testing.T) {
	srv, up := hostileServer(t)
	refused := func(text string) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + quoteJSON(text) + `}],"isError":true}}`
	}
	want := map[string]string{
		"huge-exponents-16":   refused("invalid arguments: amounts: [0]: number 1e999990 has an exponent beyond ±400; restmcp does not expand such numbers"),
		"huge-exponents-1MiB": refused("invalid arguments: ids: [0]: number 1e999999 has an exponent beyond ±400; restmcp does not expand such numbers"),
		"digits-1MiB":         refused("invalid arguments: count: number 1777777777777777…7777777777777777 has 1048476 digits; at most 400 are accepted"),
		"multipleOf-digits":   refused("invalid arguments: ratio: 0." + strings.Repeat("5", 399) + " is not a multiple of 0.5"),
		"too-deep":            `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: JSON nested deeper than 1000 levels"}}`,
	}
	for _, s := range hostileShapes {
		t.Run(s.name, func(t *testing.T) {
			body := hostileBody(t, s)
			got := post(t, srv.URL+"/mcp", body, map[string]string{"X-API-Key": "k-123"})
			sent := up.take()
			if w, ok := want[s.name]; ok {
				if got.body != w {
					t.Errorf("answer\n%.600s\nwant\n%.600s", got.body, w)
				}
				if len(sent) != 0 {
					t.Errorf("upstream saw %d requests, want none", len(sent))
				}
				return
			}
			if want := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{}}}`; got.status != 200 || got.body != want {
				t.Errorf("answer %d\n%.600s\nwant 200\n%s", got.status, got.body, want)
			}
			if len(sent) != 1 || sent[0] != "POST /v1/things  "+argumentsOf(t, body) {
				t.Errorf("upstream saw %d requests (first %.200q), want the arguments as sent", len(sent), sent)
			}
		})
	}
}

// argumentsOf returns the raw arguments of a tools/call body.
func argumentsOf(t *testing.T, body string) string {
	var m struct {
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	return string(m.Params.Arguments)
}
