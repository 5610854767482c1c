// Command restmcp-bench measures calls per second and CPU per call
// through restmcp against the upstream directly, and beside a peer or
// another restmcp build in paired rounds (docs/operations.md). It is not
// part of the restmcp server binary: it serves from a restmcp executable
// (--restmcp; by default restmcp beside it or on PATH).
//
// Usage:
//
//	go build -o bin/ ./cmd/restmcp ./cmd/restmcp-bench
//	bin/restmcp-bench [--calls N] [--concurrency 1,8,32] [--compare OTHER_RESTMCP] [--peer URL] [--answer-bytes N] [--in-process]
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runBench(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "restmcp-bench:", err)
		os.Exit(1)
	}
}
