package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// queryStylesSpec has one array query parameter per style/explode pair
// and one scalar.
const queryStylesSpec = `openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://upstream.test/v1"}]
paths:
  /q:
    get:
      operationId: q
      parameters:
        - {name: form_x, in: query, style: form, explode: true, schema: {type: array, items: {type: string}}}
        - {name: form, in: query, style: form, explode: false, schema: {type: array, items: {type: string}}}
        - {name: space_x, in: query, style: spaceDelimited, explode: true, schema: {type: array, items: {type: string}}}
        - {name: space, in: query, style: spaceDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - {name: pipe_x, in: query, style: pipeDelimited, explode: true, schema: {type: array, items: {type: string}}}
        - {name: pipe, in: query, style: pipeDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - {name: "s p+c|e", in: query, schema: {type: string}}
      responses: {"200": {description: OK}}
`

// FuzzQueryEncoding checks Q2 for every style/explode pair: the query
// always parses, and it carries exactly the values sent (split on the
// style's separator when not exploded and no value contains it).
func FuzzQueryEncoding(f *testing.F) {
	for _, s := range [][3]string{{"a", "b", "c"}, {"a b", "x+y", "p|q"}, {"", "", ""}, {"1,2", "&", "="}, {"é", "%20", "#"}, {"\x00", "\r\n", "\xff"}} {
		for i := range 7 {
			f.Add(uint8(i), uint8(3), s[0], s[1], s[2])
		}
	}
	d, err := LoadData(context.Background(), []byte(queryStylesSpec), "", LoadOptions{})
	if err != nil {
		f.Fatal(err)
	}
	tool := d.Tools[0]
	names := []string{"form_x", "form", "space_x", "space", "pipe_x", "pipe", "s p+c|e"}
	seps := []string{"", ",", "", " ", "", "|"}
	f.Fuzz(func(t *testing.T, which, n uint8, a, b, c string) {
		i := int(which) % len(names)
		name := names[i]
		key := name
		if i == 6 {
			key = "s_p_c_e" // P2
		}
		var arg any
		var sent []string // the values as the JSON arguments carry them
		if i == 6 {
			arg = a
		} else {
			arg = []string{a, b, c}[:int(n)%4]
		}
		args, err := json.Marshal(map[string]any{key: arg})
		if err != nil {
			t.Skip()
		}
		var back map[string]any
		if err := json.Unmarshal(args, &back); err != nil {
			t.Fatal(err)
		}
		switch v := back[key].(type) {
		case string:
			sent = []string{v}
		case []any:
			for _, e := range v {
				sent = append(sent, e.(string))
			}
		}
		req, err := tool.NewRequest(context.Background(), args, "")
		if err != nil {
			t.Fatalf("NewRequest(%s): %v", args, err)
		}
		raw := req.URL.RawQuery
		if strings.ContainsAny(raw, " +#") {
			t.Fatalf("query %q has an unencoded space, + or #", raw)
		}
		q, err := url.ParseQuery(raw)
		if err != nil {
			t.Fatalf("query %q does not parse: %v", raw, err)
		}
		got := q[name]
		switch {
		case len(sent) == 0:
			if raw != "" {
				t.Fatalf("empty array gave query %q", raw)
			}
		case i == 6 || i%2 == 0:
			if !slices.Equal(got, sent) {
				t.Fatalf("%s: query %q gives %q, want %q", name, raw, got, sent)
			}
		default:
			if len(got) != 1 {
				t.Fatalf("%s: query %q has %d values, want 1", name, raw, len(got))
			}
			if slices.ContainsFunc(sent, func(s string) bool { return strings.Contains(s, seps[i]) }) {
				return
			}
			if parts := strings.Split(got[0], seps[i]); !slices.Equal(parts, sent) {
				t.Fatalf("%s: query %q splits into %q, want %q", name, raw, parts, sent)
			}
		}
	})
}

