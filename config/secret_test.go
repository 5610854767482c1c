package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

const password = "hunter2"

func TestSecretFmt(t *testing.T) {
	s := Secret("redis://:" + password + "@cache:6379/0")
	c := Default()
	c.RedisURL = s
	type wrapper struct{ URL Secret }
	tests := []struct {
		format string
		arg    any
		want   string // "" when only the absence of the password is checked
	}{
		{"%v", s, "REDACTED"},
		{"%s", s, "REDACTED"},
		{"%q", s, `"REDACTED"`},
		{"%x", s, "REDACTED"},
		{"%#v", s, "REDACTED"},
		{"%d", s, "REDACTED"},
		{"%10.3s", s, "REDACTED"},
		{"%v", wrapper{s}, "{REDACTED}"},
		{"%+v", wrapper{s}, "{URL:REDACTED}"},
		{"%#v", wrapper{s}, "config.wrapper{URL:REDACTED}"},
		{"%v", &wrapper{s}, "&{REDACTED}"},
		{"%v", []Secret{s}, "[REDACTED]"},
		{"%v", c, ""},
		{"%+v", c, ""},
		{"%#v", c, ""},
		{"%v", &c, ""},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			got := fmt.Sprintf(tt.format, tt.arg)
			if strings.Contains(got, password) {
				t.Fatalf("Sprintf(%q, %T) = %q leaks the secret", tt.format, tt.arg, got)
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("Sprintf(%q, %T) = %q, want %q", tt.format, tt.arg, got, tt.want)
			}
		})
	}
	if got := string(s); !strings.Contains(got, password) {
		t.Errorf("string(s) = %q, want the value itself", got)
	}
}

func TestSecretSlog(t *testing.T) {
	s := Secret("redis://:" + password + "@cache:6379/0")
	c := Default()
	c.RedisURL = s
	type wrapper struct{ URL Secret }

	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			var h slog.Handler = slog.NewTextHandler(&buf, nil)
			if format == "json" {
				h = slog.NewJSONHandler(&buf, nil)
			}
			log := slog.New(h)
			log.Info("secret", "redis_url", s)
			log.Info("any", slog.Any("redis_url", s))
			log.Info("struct", "w", wrapper{s})
			log.Info("config", "config", c)
			log.Info("group", slog.Group("g", "redis_url", s))
			out := buf.String()
			if strings.Contains(out, password) {
				t.Fatalf("log output leaks the secret:\n%s", out)
			}
			if n := strings.Count(out, "REDACTED"); n != 4 {
				// config logs "metering=redis" instead of the URL.
				t.Errorf("REDACTED appears %d times, want 4:\n%s", n, out)
			}
			if !strings.Contains(out, "metering") {
				t.Errorf("config's LogValue missing from:\n%s", out)
			}
		})
	}
}

func TestSecretJSON(t *testing.T) {
	c := Default()
	c.RedisURL = Secret("redis://:" + password + "@cache:6379/0")
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), password) || !strings.Contains(string(b), `"RedisURL":"REDACTED"`) {
		t.Errorf("json.Marshal(Config) = %s, want RedisURL REDACTED", b)
	}
}
