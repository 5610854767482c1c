package adapter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/restmcp/restmcp/internal/jsonvalue"
	"github.com/restmcp/restmcp/openapi"
)

// mapResponse turns an upstream response to a call of t into a tool result
// (R1–R5). It reads at most MaxResponseBytes+1 bytes of a textual body and
// MaxBinaryBytes+1 of a binary one. A 2xx JSON object's structuredContent
// is checked against t's outputSchema as it is compacted: the compact
// bytes when they fit, else the object made to fit (R8c). An error means
// the body could not be read (R6).
//
// direct says the result goes straight to the fast path's writer
// (exchange.writesDirect): a large JSON object is then kept in a pooled
// buffer (pooledbody.go).
//
// link, when not nil, is how a binary 2xx answer larger than
// BinaryLinkBytes is returned instead (a resource_link, links.go); a call
// made to read a link (isDownload) reads up to MaxDownloadBytes.
func (s *Server) mapResponse(resp *http.Response, t *openapi.Tool, link func(mediaType string, size int64) *mcp.CallToolResult, direct bool) (*mcp.CallToolResult, error) {
	mediaType := contentType(resp.Header.Get("Content-Type"))
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	kind := bodyKind(mediaType)
	coding := resp.Header.Get("Content-Encoding")
	known, err := decodeContent(resp) // R9
	if err != nil {
		return nil, err
	}
	if !known {
		// A coding restmcp cannot undo: the bytes as they came, as a blob,
		// never as garbled text (R9, R4).
		if !ok {
			return errorResult(fmt.Sprintf("%s\n[the response body is in content coding %q, which restmcp does not decode; not shown]", statusLine(resp.StatusCode), coding)), nil
		}
		kind, mediaType = kindBlob, "application/octet-stream"
	}

	if ok && kind != kindText {
		return s.binaryAnswer(resp, kind, mediaType, link)
	}

	var body string
	var truncated bool
	if direct && ok && t != nil && isJSON(mediaType) && !s.opts.TextReceipt && bodyFollows(resp) &&
		resp.ContentLength > largeResultBytes && resp.ContentLength <= int64(min(s.opts.MaxResponseBytes, maxPooledBody)) {
		// Written by the fast path straight from a pooled buffer
		// (pooledbody.go), or, not a JSON object that fits, mapped below.
		res, b, err := s.pooledAnswer(resp, t)
		if err != nil || res != nil {
			return res, err
		}
		body = b
	} else {
		// The body is read once, into the string that is the text: the
		// compact structuredContent of a compact answer is a part of it,
		// not a copy.
		var err error
		if body, truncated, err = readText(resp.Body, resp.ContentLength, s.opts.MaxResponseBytes); err != nil {
			return nil, fmt.Errorf("reading response body: %w", err)
		}
	}
	text := body
	if truncated {
		text += fmt.Sprintf("\n[truncated: showing %d of %s bytes]", len(body), describeTotal(resp.ContentLength, s.opts.MaxResponseBytes))
	}
	if !ok {
		return s.errorAnswer(resp, t, mediaType, body, text, truncated), nil
	}
	if text == "" {
		return textResult(statusLine(resp.StatusCode), false), nil // R2
	}
	res := textResult(text, false) // R1
	if !truncated && isJSON(mediaType) {
		if obj := compactObject(body, t); obj != nil {
			res.StructuredContent = obj
			if s.opts.TextReceipt {
				res = textResult(receipt(resp.StatusCode, len(text), obj), false)
				res.StructuredContent = obj
			}
		}
	}
	if t != nil {
		addResponseHeaders(res, t, resp)
	}
	return res, nil
}

