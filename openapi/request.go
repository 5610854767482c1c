package openapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/restmcp/restmcp/internal/jsonvalue"
)

// requestPlan is everything NewRequest needs, computed once at load.
type requestPlan struct {
	tool   string
	method string
	base   string // server URL without trailing "/"
	path   []pathSeg
	params []*paramPlan // declaration order (Q2)
	// idempotency is the Idempotency-Key header parameter (idempotencyParam).
	idempotency *paramPlan
	body        *bodyPlan
	props       map[string]*propPlan // input-schema key → where it goes (P3)
	required    []string             // input-schema keys, in schema order
	sec         *securityPlan
	accept      string // the Accept header sent upstream (Q9)

	inputSchema []byte
	compileOnce sync.Once
	compiled    map[string]*argSchema // see validators
}

// propPlan says where one argument goes: a parameter, a flattened body
// field, or the whole body.
type propPlan struct {
	param *paramPlan
	field *bodyField
	body  bool
	// rename maps the nested keys of this argument's value back to the
	// API's names (P3); nil when its schema renamed none.
	rename *renameTree
}

type paramPlan struct {
	key, wire, in string
	canon         string // header: canonical form of wire
	style         string
	explode       bool
	required      bool
	integer       bool // Q4: integer literals with a zero fraction lose it
	jsonContent   bool // parameter defined with content: value sent as JSON text
}

type bodyKind int

const (
	bodyJSON bodyKind = iota
	bodyForm
	bodyMultipart
	bodyText
	bodyBinary
)

func bodyKindOf(mt string) bodyKind {
	switch r := mediaRank(mt); {
	case r <= 1:
		return bodyJSON
	case r == 2:
		return bodyForm
	case r == 3:
		return bodyMultipart
	case r == 5:
		return bodyBinary
	default:
		return bodyText
	}
}

type bodyPlan struct {
	mediaType string
	kind      bodyKind
	required  bool
	whole     string      // key of the whole-body property (B3); "" when flattened (B2)
	fields    []bodyField // flattened properties in declaration order
	partTypes map[string]string
}

type bodyField struct {
	key, wire string
	bkey      string // the key in the converted body schema (wire, or its P2 rename)
	binary    bool   // base64 argument decoded to bytes (multipart)
	// style and explode are the form field's Encoding Object serialization
	// (Q10); style "" is form, OpenAPI's default for form bodies, and
	// explode then defaults to true.
	style   string
	explode bool
}

// arg is one top-level argument as the client sent it: its raw text
// (Q4, Q8) and, for arguments from NewRequest, its value decoded once.
type arg struct {
	key string
	raw json.RawMessage
	val any
}

// parseArgs splits the arguments object into its members, keeping the
// client's order and raw values (Q4, Q8), and decodes each value once.
func parseArgs(args json.RawMessage) ([]arg, error) {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || string(t) == "null" {
		return nil, nil
	}
	if t[0] != '{' {
		return nil, &ArgumentError{Reason: "arguments must be a JSON object"}
	}
	if !json.Valid(t) {
		return nil, &ArgumentError{Reason: "arguments are not valid JSON"}
	}
	out, err := splitObject(t)
	if err != nil {
		return nil, &ArgumentError{Reason: "arguments are not valid JSON"}
	}
	if k, dup := duplicateKey(out); dup {
		return nil, &ArgumentError{Param: k, Reason: "given more than once"}
	}
	return out, nil
}

// duplicateKey returns the first key of list that an earlier argument
// already has, in linear time.
func duplicateKey(list []arg) (string, bool) {
	if len(list) <= 8 {
		for i := 1; i < len(list); i++ {
			for j := range i {
				if list[j].key == list[i].key {
					return list[i].key, true
				}
			}
		}
		return "", false
	}
	seen := make(map[string]struct{}, len(list))
	for _, a := range list {
		if _, ok := seen[a.key]; ok {
			return a.key, true
		}
		seen[a.key] = struct{}{}
	}
	return "", false
}

