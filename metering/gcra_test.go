package metering

import (
	"testing"
	"time"
)

func TestOptionsResolve(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want params
	}{
		{"zero is 100 per 60 s", Options{}, params{limit: 100, interval: 600_000, tau: 60_000_000}},
		{"negative window is the default", Options{Limit: 100, Window: -time.Second}, params{limit: 100, interval: 600_000, tau: 60_000_000}},
		{"-1 disables", Options{Limit: -1}, params{}},
		{"any negative disables", Options{Limit: -7, Window: time.Second}, params{}},
		{"2 per second", Options{Limit: 2, Window: time.Second}, params{limit: 2, interval: 500_000, tau: 1_000_000}},
		{"uneven division rounds the interval down", Options{Limit: 7}, params{limit: 7, interval: 8_571_428, tau: 59_999_996}},
		{"interval at least 1 µs", Options{Limit: 1000, Window: time.Microsecond}, params{limit: 1000, interval: 1, tau: 1000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.opts.resolve(); got != tt.want {
				t.Errorf("Options%+v.resolve() = %+v, want %+v", tt.opts, got, tt.want)
			}
		})
	}
}

func TestStep(t *testing.T) {
	p := Options{Limit: 2, Window: time.Second}.resolve()
	const now = 1_000_000_000
	tests := []struct {
		name string
		tat  int64
		want verdict
	}{
		{"no state", 0, verdict{allowed: true, remaining: 1, reset: 500_000, tat: now + 500_000}},
		{"stale state", now - 10, verdict{allowed: true, remaining: 1, reset: 500_000, tat: now + 500_000}},
		{"one used", now + 500_000, verdict{allowed: true, remaining: 0, reset: 1_000_000, tat: now + 1_000_000}},
		{"exhausted", now + 1_000_000, verdict{reset: 1_000_000, retryAfter: 500_000, tat: now + 1_000_000}},
		{"1 µs short", now + 500_001, verdict{reset: 500_001, retryAfter: 1, tat: now + 500_001}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.step(now, tt.tat); got != tt.want {
				t.Errorf("step(now, now%+d) = %+v, want %+v", tt.tat-now, got, tt.want)
			}
		})
	}
}