// binaryAnswer maps a 2xx binary answer (R4): inline up to MaxBinaryBytes,
// a link past BinaryLinkBytes when link is set, up to MaxDownloadBytes when
// the call reads a link; larger, an error result naming the bound.
func (s *Server) binaryAnswer(resp *http.Response, kind kind, mediaType string, link func(mediaType string, size int64) *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	limit, what := s.opts.MaxBinaryBytes, "binary results"
	switch {
	case isDownload(resp):
		limit, what = s.opts.MaxDownloadBytes, "downloads (max_download_bytes)"
	case link != nil:
		if resp.ContentLength > int64(s.opts.BinaryLinkBytes) {
			return link(mediaType, resp.ContentLength), nil
		}
		limit = min(limit, s.opts.BinaryLinkBytes)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if err != nil {
		return nil, fmt.Errorf("reading response body: %w", err)
	}
	if len(data) == 0 {
		return textResult(statusLine(resp.StatusCode), false), nil
	}
	if len(data) > limit {
		if link != nil && !isDownload(resp) {
			return link(mediaType, resp.ContentLength), nil // -1: not said
		}
		return errorResult(fmt.Sprintf("%s\n[%s body of %s bytes is larger than the %d-byte limit for %s and was not returned]",
			statusLine(resp.StatusCode), mediaType, describeTotal(resp.ContentLength, limit), limit, what)), nil
	}
	return binaryResult(kind, mediaType, data, resp.Request.URL), nil
}

// errorAnswer maps a non-2xx answer (R3): a tool error whose text names the
// status, then, for 429 and 503, when to retry (the adapter itself never
// waits) and what the rate-limit headers say, then the body; data is the
// body read, text its text (with the truncation note).
func (s *Server) errorAnswer(resp *http.Response, t *openapi.Tool, mediaType string, body, text string, truncated bool) *mcp.CallToolResult {
	// R3: a non-2xx is a tool error whose text names the status, then,
	// for 429, when to retry (the adapter itself never waits), then the
	// body. A refused redirect also names where it pointed.
	var b strings.Builder
	b.WriteString(statusLine(resp.StatusCode))
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if v := resp.Header.Get("Retry-After"); v != "" {
			b.WriteString("\nRetry-After: " + v)
		}
	}
	// What the upstream says of its rate limit, as one line the
	// model can act on (and as structuredContent below).
	limit, limited := readUpstreamLimit(resp.StatusCode, resp.Header, time.Now())
	if limited {
		b.WriteString("\n" + limit.line())
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		if v := resp.Header.Get("Location"); v != "" {
			b.WriteString("\nLocation: " + v + " (redirect not followed: restmcp follows redirects only within the same host)")
		}
	}
	if text != "" {
		b.WriteString("\n" + text)
	}
	if s.opts.UpstreamErrorsEmpty && resp.StatusCode != http.StatusUnauthorized && resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests {
		// The deployment documents [] for a failed read: the model
		// gets that, and the status only in the log and metrics.
		return textResult("[]", false)
	}
	res := errorResult(b.String())
	if s.opts.ErrorStructuredContent && !truncated && isJSON(mediaType) {
		// The upstream's error object (code, retryable, request_id…)
		// as data, beside the text (redacted in send, as the text is),
		// when it fits the tool's outputSchema: an SDK client checks
		// any structuredContent against it, error results included, and
		// rejects the whole result when it does not validate. One that
		// does not fit stays in the text only, with a note saying so.
		data := []byte(body)
		if obj := jsonObject(data); obj != nil {
			if t == nil || t.FitsStructured(data) {
				res.StructuredContent = obj
			} else {
				res.Content = append(res.Content, &mcp.TextContent{Text: errorObjectNote})
			}
		}
	}
	if limited && res.StructuredContent == nil {
		// Only when it fits the outputSchema: an SDK client checks any
		// structuredContent, error results included.
		if b, err := sdkJSON(limit.object()); err == nil && (t == nil || t.FitsStructured(b)) {
			res.StructuredContent = json.RawMessage(b)
		}
	}
	return res
}

// addResponseHeaders gives res what the answer's headers tell the model
// (docs/results.md): the headers t's operation declares, as a text item
// and as a member of an object structuredContent; and the pages a Link
// header names, as the arguments of t's next call.
func addResponseHeaders(res *mcp.CallToolResult, t *openapi.Tool, resp *http.Response) {
	hs := t.ResponseHeaders(resp.Header)
	pages := t.Pages(resp.Header.Get("Link"), resp.Request.URL)
	if hs == nil && pages == nil {
		return
	}
	var b strings.Builder
	if hs != nil {
		b.WriteString("response headers:")
		for _, k := range slices.Sorted(maps.Keys(hs)) {
			b.WriteString("\n" + k + ": " + hs[k])
		}
	}
	for _, p := range pages {
		args, err := sdkJSON(p.Arguments)
		if err != nil {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p.Rel + " page: call " + t.Name + " with " + string(args))
	}
	res.Content = append(res.Content, &mcp.TextContent{Text: b.String()})
	if hs == nil || t.HeadersMember() == "" {
		return
	}
	switch sc := res.StructuredContent.(type) {
	case jsonvalue.Compact:
		res.StructuredContent = jsonvalue.Compact(withMember([]byte(sc), t.HeadersMember(), hs))
	case json.RawMessage:
		res.StructuredContent = json.RawMessage(withMember(sc, t.HeadersMember(), hs))
	case *pooledBody:
		sc.compact = withMember(sc.compact, t.HeadersMember(), hs) // bytes of its own; the text stays in the buffer
	case map[string]any:
		sc[t.HeadersMember()] = hs
	}
}