// lookup returns the argument with key k.
func lookup(list []arg, k string) (*arg, bool) {
	for i := range list {
		if list[i].key == k {
			return &list[i], true
		}
	}
	return nil, false
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

func (p *requestPlan) newRequest(ctx context.Context, args json.RawMessage, key, scheme string) (*http.Request, error) {
	if p == nil {
		return nil, fmt.Errorf("openapi: tool has no request plan")
	}
	list, err := parseArgs(args)
	if err != nil {
		return nil, err
	}
	if err := p.checkArgs(list); err != nil {
		return nil, err
	}
	var creds []credential
	if key != "" {
		creds = p.sec.withKey
	} else if p.sec.keyRequired {
		return nil, &CredentialError{Schemes: p.sec.schemes}
	}

	// Path (Q1).
	var u strings.Builder
	u.Grow(len(p.base) + 64)
	u.WriteString(p.base)
	if err := p.writePath(&u, list); err != nil {
		return nil, err
	}
	// Query (Q2, Q3); the key goes after the operation's own parameters.
	var q strings.Builder
	q.Grow(128)
	header := make(http.Header, 4)
	cookies, err := p.writeParams(list, &q, header)
	if err != nil {
		return nil, err
	}
	if cookies, err = p.writeCredentials(creds, key, scheme, &q, header, cookies); err != nil {
		return nil, err
	}
	if len(cookies) > 0 {
		header.Set("Cookie", strings.Join(cookies, "; "))
	}
	if q.Len() > 0 {
		u.WriteByte('?')
		u.WriteString(q.String())
	}

	// Body (Q7, Q8).
	var body []byte
	contentType := ""
	if bp := p.body; bp != nil {
		body, contentType, err = bp.build(list, p.props)
		if err != nil {
			return nil, err
		}
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, p.method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("building request for %s: %w", p.tool, err)
	}
	req.Header = header
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if p.accept != "" {
		req.Header.Set("Accept", p.accept)
	}
	return req, nil
}

// checkArgs validates the arguments against the plan and the input schema:
// each known, valid, not null when required; every required one present.
// Arguments renamed below the top level are rewritten to their wire keys.
func (p *requestPlan) checkArgs(list []arg) error {
	validators := p.validators()
	for i := range list {
		a := &list[i]
		pp, ok := p.props[a.key]
		if !ok {
			return &ArgumentError{Param: a.key, Reason: "unknown argument"}
		}
		if a.val == nil && pp.param != nil {
			if pp.param.required {
				return &ArgumentError{Param: a.key, Reason: "required; must not be null"}
			}
			continue // Q3: null optional parameter is omitted
		}
		if err := checkNumbers(a.val); err != nil {
			return &ArgumentError{Param: a.key, Reason: err.Error()}
		}
		if val := validators[a.key]; val != nil {
			if err := val.validate(a.val); err != nil {
				return &ArgumentError{Param: a.key, Reason: err.Error()}
			}
		}
		// Validated against the schema's keys; sent with the API's (P3).
		if pp.rename != nil && a.val != nil {
			raw := pp.rename.apply(a.raw)
			val, err := (&jsonvalue.Parser{B: raw}).Value()
			if err != nil {
				return &ArgumentError{Param: a.key, Reason: "not valid JSON"}
			}
			a.raw, a.val = raw, val
		}
	}
	for _, r := range p.required {
		if _, ok := lookup(list, r); !ok {
			return &ArgumentError{Param: r, Reason: "required argument is missing"}
		}
	}
	return nil
}

// writePath writes the path, each parameter's value escaped (Q1).
func (p *requestPlan) writePath(u *strings.Builder, list []arg) error {
	for _, s := range p.path {
		if s.param < 0 {
			u.WriteString(s.lit)
			continue
		}
		pp := p.params[s.param]
		a, _ := lookup(list, pp.key)
		v, err := simpleValue(a, pp)
		if err != nil {
			return err
		}
		if v == "" || v == "." || v == ".." {
			return &ArgumentError{Param: pp.key, Reason: "path value " + strconv.Quote(v) + " is not allowed"}
		}
		u.WriteString(escapeUnreserved(v))
	}
	return nil
}

// writeParams writes the query, header and cookie parameters the caller
// gave (Q2, Q3, Q4).
func (p *requestPlan) writeParams(list []arg, q *strings.Builder, header http.Header) (cookies []string, err error) {
	for _, pp := range p.params {
		a, ok := lookup(list, pp.key)
		if !ok || a.val == nil {
			continue
		}
		switch pp.in {
		case "query":
			if err := writeQuery(q, pp, a); err != nil {
				return nil, err
			}
		case "header":
			v, skip, err := sentValue(a, pp)
			if err != nil {
				return nil, err
			}
			if skip {
				continue
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				return nil, &ArgumentError{Param: pp.key, Reason: "header value must not contain CR, LF or NUL"}
			}
			canon := pp.canon
			if canon == "" {
				canon = textproto.CanonicalMIMEHeaderKey(pp.wire)
			}
			header[canon] = append(header[canon], v)
		case "cookie":
			v, skip, err := sentValue(a, pp)
			if err != nil {
				return nil, err
			}
			if skip {
				continue
			}
			cv, ok := cookieValue(v)
			if !ok {
				return nil, &ArgumentError{Param: pp.key, Reason: "a cookie value must not contain control characters (" + firstControl(v) + ")"}
			}
			cookies = append(cookies, pp.wire+"="+cv)
		}
	}
	return cookies, nil
}

// writeCredentials places the caller's key as the operation's security
// schemes ask (after the operation's own query parameters).
func (p *requestPlan) writeCredentials(creds []credential, key, scheme string, q *strings.Builder, header http.Header, cookies []string) ([]string, error) {
	for _, c := range creds {
		switch c.kind {
		case "query":
			if q.Len() > 0 {
				q.WriteByte('&')
			}
			q.WriteString(escapeUnreserved(c.name))
			q.WriteByte('=')
			q.WriteString(escapeUnreserved(key))
		case "header":
			if strings.ContainsAny(key, "\r\n\x00") {
				return nil, &CredentialError{Schemes: p.sec.schemes}
			}
			v := key
			if scheme != "" && strings.EqualFold(c.name, "Authorization") {
				v = scheme + " " + key
			}
			header.Set(c.name, v)
		case "cookie":
			cv, ok := cookieValue(key)
			if !ok {
				return nil, &CredentialError{Schemes: p.sec.schemes}
			}
			cookies = append(cookies, c.name+"="+cv)
		case "bearer":
			if strings.ContainsAny(key, "\r\n\x00") {
				return nil, &CredentialError{Schemes: p.sec.schemes}
			}
			header.Set("Authorization", "Bearer "+key)
		case "basic":
			cred := key
			if !strings.Contains(cred, ":") {
				cred += ":"
			}
			header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(cred)))
		}
	}
	return cookies, nil
}

