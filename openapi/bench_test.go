package openapi

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/restmcp/restmcp/internal/benchdata"
	"github.com/restmcp/restmcp/internal/corpustest"
)

// BenchmarkLoadCorpus loads the largest corpus documents; select one with
// -bench LoadCorpus/stripe.
func BenchmarkLoadCorpus(b *testing.B) {
	corpustest.Require(b)
	for _, folder := range []string{"github-rest-v1.1.3", "stripe-2022-04-12", "kubernetes-1.36-swagger20"} {
		b.Run(folder, func(b *testing.B) {
			p := corpustest.Path(b, folder)
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := LoadData(context.Background(), data, p, LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewRequest builds a request with five parameters (path, two
// query, header, cookie) and a flattened JSON body.
func BenchmarkNewRequest(b *testing.B) {
	d, err := LoadData(context.Background(), []byte(`openapi: 3.0.3
info: {title: bench, version: "1"}
servers: [{url: "http://upstream.test/v1"}]
security: [{key: []}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-API-Key}
paths:
  /accounts/{accountId}/orders:
    post:
      operationId: createOrder
      parameters:
        - {name: accountId, in: path, required: true, schema: {type: string}}
        - {name: dryRun, in: query, schema: {type: boolean}}
        - {name: tags, in: query, schema: {type: array, items: {type: string}}}
        - {name: X-Request-Id, in: header, schema: {type: string}}
        - {name: session, in: cookie, schema: {type: string}}
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [sku]
              properties:
                sku: {type: string}
                qty: {type: integer, minimum: 1}
                note: {type: string, maxLength: 200}
      responses: {"201": {description: Created}}
`), "", LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	tool := d.Tools[0]
	args := json.RawMessage(`{"accountId":"a/1","dryRun":true,"tags":["x","y z"],"X-Request-Id":"r-1","session":"s1","sku":"A1","qty":2,"note":"hello"}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tool.NewRequest(ctx, args, "k-123"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstCall measures a tool's first NewRequest, which compiles
// its argument validators (validators are compiled lazily, once per tool):
// the largest Kubernetes input schema (~32 KiB).
func BenchmarkFirstCall(b *testing.B) {
	corpustest.Require(b)
	d, err := Load(context.Background(), corpustest.Path(b, "kubernetes-1.36-swagger20"), LoadOptions{Upstream: "http://upstream.test", UpstreamHosts: []string{"*"}})
	if err != nil {
		b.Fatal(err)
	}
	var tool *Tool
	for _, t := range d.Tools {
		if tool == nil || len(t.InputSchema) > len(tool.InputSchema) {
			tool = t
		}
	}
	b.ReportMetric(float64(len(tool.InputSchema)), "schema_bytes")
	b.ReportAllocs()
	for b.Loop() {
		p := &requestPlan{inputSchema: tool.plan.inputSchema}
		p.validators()
	}
}

// BenchmarkCompactStructured: compacting a 1 MB list answer and checking
// it against an output schema in the same pass (MB/s of the answer): with
// no schema, with one that leaves the list undescribed (the walker skips
// it), and with one that describes every item (the walker enters each);
// each from a string and from bytes.
func BenchmarkCompactStructured(b *testing.B) {
	body := string(benchdata.Answer(1 << 20))
	item := `{"type":"object","properties":{"id":{"type":"integer"},"name":{"type":"string"},"note":{"type":"string"},` +
		`"price":{"type":"number"},"tags":{"type":"array","items":{"type":"string"}},` +
		`"owner":{"type":"object","properties":{"login":{"type":"string"},"site_admin":{"type":"boolean"},"score":{"type":"number"}}}}}`
	for _, c := range []struct{ name, schema string }{
		{"no-schema", ``},
		{"list-undescribed", `{"type":"object","properties":{"id":{"type":"string"}}}`},
		{"items-described", `{"type":"object","properties":{"total":{"type":"integer"},"items":{"type":"array","items":` + item + `}}}`},
	} {
		t := &Tool{OutputSchema: json.RawMessage(c.schema)}
		if c.schema == "" {
			t.OutputSchema = nil
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				out, fits, err := t.CompactStructured(body)
				if err != nil || !fits || len(out) != len(body) {
					b.Fatalf("%d bytes, fits %v, %v", len(out), fits, err)
				}
			}
		})
		// The same from bytes (a pooled body's), the walker told of keys
		// and numbers without their own strings.
		raw := []byte(body)
		b.Run(c.name+"-bytes", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				out, fits, err := t.CompactStructuredBytes(raw)
				if err != nil || !fits || len(out) != len(raw) {
					b.Fatalf("%d bytes, fits %v, %v", len(out), fits, err)
				}
			}
		})
	}
}