// withMember is the JSON object obj with the member name: v added at its
// end (obj unchanged when v does not encode or obj is not an object).
func withMember(obj []byte, name string, v any) []byte {
	hb, err := sdkJSON(v)
	if err != nil || len(obj) < 2 || obj[len(obj)-1] != '}' {
		return obj
	}
	if ms, ok := jsonvalue.Members(obj); ok {
		for _, m := range ms {
			if m.Key == name {
				return obj // the body has one already: never a second
			}
		}
	}
	return jsonvalue.AppendMember(obj, name, hb)
}

// compactObject is a 2xx body that is a JSON object, as structuredContent:
// checked, compacted and checked against t's outputSchema in one pass
// without a tree (tokens as the upstream wrote them, members in its order:
// openapi.Tool.CompactStructured). A body that is compact already, as most
// APIs send it, is used as it is, without a copy; otherwise the compact
// text is a new string. An object that does not fit the
// schema is decoded and made to fit (R8a). It is nil when the body is not
// a JSON object.
func compactObject(body string, t *openapi.Tool) any {
	if t == nil {
		t = &openapi.Tool{}
	}
	out, fits, err := t.CompactStructured(body)
	switch {
	case err != nil:
		return nil
	case fits:
		return out
	}
	if tree := jsonObject([]byte(out)); tree != nil {
		return t.ConformStructured(tree)
	}
	return nil
}

// bodyFollows reports whether resp's Content-Length is the length of a
// body that follows: not for an answer to HEAD, nor a 204 (RFC 9110 §8.6:
// https://www.rfc-editor.org/rfc/rfc9110#section-8.6).
func bodyFollows(resp *http.Response) bool {
	return resp.StatusCode != http.StatusNoContent && (resp.Request == nil || resp.Request.Method != http.MethodHead)
}

// receipt is the text content of a result whose JSON object is carried
// once, in structuredContent (Options.TextReceipt): the status, the size
// and the first members, so that a model reading only text knows where
// the result is.
func receipt(status, size int, obj any) string {
	var keys []string
	switch o := obj.(type) {
	case jsonvalue.Compact:
		members, _ := jsonvalue.Members([]byte(o))
		for _, m := range members {
			keys = append(keys, m.Key)
		}
	case map[string]any:
		keys = slices.Collect(maps.Keys(o))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys) // a repeated member is one member
	n := len(keys)
	more := ""
	if n > 8 {
		keys, more = keys[:8], fmt.Sprintf(" and %d more", n-8)
	}
	return fmt.Sprintf("%s: the result is in structuredContent, a JSON object of %d bytes with the members %s%s.",
		statusLine(status), size, strings.Join(keys, ", "), more)
}

// statusLine is "HTTP <code> <StatusText>", or "HTTP <code>" for a code Go
// has no text for.
func statusLine(code int) string {
	if t := http.StatusText(code); t != "" {
		return "HTTP " + strconv.Itoa(code) + " " + t
	}
	return "HTTP " + strconv.Itoa(code)
}

// describeTotal is the "<total>" of the truncation note: the upstream's
// Content-Length when it sent one, otherwise "more than <cap>" (the adapter
// stops reading at cap+1 bytes, so that is all it knows).
func describeTotal(contentLength int64, limit int) string {
	if contentLength > int64(limit) {
		return strconv.FormatInt(contentLength, 10)
	}
	return "more than " + strconv.Itoa(limit)
}

func textResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: isError, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// readText reads at most limit+1 bytes (sizeHint, the Content-Length or
// -1, sizes the string) into a string of its own and, past limit, cuts it
// at the largest UTF-8 boundary ≤ limit (R5). The body is copied once,
// from a pooled read buffer into the string: a result's text never
// shares memory with a buffer that is used again.
func readText(r io.Reader, sizeHint int64, limit int) (string, bool, error) {
	var b strings.Builder
	if sizeHint >= 0 {
		b.Grow(int(min(sizeHint, int64(limit)) + 1)) // room to see the end without growing
	}
	chunk := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(chunk)
	for b.Len() <= limit {
		n, err := r.Read((*chunk)[:min(len(*chunk), limit+1-b.Len())])
		b.Write((*chunk)[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return b.String(), false, err
		}
	}
	data := b.String()
	if len(data) <= limit {
		return data, false, nil
	}
	cut := limit
	// Step back over at most UTFMax-1 continuation bytes; an invalid
	// sequence longer than that is cut where it is.
	for i := 0; i < utf8.UTFMax-1 && cut > 0 && !utf8.RuneStart(data[cut]); i++ {
		cut--
	}
	if !utf8.RuneStart(data[cut]) {
		cut = limit
	}
	return data[:cut], true, nil
}

// readBuffers are readText's buffers, 256 KiB each: what one read of a
// body gives, copied out before the buffer goes back.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

type kind int

const (
	kindText kind = iota
	kindImage
	kindAudio
	kindBlob
)

// contentType returns the lower-case media type of a Content-Type value, or
// "" when it is missing or malformed.
func contentType(v string) string {
	switch v { // the common values, without parsing (and its allocation)
	case "application/json", "application/json; charset=utf-8", "application/json;charset=utf-8", "application/json; charset=UTF-8":
		return "application/json"
	}
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return strings.ToLower(mt)
}

// bodyKind decides, from the upstream Content-Type alone (R4), whether a
// body is text, an image, audio or another binary blob. A missing
// Content-Type is treated as text: most APIs that omit it send JSON or
// plain text.
func bodyKind(mediaType string) kind {
	switch {
	case mediaType == "":
		return kindText
	case strings.HasPrefix(mediaType, "text/"), isJSON(mediaType), isXML(mediaType):
		return kindText
	case strings.HasPrefix(mediaType, "image/"):
		if mediaType == "image/svg+xml" {
			return kindText
		}
		return kindImage
	case strings.HasPrefix(mediaType, "audio/"):
		return kindAudio
	}
	switch mediaType {
	case "application/javascript", "application/ecmascript", "application/x-www-form-urlencoded",
		"application/yaml", "application/x-yaml", "application/x-ndjson", "application/graphql",
		"application/csv", "application/sql", "application/toml":
		return kindText
	}
	return kindBlob
}

func isJSON(mt string) bool { return mt == "application/json" || strings.HasSuffix(mt, "+json") }
func isXML(mt string) bool  { return mt == "application/xml" || strings.HasSuffix(mt, "+xml") }

// jsonObject returns the body as a JSON object for structuredContent, or nil
// when it is not one.
func jsonObject(data []byte) map[string]any {
	t := bytes.TrimSpace(data)
	if !bytes.HasPrefix(t, []byte("{")) {
		return nil
	}
	// One pass without reflection; the same values as encoding/json with
	// UseNumber (numbers kept exactly as upstream wrote them).
	v, err := jsonvalue.Parse(t)
	if err != nil {
		return nil
	}
	obj, _ := v.(map[string]any)
	return obj
}

// binaryResult is an image, audio or embedded-resource item (R4). The
// resource URI is the upstream URL without its query, which may hold the key.
func binaryResult(k kind, mediaType string, data []byte, u *url.URL) *mcp.CallToolResult {
	var c mcp.Content
	switch k {
	case kindImage:
		c = &mcp.ImageContent{Data: data, MIMEType: mediaType}
	case kindAudio:
		c = &mcp.AudioContent{Data: data, MIMEType: mediaType}
	default:
		uri := ""
		if u != nil {
			clean := *u
			clean.RawQuery, clean.ForceQuery, clean.Fragment, clean.RawFragment, clean.User = "", false, "", "", nil
			uri = clean.String()
		}
		c = &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: mediaType, Blob: data}}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{c}}
}

