package adapter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// The fast path answers stateless tools/call and tools/list on the
// pre-2026 wire (MCP 2024-11-05 … 2025-11-25 Streamable HTTP:
// https://modelcontextprotocol.io/specification/2025-11-25/basic/transports)
// straight from restmcp's tool table, with the message decodeMessage read
// once, instead of handing the body to the go-sdk, which decodes it about
// nine more times and connects a throwaway session for it. Its answers are
// the SDK's byte for byte (TestFastPathMatchesSDK): the same status,
// headers, JSON-RPC envelope and result encoding, in JSON and SSE form
// (a large tools/list goes in gzip to a client that accepts it: the same
// bytes once decoded, listgzip.go). Everything else, and any request the
// SDK would treat in a way the fast path does not (another protocol
// revision, a cursor, headers the SDK refuses), goes to the SDK.
//
// On the 2026-07-28 wire the fast path answers tools/call for a known tool
// too, with what that revision requires of a result and the SDK leaves out
// when a receiving middleware answers: "resultType": "complete" (SEP-2322)
// and the server's identity in _meta (SEP-2575), in the places the SDK's
// CallToolResult encoding puts them.

// fastResult is the JSON-RPC result or error the fast path answers with.
type fastResult struct {
	result []byte       // the encoded result; nil with err, large or list
	buf    *[]byte      // result's buffer when it is from resultBuffers, back there once written
	large  *largeResult // a result encoded as it is written (writeLarge)
	list   *encodedList // a tools/list result (listgzip.go)
	err    *jsonrpc.Error
}

// serveFast answers the request when the fast path applies, and reports
// whether it did.
func (s *Server) serveFast(c *gin.Context, ex *exchange) bool {
	m := ex.msg
	if s.opts.DisableFastPath || m == nil || m.id == nil || !s.fastEligible(c.Request, m) {
		return false
	}
	var r fastResult
	switch m.method {
	case "tools/call":
		r = s.fastCall(c, m, isModernCall(c.Request, m))
	case "tools/list":
		l := s.listFor(c)
		if c.Request.Header.Get("Mcp-Protocol-Version") == protocolVersionStandardHeaders {
			l = l.modernList(s.impl) // fastEligible checked the request's 2026-07-28 _meta
		}
		r = fastResult{list: l}
	default:
		return false
	}
	writeFast(c, ex.handler != s.sseHandler, m.id, r)
	if r.buf != nil {
		putResultBuffer(r.buf, r.result) // written: net/http's Write has copied or sent the bytes
	}
	s.fastServed.Add(1)
	return true
}

// fastEligible reports whether the SDK would answer r with nothing the fast
// path leaves out: a POST of a JSON body, no Last-Event-ID, a legacy
// protocol revision (or none, which the SDK takes as 2025-03-26), no
// 2026-07-28 _meta, and for tools/list no params and a list that does not
// depend on the caller.
func (s *Server) fastEligible(r *http.Request, m *rpcMessage) bool {
	if contentType(r.Header.Get("Content-Type")) != "application/json" {
		return false
	}
	if len(r.Header.Values("Last-Event-ID")) > 0 {
		return false
	}
	if isModernCall(r, m) {
		// The gate checked the 2026-07-28 headers and _meta (checkCall).
		_, known := exchangeFrom(r.Context()).table.handlers[m.tool]
		return known
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); m.method == "tools/list" && v == protocolVersionStandardHeaders && slices.Contains(s.versions, v) {
		// As the go-sdk checks it (validateMcpHeaders, validateRequestMeta);
		// anything it might refuse goes to it.
		return r.Header.Get("Mcp-Method") == m.method && modernListParams(m.params, v)
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); m.metaVersion != "" || v != "" && (v >= protocolVersionStandardHeaders || !slices.Contains(s.versions, v)) {
		return false
	}
	switch m.method {
	case "tools/call":
		return true
	case "tools/list":
		return m.params == nil || plainListParams(m.params)
	}
	return false
}

