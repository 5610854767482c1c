// Package examples holds the demo that restmcp serves when no spec is
// configured: an OpenAPI 3.1 document for a small, made-up finance-data API
// ([DemoSpec]) and an in-process implementation of that API
// ([NewDemoUpstream]) with fixed data, so every answer is deterministic.
//
// The directory also holds client configurations (clients/) and a README
// walkthrough. The package imports only the standard library; it must not
// import the other packages of this module, which serve it like any other
// API.
package examples
