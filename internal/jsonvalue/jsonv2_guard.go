//go:build goexperiment.jsonv2

package jsonvalue

// restmcp is built with GOEXPERIMENT=nojsonv2 (README, .ci/run, Dockerfile,
// scripts/).
// Go 1.27 turns the jsonv2 experiment on by default, which reimplements
// encoding/json on encoding/json/v2 and makes kin-openapi decode documents
// with v2's rules: duplicate member names and invalid UTF-8 refused, invalid
// UTF-8 written as U+FFFD instead of \ufffd. Every corpus document's tools,
// this package's byte-for-byte encoder and the fast document decoder were
// measured and fixed against encoding/json's own implementation; moving to
// v2 is a change of its own. This line stops a build without the setting
// with an error that names it.
var _ = restmcp_needs_GOEXPERIMENT_nojsonv2_see_README
