// Package openapi loads an OpenAPI document (Swagger 2.0, OAS 3.0 or 3.1;
// JSON or YAML; from a file or an http(s) URL) and turns each operation
// into a Tool: a name (docs/conventions.md), title, description, input
// schema (P1–P3, B1–B5, S1–S8), output schema, annotations, and a request
// plan precomputed at load so that Tool.NewRequest builds the upstream
// request for one tools/call quickly and exactly (Q1–Q8, C25).
//
// LoadOptions.Select (a Selection) keeps a subset of a large API's
// operations by tag, operationId glob and method, and names tools
// explicitly (a config map over the x-mcp-name extension) before generated
// names are assigned. Document.Report summarizes what the tools cost a
// client (count, tools/list bytes, a token estimate, longest names,
// collisions) and warns above thresholds.
//
// Loading uses kin-openapi; its types are never exported. External $refs
// are followed only to files inside the spec's folder (C02). Load errors
// name the document and the location of the defect.
//
// OpenAPI Overlay 1.0 documents (LoadOptions.Overlays, overlay.go) are
// applied to the raw document tree before loading. When kin-openapi
// refuses a document, a lenient pass (lenient.go) checks every $ref of
// every file itself and repairs or drops what the loader cannot take: in
// strict mode only to list every defect in the *LoadError, in lenient mode
// (LoadOptions.Lenient) to serve the rest, with one Problem per defect in
// Document.Problems.
//
// The package must not import gin, the MCP SDK or Redis: the adapter
// package turns Document.Tools into MCP tools and sends the requests.
// The main types are Document and Tool.
package openapi
