// Command restmcp serves an OpenAPI-described REST API as a remote MCP
// server: one tool per operation, each tools/call sent upstream with the
// caller's own API key and metered per key.
//
// Usage:
//
//	restmcp [serve] [--spec FILE|URL] [--upstream URL] [--addr HOST:PORT] [--config FILE]
//	restmcp [serve] --spec NAME=FILE|URL … [--upstream NAME=URL …]   several APIs on one endpoint
//	restmcp tools --spec FILE|URL     print the tool table
//	restmcp validate --spec FILE|URL  load the document and report problems
//	restmcp keys create [--plan P] [--label L] | list | show KEY_ID | revoke KEY_ID
//	restmcp usage KEY_ID [--plan P]   a key's usage report (JSON)
//	restmcp clients --spec FILE|URL   client configurations to paste
//	restmcp health [--url URL]        ask a running server's /health (exit 0 when healthy)
//	restmcp version                   the version, module version and commit
//
// With no --spec, restmcp serves the bundled demo finance API. Several
// documents (an apis: list in the config file, or named --spec flags) are
// served on one endpoint, each tool named after its API (docs/apis.md).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/restmcp/restmcp/internal/clip"

	"github.com/gin-gonic/gin"
	"github.com/restmcp/restmcp/adapter"
	"github.com/restmcp/restmcp/config"
)

func main() {
	if os.Getenv(adapter.JQWorkerEnv) == "1" {
		// A jq worker serve started for one filter (adapter/jqworker.go).
		os.Exit(adapter.ServeJQWorker(os.Stdin, os.Stdout, os.Stderr))
	}
	ctx, stop := context.Background(), func() {}
	if stopsGracefully(os.Args[1:]) {
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	}
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "restmcp:", err)
		}
		os.Exit(1)
	}
}

// stopsGracefully reports whether the command args name is one that
// handles SIGINT and SIGTERM itself: serve drains its connections and
// flushes its counters. Every other
// command (validate, tools, keys, usage, clients, help) keeps Go's default
// and ends at once on either signal, whatever it is doing: loading a
// document has no state to save, and must not outlive a supervisor's
// SIGTERM (TestCommandsStopOnSIGTERM).
func stopsGracefully(args []string) bool {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return true // serve, the default command
	}
	return args[0] == "serve"
}

// version is restmcp's own version: the MCP serverInfo version and the
// upstream User-Agent (restmcp/<version>).
const version = "0.1.0"

// errUsage marks an error whose message was already printed.
var errUsage = errors.New("usage")

// commands are restmcp's subcommands, in the order help lists them, each
// with its one line of help.
// command is one of restmcp's commands: its name, its line in the help,
// and what runs it with the arguments after its name.
type command struct {
	name, usage string
	run         func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error
}

// commands is set in init: help's command reads it.
var commands []command

func init() {
	commands = []command{
		{"serve", "serve the document as a remote MCP server (the default: restmcp with only flags serves)", runServe},
		{"tools", "print the tool table of the document: names, methods, paths, schema sizes", runTools},
		{"validate", "load the document strictly and list every problem", runValidate},
		{"keys", "manage registry API keys: create [--plan P] [--label L], list, show KEY_ID, revoke KEY_ID", runKeys},
		{"usage", "print a key's usage report (JSON): usage KEY_ID [--plan P]", runUsage},
		{"clients", "print ready-to-paste configurations for Claude, Cursor, VS Code, the Inspector and connectors", runClients},
		{"health", "ask a running restmcp serve's /health: exit 0 when it answers 200 (a container's HEALTHCHECK): health [--url URL | --addr HOST:PORT]", runHealth},
		{"version", "print restmcp's version, its module version and commit, and the Go it was built with (also --version)",
			func(_ context.Context, _ []string, _ func(string) string, stdout, _ io.Writer) error {
				_, err := io.WriteString(stdout, versionLine(debug.ReadBuildInfo())+"\n")
				return err
			}},
		{"help", "print this help", func(_ context.Context, _ []string, _ func(string) string, stdout, _ io.Writer) error {
			return writeHelp(stdout)
		}},
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	gin.SetMode(gin.ReleaseMode)
	cmd := "serve"
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
		args[0] = "version"
	}
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	names := make([]string, len(commands))
	for i, c := range commands {
		if c.name == cmd {
			return c.run(ctx, args, getenv, stdout, stderr)
		}
		names[i] = c.name
	}
	return fmt.Errorf("unknown command %q; the commands are %s (restmcp help lists them with the settings)", clip.String(cmd, 40), strings.Join(names, ", "))
}

// writeHelp writes the commands, one line each, then every setting.
func writeHelp(w io.Writer) error {
	var b strings.Builder
	b.WriteString("restmcp serves an OpenAPI-described REST API as a remote MCP server.\n\nUsage: restmcp [command] [flags]\n\nCommands:\n")
	for _, c := range commands {
		fmt.Fprintf(&b, "  %-9s %s\n", c.name, c.usage)
	}
	b.WriteString("\nWith no --spec, serve runs the bundled demo finance API.\n\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return config.WriteUsage(w)
}

func newLogger(w io.Writer, level slog.Level, format config.LogFormat) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == config.LogFormatJSON {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// versionLine is what `restmcp version` prints: restmcp's version, then
// the module version and VCS commit the binary was built from, when the
// build recorded them (go build in a git checkout without -buildvcs=false;
// go install module@version), and the Go release:
// "restmcp 0.1.0 (module v0.1.0, commit 0e0bba2c1f3a, go1.27.3)".
func versionLine(info *debug.BuildInfo, ok bool) string {
	module, commit, goVersion := "(devel)", "unknown", runtime.Version()
	if ok && info != nil {
		if info.Main.Version != "" {
			module = info.Main.Version
		}
		for _, st := range info.Settings {
			switch st.Key {
			case "vcs.revision":
				commit = st.Value[:min(len(st.Value), 12)]
			case "vcs.modified":
				if st.Value == "true" {
					commit += "+modified"
				}
			}
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
	}
	return "restmcp " + version + " (module " + module + ", commit " + commit + ", " + goVersion + ")"
}
