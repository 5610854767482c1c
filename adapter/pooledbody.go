package adapter

import (
	"bytes"
	"fmt"
	"io"
	"math/bits"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/restmcp/restmcp/openapi"
)

// A large 2xx JSON answer on the fast path is read into a pooled buffer
// and written from it, instead of into a new string per call: the text
// content is escaped from the buffer and structuredContent copied from it
// (the part that holds the object when the body is compact, as most APIs
// send it), and the buffer goes back to its pool once the result is
// written. Without this every 1 MB answer was 1 MB of new memory, which
// the collector paid for in CPU and the process in resident memory.
//
// Only the fast path's own writer (writeLarge) ever sees such a result:
// fastCall marks the exchange (writesDirect) before calling the tool
// handler, the handler passes that to mapResponse, and any other way a
// result can go (the go-sdk's handler, tasks, jq, compact mode) never
// marks it. A result that is dropped (a client that hung up, a task)
// leaves its buffer to the collector; the buffer returns to the pool only
// after its last byte was written, and nothing else refers to it then.

// pooledBody is a result's structuredContent whose text content (text,
// whose Text is empty) is body: the answer's bytes in buf, a pooled
// buffer; compact is the object as structuredContent (a part of body, or
// bytes of its own).
type pooledBody struct {
	buf     *[]byte
	body    []byte
	compact []byte
	text    *mcp.TextContent
}

// MarshalJSON is structuredContent's encoding. Only resultEncoder should
// encode a pooledBody; this keeps any other encoding of the value right.
func (p *pooledBody) MarshalJSON() ([]byte, error) { return bytes.Clone(p.compact), nil }

// release gives the buffer back to its pool; p must not be used after.
func (p *pooledBody) release() {
	if p.buf != nil {
		putBodyBuffer(p.buf)
	}
	*p = pooledBody{}
}

// pooledOf is res's pooledBody, or nil.
func pooledOf(res *mcp.CallToolResult) *pooledBody {
	p, _ := res.StructuredContent.(*pooledBody)
	return p
}

// Pooled body buffers come in eight sizes an octave, from just above
// largeResultBytes to maxPooledBody: a body wastes at most an eighth of
// its buffer. A larger answer is read into a string as before.
const maxPooledBody = 64 << 20

// bodyPools are the pools of eight sizes an octave for the eight octaves
// from largeResultBytes (2^18) to maxPooledBody (2^26).
var bodyPools [64]bufferPool

// bodyClass is the pool for a body of n bytes (largeResultBytes < n ≤
// maxPooledBody) and its buffers' size: n rounded up to a multiple of an
// eighth of the power of two below it.
func bodyClass(n int) (k, size int) {
	b := bits.Len(uint(n - 1)) // 2^(b-1) ≤ n-1 < 2^b
	step := 1 << (b - 4)       // an eighth of 2^(b-1)
	i := (n-1)/step - 8        // 0 … 7
	return 8*(b-bits.Len(largeResultBytes)) + i, (i + 9) * step
}

func getBodyBuffer(n int) *[]byte {
	k, size := bodyClass(n)
	if b := bodyPools[k].get(); b != nil {
		return b
	}
	b := make([]byte, size)
	return &b
}

func putBodyBuffer(b *[]byte) {
	k, size := bodyClass(len(*b))
	if size == len(*b) {
		bodyPools[k].put(b)
	}
}

// pooledAnswer reads a 2xx JSON body of resp.ContentLength bytes (checked
// by the caller: more than largeResultBytes, at most maxPooledBody and
// MaxResponseBytes) into a pooled buffer. When it is a JSON object that
// fits t's outputSchema, the result is its text and structuredContent
// from that buffer (res); otherwise the buffer goes back and body is the
// answer as a string, for mapResponse to map as any other. err is a read
// error.
func (s *Server) pooledAnswer(resp *http.Response, t *openapi.Tool) (res *mcp.CallToolResult, body string, err error) {
	n := int(resp.ContentLength)
	buf := getBodyBuffer(n)
	data := (*buf)[:n]
	if _, err := io.ReadFull(resp.Body, data); err != nil {
		putBodyBuffer(buf)
		return nil, "", fmt.Errorf("reading response body: %w", err)
	}
	compact, fits, err := t.CompactStructuredBytes(data)
	if err != nil || !fits {
		body = string(data)
		putBodyBuffer(buf)
		return nil, body, nil
	}
	s.pooledAnswers.Add(1)
	text := &mcp.TextContent{}
	res = &mcp.CallToolResult{Content: []mcp.Content{text}, StructuredContent: &pooledBody{buf: buf, body: data, compact: compact, text: text}}
	addResponseHeaders(res, t, resp)
	return res, "", nil
}
