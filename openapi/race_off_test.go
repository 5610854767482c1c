//go:build !race

package openapi

// raceEnabled is true when the tests run under the race detector.
const raceEnabled = false