// plainListParams reports whether tools/list params change nothing in the
// SDK's answer: {}, an empty or null cursor (as some clients send on the
// first page), or _meta (a progress token, say) without the 2026-07-28
// protocol version that selects the other wire. A non-empty cursor is
// left to the SDK, which refuses it: every tool is on one page, so only a
// made-up one comes.
func plainListParams(params []byte) bool {
	ms, ok := jsonvalue.Members(params)
	if !ok {
		return false
	}
	for _, m := range ms {
		if m.Key == "cursor" && (string(m.Raw) == `""` || string(m.Raw) == "null") {
			continue
		}
		if m.Key != "_meta" {
			return false
		}
		meta, ok := jsonvalue.Members(m.Raw)
		if !ok {
			return false
		}
		for _, mm := range meta {
			if mm.Key == metaKeyProtocolVersion {
				return false
			}
		}
	}
	return true
}

// modernListParams reports whether tools/list params are only the
// 2026-07-28 _meta the go-sdk answers a list to (SEP-2575): the protocol
// version (version, the header's), client capabilities that decode as the
// SDK's, and client info absent or an Implementation; other _meta members
// change nothing. A repeated member, a cursor or any other param is left to the
// SDK.
func modernListParams(params []byte, version string) bool {
	ms, ok := jsonvalue.Members(params)
	if !ok || len(ms) != 1 || ms[0].Key != "_meta" {
		return false
	}
	meta, ok := jsonvalue.Members(ms[0].Raw)
	if !ok {
		return false
	}
	seen := make(map[string]bool, len(meta))
	capabilities := false
	for _, mm := range meta {
		if seen[mm.Key] {
			return false
		}
		seen[mm.Key] = true
		switch mm.Key {
		case metaKeyProtocolVersion:
			var v string
			if json.Unmarshal(mm.Raw, &v) != nil || v != version {
				return false
			}
		case metaKeyClientCapabilities:
			var caps struct { // the SDK's clientCapabilitiesV2, its roots as mcp.RootCapabilities (deprecated)
				mcp.ClientCapabilities
				Roots *struct {
					ListChanged bool `json:"listChanged,omitempty"`
				} `json:"roots,omitempty"`
			}
			capabilities = mm.Raw[0] == '{' && json.Unmarshal(mm.Raw, &caps) == nil
		case metaKeyClientInfo:
			var info *mcp.Implementation
			if json.Unmarshal(mm.Raw, &info) != nil || info == nil {
				return false
			}
		}
	}
	return capabilities
}

// listFor is the encoded tools/list result for the caller: every tool, or
// with Options.ListByPlan and a key that resolves, the tools of the key's
// plan ("cacheScope": "private"), encoded once per plan and kept. As in
// listByPlan, a key that cannot be resolved gets every tool.
func (s *Server) listFor(c *gin.Context) *encodedList {
	ex := exchangeFrom(c.Request.Context())
	cred, tbl := ex.cred, ex.table
	if !s.opts.ListByPlan || cred.key == "" || tbl.compact != nil {
		return tbl.list // compact mode's three tools are for every plan
	}
	plan, ok := s.listPlan(c.Request.Context(), cred)
	if !ok {
		return tbl.list
	}
	if l, ok := tbl.planLists.Load(plan.Name); ok {
		return l.(*encodedList)
	}
	b, err := sdkJSON(&mcp.ListToolsResult{Tools: tbl.planTools(plan, tbl.listed), Cacheable: mcp.Cacheable{CacheScope: "private"}})
	if err != nil {
		return tbl.list // unreachable: the same tools encoded at startup
	}
	l, _ := tbl.planLists.LoadOrStore(plan.Name, &encodedList{json: b})
	return l.(*encodedList)
}

// isModernCall reports whether m is a tools/call on the 2026-07-28 wire.
func isModernCall(r *http.Request, m *rpcMessage) bool {
	return m.method == "tools/call" && m.metaVersion == protocolVersionStandardHeaders &&
		r.Header.Get("Mcp-Protocol-Version") == protocolVersionStandardHeaders
}

