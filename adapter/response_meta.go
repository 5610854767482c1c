package adapter

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

// Options.ResponseMeta: some vendors' REST APIs wrap every response, success
// or error, in an envelope with a "meta" member ({time, parameters}); their
// clients look for it on the MCP endpoint too. With the option on, every
// JSON-RPC answer on the MCP path (tools/call, success or error, and
// initialize, tools/list, ping and the other requests) carries a top-level
//
//	"meta": {"time": <whole milliseconds spent>, "parameters": <the call's arguments; {} when none, and for other methods>}
//
// beside "jsonrpc", "id" and "result" or "error", as the finance-data
// service this models sends it (time an integer). JSON-RPC 2.0 defines no
// such member. The Go MCP SDK ignores it; the TypeScript SDK (v1) refuses
// the whole response ("Unrecognized key: meta"), so the option is for
// deployments whose clients expect the envelope (TestFinanceDataExample
// runs both). The response, one JSON object or one SSE event, is held until
// complete and the member added before its last "}".

// metaWriter holds a tools/call response for Options.ResponseMeta.
type metaWriter struct {
	gin.ResponseWriter
	buf    bytes.Buffer
	status int
	start  time.Time
}

func (w *metaWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}
func (w *metaWriter) WriteHeaderNow() {}
func (w *metaWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.buf.Write(b)
}
func (w *metaWriter) WriteString(s string) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.buf.WriteString(s)
}
func (w *metaWriter) Flush() {}
func (w *metaWriter) Status() int {
	if w.status != 0 {
		return w.status
	}
	return w.ResponseWriter.Status()
}
func (w *metaWriter) Written() bool { return w.status != 0 || w.ResponseWriter.Written() }
func (w *metaWriter) Size() int {
	if w.status != 0 {
		return w.buf.Len()
	}
	return w.ResponseWriter.Size()
}

// finish writes the held response with the meta member for arguments (the
// call's raw params.arguments; nil when absent).
func (w *metaWriter) finish(arguments json.RawMessage) {
	if w.status == 0 {
		return
	}
	body := w.buf.Bytes()
	if i := bytes.LastIndexByte(body, '}'); i > 0 {
		params := bytes.TrimSpace(arguments)
		if len(params) == 0 || params[0] != '{' {
			params = []byte("{}")
		}
		meta := make([]byte, 0, 48+len(params))
		meta = append(meta, `,"meta":{"time":`...)
		meta = strconv.AppendInt(meta, time.Since(w.start).Milliseconds(), 10)
		meta = append(meta, `,"parameters":`...)
		meta = append(meta, params...)
		meta = append(meta, '}')
		body = append(body[:i:i], append(meta, body[i:]...)...)
	}
	w.ResponseWriter.Header().Del("Content-Length")
	w.ResponseWriter.WriteHeader(w.status)
	_, _ = w.ResponseWriter.Write(body)
}
