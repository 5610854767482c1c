package openapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/restmcp/restmcp/internal/clip"
	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// Response headers (docs/results.md, "Response headers and pages"): the
// headers an operation's 2xx responses declare reach the model with the
// body, and a Link header's rel="next" / rel="prev" become the arguments of
// the same tool's next call.

const (
	// MaxResponseHeaders is the most declared headers a tool returns.
	MaxResponseHeaders = 16
	// MaxResponseHeaderBytes is the most bytes of one header's value
	// returned; a longer value is cut, ending "…".
	MaxResponseHeaderBytes = 1024
)

// secretHeader reports whether a header may carry a credential or state
// the model must not see, or is hop-by-hop: such headers are never
// returned, declared or not.
func secretHeader(canon string) bool {
	switch canon {
	case "Set-Cookie", "Set-Cookie2", "Cookie", "Authorization", "Proxy-Authorization", "Proxy-Authenticate",
		"X-Api-Key", "Connection", "Keep-Alive", "Transfer-Encoding", "Upgrade", "Te", "Trailer":
		return true
	}
	l := strings.ToLower(canon)
	return strings.Contains(l, "token") || strings.Contains(l, "secret") || strings.Contains(l, "api-key") ||
		strings.Contains(l, "apikey") || strings.Contains(l, "password") || strings.Contains(l, "session")
}

// declaredHeaders lists the headers op's 2xx responses declare, canonical,
// sorted, without secret ones, at most MaxResponseHeaders.
func declaredHeaders(op *openapi3.Operation) []string {
	if op.Responses == nil {
		return nil
	}
	var out []string
	for code, r := range op.Responses.Map() {
		if len(code) != 3 || code[0] != '2' || r == nil || r.Value == nil {
			continue
		}
		for name := range r.Value.Headers {
			c := http.CanonicalHeaderKey(strings.TrimSpace(name))
			if c != "" && !secretHeader(c) && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out[:min(len(out), MaxResponseHeaders)]
}

// withHeadersMember adds to an object output schema the member that holds
// the declared headers (lower-case names, string values) and returns the
// schema and the member's name: "headers", or "response_headers" when the
// body already has a member "headers"; nil schema unchanged and "" when it
// has both, or there is no schema.
func withHeadersMember(schema []byte, headers []string) ([]byte, string) {
	if len(schema) == 0 || len(headers) == 0 {
		return schema, ""
	}
	ms, ok := jsonvalue.Members(schema)
	if !ok {
		return schema, ""
	}
	var props []byte
	for _, m := range ms {
		if m.Key == "properties" {
			props = m.Raw
		}
	}
	taken := map[string]bool{}
	if pm, ok := jsonvalue.Members(props); ok {
		for _, m := range pm {
			taken[m.Key] = true
		}
	}
	name := "headers"
	if taken[name] {
		name = "response_headers"
	}
	if taken[name] {
		return schema, ""
	}
	var p bytes.Buffer
	// As R8 writes every value below the root: it may be null.
	p.WriteString(`{"description":"Response headers the API sent with this answer, by lower-case name","anyOf":[{"type":"object","properties":{`)
	for i, h := range headers {
		if i > 0 {
			p.WriteByte(',')
		}
		k, _ := json.Marshal(strings.ToLower(h))
		p.Write(k)
		p.WriteString(`:{"anyOf":[{"type":"string"},{"type":"null"}]}`)
	}
	p.WriteString(`}},{"type":"null"}]}`)
	k, _ := json.Marshal(name)
	member := append(append(k, ':'), p.Bytes()...)
	// Rebuild the root with the member added to properties (created when
	// missing), every other member as it was.
	var out bytes.Buffer
	out.WriteByte('{')
	wrote := false
	for i, m := range ms {
		if i > 0 {
			out.WriteByte(',')
		}
		kb, _ := json.Marshal(m.Key)
		out.Write(kb)
		out.WriteByte(':')
		if m.Key == "properties" {
			trimmed := bytes.TrimSpace(m.Raw)
			out.Write(trimmed[:len(trimmed)-1]) // all but its closing brace
			if len(taken) > 0 {
				out.WriteByte(',')
			}
			out.Write(member)
			out.WriteByte('}')
			wrote = true
			continue
		}
		out.Write(m.Raw)
	}
	if !wrote {
		if len(ms) > 0 {
			out.WriteByte(',')
		}
		out.WriteString(`"properties":{`)
		out.Write(member)
		out.WriteByte('}')
	}
	out.WriteByte('}')
	return out.Bytes(), name
}

// ResponseHeaders is what t returns of an answer's headers: its declared
// headers that are present, by lower-case name, each value cut to
// MaxResponseHeaderBytes (several values joined with ", "). Nil when none.
func (t *Tool) ResponseHeaders(h http.Header) map[string]string {
	var out map[string]string
	for _, name := range t.responseHeaders {
		vs := h.Values(name)
		if len(vs) == 0 {
			continue
		}
		v := strings.Join(vs, ", ")
		if len(v) > MaxResponseHeaderBytes {
			v = clip.String(v, MaxResponseHeaderBytes-len("…"))
		}
		if out == nil {
			out = map[string]string{}
		}
		out[strings.ToLower(name)] = v
	}
	return out
}

// HeadersMember is the name of the structuredContent member that holds
// ResponseHeaders ("" when the output schema has none).
func (t *Tool) HeadersMember() string { return t.headersMember }

// Page is a link to another page of a list, as arguments of the same tool.
type Page struct {
	Rel       string         // "next" or "prev"
	Arguments map[string]any // the call's arguments, typed as the input schema says
}

// Pages reads a Link header (RFC 8288) of an answer to reqURL: each
// rel="next" and rel="prev" link whose URL maps back onto t's operation
// (same host, t's path template, every query parameter one of t's) as the
// arguments of that call. Credential query parameters are left out.
func (t *Tool) Pages(link string, reqURL *url.URL) []Page {
	if link == "" || t.plan == nil || reqURL == nil {
		return nil
	}
	var pages []Page
	for _, l := range splitLinks(link) {
		rel := ""
		for _, r := range strings.Fields(strings.ToLower(l.rel)) {
			if r == "next" || r == "prev" || r == "previous" {
				rel = strings.TrimSuffix(r, "ious")
			}
		}
		if rel == "" {
			continue
		}
		u, err := reqURL.Parse(l.target)
		if err != nil || u.Host != reqURL.Host {
			continue
		}
		if args, ok := t.argumentsFor(u); ok {
			pages = append(pages, Page{Rel: rel, Arguments: args})
		}
	}
	return pages
}

type linkValue struct{ target, rel string }

// splitLinks parses a Link field value: <target>; rel="…"; …, <target>…
func splitLinks(v string) []linkValue {
	var out []linkValue
	for len(v) > 0 {
		start := strings.IndexByte(v, '<')
		if start < 0 {
			break
		}
		end := strings.IndexByte(v[start:], '>')
		if end < 0 {
			break
		}
		lv := linkValue{target: v[start+1 : start+end]}
		v = v[start+end+1:]
		next := strings.IndexByte(v, '<')
		params := v
		if next >= 0 {
			params = v[:next]
		}
		for _, p := range strings.Split(params, ";") {
			k, val, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "rel") {
				lv.rel = strings.Trim(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(val), ",")), `"`)
			}
		}
		out = append(out, lv)
		if next < 0 {
			break
		}
		v = v[next:]
	}
	return out
}