// metaKeyServerInfo is the _meta member naming the server in every
// 2026-07-28 result (SEP-2575).
const metaKeyServerInfo = "io.modelcontextprotocol/serverInfo"

// fastCall runs the tool handler for a tools/call the gate admitted (or an
// unknown tool, which is answered as the SDK does). modern adds the
// 2026-07-28 result members.
func (s *Server) fastCall(c *gin.Context, m *rpcMessage, modern bool) fastResult {
	h, ok := exchangeFrom(c.Request.Context()).table.handlers[m.tool]
	if !ok {
		return fastResult{err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", m.tool)}}
	}
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: m.tool, Arguments: m.arguments}}
	ex := exchangeFrom(c.Request.Context())
	ex.takesTasks = modern && m.tasksExt && s.tasksOn()
	// An operation's own handler returns its result here (not compact
	// mode's, not the job tool's, which build results of their own).
	tbl := ex.table
	ex.writesDirect = tbl.compact == nil && m.tool != tbl.jobTool
	res, err := h(c.Request.Context(), req)
	if err == nil && ex.task != nil {
		// SEP-2663 "Task Creation": the task handle instead of the result.
		return fastResult{result: s.taskWire(ex.task, "task")}
	}
	if err != nil {
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			je = &jsonrpc.Error{Code: codeInternalError, Message: err.Error()}
		}
		return fastResult{err: je}
	}
	if res.Content == nil {
		res.Content = []mcp.Content{}
	}
	if modern {
		if res.Meta == nil {
			res.Meta = mcp.Meta{}
		}
		if _, ok := res.Meta[metaKeyServerInfo]; !ok {
			res.Meta[metaKeyServerInfo] = s.impl
		}
	}
	if size := resultSizeHint(res); size >= largeResultBytes && streamable(res) {
		// A large answer is written as it is encoded: its text and its
		// structuredContent are never copied into one buffer. What can
		// fail (_meta) is encoded now, before anything is written.
		e := &resultEncoder{buf: getWriteBuffer(), pooled: true}
		if err := e.open(res); err != nil {
			return fastResult{err: &jsonrpc.Error{Code: codeInternalError, Message: "encoding the tool result: " + err.Error()}}
		}
		return fastResult{large: &largeResult{enc: e, res: res, modern: modern}}
	}
	buf := getResultBuffer(resultSizeHint(res))
	b, err := appendToolResult(*buf, res) // as the SDK encodes it
	if p := pooledOf(res); p != nil {
		p.release() // copied into b (unreachable: a pooled body is large and streamable)
	}
	if err != nil {
		return fastResult{err: &jsonrpc.Error{Code: codeInternalError, Message: "encoding the tool result: " + err.Error()}}
	}
	if modern {
		b = completeResult(b)
	}
	return fastResult{result: b, buf: buf}
}

// resultBuffers holds the buffers fastCall encodes results into (those
// under largeResultBytes, written at once), each back once its answer is
// written: a call's result is about as large as the upstream's answer
// twice over (its text and its structuredContent), the largest
// allocation a call makes, and it lives only until net/http's Write has
// copied it. A sync.Pool: one per processor at hand without a lock, and
// what the collector finds unused for two cycles it frees.
var resultBuffers sync.Pool // of *[]byte

// getResultBuffer is an empty buffer of at least size bytes from
// resultBuffers, or a new one (a pooled one too small is dropped).
func getResultBuffer(size int) *[]byte {
	if p, _ := resultBuffers.Get().(*[]byte); p != nil && cap(*p) >= size {
		*p = (*p)[:0]
		return p
	}
	b := make([]byte, 0, size)
	return &b
}

// putResultBuffer puts buf back in resultBuffers, with b, what was encoded
// into it (appendToolResult may have grown it), as its bytes; unless b
// outgrew largeResultBytes (a result that is not streamable), which the
// collector takes back instead.
func putResultBuffer(buf *[]byte, b []byte) {
	if cap(b) > largeResultBytes {
		return
	}
	*buf = b[:0]
	resultBuffers.Put(buf)
}