// cookieValue writes v as the value of one cookie-pair of the Cookie
// header (Q6). RFC 6265 §4.1.1 (https://www.rfc-editor.org/rfc/rfc6265#section-4.1.1)
// allows only cookie-octets there: no space, DQUOTE, comma, semicolon or
// backslash, nothing outside ASCII. Those bytes, and '%' so that the
// encoding reads back unambiguously, are percent-encoded (UTF-8, %XX), as
// OpenAPI's form style for cookies does and as servers that decode cookie
// values (Express's cookie, PHP) read them; every cookie-octet is written
// as is, so tokens (base64 with '=', JWTs) go out unchanged. ok is false
// for a value with a control character (U+0000–U+001F, U+007F), which no
// cookie carries: it is refused rather than smuggled in encoded.
func cookieValue(v string) (string, bool) {
	clean := true
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c == 0x7f {
			return "", false
		}
		if !cookieOctet(c) {
			clean = false
		}
	}
	if clean {
		return v, true
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(v)+16)
	for i := 0; i < len(v); i++ {
		if c := v[i]; cookieOctet(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return string(b), true
}

// cookieOctet reports whether c is one of RFC 6265's cookie-octets
// (%x21 / %x23-2B / %x2D-3A / %x3C-5B / %x5D-7E), less '%' (cookieValue).
func cookieOctet(c byte) bool {
	return c >= 0x21 && c <= 0x7e && c != '"' && c != ',' && c != ';' && c != '\\' && c != '%'
}

// firstControl names the first control character of s, as U+00XX.
func firstControl(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return fmt.Sprintf("U+%04X at byte %d", c, i)
		}
	}
	return ""
}

