package main

import (
	"bytes"
	"log/slog"
	"testing"
)

// TestPaceGCYieldsToTheEnvironment: GOGC or GOMEMLIMIT in the environment
// is the operator's choice, which Go applies; gc_headroom_bytes then stays
// off and the log says so once. -1 turns pacing off without a word.
func TestPaceGCYieldsToTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		name     string
		headroom int64
		env      map[string]string
		want     string
	}{
		{"GOGC", 16 << 20, map[string]string{"GOGC": "200"},
			`level=INFO msg="gc_headroom_bytes not applied: the environment sets the garbage collector" GOGC=200 GOMEMLIMIT=""` + "\n"},
		{"GOMEMLIMIT", 16 << 20, map[string]string{"GOMEMLIMIT": "512MiB"},
			`level=INFO msg="gc_headroom_bytes not applied: the environment sets the garbage collector" GOGC="" GOMEMLIMIT=512MiB` + "\n"},
		{"off", -1, map[string]string{"GOGC": "200"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			paceGC(c.headroom, func(k string) string { return c.env[k] }, timelessLogger(&out))()
			if out.String() != c.want {
				t.Fatalf("log:\n%s\nwant:\n%s", out.String(), c.want)
			}
		})
	}
}

// TestPaceProcsYieldsToTheEnvironment: GOMAXPROCS in the environment is
// the operator's choice; adaptive_procs then stays off and the log says so
// once. false turns pacing off without a word.
func TestPaceProcsYieldsToTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		name string
		on   bool
		env  map[string]string
		want string
	}{
		{"GOMAXPROCS", true, map[string]string{"GOMAXPROCS": "4"},
			`level=INFO msg="adaptive_procs not applied: the environment sets GOMAXPROCS" GOMAXPROCS=4` + "\n"},
		{"off", false, map[string]string{"GOMAXPROCS": "4"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			paceProcs(c.on, func(k string) string { return c.env[k] }, timelessLogger(&out))()
			if out.String() != c.want {
				t.Fatalf("log:\n%s\nwant:\n%s", out.String(), c.want)
			}
		})
	}
}

// timelessLogger writes text records without their time.
func timelessLogger(w *bytes.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
}