// resultSizeHint is a capacity, in bytes, for res encoded: its texts plus
// an eighth for escapes, and structuredContent's size when it is compact
// bytes (twice the texts when it is a tree of the same JSON), and 512 for
// the envelope. Sized once, a large answer is not copied at every
// doubling of the buffer.
func resultSizeHint(res *mcp.CallToolResult) int {
	n := 0
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			n += len(tc.Text)
		}
	}
	n += n / 8
	switch sc := res.StructuredContent.(type) {
	case nil:
	case jsonvalue.Compact:
		n += len(sc) // its exact size
	case *pooledBody:
		n += len(sc.body) + len(sc.body)/8 + len(sc.compact) // its text, and itself
	default:
		n *= 2
	}
	return n + 512
}

// appendToolResult appends res as CallToolResult.MarshalJSON encodes it
// (its fields in order: _meta, content, structuredContent, isError),
// without reflection for the results restmcp builds (textOnly, through
// resultEncoder).
// A result with anything else (other content, annotations, input
// requests) is encoded by json.Marshal itself.
func appendToolResult(dst []byte, res *mcp.CallToolResult) ([]byte, error) {
	if !textOnly(res) {
		return json.Marshal(res)
	}
	e := resultEncoder{buf: dst}
	if err := e.open(res); err != nil {
		return nil, err
	}
	if err := e.rest(res); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// completeResult adds "resultType": "complete" to an encoded result, last,
// where the SDK's encoding puts it on the 2026-07-28 wire (its wire struct
// embeds the result, then resultType; inputRequests is absent).
func completeResult(b []byte) []byte {
	return append(b[:len(b)-1], `,"resultType":"complete"}`...)
}

// textOnly reports whether res is a result restmcp builds, which
// resultEncoder encodes: text content without _meta or annotations, and
// no input requests.
func textOnly(res *mcp.CallToolResult) bool {
	if res.InputRequests != nil || res.RequestState != "" || res.NeedsInput() {
		return false
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); !ok || tc.Meta != nil || tc.Annotations != nil {
			return false
		}
	}
	return true
}

// resultEncoder encodes a textOnly result as CallToolResult.MarshalJSON
// does (its fields in order: _meta, content, structuredContent, isError)
// into buf, without reflection: _meta and a structuredContent tree through
// jsonvalue.Append (byte for byte json.Marshal), texts as JSON strings.
// With w set (writeLarge), buf is written to w whenever it holds
// writeChunkBytes, text is escaped in pieces cut where a rune starts, and
// compact structuredContent is written from its own bytes; the caller
// writes what is left in buf.
type resultEncoder struct {
	buf    []byte
	w      io.Writer // nil: everything stays in buf
	pooled bool      // buf is from largeBuffers, back there once written (writeLarge)
}

// open appends the result's opening brace and its _meta; the error is
// jsonvalue.Append's for a _meta value it refuses.
func (e *resultEncoder) open(res *mcp.CallToolResult) error {
	e.buf = append(e.buf, '{')
	if len(res.Meta) > 0 {
		var err error
		e.buf = append(e.buf, `"_meta":`...)
		if e.buf, err = jsonvalue.Append(e.buf, map[string]any(res.Meta)); err != nil {
			return err
		}
		e.buf = append(e.buf, ',')
	}
	return nil
}

