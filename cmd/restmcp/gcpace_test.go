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
			logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{
				ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
					if a.Key == slog.TimeKey {
						return slog.Attr{}
					}
					return a
				},
			}))
			paceGC(c.headroom, func(k string) string { return c.env[k] }, logger)()
			if out.String() != c.want {
				t.Fatalf("log:\n%s\nwant:\n%s", out.String(), c.want)
			}
		})
	}
}