// FuzzHeaderValues checks Q5/Q6 and C25: a header or cookie value, or an
// API key, containing CR, LF or NUL is rejected, and no such byte ever
// reaches a request header.
func FuzzHeaderValues(f *testing.F) {
	for _, s := range []string{"plain", "a\r\nX-Evil: 1", "\n", "\x00", "a,b", "é", "\xff", "x;y", " lead"} {
		f.Add(s, "k-123", false)
		f.Add("ok", s, true)
	}
	d, err := LoadData(context.Background(), []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://upstream.test/v1"}]
security: [{key: []}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-API-Key}
paths:
  /h:
    get:
      operationId: h
      parameters:
        - {name: X-Trace, in: header, schema: {type: string}}
        - {name: X-List, in: header, schema: {type: array, items: {type: string}}}
        - {name: sid, in: cookie, schema: {type: string}}
      responses: {"200": {description: OK}}
`), "", LoadOptions{})
	if err != nil {
		f.Fatal(err)
	}
	tool := d.Tools[0]
	f.Fuzz(func(t *testing.T, v, key string, list bool) {
		var args []byte
		if list {
			args, _ = json.Marshal(map[string]any{"X-List": []string{"a", v}, "sid": v})
		} else {
			args, _ = json.Marshal(map[string]any{"X-Trace": v, "sid": v})
		}
		var back map[string]any
		_ = json.Unmarshal(args, &back)
		sent, _ := back["sid"].(string)
		trace, _ := back["X-Trace"].(string)
		_, cookieOK := cookieValue(sent)
		bad := strings.ContainsAny(trace, "\r\n\x00") || !cookieOK
		badKey := strings.ContainsAny(key, "\r\n\x00")
		req, err := tool.NewRequest(context.Background(), args, key)
		if err != nil {
			var ae *ArgumentError
			var ce *CredentialError
			switch {
			case errors.As(err, &ae) && bad:
			case errors.As(err, &ce) && (badKey || key == ""):
			default:
				t.Fatalf("NewRequest(%s, key %q): unexpected error %v", args, key, err)
			}
			return
		}
		if bad || badKey && key != "" {
			t.Fatalf("NewRequest(%s, key %q) accepted a CR, LF or NUL", args, key)
		}
		// Q6: the cookie is cookie-octets only and reads back as sent.
		if c, ok := strings.CutPrefix(req.Header.Get("Cookie"), "sid="); list == false && ok {
			if strings.ContainsAny(c, " \";,\\") || strings.IndexFunc(c, func(r rune) bool { return r > 0x7e }) >= 0 {
				t.Fatalf("Cookie value %q holds a byte RFC 6265 does not allow", c)
			}
			if back, err := url.PathUnescape(c); err != nil || back != sent {
				t.Fatalf("Cookie value %q reads back as %q (%v), want %q", c, back, err, sent)
			}
		}
		for name, vs := range req.Header {
			for _, hv := range vs {
				if strings.ContainsAny(hv, "\r\n\x00") {
					t.Fatalf("header %s: %q carries CR, LF or NUL", name, hv)
				}
			}
		}
	})
}

// TestCookieValues: cookie parameter values are written as RFC 6265
// allows (Q6): cookie-octets as they are, every other byte and '%'
// percent-encoded, a control character refused naming it.
func TestCookieValues(t *testing.T) {
	d, err := LoadData(context.Background(), []byte(`openapi: 3.0.3
info: {title: t, version: "1"}
servers: [{url: "http://upstream.test/v1"}]
paths:
  /c:
    get:
      operationId: c
      parameters:
        - {name: session, in: cookie, schema: {type: string}}
        - {name: pref, in: cookie, schema: {type: array, items: {type: string}}}
      responses: {"200": {description: OK}}
`), "", LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ args, cookie, err string }{
		{`{"session":"abc.DEF-_~=="}`, "session=abc.DEF-_~==", ""},
		{`{"session":" admin=1"}`, "session=%20admin=1", ""},
		{`{"session":"a; admin=1"}`, "session=a%3B%20admin=1", ""},
		{`{"session":"q\"u,o\\te"}`, "session=q%22u%2Co%5Cte", ""},
		{`{"session":"50%","pref":["a b","c"]}`, "session=50%25; pref=a%20b%2Cc", ""},
		{`{"session":"café"}`, "session=caf%C3%A9", ""},
		{`{"session":"a\u0000b"}`, "", "invalid arguments: session: a cookie value must not contain control characters (U+0000 at byte 1)"},
		{`{"session":"a\tb"}`, "", "invalid arguments: session: a cookie value must not contain control characters (U+0009 at byte 1)"},
	} {
		req, err := d.Tools[0].NewRequest(context.Background(), json.RawMessage(tt.args), "")
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%s: error %v, want %q", tt.args, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.args, err)
			continue
		}
		if got := req.Header.Get("Cookie"); got != tt.cookie || len(req.Header["Cookie"]) != 1 {
			t.Errorf("%s: Cookie %q, want %q", tt.args, req.Header["Cookie"], tt.cookie)
		}
	}
}
