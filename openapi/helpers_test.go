package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// loadCase loads testdata/<dir>/<file> (file defaults to openapi.yaml).
func loadCase(t testing.TB, dir, file string, opts LoadOptions) *Document {
	t.Helper()
	if file == "" {
		file = "openapi.yaml"
	}
	d, err := Load(context.Background(), filepath.Join("testdata", dir, file), opts)
	if err != nil {
		t.Fatalf("Load(%s/%s): %v", dir, file, err)
	}
	return d
}

func toolByName(t testing.TB, d *Document, name string) *Tool {
	t.Helper()
	for _, tl := range d.Tools {
		if tl.Name == name {
			return tl
		}
	}
	var names []string
	for _, tl := range d.Tools {
		names = append(names, tl.Name)
	}
	t.Fatalf("no tool %q; have %v", name, names)
	return nil
}

func toolNames(d *Document) []string {
	var names []string
	for _, tl := range d.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// dumpRequest renders a request as
//
//	METHOD scheme://host/path?query
//	Header: value      (sorted by name)
//
//	body
func dumpRequest(t testing.TB, r *http.Request) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(r.Method + " " + r.URL.Scheme + "://" + r.URL.Host + r.URL.RequestURI() + "\n")
	var keys []string
	for k := range r.Header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range r.Header[k] {
			b.WriteString(k + ": " + v + "\n")
		}
	}
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("\n" + string(body))
	}
	return b.String()
}

// canonicalJSON re-indents JSON for readable diffs, keeping key order.
func canonicalJSON(t testing.TB, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s), "", "  "); err != nil {
		t.Fatalf("invalid JSON %s: %v", s, err)
	}
	return b.String()
}
