package adapter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The faults of integrityUpstream, one per tools/call, as real upstreams
// misbehave (each a violation of RFC 9112 by the server, which the client
// must survive without mixing callers up).
var integrityFaults = []string{
	"none",
	"trailing-same-write",  // a whole second answer right after the answer, in one write
	"trailing-later",       // the same, 30 ms after the answer
	"longer-than-length",   // a body longer than its Content-Length
	"after-204",            // 204 No Content, then a whole answer
	"after-304",            // 304 Not Modified, then a whole answer
	"after-head",           // an answer to HEAD with a body (Content-Length bytes)
	"informational",        // 100 Continue and 103 Early Hints before the answer
	"close-mid-body",       // half the body, then the connection closed
	"http10-keep-alive",    // HTTP/1.0 with Connection: keep-alive
	"one-byte-writes",      // the answer written one byte at a time (a large body in 4,096 pieces)
	"trailing-after-close", // Connection: close, the answer, then a second one
}

// integrityUpstream is a hand-written HTTP/1.1 server that answers GET
// and HEAD /echo?tag=T&fault=F with {"key":K,"tag":T} (K the X-Api-Key it
// got; pad bytes of padding when pad > 0), misbehaving as F says. Its
// stray answers repeat the answer made before on the same connection (the
// answer itself on a new one), as an upstream that sends an answer twice
// does: whoever reads one has the key and tag of the call it was made for.
type integrityUpstream struct {
	ln  net.Listener
	pad int
	wg  sync.WaitGroup

	mu    sync.Mutex
	conns map[net.Conn]bool // open, closed at cleanup (restmcp keeps idle ones 90 s)
}

func newIntegrityUpstream(t testing.TB, pad int) *integrityUpstream {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &integrityUpstream{ln: ln, pad: pad, conns: map[net.Conn]bool{}}
	u.wg.Add(1)
	go u.accept()
	t.Cleanup(func() {
		ln.Close()
		u.mu.Lock()
		for c := range u.conns {
			c.Close()
		}
		u.mu.Unlock()
		u.wg.Wait()
	})
	return u
}

func (u *integrityUpstream) accept() {
	defer u.wg.Done()
	for {
		c, err := u.ln.Accept()
		if err != nil {
			return
		}
		u.mu.Lock()
		u.conns[c] = true
		u.mu.Unlock()
		u.wg.Add(1)
		go func() {
			defer u.wg.Done()
			u.serveConn(c)
			c.Close()
			u.mu.Lock()
			delete(u.conns, c)
			u.mu.Unlock()
		}()
	}
}

func (u *integrityUpstream) serveConn(c net.Conn) {
	br := bufio.NewReader(c)
	last := "" // the body of the answer made before on this connection
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		q := req.URL.Query()
		body := `{"key":` + strconv.Quote(req.Header.Get("X-Api-Key")) + `,"tag":` + strconv.Quote(q.Get("tag"))
		if u.pad > 0 {
			body += `,"pad":"` + strings.Repeat("x", u.pad) + `"`
		}
		body += "}"
		if last == "" {
			last = body
		}
		stray := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(last)) + "\r\n\r\n" + last
		last = body
		head := func(proto, extra string) string {
			return proto + " 200 OK\r\nContent-Type: application/json\r\n" + extra + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
		}
		answer := head("HTTP/1.1", "") + body
		var err2 error
		write := func(s string) {
			if err2 == nil {
				_, err2 = io.WriteString(c, s)
			}
		}
		switch q.Get("fault") {
		case "trailing-same-write":
			write(answer + stray)
		case "trailing-later":
			write(answer)
			time.Sleep(30 * time.Millisecond) // the stray answer comes on its own, later
			write(stray)
		case "longer-than-length":
			write(answer + `,"more":"bytes past the Content-Length"}`)
		case "after-204":
			write("HTTP/1.1 204 No Content\r\n\r\n" + stray)
		case "after-304":
			write("HTTP/1.1 304 Not Modified\r\n\r\n" + stray)
		case "after-head":
			write(answer) // to HEAD: the body should not be there
		case "informational":
			write("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n" + answer)
		case "close-mid-body":
			write(answer[:len(answer)-len(body)/2])
			return
		case "http10-keep-alive":
			write(head("HTTP/1.0", "Connection: keep-alive\r\n") + body)
		case "one-byte-writes":
			// One byte a write; a 1 MB answer in 4,096 pieces of 256
			// bytes after its head one byte at a time (a million writes
			// take minutes under -race, past the call's deadline).
			n := len(answer) - len(body)
			for i := range n {
				write(answer[i : i+1])
			}
			piece := max(1, len(body)/4096)
			for i := n; i < len(answer); i += piece {
				write(answer[i:min(i+piece, len(answer))])
			}
		case "trailing-after-close":
			write(head("HTTP/1.1", "Connection: close\r\n") + body + stray)
			return
		default:
			write(answer)
		}
		if err2 != nil {
			return
		}
	}
}