func isEmptyArray(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) >= 2 && t[0] == '[' && bytes.TrimSpace(t[1:len(t)-1]) == nil
}

// scalarText renders a JSON scalar for the wire: strings unquoted,
// numbers exactly as the client's literal (Q4; integer-typed values with a
// zero fraction lose it), booleans as true/false. ok is false for arrays
// and objects.
func scalarText(v any, integer bool) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		s := string(x)
		if integer {
			if i := strings.IndexByte(s, '.'); i >= 0 && !strings.ContainsAny(s, "eE") && strings.Trim(s[i+1:], "0") == "" {
				s = s[:i]
			}
		}
		return s, true
	case bool:
		return strconv.FormatBool(x), true
	case nil:
		return "", true
	}
	return "", false
}

func decodeNumber(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// sentValue is simpleValue for a header or cookie parameter, and skip
// when the argument is an empty array: nothing is sent for it.
func sentValue(a *arg, pp *paramPlan) (v string, skip bool, err error) {
	v, err = simpleValue(a, pp)
	return v, err == nil && v == "" && isEmptyArray(a.raw), err
}

// simpleValue renders a path, header or cookie value in simple style
// (Q1, Q5): arrays joined with ",", objects as k,v pairs (k=v when
// exploded). Parameters with content are sent as JSON text.
func simpleValue(a *arg, pp *paramPlan) (string, error) {
	if a == nil {
		return "", &ArgumentError{Param: pp.key, Reason: "required argument is missing"}
	}
	if pp.jsonContent {
		return string(a.raw), nil
	}
	v := a.val
	if s, ok := scalarText(v, pp.integer); ok {
		return s, nil
	}
	switch x := v.(type) {
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := scalarText(e, pp.integer)
			if !ok {
				return "", &ArgumentError{Param: pp.key, Reason: "nested arrays and objects cannot be serialized here"}
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ","), nil
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			s, ok := scalarText(x[k], false)
			if !ok {
				return "", &ArgumentError{Param: pp.key, Reason: "nested objects cannot be serialized here"}
			}
			if pp.explode {
				parts = append(parts, k+"="+s)
			} else {
				parts = append(parts, k, s)
			}
		}
		return strings.Join(parts, ","), nil
	}
	return "", &ArgumentError{Param: pp.key, Reason: "unsupported value"}
}

// escapeUnreserved percent-encodes everything outside RFC 3986's
// unreserved set (Q1, Q2): space is %20, "+" is %2B, "|" is %7C.
func escapeUnreserved(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', hex[c>>4], hex[c&15])
		}
	}
	return string(b)
}

