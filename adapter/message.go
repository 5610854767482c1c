package adapter

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/restmcp/restmcp/internal/clip"
	"github.com/restmcp/restmcp/internal/jsonvalue"

	"github.com/gin-gonic/gin"
)

// rpcMessage is restmcp's one reading of the JSON-RPC message of a POST
// (JSON-RPC 2.0 §4: https://www.jsonrpc.org/specification#request_object).
// decodeMessage produces it once, at the HTTP edge; the gate, the access log
// and the tool handler's admission check all read this value, and the body
// handed to the go-sdk is one on which the SDK's own decoder
// (case-sensitive member names, last duplicate wins, ids as float64) can
// only reach the same method, id and tool: any body on which two readings
// could differ is refused before anything is metered (docs/security.md H1,
// H2).
type rpcMessage struct {
	// id is the id exactly as sent (raw JSON: a string or a number); nil
	// when absent or null (a notification, or a response without id).
	id json.RawMessage
	// method is the "method" member; "" when absent (a response).
	method string
	// hasMethod reports whether "method" was present (a request).
	hasMethod bool
	// params is the raw "params" member (an object); nil when absent or
	// null.
	params json.RawMessage
	// tool is params.name of a tools/call; "" otherwise.
	tool string
	// uri is params.uri of a resources/read; "" otherwise.
	uri string
	// arguments is params.arguments of a tools/call, raw; nil when absent.
	arguments json.RawMessage
	// metaVersion is params._meta["io.modelcontextprotocol/protocolVersion"]
	// of a tools/call (MCP 2026-07-28 per-request metadata); "" when absent.
	metaVersion string
	// metaCapabilities reports whether _meta has an object
	// "io.modelcontextprotocol/clientCapabilities", and metaBadClientInfo
	// whether it has a "io.modelcontextprotocol/clientInfo" that is not an
	// object (2026-07-28 requests need the first and may carry the second).
	metaCapabilities, metaBadClientInfo bool
	// tasksExt reports whether those capabilities declare the tasks
	// extension (extensions["io.modelcontextprotocol/tasks"] an object):
	// the caller may be answered with a task (tasks.go).
	tasksExt bool
	// taskID is params.taskId of tasks/get, tasks/update and tasks/cancel;
	// "" when absent or not a string.
	taskID string

	// body is the message as read (surrounding white space trimmed);
	// idStart and idEnd locate the id's bytes in it (0, 0 without an id).
	body           []byte
	idStart, idEnd int
}

// isToolsCall is true for any message naming tools/call, with or without an
// id: a malformed "notification" form must not slip past the key check and
// the meter, whatever the SDK then makes of it.
func (m *rpcMessage) isToolsCall() bool { return m != nil && m.method == "tools/call" }

// messageError is a request decodeMessage refuses: the HTTP status and the
// JSON-RPC error code and message to answer with.
type messageError struct {
	status  int
	code    int
	message string
}

func (e *messageError) Error() string { return e.message }

// errBatch is the refusal of a JSON array body.
var errBatch = &messageError{http.StatusBadRequest, codeInvalidRequest,
	"batch requests are not supported: send one JSON-RPC message per POST"}

func invalidRequest(format string, args ...any) *messageError {
	return &messageError{http.StatusBadRequest, codeInvalidRequest, fmt.Sprintf(format, args...)}
}

// maxMessageDepth is the deepest nesting of objects and arrays accepted, the
// go-sdk's own limit (its internal/json defaultMaxDepth), so that nothing
// the gate admits is refused by the SDK for its depth.
const maxMessageDepth = 1000

// The members of a JSON-RPC message and of tools/call params that anything
// downstream reads (JSON-RPC 2.0 §4, §5; MCP 2025-11-25 "Calling Tools":
// https://modelcontextprotocol.io/specification/2025-11-25/server/tools#calling-tools).
var (
	envelopeMembers = []string{"jsonrpc", "id", "method", "params", "result", "error"}
	callMembers     = []string{"name", "arguments", "_meta", "inputResponses", "requestState"}
)

// The _meta members of a 2026-07-28 request that the go-sdk checks.
const (
	metaKeyProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaKeyClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaKeyClientInfo         = "io.modelcontextprotocol/clientInfo"
)

var metaMembers = []string{metaKeyProtocolVersion, metaKeyClientCapabilities, metaKeyClientInfo}

