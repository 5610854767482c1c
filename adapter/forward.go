package adapter

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
)

// neverForwarded are the headers Options.ForwardHeaders may not name:
// hop-by-hop headers (RFC 9110 §7.6.1), the caller's credentials, the MCP
// transport's own headers, and framing and proxy headers restmcp or Go set
// for the upstream request.
var neverForwarded = map[string]string{
	"Connection": "is hop-by-hop", "Keep-Alive": "is hop-by-hop", "Proxy-Connection": "is hop-by-hop",
	"Te": "is hop-by-hop", "Trailer": "is hop-by-hop", "Transfer-Encoding": "is hop-by-hop", "Upgrade": "is hop-by-hop",
	"Proxy-Authorization": "is a credential", "Proxy-Authenticate": "is hop-by-hop",
	"Authorization": "is a credential", "Cookie": "is a credential", "Set-Cookie": "is a credential", "X-Api-Key": "is a credential",
	"Mcp-Session-Id": "belongs to the MCP transport", "Mcp-Protocol-Version": "belongs to the MCP transport",
	"Mcp-Method": "belongs to the MCP transport", "Mcp-Name": "belongs to the MCP transport", "Last-Event-Id": "belongs to the MCP transport",
	"Host": "is set for the upstream", "Content-Length": "is set for the upstream", "Content-Type": "is set for the upstream",
	"Content-Encoding": "is set for the upstream", "Accept-Encoding": "is set for the upstream", "Expect": "is set for the upstream",
	"Forwarded": "is a proxy header", "X-Forwarded-For": "is a proxy header", "X-Forwarded-Host": "is a proxy header",
	"X-Forwarded-Proto": "is a proxy header", "X-Real-Ip": "is a proxy header", "Origin": "is the browser's",
}

// unforwardable is why header name h may not be forwarded, or "".
func unforwardable(h string) string {
	if h == "" || strings.ContainsAny(h, " \t\r\n:") {
		return "is not a header name"
	}
	return neverForwarded[http.CanonicalHeaderKey(h)]
}

// readForwarded keeps the Options.ForwardHeaders the caller sent, read
// once here, for the tool handler. A value with a control character (it
// could split the upstream request's headers) refuses the request with 400
// naming the header; readForwarded then reports false.
func (s *Server) readForwarded(c *gin.Context) bool {
	if len(s.opts.ForwardHeaders) == 0 {
		return true
	}
	ex := exchangeFrom(c.Request.Context())
	for _, name := range s.opts.ForwardHeaders {
		key := http.CanonicalHeaderKey(name)
		for _, v := range c.Request.Header.Values(key) {
			if i := strings.IndexFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }); i >= 0 {
				abortRPC(c, http.StatusBadRequest, nil, codeInvalidRequest,
					fmt.Sprintf("header %s: a control character (byte 0x%02x) in its value; it cannot be forwarded upstream", key, v[i]))
				return false
			}
			if ex.forward == nil {
				ex.forward = http.Header{}
			}
			ex.forward[key] = append(ex.forward[key], v)
		}
	}
	return true
}