func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// writeQuery appends one query parameter per its style and explode (Q2).
func writeQuery(q *strings.Builder, pp *paramPlan, a *arg) error {
	pair := func(name, value string) {
		if q.Len() > 0 {
			q.WriteByte('&')
		}
		q.WriteString(name)
		q.WriteByte('=')
		q.WriteString(value)
	}
	name := escapeUnreserved(pp.wire)
	if pp.jsonContent {
		pair(name, escapeUnreserved(string(a.raw)))
		return nil
	}
	v := a.val
	if s, ok := scalarText(v, pp.integer); ok {
		pair(name, escapeUnreserved(s))
		return nil
	}
	nested := &ArgumentError{Param: pp.key, Reason: "nested arrays and objects cannot be serialized in the query"}
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return nil // Q3
		}
		items := make([]string, len(x))
		for i, e := range x {
			s, ok := scalarText(e, pp.integer)
			if !ok {
				return nested
			}
			items[i] = escapeUnreserved(s)
		}
		if pp.explode && (pp.style == "form" || pp.style == "") {
			for _, it := range items {
				pair(name, it)
			}
			return nil
		}
		sep := ","
		switch pp.style {
		case "spaceDelimited":
			sep = "%20"
		case "pipeDelimited":
			sep = "%7C"
		case "tabDelimited":
			sep = "%09"
		}
		if pp.explode {
			for _, it := range items {
				pair(name, it)
			}
			return nil
		}
		pair(name, strings.Join(items, sep))
		return nil
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		if pp.style == "deepObject" {
			return deepObject(pair, name, x, pp)
		}
		if pp.explode {
			for _, k := range keys {
				s, ok := scalarText(x[k], false)
				if !ok {
					return nested
				}
				pair(escapeUnreserved(k), escapeUnreserved(s))
			}
			return nil
		}
		var parts []string
		for _, k := range keys {
			s, ok := scalarText(x[k], false)
			if !ok {
				return nested
			}
			parts = append(parts, escapeUnreserved(k), escapeUnreserved(s))
		}
		pair(name, strings.Join(parts, ","))
		return nil
	}
	return &ArgumentError{Param: pp.key, Reason: "unsupported value"}
}

// deepObject writes name[k]=v pairs for an object of scalars. The style
// is defined for exactly that (OAS 3.1 §4.8.12.4, style deepObject:
// https://spec.openapis.org/oas/v3.1.0#style-values), so a member that is
// an object or an array is an argument error, not a guess at a nested
// encoding the API may not read.
func deepObject(pair func(string, string), name string, x map[string]any, pp *paramPlan) error {
	for _, k := range slices.Sorted(maps.Keys(x)) {
		s, ok := scalarText(x[k], false)
		if !ok {
			kind := "an object"
			if _, isArray := x[k].([]any); isArray {
				kind = "an array"
			}
			return &ArgumentError{Param: pp.key, Reason: fmt.Sprintf("member %q is %s; a deepObject parameter holds only strings, numbers, booleans and nulls", k, kind)}
		}
		pair(name+"%5B"+escapeUnreserved(k)+"%5D", escapeUnreserved(s))
	}
	return nil
}

// build serializes the body from the arguments (Q7, Q8). It returns a nil
// body when the caller supplied no body data.
func (bp *bodyPlan) build(list []arg, props map[string]*propPlan) ([]byte, string, error) {
	if bp.whole != "" {
		for _, a := range list {
			if a.key != bp.whole {
				continue
			}
			b, err := bp.wholeBody(a)
			ct := bp.contentType()
			if bp.wildcard() && bp.kind == bodyText {
				// Q11: what the body is decides, a string being text.
				if t := bytes.TrimSpace(a.raw); len(t) > 0 && t[0] != '"' {
					ct = "application/json"
				}
			}
			return b, ct, err
		}
		return nil, "", nil
	}
	var fields []arg // wire names, client order
	var plans []*bodyField
	for _, a := range list {
		if pp := props[a.key]; pp != nil && pp.field != nil {
			fields = append(fields, arg{key: pp.field.wire, raw: a.raw, val: a.val})
			plans = append(plans, pp.field)
		}
	}
	if len(fields) == 0 {
		if !bp.required {
			return nil, "", nil
		}
		// Q7: a required body the caller gave nothing for is the empty value
		// of its media type, with its Content-Type.
		switch bp.kind {
		case bodyJSON:
			return []byte("{}"), bp.contentType(), nil
		case bodyMultipart:
			return bp.multipartBody(nil, nil)
		default:
			return []byte{}, bp.contentType(), nil
		}
	}
	switch bp.kind {
	case bodyForm:
		vals := url.Values{}
		for i, f := range fields {
			if err := formField(vals, f, plans[i]); err != nil {
				return nil, "", err
			}
		}
		return []byte(vals.Encode()), bp.contentType(), nil
	case bodyMultipart:
		return bp.multipartBody(fields, plans)
	default:
		var b bytes.Buffer
		b.WriteByte('{')
		for i, f := range fields {
			jsonvalue.WriteKey(&b, i, f.key)
			b.Write(f.raw)
		}
		b.WriteByte('}')
		return b.Bytes(), bp.contentType(), nil
	}
}

