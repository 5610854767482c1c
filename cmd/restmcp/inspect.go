package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/restmcp/restmcp/openapi"
)

// runTools prints one row per tool: name, method, path and the size of its
// input schema in bytes, then a summary line.
func runTools(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	doc, err := loadForInspection(ctx, args, getenv, stderr)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tMETHOD\tPATH\tSCHEMA BYTES")
	total := 0
	for _, t := range doc.Tools {
		n := len(t.InputSchema) + len(t.OutputSchema)
		total += n
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", t.Name, t.Method, t.PathTemplate, n)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "\n%d tools, %d schema bytes\n", len(doc.Tools), total)
	return nil
}

// runValidate loads the document and reports the outcome; a document that
// does not load makes the command exit non-zero.
func runValidate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	doc, err := loadForInspection(ctx, args, getenv, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ok: %q version %s, %d tools\n", doc.Title, doc.Version, len(doc.Tools))
	return nil
}

func loadForInspection(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) (*openapi.Document, error) {
	cfg, err := loadConfig(args, getenv, stderr)
	if err != nil {
		return nil, err
	}
	if cfg.Spec == "" {
		return nil, fmt.Errorf("--spec is required (a file path or an http(s) URL)")
	}
	logger := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	doc, err := openapi.Load(ctx, cfg.Spec, openapi.LoadOptions{
		Upstream:      cfg.Upstream,
		MaxNameLength: cfg.MaxToolNameLength,
		Logger:        logger,
	})
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", cfg.Spec, err)
	}
	return doc, nil
}
