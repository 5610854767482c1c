package adapter

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/restmcp/restmcp/internal/clip"

	"github.com/gin-gonic/gin"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP transport's reading of a POST: the one JSON-RPC message decoded
// once (decode), the Accept header settled, and the checks the go-sdk's
// Streamable HTTP transport would make after admission made before it
// (checkCall, versionServed).

// decode reads the one JSON-RPC message of a POST with decodeMessage
// (refusals: 400 with a JSON-RPC error, before anything is metered), keeps it
// in the exchange for the gate, the log and the tool handler, and hands the
// SDK a body on which its own decoder reaches the same reading. It also
// settles the Accept header, see acceptMode.
func (s *Server) decode(c *gin.Context) {
	if c.Request.Method != http.MethodPost {
		c.Next()
		return
	}
	ex := exchangeFrom(c.Request.Context())
	m, err := decodeMessage(ex.body)
	if err != nil {
		me, _ := asMessageError(err)
		abortRPC(c, me.status, nil, me.code, me.message)
		return
	}
	ex.msg = m
	ex.clientGone = c.Request.Context().Done()
	if s.opts.AcceptRequestsWithoutID && m.hasMethod && m.id == nil && !strings.HasPrefix(m.method, "notifications/") {
		// The deployment's documented answer to a request without an id:
		// a notification's, with nothing run.
		c.AbortWithStatus(http.StatusAccepted)
		return
	}
	if m.hasMethod && m.id != nil && !servedMethods[m.method] && !((len(s.opts.Resources) > 0 || s.opts.BinaryLinkBytes > 0) && resourceMethods[m.method]) && !(taskMethods[m.method] && s.tasksOn()) {
		// A request for a method restmcp does not serve, or of a capability
		// it does not declare (prompts, resources, logging, completion), is
		// a JSON-RPC "method not found" (JSON-RPC 2.0 §5.1), on the
		// 2026-07-28 wire with HTTP 404, before it with 200 as the SDK
		// answers server/discover on that wire.
		status := http.StatusOK
		if s.opts.UnknownMethodNotFound || c.Request.Header.Get("Mcp-Protocol-Version") >= protocolVersionStandardHeaders {
			status = http.StatusNotFound
		}
		abortRPC(c, status, m.id, codeMethodNotFound, "method not found: "+strconv.Quote(clip.String(m.method, 80)))
		return
	}
	if m.hasMethod && m.id != nil && !s.versionServed(c, m) {
		return
	}
	if m.method == "initialize" && m.id != nil && c.Request.Header.Get("Mcp-Protocol-Version") < protocolVersionStandardHeaders {
		// The 2026-07-28 wire has no initialize: the go-sdk answers it there.
		if err := checkInitializeParams(m.params); err != nil {
			me, _ := asMessageError(err)
			abortRPC(c, me.status, m.id, me.code, me.message)
			return
		}
	}

	jsonOK, sseOK := acceptMode(c.Request.Header.Values("Accept"))
	switch {
	case jsonOK:
		ex.handler = s.jsonHandler
	case sseOK:
		ex.handler = s.sseHandler
		// Proxies such as nginx buffer event streams unless told not to.
		c.Header("X-Accel-Buffering", "no")
	default:
		abortRPC(c, http.StatusNotAcceptable, m.id, codeInvalidRequest, "Accept must allow application/json or text/event-stream")
		return
	}
	// The SDK insists on both media types; the choice is made above.
	c.Request.Header.Set("Accept", "application/json, text/event-stream")
	if body, sw, ok := m.swapID(c.Writer); ok {
		c.Request.Body = &bodyReader{Reader: bytes.NewReader(body)}
		c.Request.ContentLength = int64(len(body))
		c.Writer = sw
	}
	c.Next()
}

// acceptMode reports which response forms the client accepts. The MCP spec
// asks clients to list both application/json and text/event-stream, and the
// go-sdk answers 400 otherwise; restmcp is lenient (C26 rows 6, 7, 9): a
// client that accepts JSON gets JSON, one that accepts only event streams
// gets one SSE message event, one that accepts neither gets 406. A missing
// Accept header means */*. When both are accepted restmcp answers JSON: a
// stateless tools/call has exactly one response and no server-to-client
// messages, and a plain JSON body passes through every proxy unbuffered.
func acceptMode(values []string) (jsonOK, sseOK bool) {
	if len(values) == 0 {
		return true, true
	}
	eachAccepted(values, func(mt string) {
		switch mt {
		case "application/json", "application/*":
			jsonOK = true
		case "text/event-stream", "text/*":
			sseOK = true
		case "*/*":
			jsonOK, sseOK = true, true
		}
	})
	return jsonOK, sseOK
}