// wildcard reports whether the document gives the body a wildcard or range
// media type (*/*, application/*), which is never sent as Content-Type.
func (bp *bodyPlan) wildcard() bool { return strings.Contains(bp.mediaType, "*") }

func (bp *bodyPlan) contentType() string {
	if bp.kind == bodyMultipart {
		return ""
	}
	if bp.wildcard() {
		// Q11: a wildcard or range is no Content-Type; send what the body is.
		switch bp.kind {
		case bodyJSON:
			return "application/json"
		case bodyForm:
			return "application/x-www-form-urlencoded"
		case bodyText:
			return "text/plain"
		default:
			return "application/octet-stream"
		}
	}
	return bp.mediaType
}

func (bp *bodyPlan) wholeBody(a arg) ([]byte, error) {
	switch bp.kind {
	case bodyJSON:
		return bytes.TrimSpace(a.raw), nil
	case bodyBinary:
		var s string
		if json.Unmarshal(a.raw, &s) != nil {
			return nil, &ArgumentError{Param: a.key, Reason: "must be a string: " + fileContentHint}
		}
		// The declared media type goes upstream; a data: URI's is not
		// needed for a whole body.
		b, _, reason := decodeFileContent(s)
		if reason != "" {
			return nil, &ArgumentError{Param: a.key, Reason: reason}
		}
		return b, nil
	case bodyForm:
		var m map[string]json.RawMessage
		if json.Unmarshal(a.raw, &m) != nil {
			return nil, &ArgumentError{Param: a.key, Reason: "must be an object"}
		}
		vals := url.Values{}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if err := formValues(vals, arg{key: k, raw: m[k]}); err != nil {
				return nil, err
			}
		}
		return []byte(vals.Encode()), nil
	default:
		var s string
		if json.Unmarshal(a.raw, &s) == nil {
			return []byte(s), nil
		}
		return bytes.TrimSpace(a.raw), nil
	}
}

// formField adds one flattened field of a form body as its Encoding Object
// says (Q10): deepObject nests objects recursively (a[b][c]=v) and indexes
// arrays (a[0]=v), as Stripe and Rails-style parsers read them; form with
// explode writes arrays as repeated fields and an object's members as
// their own fields; without explode, values are joined with "," (or "|",
// " " for pipeDelimited and spaceDelimited). Values nested deeper than form
// can say are JSON text.
func formField(vals url.Values, f arg, plan *bodyField) error {
	if plan == nil || (plan.style == "" || plan.style == "form") && plan.explode {
		if plan == nil || !isObject(f.raw) {
			return formValues(vals, f)
		}
	}
	v, err := decodeNumber(f.raw)
	if err != nil {
		return &ArgumentError{Param: f.key, Reason: "not valid JSON"}
	}
	if v == nil {
		return nil
	}
	switch plan.style {
	case "deepObject":
		deepForm(vals, f.key, v)
		return nil
	}
	sep := ","
	switch plan.style {
	case "pipeDelimited":
		sep = "|"
	case "spaceDelimited":
		sep = " "
	}
	text := func(x any) string {
		if s, ok := scalarText(x, false); ok {
			return s
		}
		b, _ := json.Marshal(x)
		return string(b)
	}
	switch x := v.(type) {
	case []any:
		if plan.explode {
			for _, e := range x {
				vals.Add(f.key, text(e))
			}
			return nil
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = text(e)
		}
		vals.Add(f.key, strings.Join(parts, sep))
	case map[string]any:
		if plan.explode {
			for _, k := range slices.Sorted(maps.Keys(x)) {
				vals.Add(k, text(x[k]))
			}
			return nil
		}
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			parts = append(parts, k, text(x[k]))
		}
		vals.Add(f.key, strings.Join(parts, sep))
	default:
		vals.Add(f.key, text(x))
	}
	return nil
}