// rest appends everything after _meta, through the closing brace. The
// error is jsonvalue.Append's for a structuredContent tree it refuses; a
// streamable result has none.
func (e *resultEncoder) rest(res *mcp.CallToolResult) error {
	pooled := pooledOf(res)
	if res.Content == nil {
		e.buf = append(e.buf, `"content":null`...)
	} else {
		e.buf = append(e.buf, `"content":[`...)
		for i, c := range res.Content {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.buf = append(e.buf, `{"type":"text","text":"`...)
			if tc := c.(*mcp.TextContent); pooled != nil && tc == pooled.text {
				encodeText(e, pooled.body)
			} else {
				e.text(tc.Text)
			}
			e.buf = append(e.buf, `"}`...)
		}
		e.buf = append(e.buf, ']')
	}
	if res.StructuredContent != nil {
		e.buf = append(e.buf, `,"structuredContent":`...)
		if sc, ok := res.StructuredContent.(jsonvalue.Compact); ok && sc != "" && e.w != nil {
			e.copyOut(string(sc))
		} else if pooled != nil && e.w != nil {
			e.flush() // then the object straight from the body's buffer: no copy
			_, _ = e.w.Write(pooled.compact)
		} else if pooled != nil {
			e.buf = append(e.buf, pooled.compact...)
		} else {
			var err error
			if e.buf, err = jsonvalue.Append(e.buf, res.StructuredContent); err != nil {
				return err
			}
		}
	}
	if res.IsError {
		e.buf = append(e.buf, `,"isError":true`...)
	}
	e.buf = append(e.buf, '}')
	return nil
}

// text appends text's JSON string content: at once without w; with it,
// as much as buf has room for, writing buf out whenever it is full, so
// that buf never grows.
func (e *resultEncoder) text(text string) { encodeText(e, text) }

// encodeText is resultEncoder.text for text held in a string or in bytes
// (a pooled body).
func encodeText[T string | []byte](e *resultEncoder, text T) {
	if e.w == nil {
		e.buf = jsonvalue.AppendEscapedHTML(e.buf, text)
		return
	}
	if cap(e.buf) < writeChunkBytes {
		e.buf = slices.Grow(e.buf, writeChunkBytes-len(e.buf)) // room for a piece after every flush
	}
	for len(text) > 0 {
		var n int
		e.buf, n = jsonvalue.AppendStringContentWithin(e.buf, text)
		if text = text[n:]; len(text) > 0 {
			e.flush()
		}
	}
}

// copyOut appends s through buf, writing buf out whenever it is full. A
// string goes out through the buffer, not by WriteString: net/http's
// response writes a large string in pieces of its 2 KiB buffer, each a
// chunk of its own on a chunked answer, where a large []byte goes out
// at once (as a pooled body's structuredContent does, by rest).
func (e *resultEncoder) copyOut(s string) {
	for len(s) > 0 {
		if len(e.buf) == cap(e.buf) {
			e.flush()
		}
		n := min(len(s), cap(e.buf)-len(e.buf))
		e.buf = append(e.buf, s[:n]...)
		s = s[n:]
	}
}

// flush writes buf to w and empties it. Write errors are left to the
// connection (the client hung up).
func (e *resultEncoder) flush() {
	_, _ = e.w.Write(e.buf)
	e.buf = e.buf[:0]
}

// writeFast writes the JSON-RPC response as the SDK's stateless handler
// does: status 200, Cache-Control "no-cache, no-transform", and either an
// application/json body or one "message" server-sent event. The result is
// written as it is, not copied (a tools/list can be megabytes). A
// tools/list of gzipListMinBytes or more goes in gzip to a client that
// accepts it (listgzip.go): decoded, the same bytes.
func writeFast(c *gin.Context, jsonMode bool, id json.RawMessage, r fastResult) {
	head := make([]byte, 0, 64+len(id))
	if !jsonMode {
		head = append(head, "event: message\ndata: "...)
	}
	head = append(head, `{"jsonrpc":"2.0","id":`...)
	head = append(head, id...)
	body := r.result
	if r.list != nil {
		body = r.list.json
		if jsonMode && len(body) >= gzipListMinBytes && acceptsGzip(c.Request.Header.Values("Accept-Encoding")) {
			if g := r.list.gzip(); g != nil { // nil: unreachable (compress/flate refused its level)
				writeGzipList(c, append(head, `,"result":`...), g)
				return
			}
		}
	}
	if r.err != nil {
		head = append(head, `,"error":`...)
		body, _ = sdkJSON(r.err)
	} else {
		head = append(head, `,"result":`...)
	}
	tail := "}"
	if !jsonMode {
		tail = "}\n\n"
	}
	h := c.Writer.Header()
	switch {
	case !jsonMode:
		setHeaders(h, "Cache-Control", "no-cache, no-transform", "Content-Type", "text/event-stream", "Connection", "keep-alive")
	case r.large != nil: // its length is known once written: chunked
		setHeaders(h, "Cache-Control", "no-cache, no-transform", "Content-Type", "application/json")
	default: // a Content-Length, where net/http would chunk an answer over 2 KB
		setHeaders(h, "Cache-Control", "no-cache, no-transform", "Content-Type", "application/json",
			"Content-Length", strconv.Itoa(len(head)+len(body)+len(tail)))
	}
	c.Status(http.StatusOK)
	w := c.Writer
	_, _ = w.Write(head)
	if r.large != nil {
		writeLarge(w, r.large)
	} else {
		_, _ = w.Write(body)
	}
	_, _ = w.WriteString(tail)
	if !jsonMode {
		w.Flush()
	}
}

