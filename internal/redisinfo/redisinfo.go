// Package redisinfo reads what a Redis server reports of its own work: the
// CPU it has used (INFO cpu) and the calls and time of each command (INFO
// commandstats), for benchmarks that quote Redis's cost per call.
//
// See https://redis.io/docs/latest/commands/info/ for both sections.
package redisinfo

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Usage is Redis's work since it started, or between two readings (Sub).
type Usage struct {
	// CPU is used_cpu_user + used_cpu_sys: the server process's CPU time.
	CPU time.Duration
	// Calls and Usec are, per command name in lower case ("evalsha",
	// "xadd", "config|resetstat"), its calls and the µs spent in them.
	// Commands a script runs count here too, beside the script's own entry.
	Calls, Usec map[string]int64
}

// Infoer is the part of a go-redis client Read needs.
type Infoer interface {
	Info(ctx context.Context, section ...string) *redis.StringCmd
}

// Read asks c for INFO cpu and INFO commandstats, in one command.
func Read(ctx context.Context, c Infoer) (Usage, error) {
	info, err := c.Info(ctx, "cpu", "commandstats").Result()
	if err != nil {
		return Usage{}, fmt.Errorf("INFO cpu commandstats: %w", err)
	}
	return Parse(info)
}

// Parse reads an INFO reply. It is an error when the reply has no
// used_cpu_user or used_cpu_sys, or a line of either section it cannot
// read.
func Parse(info string) (Usage, error) {
	u := Usage{Calls: map[string]int64{}, Usec: map[string]int64{}}
	seen := 0
	for line := range strings.Lines(info) {
		name, value, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch {
		case name == "used_cpu_user" || name == "used_cpu_sys":
			s, err := strconv.ParseFloat(value, 64)
			if err != nil {
				return Usage{}, fmt.Errorf("INFO cpu: %s: %w", name, err)
			}
			u.CPU += time.Duration(s * float64(time.Second))
			seen++
		case strings.HasPrefix(name, "cmdstat_"):
			cmd := strings.TrimPrefix(name, "cmdstat_")
			for f := range strings.SplitSeq(value, ",") {
				k, v, _ := strings.Cut(f, "=")
				if k != "calls" && k != "usec" {
					continue
				}
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return Usage{}, fmt.Errorf("INFO commandstats: %s %s: %w", cmd, k, err)
				}
				if k == "calls" {
					u.Calls[cmd] = n
				} else {
					u.Usec[cmd] = n
				}
			}
		}
	}
	if seen != 2 {
		return Usage{}, fmt.Errorf("INFO cpu: no used_cpu_user and used_cpu_sys in %q", info)
	}
	return u, nil
}

// Sub is the work done between an earlier reading and u.
func (u Usage) Sub(earlier Usage) Usage {
	d := Usage{CPU: u.CPU - earlier.CPU, Calls: map[string]int64{}, Usec: map[string]int64{}}
	for k, v := range u.Calls {
		if n := v - earlier.Calls[k]; n != 0 {
			d.Calls[k] = n
		}
	}
	for k, v := range u.Usec {
		if n := v - earlier.Usec[k]; n != 0 {
			d.Usec[k] = n
		}
	}
	return d
}