// deepForm writes v under name in deepObject form: object members as
// name[k], array items as name[i], recursively; null as an empty value.
func deepForm(vals url.Values, name string, v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			deepForm(vals, name+"["+k+"]", x[k])
		}
	case []any:
		for i, e := range x {
			deepForm(vals, name+"["+strconv.Itoa(i)+"]", e)
		}
	default:
		s, _ := scalarText(x, false)
		vals.Add(name, s)
	}
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// formValues adds one field to a form body: scalars as text, arrays as
// repeated fields, objects as JSON text.
func formValues(vals url.Values, f arg) error {
	v, err := decodeNumber(f.raw)
	if err != nil {
		return &ArgumentError{Param: f.key, Reason: "not valid JSON"}
	}
	if isNull(f.raw) {
		return nil
	}
	if s, ok := scalarText(v, false); ok {
		vals.Add(f.key, s)
		return nil
	}
	if arr, ok := v.([]any); ok {
		for _, e := range arr {
			if s, ok := scalarText(e, false); ok {
				vals.Add(f.key, s)
			} else {
				b, _ := json.Marshal(e)
				vals.Add(f.key, string(b))
			}
		}
		return nil
	}
	vals.Add(f.key, string(bytes.TrimSpace(f.raw)))
	return nil
}

func (bp *bodyPlan) multipartBody(fields []arg, plans []*bodyField) ([]byte, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for i, f := range fields {
		if isNull(f.raw) {
			continue
		}
		if plans[i].binary {
			var s string
			if json.Unmarshal(f.raw, &s) != nil {
				return nil, "", &ArgumentError{Param: plans[i].key, Reason: "must be a string: " + fileContentHint}
			}
			data, uriType, reason := decodeFileContent(s)
			if reason != "" {
				return nil, "", &ArgumentError{Param: plans[i].key, Reason: reason}
			}
			// The part's declared type; else the data: URI's; else bytes.
			ct := bp.partTypes[f.key]
			if ct == "" {
				ct = uriType
			}
			if ct == "" {
				ct = "application/octet-stream"
			}
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", fmt.Sprintf(`form-data; name=%q; filename=%q`, f.key, f.key))
			h.Set("Content-Type", ct)
			pw, err := w.CreatePart(h)
			if err != nil {
				return nil, "", err
			}
			pw.Write(data)
			continue
		}
		v, err := decodeNumber(f.raw)
		if err != nil {
			return nil, "", &ArgumentError{Param: plans[i].key, Reason: "not valid JSON"}
		}
		text, ok := scalarText(v, false)
		if !ok {
			text = string(bytes.TrimSpace(f.raw))
		}
		if err := w.WriteField(f.key, text); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

// IdempotencyHeader is the operation's idempotency key header parameter:
// the argument (input-schema key) and the header's canonical name, for a
// header parameter named Idempotency-Key or X-Idempotency-Key (any case);
// "" when the operation declares none.
func (t *Tool) IdempotencyHeader() (arg, header string) {
	if t.plan == nil || t.plan.idempotency == nil {
		return "", ""
	}
	pp := t.plan.idempotency
	if pp.canon != "" {
		return pp.key, pp.canon
	}
	return pp.key, textproto.CanonicalMIMEHeaderKey(pp.wire)
}

// idempotencyParam is the plan's Idempotency-Key or X-Idempotency-Key
// header parameter (any case), found once when the tool is built; nil
// when it has none.
func (p *requestPlan) idempotencyParam() *paramPlan {
	for _, pp := range p.params {
		if pp.in != "header" {
			continue
		}
		c := pp.canon
		if c == "" {
			c = textproto.CanonicalMIMEHeaderKey(pp.wire)
		}
		if c == "Idempotency-Key" || c == "X-Idempotency-Key" {
			return pp
		}
	}
	return nil
}

// CredentialQueryNames are the query parameters the caller's key goes in
// for t's operation (none when it goes elsewhere).
func (t *Tool) CredentialQueryNames() []string {
	if t.plan == nil || t.plan.sec == nil {
		return nil
	}
	var out []string
	for _, c := range t.plan.sec.withKey {
		if c.kind == "query" {
			out = append(out, c.name)
		}
	}
	return out
}