// writeGzipList writes a tools/list answer in gzip (listgzip.go): head is
// the JSON-RPC envelope up to the result.
func writeGzipList(c *gin.Context, head []byte, g *gzipRest) {
	setHeaders(c.Writer.Header(), "Cache-Control", "no-cache, no-transform", "Content-Type", "application/json",
		"Content-Encoding", "gzip", "Vary", "Accept-Encoding", "Content-Length", strconv.Itoa(g.memberSize(len(head))))
	c.Status(http.StatusOK)
	_ = g.writeGzip(c.Writer, head) // an error is the client's hang-up
}

// sdkJSON encodes v as the go-sdk's jsonrpc2 package does: without HTML
// escaping and without the encoder's trailing newline.
func sdkJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// largeResultBytes is the encoded size (resultSizeHint) from which a
// result is written as it is encoded (writeLarge) instead of into one
// buffer first.
const largeResultBytes = 256 << 10

// largeResult is a tool result for writeLarge, its encoder opened (its
// _meta encoded) beforehand, so that nothing fails once writing has begun.
type largeResult struct {
	enc    *resultEncoder
	res    *mcp.CallToolResult
	modern bool // end with "resultType":"complete" (2026-07-28)
}

// streamable reports whether writeLarge can encode res: textOnly, and
// structuredContent absent or compact bytes (encoding those cannot fail).
func streamable(res *mcp.CallToolResult) bool {
	if !textOnly(res) {
		return false
	}
	switch res.StructuredContent.(type) {
	case nil, jsonvalue.Compact, *pooledBody:
		return true
	}
	return false
}

// writeChunkBytes is the size of writeLarge's buffer: it writes the text
// in pieces of about that size. 64 KiB cost 4–12 % more CPU on a 1 MB
// answer (restmcp-bench --compare: four times the writes); 256 KiB keeps
// 128 KiB more live per answer being written, and the collector lets the
// heap grow by as much again.
const writeChunkBytes = 128 << 10

// largeBuffers are writeLarge's buffers, of writeChunkBytes: one for
// each large answer being written, back in the pool once the last of it
// is written (net/http's Write has copied or sent the bytes by the time
// it returns).
var largeBuffers bufferPool

// getWriteBuffer is an empty buffer of writeChunkBytes from largeBuffers.
func getWriteBuffer() []byte {
	if b := largeBuffers.get(); b != nil {
		return (*b)[:0]
	}
	return make([]byte, 0, writeChunkBytes)
}

// writeLarge writes l's result to w, byte for byte what appendToolResult
// (and the modern resultType suffix) gives, through one buffer of
// writeChunkBytes (resultEncoder with w set).
func writeLarge(w io.Writer, l *largeResult) {
	e := l.enc
	e.w = w
	_ = e.rest(l.res) // streamable: nothing to fail
	if l.modern {
		e.buf = completeResult(e.buf)
	}
	e.flush()
	if p := pooledOf(l.res); p != nil {
		p.release() // written: net/http's Write has copied or sent the bytes
	}
	if e.pooled && cap(e.buf) == writeChunkBytes {
		buf := e.buf[:0]
		e.buf, e.pooled = nil, false
		largeBuffers.put(&buf)
	}
}
