// Command restmcp serves an OpenAPI-described REST API as a remote MCP
// server: one tool per operation, each tools/call sent upstream with the
// caller's own API key and metered per key.
//
// Usage:
//
//	restmcp [serve] [--spec FILE|URL] [--upstream URL] [--addr HOST:PORT] [--config FILE]
//	restmcp tools --spec FILE|URL     print the tool table
//	restmcp validate --spec FILE|URL  load the document and report problems
//	restmcp keys create [--plan P] [--label L] | list | show KEY_ID | revoke KEY_ID
//	restmcp usage KEY_ID [--plan P]   a key's usage report (JSON)
//
// With no --spec, restmcp serves the bundled demo finance API.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gin-gonic/gin"
	"github.com/restmcp/restmcp/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "restmcp:", err)
		}
		os.Exit(1)
	}
}

// version is restmcp's own version: the MCP serverInfo version and the
// upstream User-Agent (restmcp/<version>).
const version = "0.1.0"

// errUsage marks an error whose message was already printed.
var errUsage = errors.New("usage")

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	gin.SetMode(gin.ReleaseMode)
	cmd := "serve"
	if len(args) > 0 {
		switch args[0] {
		case "serve", "tools", "validate", "keys", "usage", "clients", "bench":
			cmd, args = args[0], args[1:]
		}
	}
	switch cmd {
	case "keys":
		return runKeys(ctx, args, getenv, stdout, stderr)
	case "usage":
		return runUsage(ctx, args, getenv, stdout, stderr)
	case "tools":
		return runTools(ctx, args, getenv, stdout, stderr)
	case "validate":
		return runValidate(ctx, args, getenv, stdout, stderr)
	case "clients":
		return runClients(ctx, args, getenv, stdout, stderr)
	case "bench":
		return runBench(ctx, args, stdout, stderr)
	default:
		return runServe(ctx, args, getenv, stdout, stderr)
	}
}

func newLogger(w io.Writer, level slog.Level, format config.LogFormat) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == config.LogFormatJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