// namesEventStream reports whether Accept lists text/event-stream itself,
// not only */* or text/* (Options.StreamAcceptStrict).
func namesEventStream(values []string) (named bool) {
	eachAccepted(values, func(mt string) { named = named || mt == "text/event-stream" })
	return named
}

// eachAccepted calls f with each media type of Accept header values, lower
// case and without parameters, leaving out those with q=0 (explicitly not
// acceptable).
func eachAccepted(values []string, f func(mediaType string)) {
	eachListMember(values, func(mt, params string) {
		if !qZero(params) {
			f(mt)
		}
	})
}

// eachListMember calls f with each member of a comma-separated header
// field (its lines; RFC 9110 §5.6.1: https://www.rfc-editor.org/rfc/rfc9110#section-5.6.1),
// as Accept and Accept-Encoding have them: its name, lower case and
// trimmed, and its parameters after the first ';', as they are.
func eachListMember(values []string, f func(name, params string)) {
	for _, value := range values {
		for rest, more := value, true; more; {
			var part string
			part, rest, more = strings.Cut(rest, ",")
			name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			f(strings.ToLower(strings.TrimSpace(name)), params)
		}
	}
}

// qZero reports whether Accept parameters carry a quality of 0.
func qZero(params string) bool {
	for rest, more := params, true; more; {
		var p string
		p, rest, more = strings.Cut(rest, ";")
		k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
			q, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return err == nil && q == 0
		}
	}
	return false
}

// checkCall refuses, before admission, a tools/call that the go-sdk's
// Streamable HTTP transport would refuse after it (MCP 2025-11-25
// §Transports, https://modelcontextprotocol.io/specification/2025-11-25/basic/transports,
// and the 2026-07-28 standard headers): a Content-Type other than
// application/json (415), a Last-Event-ID on a POST, an MCP-Protocol-Version
// restmcp does not speak, a call without an id, and on the 2026-07-28 wire
// an Mcp-Method or Mcp-Name header that does not match the body, a missing
// or different _meta protocol version, or _meta client capabilities or
// client info that are missing or not objects (400). Whatever else the SDK
// refuses after admission is settled by the gate (see settleUnrun). A base64-encoded
// Mcp-Name ("=?base64?…?=") that names the tool is handed to the SDK as the
// plain name, which the SDK compares without decoding.
func (s *Server) checkCall(c *gin.Context, m *rpcMessage) bool {
	h := c.Request.Header
	if contentType(h.Get("Content-Type")) != "application/json" {
		abortRPC(c, http.StatusUnsupportedMediaType, m.id, codeInvalidRequest, "Content-Type must be application/json")
		return false
	}
	if len(h.Values("Last-Event-ID")) > 0 {
		abortRPC(c, http.StatusBadRequest, m.id, codeInvalidRequest, "Last-Event-ID is not allowed on a POST")
		return false
	}
	if m.id == nil {
		abortRPC(c, http.StatusBadRequest, nil, codeInvalidRequest, "invalid request: tools/call needs an id (a notification cannot call a tool)")
		return false
	}
	version := h.Get("Mcp-Protocol-Version") // one restmcp serves (versionServed)
	if version < protocolVersionStandardHeaders && m.metaVersion == "" {
		return true
	}
	fail := func(msg string) bool {
		abortRPC(c, http.StatusBadRequest, m.id, CodeHeaderMismatch, msg)
		return false
	}
	switch {
	case version == "":
		return fail("Mcp-Protocol-Version header is required for requests carrying " + strconv.Quote(metaKeyProtocolVersion))
	case m.metaVersion == "":
		abortRPC(c, http.StatusBadRequest, m.id, codeInvalidParams, "missing or invalid _meta field "+strconv.Quote(metaKeyProtocolVersion))
		return false
	case m.metaVersion != version:
		return fail("Mcp-Protocol-Version header " + strconv.Quote(version) + " does not match _meta " + strconv.Quote(clip.String(m.metaVersion, 40)))
	case m.metaBadClientInfo:
		abortRPC(c, http.StatusBadRequest, m.id, codeInvalidParams, "invalid _meta field "+strconv.Quote(metaKeyClientInfo))
		return false
	case !m.metaCapabilities:
		abortRPC(c, http.StatusBadRequest, m.id, codeInvalidParams, "missing or invalid _meta field "+strconv.Quote(metaKeyClientCapabilities))
		return false
	case h.Get("Mcp-Method") != m.method:
		return fail("Mcp-Method header " + strconv.Quote(clip.String(h.Get("Mcp-Method"), 80)) + " does not match the body's method \"tools/call\"")
	}
	name, ok := decodeHeaderValue(h.Get("Mcp-Name"))
	if !ok || name != m.tool {
		return fail("Mcp-Name header " + strconv.Quote(clip.String(h.Get("Mcp-Name"), 80)) + " does not match the body's params.name " + strconv.Quote(clip.String(m.tool, 80)))
	}
	h.Set("Mcp-Name", name)
	return true
}