// integrityOutcome is what one caller got for one call.
type integrityOutcome struct {
	fault string
	ok    bool   // exactly its own answer
	err   bool   // an error result, naming no other caller
	stale bool   // an answer made for an earlier call with the same key
	wrong string // the answer, when it was made for another caller (another key)
	raw   string // the whole answer, for a failure's message
}

// runIntegrity makes calls tools/calls through a server in front of an
// integrityUpstream, from callers goroutines at once, each with its own
// key, each call with its own tag and the next fault in turn, and returns
// what each got. unsolicited counts net/http's "Unsolicited response"
// log lines (a stray answer found on an idle connection, which is then
// closed).
func runIntegrity(t *testing.T, callers, calls, pad int) (outcomes []integrityOutcome, unsolicited int, pooled int64) {
	up := newIntegrityUpstream(t, pad)
	var logged bytes.Buffer
	var logMu sync.Mutex
	prev, prevFlags := log.Writer(), log.Flags()
	log.SetOutput(writerFunc(func(p []byte) (int, error) { logMu.Lock(); defer logMu.Unlock(); return logged.Write(p) }))
	log.SetFlags(0)
	t.Cleanup(func() { log.SetOutput(prev); log.SetFlags(prevFlags) })

	opts := Options{Tools: loadTools(t, "testdata/integrity.yaml", "http://"+up.ln.Addr().String()), Meter: allowAll(0),
		MaxResponseBytes: 4 << 20}
	srv, s := serveServer(t, opts)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: callers}}
	t.Cleanup(client.CloseIdleConnections)

	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("key-%d", i)
			// Each caller goes through the faults with its own step
			// (1, 5, 7 or 11: each visits all 12), so the fault that
			// follows trailing-later (whose stray answer may become the
			// next call's, an earlier answer of the same key) differs
			// from caller to caller.
			step := []int{1, 5, 7, 11}[i%4]
			for j, k := i, 0; j < calls; j, k = j+callers, k+1 {
				fault := integrityFaults[(i+k*step)%len(integrityFaults)]
				tag := fmt.Sprintf("c%d-%d", i, j)
				o := integrityCall(t, client, srv.URL+"/mcp", key, tag, fault, pad)
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	logMu.Lock()
	defer logMu.Unlock()
	return outcomes, strings.Count(logged.String(), "Unsolicited response received on idle HTTP channel"), s.pooledAnswers.Load()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// integrityCall makes one call and says what came back.
func integrityCall(t *testing.T, client *http.Client, url, key, tag, fault string, pad int) integrityOutcome {
	tool := "echo"
	if fault == "after-head" {
		tool = "echo_head"
	}
	args, _ := json.Marshal(map[string]string{"tag": tag, "fault": fault})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(toolsCallBody(1, tool, string(args))))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-API-Key", key)
	resp, err := client.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", tag, fault, err)
		return integrityOutcome{fault: fault, err: true}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Errorf("%s %s: reading: %v", tag, fault, err)
		return integrityOutcome{fault: fault, err: true}
	}
	var m struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || len(m.Result.Content) == 0 {
		t.Errorf("%s %s: not a tool result: %s", tag, fault, raw)
		return integrityOutcome{fault: fault, err: true}
	}
	text := m.Result.Content[len(m.Result.Content)-1].Text
	// Any key in the answer other than the caller's own is an answer made
	// for another caller; its own key with another tag, one made for an
	// earlier call of its own.
	var seen strings.Builder // every text item, decoded, and structuredContent
	for _, c := range m.Result.Content {
		seen.WriteString(c.Text)
		seen.WriteByte('\n')
	}
	seen.Write(m.Result.StructuredContent)
	stale := false
	for _, member := range []string{`"key":"`, `"tag":"`} {
		for rest := seen.String(); ; {
			i := strings.Index(rest, member)
			if i < 0 {
				break
			}
			rest = rest[i+len(member):]
			v, _, _ := strings.Cut(rest, `"`)
			switch {
			case member == `"key":"` && v != key:
				return integrityOutcome{fault: fault, wrong: key + " " + tag + " got " + string(raw)}
			case member == `"tag":"` && v != tag:
				stale = true
			}
		}
	}
	if stale {
		return integrityOutcome{fault: fault, stale: true}
	}
	body := `{"key":"` + key + `","tag":"` + tag + `"`
	if pad > 0 {
		body += `,"pad":"` + strings.Repeat("x", pad) + `"`
	}
	body += "}"
	// The answers without a body (to a HEAD, a 204) carry no tag: one that
	// reaches a call it was not made for came on this key's own connections
	// (a pool per key), shifted along by a stray answer, so it is an
	// earlier answer of this key, like a body with an earlier tag.
	bodiless := text == "HTTP 200 OK" || text == "HTTP 204 No Content"
	switch {
	case m.Result.IsError:
		return integrityOutcome{fault: fault, err: true}
	case bodiless && !(fault == "after-head" && text == "HTTP 200 OK") && !(fault == "after-204" && text == "HTTP 204 No Content"):
		return integrityOutcome{fault: fault, stale: true, raw: string(raw)}
	case fault == "after-head" || fault == "after-204":
		want := "HTTP 200 OK"
		if fault == "after-204" {
			want = "HTTP 204 No Content"
		}
		return integrityOutcome{fault: fault, ok: text == want, raw: string(raw)}
	default:
		return integrityOutcome{fault: fault, ok: text == body && string(m.Result.StructuredContent) == body, raw: string(raw)}
	}
}