// decodeMessage reads the one JSON-RPC message of a POST body. It refuses,
// with a *messageError:
//   - a body that is not UTF-8 (RFC 8259 §8.1) or not JSON: -32700;
//   - an array (batch), or anything but an object: -32600;
//   - nesting deeper than maxMessageDepth: -32600;
//   - a member of the envelope, or of tools/call params, that appears twice:
//     which duplicate wins is decoder-defined, so such a message is
//     ambiguous and no reading of it is served;
//   - "jsonrpc" other than "2.0"; an id that is not a string or an
//     integer (null only on a response); a method that is not a string; params that are not an object or
//     null; a message with both a method and a result or error; a
//     tools/call whose params.name is missing or not a string: -32600.
//
// Member names are case-sensitive, as in the go-sdk (encoding/json would
// fold case and read a decoy "Method" as the method): a member whose name
// differs from a known one only in case is an unknown member, ignored like
// every member the message does not need.
func decodeMessage(body []byte) (*rpcMessage, error) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, invalidRequest("empty body: send one JSON-RPC message")
	}
	if !utf8.Valid(body) || !json.Valid(body) {
		return nil, &messageError{http.StatusBadRequest, codeParseError, "parse error: the body must be one JSON-RPC message (UTF-8 JSON)"}
	}
	switch body[0] {
	case '[':
		return nil, errBatch
	case '{':
	default:
		return nil, invalidRequest("invalid request: a JSON-RPC message is a JSON object")
	}
	if jsonvalue.DeeperThan(body, maxMessageDepth) {
		return nil, invalidRequest("invalid request: JSON nested deeper than %d levels", maxMessageDepth)
	}

	m := rpcMessage{body: body}
	var version, id, method, params, result, rpcErr []byte
	err := members(body, envelopeMembers, "", func(name string, value []byte) error {
		switch name {
		case "jsonrpc":
			version = value
		case "id":
			id = value
			m.idStart = cap(body) - cap(value)
			m.idEnd = m.idStart + len(value)
		case "method":
			method = value
		case "params":
			params = value
		case "result":
			result = value
		case "error":
			rpcErr = value
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if string(version) != `"2.0"` {
		if version == nil {
			return nil, invalidRequest(`invalid request: missing "jsonrpc": "2.0"`)
		}
		return nil, invalidRequest(`invalid request: "jsonrpc" must be "2.0", got %s`, clip.String(string(version), 40))
	}
	// J1: a request id is a string or an integer (JSON-RPC 2.0 §4, MCP
	// 2025-11-25 "Requests": "MUST be a string or integer", "MUST NOT be
	// null"). A response (no method) may carry id null, as one answering an
	// unreadable request does.
	switch {
	case id == nil:
	case string(id) == "null" && method == nil:
		m.idStart, m.idEnd = 0, 0
	case id[0] == '"' || isJSONInteger(id):
		m.id = id
	default:
		return nil, invalidRequest("invalid request: id must be a string or an integer, got %s", clip.String(string(id), 40))
	}
	if method != nil {
		if method[0] != '"' {
			return nil, invalidRequest("invalid request: method must be a string")
		}
		m.hasMethod = true
		m.method = methodName(method)
		if result != nil || rpcErr != nil {
			return nil, invalidRequest(`invalid request: a message has a "method" or a "result"/"error", not both`)
		}
	}
	if params != nil && string(params) != "null" {
		if params[0] != '{' {
			return nil, invalidRequest("invalid request: params must be an object")
		}
		m.params = params
	}
	if err := m.readMethodParams(); err != nil {
		return nil, err
	}
	return &m, nil
}

// readMethodParams reads the params members that decide what is admitted
// and metered, once, a duplicate refused: tools/call's name, arguments
// and _meta (readCallParams), the task id of tasks/*, resources/read's
// uri.
func (m *rpcMessage) readMethodParams() error {
	if m.method == "tools/call" {
		if err := m.readCallParams(); err != nil {
			return err
		}
	}
	if taskMethods[m.method] && m.params != nil {
		// The task id decides whose task is read: once, a duplicate refused.
		id, err := memberValue(m.params, "taskId", "params.")
		if err != nil {
			return err
		}
		if id != nil && id[0] == '"' {
			m.taskID = jsonString(id)
		}
	}
	if m.method == "resources/read" && m.params != nil {
		// The uri decides what is metered (Options.Resources): read once,
		// a duplicate refused, as for tools/call.
		var uri []byte
		if err := members(m.params, []string{"uri", "_meta"}, "params.", func(member string, value []byte) error {
			if member == "uri" {
				uri = value
			}
			return nil
		}); err != nil {
			return err
		}
		if uri != nil && uri[0] == '"' {
			m.uri = jsonString(uri)
		}
	}
	return nil
}

// initializeMembers are the members of initialize params (MCP 2025-11-25
// "Lifecycle", InitializeRequestParams).
var initializeMembers = []string{"protocolVersion", "capabilities", "clientInfo", "_meta"}

// checkInitializeParams refuses initialize params the go-sdk could not
// read (it would answer 200 with an error of code 0, or a plain-text 400),
// so that a session is only ever issued for an initialize that succeeds:
// params must be an object whose protocolVersion is a string, and whose
// capabilities and clientInfo, when present, are objects. The refusal is
// 400 -32602 naming the member
// (https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle#initialization).
func checkInitializeParams(params []byte) error {
	if params == nil {
		return invalidParams(`invalid params: initialize needs params {"protocolVersion": "<revision>", "capabilities": {}, "clientInfo": {"name": …, "version": …}}`)
	}
	var version, capabilities, info []byte
	if err := members(params, initializeMembers, "params.", func(member string, value []byte) error {
		switch member {
		case "protocolVersion":
			version = value
		case "capabilities":
			capabilities = value
		case "clientInfo":
			info = value
		}
		return nil
	}); err != nil {
		return err
	}
	switch {
	case version == nil:
		return invalidParams(`invalid params: initialize params.protocolVersion is missing: send the MCP revision the client speaks, e.g. "2025-06-18"`)
	case version[0] != '"':
		return invalidParams(`invalid params: initialize params.protocolVersion must be a string such as "2025-06-18", got %s`, clip.String(string(version), 40))
	case capabilities != nil && capabilities[0] != '{':
		return invalidParams("invalid params: initialize params.capabilities must be an object, got %s", clip.String(string(capabilities), 40))
	case info != nil && info[0] != '{':
		return invalidParams("invalid params: initialize params.clientInfo must be an object, got %s", clip.String(string(info), 40))
	}
	return nil
}

func invalidParams(format string, args ...any) *messageError {
	return &messageError{http.StatusBadRequest, codeInvalidParams, fmt.Sprintf(format, args...)}
}

// readCallParams reads name and the protocol-version _meta of tools/call
// params, refusing duplicate and case-variant members there too.
func (m *rpcMessage) readCallParams() error {
	if m.params == nil {
		return invalidRequest("invalid request: tools/call needs params with the tool's name")
	}
	var name, meta []byte
	err := members(m.params, callMembers, "params.", func(member string, value []byte) error {
		switch member {
		case "name":
			name = value
		case "arguments":
			m.arguments = value
		case "_meta":
			meta = value
		}
		return nil
	})
	if err != nil {
		return err
	}
	if name == nil || name[0] != '"' {
		return invalidRequest("invalid request: tools/call params.name must be the tool's name, a string")
	}
	m.tool = jsonString(name)
	if meta != nil && meta[0] == '{' {
		// A duplicate of a member read here is ambiguous too.
		err := members(meta, metaMembers, "params._meta.", func(member string, value []byte) error {
			switch member {
			case metaKeyProtocolVersion:
				if value[0] == '"' {
					m.metaVersion = jsonString(value)
				}
			case metaKeyClientCapabilities:
				m.metaCapabilities = value[0] == '{'
				if m.metaCapabilities {
					ext, err := memberValue(value, "extensions", "params._meta.clientCapabilities.")
					if err != nil {
						return err
					}
					if ext != nil && ext[0] == '{' {
						tasks, err := memberValue(ext, extTasks, "params._meta.clientCapabilities.extensions.")
						if err != nil {
							return err
						}
						m.tasksExt = tasks != nil && tasks[0] == '{'
					}
				}
			case metaKeyClientInfo:
				m.metaBadClientInfo = value[0] != '{'
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// memberValue is the raw value of obj's member name (nil when absent),
// refusing a duplicate of it as members does.
func memberValue(obj []byte, name, where string) ([]byte, error) {
	var v []byte
	err := members(obj, []string{name}, where, func(member string, value []byte) error {
		if member == name {
			v = value
		}
		return nil
	})
	return v, err
}

// members calls f with the name and raw value of each member of obj, a valid
// JSON object, in order (jsonvalue.Parser.ObjectRaw, the one object walk).
// Names are compared exactly, as the go-sdk compares them: "Method" is an
// unknown member, not "method". A known member that appears twice is an
// error naming it (where is the path prefix for the message). Unknown
// members reach f too.
func members(obj []byte, known []string, where string, f func(name string, value []byte) error) error {
	var seen uint64 // bit i: known[i] seen
	p := jsonvalue.Parser{B: obj}
	return p.ObjectRaw(func(key []byte) error {
		name := memberName(key, known)
		for k, kn := range known {
			if name == kn {
				if seen&(1<<k) != 0 {
					return invalidRequest("invalid request: member %q appears twice in %s; send it once", where+name, objectName(where))
				}
				seen |= 1 << k
			}
		}
		start := p.I
		if !p.Skip() {
			return jsonvalue.ErrNotJSON
		}
		return f(name, obj[start:p.I])
	})
}

func objectName(where string) string {
	if where == "" {
		return "the message"
	}
	return strings.TrimSuffix(where, ".")
}

// memberName is jsonString of a member name, without allocating when the
// name is one of known (the members the caller looks for).
func memberName(tok []byte, known []string) string {
	if bytes.IndexByte(tok, '\\') < 0 {
		raw := tok[1 : len(tok)-1]
		for _, k := range known {
			if string(raw) == k {
				return k
			}
		}
	}
	return jsonString(tok)
}

// methodName is jsonString of a method, without allocating for the methods
// the fast path and the gate look at.
func methodName(tok []byte) string {
	switch string(tok) {
	case `"tools/call"`:
		return "tools/call"
	case `"tools/list"`:
		return "tools/list"
	case `"resources/read"`:
		return "resources/read"
	case `"initialize"`:
		return "initialize"
	case `"notifications/initialized"`:
		return "notifications/initialized"
	case `"ping"`:
		return "ping"
	}
	return jsonString(tok)
}

// jsonString decodes a JSON string token (valid JSON: checked by the
// caller) as encoding/json does.
func jsonString(tok []byte) string { return jsonvalue.Token(tok) }

// isJSONInteger reports whether b, a valid JSON value, is a number without
// a fraction or an exponent.
func isJSONInteger(b []byte) bool {
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// sdkEchoesID reports whether the go-sdk echoes id byte for byte: a string
// without escapes, or an integer it holds exactly (it decodes ids as
// float64 and keeps int64(v)). Other ids (1.0, 1e3, 2^63, 30 digits,
// "\u00e9") are swapped for a stand-in on the way in and restored on the way
// out (see idSwap).
func sdkEchoesID(id json.RawMessage) bool {
	if len(id) == 0 {
		return true
	}
	if id[0] == '"' {
		return bytes.IndexByte(id, '\\') < 0
	}
	n, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil && n > -1<<53 && n < 1<<53 && strconv.FormatInt(n, 10) == string(id)
}

// idSwap carries an id the go-sdk would not echo byte for byte through it:
// the body the SDK reads has a stand-in string id, and every response write
// puts the original back (JSON-RPC 2.0 §5: the response id "MUST be the
// same as the value of the id member in the Request Object").
type idSwap struct {
	gin.ResponseWriter
	standIn []byte // the quoted stand-in, as the SDK writes it
	id      []byte // the id as the client sent it
}

// swapID returns the body with the id replaced by a stand-in, and the
// response writer that restores it; ok is false when the SDK echoes the id
// as sent and nothing needs swapping.
func (m *rpcMessage) swapID(w gin.ResponseWriter) (body []byte, sw *idSwap, ok bool) {
	if m.id == nil || sdkEchoesID(m.id) {
		return nil, nil, false
	}
	var r [12]byte
	_, _ = rand.Read(r[:])
	standIn := []byte(`"restmcp-id-` + hex.EncodeToString(r[:]) + `"`)
	body = make([]byte, 0, len(m.body)+len(standIn))
	body = append(body, m.body[:m.idStart]...)
	body = append(body, standIn...)
	body = append(body, m.body[m.idEnd:]...)
	return body, &idSwap{ResponseWriter: w, standIn: standIn, id: m.id}, true
}

func (w *idSwap) Write(p []byte) (int, error) {
	if _, err := w.ResponseWriter.Write(bytes.ReplaceAll(p, w.standIn, w.id)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *idSwap) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// errorIs reports whether err is a *messageError.
func asMessageError(err error) (*messageError, bool) {
	var me *messageError
	ok := errors.As(err, &me)
	return me, ok
}
