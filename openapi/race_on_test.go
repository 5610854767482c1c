//go:build race

package openapi

// raceEnabled is true when the tests run under the race detector, which
// makes kin-openapi's loading of the largest documents 5–10 times slower.
const raceEnabled = true