// versionServed answers the request m itself, and returns false, when its
// MCP revision is not one restmcp serves (J2, J3): an MCP-Protocol-Version
// header outside the revisions served, on any method, is 400 -32600 naming
// them (the go-sdk would answer plain text, or -32602 about _meta); an
// initialize when no revision served has initialize (all of them are the
// 2026-07-28 wire or later) is 400 -32602, since the SDK would otherwise
// negotiate a revision outside protocol_versions. An initialize asking for
// a revision outside the list is answered by the SDK with the newest listed
// one (MCP 2025-11-25 "Lifecycle": version negotiation).
func (s *Server) versionServed(c *gin.Context, m *rpcMessage) bool {
	if v := c.Request.Header.Get("Mcp-Protocol-Version"); v != "" && !slices.Contains(s.versions, v) {
		if mv := metaProtocolVersion(m); mv != "" {
			// The 2026-07-28 wire (SEP-2575) names its own error for this:
			// UnsupportedProtocolVersionError, data {supported, requested}.
			abortRPCData(c, http.StatusBadRequest, m.id, rpcErrorBody{Code: mcp.CodeUnsupportedProtocolVersion,
				Message: "unsupported protocol version " + strconv.Quote(clip.String(mv, 40)) + "; supported: " + strings.Join(s.versions, ", "),
				Data:    mcp.UnsupportedProtocolVersionData{Supported: s.versions, Requested: mv}})
			return false
		}
		abortRPC(c, http.StatusBadRequest, m.id, codeInvalidRequest, "unsupported MCP-Protocol-Version "+strconv.Quote(clip.String(v, 40))+"; supported: "+strings.Join(s.versions, ", "))
		return false
	}
	if m.method == "initialize" && !slices.ContainsFunc(s.versions, func(v string) bool { return v < protocolVersionStandardHeaders }) {
		abortRPC(c, http.StatusBadRequest, m.id, codeInvalidParams, "initialize is not part of the MCP revisions this server speaks ("+strings.Join(s.versions, ", ")+
			"): send requests with MCP-Protocol-Version and _meta as the "+protocolVersionStandardHeaders+" revision defines, without initialize")
		return false
	}
	return true
}

// metaProtocolVersion is the request's params._meta protocol version (the
// 2026-07-28 wire's), read for methods other than tools/call only here, on
// the refusal path; "" when absent.
func metaProtocolVersion(m *rpcMessage) string {
	if m.metaVersion != "" || m.params == nil {
		return m.metaVersion
	}
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var v string
	if json.Unmarshal(m.params, &p) == nil && json.Unmarshal(p.Meta[metaKeyProtocolVersion], &v) == nil {
		return v
	}
	return ""
}

// protocolVersionStandardHeaders is the first MCP revision whose requests
// carry Mcp-Method and Mcp-Name headers and _meta protocol metadata.
const protocolVersionStandardHeaders = "2026-07-28"

// decodeHeaderValue decodes an MCP standard header value: either plain, or
// "=?base64?<standard base64 of UTF-8>?=" (MCP 2026-07-28 standard headers).
func decodeHeaderValue(v string) (string, bool) {
	if enc, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if enc, ok = strings.CutSuffix(enc, "?="); ok {
			b, err := base64.StdEncoding.DecodeString(enc)
			return string(b), err == nil
		}
	}
	return v, true
}

// servedMethods are the JSON-RPC request methods restmcp answers: the
// lifecycle, tools (the one capability it declares) and the 2026-07-28
// discovery and subscription methods the go-sdk serves.
var servedMethods = map[string]bool{
	"initialize": true, "ping": true, "tools/list": true, "tools/call": true,
	"server/discover": true, "subscriptions/listen": true,
}

// resourceMethods are served too when Options.Resources declares the
// resources capability.
var resourceMethods = map[string]bool{"resources/list": true, "resources/read": true, "resources/templates/list": true}