// TestAnswerIntegrity: 32 callers at once, each with its own key, 2,000
// calls against an upstream that sends stray answers (another caller's)
// in every way listed in integrityFaults: every caller gets its own
// answer or an error result, never an answer made for another caller.
// The faults that keep the answer itself intact (a stray answer after it,
// 1xx, HTTP/1.0, one-byte writes) give the caller its answer; a body cut
// short and a 304 are error results. The same with 1 MB answers.
// docs/requests.md#connections.
func TestAnswerIntegrity(t *testing.T) {
	for _, c := range []struct {
		name         string
		calls, pad   int
		callers      int
		maxErrorsPct int // errors allowed on the faults that keep the answer intact (a poisoned connection's next call)
	}{
		{name: "small answers", callers: 32, calls: 2000},
		{name: "1 MB answers", callers: 32, calls: 192, pad: 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			outcomes, unsolicited, pooled := runIntegrity(t, c.callers, c.calls, c.pad)
			// 1 MB answers with a Content-Length are read into pooled
			// buffers, reused from caller to caller (pooledbody.go).
			if t.Logf("answers read into a pooled buffer: %d", pooled); (pooled > 0) != (c.pad > 0) {
				t.Errorf("%d answers read into a pooled buffer", pooled)
			}
			if len(outcomes) != c.calls {
				t.Fatalf("%d outcomes, want %d", len(outcomes), c.calls)
			}
			type tally struct{ ok, err, stale, wrong int }
			byFault := map[string]*tally{}
			var wrong []string
			for _, o := range outcomes {
				tl := byFault[o.fault]
				if tl == nil {
					tl = &tally{}
					byFault[o.fault] = tl
				}
				switch {
				case o.wrong != "":
					tl.wrong++
					wrong = append(wrong, o.wrong)
				case o.stale:
					tl.stale++
				case o.err:
					tl.err++
				case o.ok:
					tl.ok++
				default:
					t.Errorf("%s: neither its own answer nor an error: %.400s", o.fault, o.raw)
				}
			}
			for _, f := range integrityFaults {
				tl := byFault[f]
				if tl == nil {
					t.Fatalf("no call with fault %s", f)
				}
				t.Logf("%-22s own answer %4d  error result %4d  an earlier one of its key %3d  another caller's %d", f, tl.ok, tl.err, tl.stale, tl.wrong)
			}
			t.Logf("net/http found a stray answer on an idle connection (and closed it) %d times", unsolicited)
			if len(wrong) > 0 {
				t.Errorf("%d calls got an answer made for another caller; the first: %s", len(wrong), wrong[0][:min(len(wrong[0]), 300)])
			}
			// What the fault itself makes of the call, whatever the
			// connection it came on.
			for _, f := range []string{"close-mid-body", "after-304"} {
				if tl := byFault[f]; tl.ok != 0 {
					t.Errorf("%s: %d calls answered as if nothing were wrong", f, tl.ok)
				}
			}
			intact := []string{"none", "trailing-same-write", "trailing-later", "longer-than-length", "after-204", "after-head",
				"informational", "http10-keep-alive", "one-byte-writes", "trailing-after-close"}
			for _, f := range intact {
				if tl := byFault[f]; tl.ok == 0 {
					t.Errorf("%s: no call got its answer (%d errors)", f, tl.err)
				}
			}
		})
	}
}
