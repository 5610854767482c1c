//go:build linux

package adapter

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestWatchMemoryStopsAWorker: a jq worker without RLIMIT_DATA (max_memory
// 0 in its request) whose filter builds 300 MB, 1 MB at a time, is stopped
// by watchMemory at 64 MiB resident; without the watch it prints 300.
func TestWatchMemoryStopsAWorker(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := func(watch bool) (string, bool, error) {
		cmd := exec.Command(exe)
		cmd.Env = []string{JQWorkerEnv + "=1"}
		cmd.Stdin = strings.NewReader(`{"filter":"[range(300) | \"x\" * 1000000] | length","max_output":100,"max_memory":0,"cpu_seconds":60}` + "\n{}")
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		stop := make(chan struct{})
		max := int64(0)
		if watch {
			max = 64 << 20
		}
		over := watchMemory(cmd.Process, max, stop)
		err := cmd.Wait()
		close(stop)
		return strings.TrimSpace(out.String()), over.Load(), err
	}
	if out, over, err := run(false); out != "300" || over || err != nil {
		t.Fatalf("unwatched: output %q, over %v, %v", out, over, err)
	}
	out, over, err := run(true)
	if !over || out != "" || err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("watched at 64 MiB: output %q, over %v, %v", out, over, err)
	}
}
