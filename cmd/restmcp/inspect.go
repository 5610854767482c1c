package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"

	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/openapi"
)

// runTools prints one row per tool: name, method, path and the size of its
// input and output schemas in bytes, then the startup report (tool count,
// tools/list bytes, token estimate, longest names, collisions, warnings).
func runTools(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	doc, cfg, err := loadForInspection(ctx, args, getenv, stderr)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMETHOD\tPATH\tSCHEMA BYTES")
	for _, t := range doc.Tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", t.Name, t.Method, t.PathTemplate, len(t.InputSchema)+len(t.OutputSchema))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	return doc.Report(reportOptions(cfg)).WriteText(stdout)
}

// runValidate loads the document and reports the outcome; a document that
// does not load makes the command exit non-zero.
func runValidate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	doc, _, err := loadForInspection(ctx, args, getenv, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ok: %q version %s, %d tools\n", doc.Title, doc.Version, len(doc.Tools))
	return nil
}

func loadForInspection(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) (*openapi.Document, config.Config, error) {
	cfg, err := loadConfig(args, getenv, stderr)
	if err != nil {
		return nil, cfg, err
	}
	if cfg.Spec == "" {
		return nil, cfg, fmt.Errorf("--spec is required (a file path or an http(s) URL)")
	}
	logger := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	doc, err := openapi.Load(ctx, cfg.Spec, openapi.LoadOptions{
		Upstream:      cfg.Upstream,
		MaxNameLength: cfg.MaxToolNameLength,
		Logger:        logger,
		Select:        selection(cfg),
	})
	if err != nil {
		return nil, cfg, fmt.Errorf("loading %s: %w", cfg.Spec, err)
	}
	return doc, cfg, nil
}

// selection is the tool selection and name overrides of cfg.
func selection(cfg config.Config) openapi.Selection {
	return openapi.Selection{
		IncludeTags:       cfg.IncludeTags,
		ExcludeTags:       cfg.ExcludeTags,
		IncludeOperations: cfg.IncludeOperations,
		ExcludeOperations: cfg.ExcludeOperations,
		IncludeMethods:    cfg.IncludeMethods,
		ExcludeMethods:    cfg.ExcludeMethods,
		Names:             cfg.ToolNames,
	}
}

// reportOptions are the startup report thresholds of cfg.
func reportOptions(cfg config.Config) openapi.ReportOptions {
	return openapi.ReportOptions{MaxTools: cfg.ReportMaxTools, MaxListBytes: cfg.ReportMaxListBytes}
}

// logReport logs the startup tool report: at Info, or at Warn with the
// warnings when a threshold is exceeded.
func logReport(logger *slog.Logger, r openapi.Report) {
	if len(r.Warnings) == 0 {
		logger.Info("tools report", r.LogAttrs()...)
		return
	}
	logger.Warn("tools report: too large for many clients", append(r.LogAttrs(), "warnings", r.Warnings)...)
}
