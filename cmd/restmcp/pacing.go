package main

import (
	"log/slog"

	"github.com/restmcp/restmcp/internal/gcpace"
	"github.com/restmcp/restmcp/internal/procpace"
)

// paceGC starts the collector's pacing with headroom bytes
// (gc_headroom_bytes, package internal/gcpace) and returns its stop; with
// -1, or when the GOGC or GOMEMLIMIT environment variable is set (the
// operator's own choice, which Go applies), it leaves Go's pacing alone
// and says so at Info.
func paceGC(headroom int64, getenv func(string) string, logger *slog.Logger) (stop func()) {
	if headroom <= 0 {
		return func() {}
	}
	if gogc, limit := getenv("GOGC"), getenv("GOMEMLIMIT"); gogc != "" || limit != "" {
		logger.Info("gc_headroom_bytes not applied: the environment sets the garbage collector", "GOGC", gogc, "GOMEMLIMIT", limit)
		return func() {}
	}
	return gcpace.Start(uint64(headroom))
}

// paceProcs starts GOMAXPROCS pacing (adaptive_procs, package
// internal/procpace) and returns its stop; when off, or when the
// GOMAXPROCS environment variable is set (the operator's own choice, which
// Go applies), it leaves Go's setting alone and, for the variable, says so
// at Info.
func paceProcs(on bool, getenv func(string) string, logger *slog.Logger) (stop func()) {
	if !on {
		return func() {}
	}
	if n := getenv("GOMAXPROCS"); n != "" {
		logger.Info("adaptive_procs not applied: the environment sets GOMAXPROCS", "GOMAXPROCS", n)
		return func() {}
	}
	return procpace.Start()
}