// conformToOutputSchema applies the structured-output contract to the
// result of a tool that declares an outputSchema (openapi sets one only when
// the 2xx response schema is an object after resolution). MCP 2025-11-25
// says such a tool's successful results carry structuredContent conforming
// to the schema, and the TypeScript and Python SDK clients enforce it: a
// success without structuredContent, or with structuredContent the schema
// rejects, makes callTool throw, so the model sees a protocol failure
// instead of the upstream's answer. Error results are exempt (those
// clients skip the check when isError is set), so they never get
// structuredContent here.
//
// A 2xx body that is a JSON object is already structuredContent (R1); the
// adapter passes it as the upstream sent it and does not validate it
// against the document's schema. For a 2xx body that is not a JSON object
// (empty, text, binary, an array, invalid or truncated JSON) the rule is:
//
//   - when the schema accepts an empty object (its root has no "required"
//     list and no positive minProperties), structuredContent is {} and the
//     body stays in content, where the model reads it (C22's empty and
//     unparsable bodies stay isError: false);
//   - otherwise the result becomes an error naming the mismatch, with the
//     original content after it, so that the model still sees what the
//     upstream sent and clients accept the result.
//
// Wrapping the body as {"result": …} is not done: it validates against
// exactly the schemas that also accept {}, and would tell the model the
// response has a shape the API never sends.
//
// keepErrorObject (Options.ErrorStructuredContent) keeps an upstream error
// object as the structuredContent of the error result.
func conformToOutputSchema(t *openapi.Tool, res *mcp.CallToolResult, keepErrorObject bool) *mcp.CallToolResult {
	if res == nil {
		return res
	}
	if res.IsError {
		if _, upstream := res.StructuredContent.(map[string]any); !upstream || !keepErrorObject {
			res.StructuredContent = nil
		}
		return res
	}
	if len(t.OutputSchema) == 0 {
		return res
	}
	switch res.StructuredContent.(type) {
	case jsonvalue.Compact, *pooledBody:
		return res // mapResponse's, checked as it was compacted (compactObject, pooledAnswer)
	}
	if obj, ok := res.StructuredContent.(map[string]any); ok {
		res.StructuredContent = t.ConformStructured(obj)
		return res
	}
	if acceptsEmptyObject(t.OutputSchema) {
		// R8: no invented structuredContent without a text that says so.
		res.StructuredContent = map[string]any{}
		note := "the upstream's 2xx response is not a JSON object, so structuredContent is empty; the response follows."
		if cutJSONObject(res) {
			note = "the upstream's 2xx response is a JSON object larger than max_response_bytes and was cut, so structuredContent is empty; its beginning follows."
		}
		res.Content = append([]mcp.Content{&mcp.TextContent{Text: note}}, res.Content...)
		return res
	}
	note := "the upstream returned a 2xx response that is not the JSON object this tool's outputSchema declares, so it cannot be returned as structured content; the call itself may have succeeded. The response follows."
	if cutJSONObject(res) {
		note = "the upstream's 2xx response is a JSON object larger than max_response_bytes and was cut, so it cannot be returned as structured content; the call itself may have succeeded. Its beginning follows."
	}
	content := append([]mcp.Content{&mcp.TextContent{Text: note}}, res.Content...)
	return &mcp.CallToolResult{IsError: true, Content: content}
}

// errorObjectNote follows the text of an error result whose upstream
// error object is not its structuredContent because it does not fit the
// tool's outputSchema (Options.ErrorStructuredContent).
const errorObjectNote = "the upstream's error body is a JSON object that does not fit this tool's outputSchema, so it is not given as structuredContent; it is the text above."

// cutJSONObject reports whether res is a JSON object cut at
// MaxResponseBytes: one text whose body starts with "{" and ends with
// mapResponse's truncation line (R5).
func cutJSONObject(res *mcp.CallToolResult) bool {
	if len(res.Content) != 1 {
		return false
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return false
	}
	text := strings.TrimLeft(tc.Text, " \t\r\n")
	i := strings.LastIndex(text, "\n[truncated: showing ")
	return i > 0 && text[0] == '{' && strings.HasSuffix(text, " bytes]")
}

// acceptsEmptyObject reports whether {} conforms to an object schema: its
// root lists no required properties and has no positive minProperties.
// openapi emits object roots only (S5), so nested keywords do not matter.
func acceptsEmptyObject(schema json.RawMessage) bool {
	var root struct {
		Required      []string `json:"required"`
		MinProperties *float64 `json:"minProperties"`
	}
	if json.Unmarshal(schema, &root) != nil {
		return false
	}
	return len(root.Required) == 0 && (root.MinProperties == nil || *root.MinProperties <= 0)
}
