package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strings"
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
	rep := fitOutputSchemas(cfg, doc, newLogger(stderr, cfg.LogLevel, cfg.LogFormat))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	withAPI := apiColumn(doc) // several APIs: each tool's API first
	if withAPI {
		fmt.Fprint(tw, "API\t")
	}
	fmt.Fprintln(tw, "NAME\tMETHOD\tPATH\tSCHEMA BYTES\tSERVER")
	for _, t := range doc.Tools {
		if withAPI {
			fmt.Fprintf(tw, "%s\t", t.API)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", t.Name, t.Method, t.PathTemplate, len(t.InputSchema)+len(t.OutputSchema), t.ServerURL)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	placements, noKey := doc.CredentialSummary()
	fmt.Fprintln(stdout, "credential placement:")
	for _, p := range placements {
		fmt.Fprintln(stdout, "  "+p)
	}
	if noKey {
		fmt.Fprintln(stdout, "  warning: callers' API keys reach no operation; set default_security or credential_parameters")
	}
	return rep.WriteText(stdout)
}

// runValidate loads the document strictly (whatever the lenient setting
// says) with the configured overlays and prints every problem, one line
// each: severity, file#JSON-pointer, line, operation and reason. A document
// that does not load strictly exits non-zero; the report then also says how
// many tools lenient mode (serve's default) would still serve. Warnings
// alone (an overlay action that matched nothing) are printed and exit 0.
func runValidate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	if cfg.Spec == "" && len(cfg.APIs) == 0 {
		return fmt.Errorf("--spec is required (a file path or an http(s) URL), or apis in the config file")
	}
	logger := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	var failed []string
	for _, src := range apiSources(cfg, cfg.Spec, cfg.Upstream, logger) {
		if src.name != "" {
			fmt.Fprintf(stdout, "api %s: %s\n", src.name, src.location)
		}
		summary, err := validateOne(ctx, src, stdout)
		if err != nil {
			return err
		}
		switch {
		case summary == "":
		case src.name == "":
			failed = append(failed, src.location+": "+summary)
		default:
			failed = append(failed, "api "+src.name+": "+summary)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("validate %s: %w", strings.Join(failed, "; "), errUsage)
	}
	return nil
}

// validateOne validates the document of src as runValidate says and
// returns "" when it loads strictly, else the summary of its problems.
// The error is for a document that cannot be read at all.
func validateOne(ctx context.Context, src apiSource, stdout io.Writer) (string, error) {
	opts := src.opts
	// validate prints every problem itself, once, and counts what it
	// prints; the loader's own log of them would repeat each on stderr.
	opts.Lenient, opts.Logger = false, nil
	doc, err := openapi.Load(ctx, src.location, opts)
	var le *openapi.LoadError
	if err != nil && !errors.As(err, &le) {
		if src.name != "" {
			return "", fmt.Errorf("api %s: %w", src.name, err)
		}
		return "", err // it names the document already
	}
	if err == nil {
		for _, p := range doc.Problems {
			fmt.Fprintln(stdout, p)
		}
		var argErrs []openapi.Problem
		for _, t := range doc.Tools {
			argErrs = append(argErrs, t.ArgumentProblems()...)
		}
		if len(argErrs) > 0 {
			for _, p := range argErrs {
				p.File = path.Base(src.location)
				fmt.Fprintln(stdout, p)
			}
			summary := fmt.Sprintf("%d error(s), %d warning(s): %d tools would refuse every call", len(argErrs), len(doc.Problems), countTools(argErrs))
			fmt.Fprintf(stdout, "%q version %s: %s\n", doc.Title, doc.Version, summary)
			return summary, nil
		}
		if src.name != "" && len(doc.Tools) == 0 {
			// serve refuses an API with nothing to serve (loadAPIs).
			summary := "no operation to serve (a webhooks-only document?); serve does not serve this API"
			fmt.Fprintf(stdout, "%q version %s: %s\n", doc.Title, doc.Version, summary)
			return summary, nil
		}
		fmt.Fprintf(stdout, "ok: %q version %s, %d tools, %d warning(s)\n", doc.Title, doc.Version, len(doc.Tools), len(doc.Problems))
		return "", nil
	}
	first, _, _ := strings.Cut(le.Err.Error(), "\n")
	fmt.Fprintf(stdout, "%s does not load as published: %s\n", src.location, first)
	errs := 0
	for _, p := range le.Problems {
		fmt.Fprintln(stdout, p)
		if p.Severity == openapi.SeverityError {
			errs++
		}
	}
	opts.Lenient, opts.Logger = true, nil
	summary := fmt.Sprintf("%d error(s), %d warning(s)", errs, len(le.Problems)-errs)
	if ld, lerr := openapi.Load(ctx, src.location, opts); lerr == nil {
		summary += fmt.Sprintf("; lenient mode (serve's default) would serve %d tools", len(ld.Tools))
	} else {
		summary += "; lenient mode cannot load it either"
	}
	fmt.Fprintln(stdout, summary)
	return summary, nil
}

// countTools is how many operations problems names.
func countTools(problems []openapi.Problem) int {
	ops := map[string]bool{}
	for _, p := range problems {
		ops[p.Operation] = true
	}
	return len(ops)
}

// loadOptions are the openapi.LoadOptions of cfg: the ones serve uses.
func loadOptions(cfg config.Config, logger *slog.Logger) openapi.LoadOptions {
	return openapi.LoadOptions{
		Upstream:             cfg.Upstream,
		ServerVariables:      cfg.ServerVariables,
		UpstreamHosts:        cfg.UpstreamHosts,
		MaxNameLength:        cfg.MaxToolNameLength,
		NameStyle:            string(cfg.ToolNameStyle),
		StrictArguments:      cfg.StrictArguments,
		Logger:               logger,
		Select:               selection(cfg),
		Lenient:              cfg.Lenient,
		Overlays:             cfg.Overlays,
		RefRoot:              cfg.RefRoot,
		NoOutputSchemas:      !cfg.OutputSchemas,
		SchemaBudget:         cfg.SchemaBudget,
		OutputSchemaBudget:   cfg.OutputSchemaBudget,
		MaxDescriptionLength: cfg.MaxDescriptionLength,
		// Listing and checking tools needs no upstream; serve refuses a
		// relative server once (runServe).
		RelativeServers:      true,
		DefaultSecurity:      cfg.DefaultSecurity,
		CredentialParameters: cfg.CredentialParameters,
	}
}

func loadForInspection(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) (*openapi.Document, config.Config, error) {
	cfg, err := loadConfig(args, getenv, stderr)
	if err != nil {
		return nil, cfg, err
	}
	if cfg.Spec == "" && len(cfg.APIs) == 0 {
		return nil, cfg, fmt.Errorf("--spec is required (a file path or an http(s) URL), or apis in the config file")
	}
	logger := newLogger(stderr, cfg.LogLevel, cfg.LogFormat)
	_, doc, err := loadAPIs(ctx, cfg, apiSources(cfg, cfg.Spec, cfg.Upstream, logger), false, logger)
	if err != nil {
		return nil, cfg, err // it names the document
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
		Annotations:       cfg.ToolAnnotations,
	}
}

// fitOutputSchemas applies output_schemas_max_list_bytes: when tools/list
// with output schemas would be larger, they are dropped (not in compact
// mode, whose list holds three tools). It returns the tools report, after
// the drop when there was one, and logs the drop.
func fitOutputSchemas(cfg config.Config, doc *openapi.Document, logger *slog.Logger) openapi.Report {
	rep := doc.Report(reportOptions(cfg))
	if max := cfg.OutputSchemasMaxListBytes; cfg.ToolMode != config.ToolModeCompact && max != -1 && rep.ListBytes > max {
		before := rep.ListBytes
		doc.DropOutputSchemas()
		rep = doc.Report(reportOptions(cfg))
		logger.Warn("tools/list with output schemas would be larger than output_schemas_max_list_bytes: tools are listed without outputSchema (structuredContent is still sent)",
			"list_bytes_with", before, "list_bytes_without", rep.ListBytes, "output_schemas_max_list_bytes", max)
	}
	return rep
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