// argumentsFor maps u back onto t's parameters: the path (t's server base
// path, then its template) gives the path parameters, each query
// parameter one of t's query parameters. false when u is not a call of t.
func (t *Tool) argumentsFor(u *url.URL) (map[string]any, bool) {
	p := t.plan
	base, err := url.Parse(p.base)
	if err != nil {
		return nil, false
	}
	path, ok := strings.CutPrefix(u.EscapedPath(), strings.TrimSuffix(base.EscapedPath(), "/"))
	if !ok {
		return nil, false
	}
	args := map[string]any{}
	types := t.argumentTypes()
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	tmpl := strings.Split(strings.TrimPrefix(t.PathTemplate, "/"), "/")
	if len(segs) != len(tmpl) {
		return nil, false
	}
	for i, s := range tmpl {
		if name, isParam := strings.CutPrefix(s, "{"); isParam && strings.HasSuffix(name, "}") {
			v, err := url.PathUnescape(segs[i])
			if err != nil {
				return nil, false
			}
			if pp := p.paramByWire("path", strings.TrimSuffix(name, "}")); pp != nil {
				args[pp.key] = typed(types[pp.key], v)
				continue
			}
			return nil, false
		}
		if s != segs[i] {
			return nil, false
		}
	}
	creds := t.CredentialQueryNames()
	for k, vs := range u.Query() {
		if slices.Contains(creds, k) {
			continue
		}
		pp := p.paramByWire("query", k)
		if pp == nil || len(vs) == 0 {
			return nil, false
		}
		args[pp.key] = typed(types[pp.key], vs[0])
	}
	return args, true
}

// paramByWire is the parameter in (path, query) named wire.
func (p *requestPlan) paramByWire(in, wire string) *paramPlan {
	for _, pp := range p.params {
		if pp.in == in && pp.wire == wire {
			return pp
		}
	}
	return nil
}

// argumentTypes is the JSON Schema type of each top-level argument of
// t's input schema (the first, when it lists several).
func (t *Tool) argumentTypes() map[string]string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(t.InputSchema, &s)
	types := make(map[string]string, len(s.Properties))
	for k, p := range s.Properties {
		typ := p.Type
		if l, ok := typ.([]any); ok && len(l) > 0 {
			typ = l[0]
		}
		types[k], _ = typ.(string)
	}
	return types
}

// typed is v as the type typ says: a number for integer and number, a
// boolean for boolean, else the string.
func typed(typ, v string) any {
	switch typ {
	case "integer", "number":
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return json.Number(v)
		}
	case "boolean":
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return v
}
