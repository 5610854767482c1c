package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/openapi"
)

// apiSource is one document restmcp serves: the single spec (name "") or
// an entry of the apis list (docs/apis.md).
type apiSource struct {
	name     string              // "" for a single document
	location string              // file path or http(s) URL
	opts     openapi.LoadOptions // its configuration's (config.Config.ForAPI for an API)
	// loadedStat is the file's os.Stat from just before its first load
	// (nil for a URL, or when it failed): watch compares later stats with
	// it, so that a change made while the document loads is seen.
	loadedStat os.FileInfo
}

// label names the source in logs and errors: `api "checkout" (checkout.json)`
// or the location alone.
func (s apiSource) label() string {
	if s.name == "" {
		return redactURL(s.location)
	}
	return fmt.Sprintf("api %q (%s)", s.name, redactURL(s.location))
}

// apiSources lists the documents of cfg: one per apis entry, each with its
// own configuration (config.Config.ForAPI) and load options, or the single
// spec at location (the bundled demo's URL when cfg has none) with
// upstream.
func apiSources(cfg config.Config, location, upstream string, logger *slog.Logger) []apiSource {
	if len(cfg.APIs) == 0 {
		opts := loadOptions(cfg, logger)
		opts.Upstream = upstream
		return []apiSource{{location: location, opts: opts}}
	}
	out := make([]apiSource, len(cfg.APIs))
	for i, a := range cfg.APIs {
		opts := loadOptions(cfg.ForAPI(i), logger.With("api", a.Name))
		opts.API = a.Name
		out[i] = apiSource{name: a.Name, location: a.Spec, opts: opts}
	}
	return out
}

// apiSet holds the document of each source as served; a reload of one
// source swaps its document and merges them again (openapi.Merge).
type apiSet struct {
	sources []apiSource
	maxName int
	logger  *slog.Logger

	mu   sync.Mutex
	docs []*openapi.Document
	// served is the names the last merge served, by API and operation
	// (openapi.MergedNames), so that a reload moves no name to another
	// tool (A6).
	served map[string]string
}

// loadAPIs loads every source, several at once, and returns the set and
// the document to serve: the single document itself, or the merge of the
// APIs. A source that fails to load, or whose server URL is relative, stops
// the start with an error naming it; in lenient mode with several APIs it
// drops only its own tools instead: the error is logged and recorded as a
// problem of the merged document, and the others are served (unless none
// loads).
//
// serving refuses a relative server URL (restmcp tools and validate list
// tools without an upstream).
func loadAPIs(ctx context.Context, cfg config.Config, sources []apiSource, serving bool, logger *slog.Logger) (*apiSet, *openapi.Document, error) {
	set := &apiSet{sources: sources, maxName: cfg.MaxToolNameLength, logger: logger, docs: make([]*openapi.Document, len(sources))}
	errs := make([]error, len(sources))
	var wg sync.WaitGroup
	for i, src := range sources {
		wg.Go(func() {
			start := time.Now()
			if fi, err := os.Stat(src.location); err == nil {
				sources[i].loadedStat = fi
			}
			doc, err := openapi.Load(ctx, src.location, src.opts)
			if err == nil && serving {
				if rel := doc.RelativeServer(); rel != "" {
					err = fmt.Errorf("loading %s: the document's server URL %q is relative: set the upstream base URL with %s", src.location, rel, upstreamHint(src.name))
				}
			}
			if err == nil && src.name != "" && len(doc.Tools) == 0 {
				// Among several APIs, one that serves nothing is a broken
				// document or a wrong entry (a webhooks-only document).
				err = fmt.Errorf("loading %s: no operation to serve", src.location)
				if len(doc.Problems) > 0 {
					err = fmt.Errorf("loading %s: no operation loads (%d problems; the first: %s)", src.location, len(doc.Problems), doc.Problems[0])
				}
			}
			if err != nil {
				errs[i] = err
				return
			}
			set.docs[i] = doc
			if src.name != "" {
				logger.Info("api loaded", "api", src.name, "spec", redactURL(src.location), "title", doc.Title,
					"tools", len(doc.Tools), "problems", len(doc.Problems), "load_ms", time.Since(start).Milliseconds())
			}
		})
	}
	wg.Wait()
	if len(sources) == 1 && sources[0].name == "" {
		if errs[0] != nil {
			return nil, nil, errs[0] // it names the document
		}
		return set, set.docs[0], nil
	}
	var failed []error
	loaded := 0
	for i, err := range errs {
		src := sources[i]
		if err == nil {
			loaded++
			continue
		}
		failed = append(failed, fmt.Errorf("api %s: %w", src.name, err))
		// Lenient: this API serves no tools; the problem is kept.
		set.docs[i] = &openapi.Document{API: src.name, Title: src.name + " (not loaded)", Problems: []openapi.Problem{{
			Severity: openapi.SeverityError, File: redactURL(src.location),
			Message: "api " + src.name + " is not served: " + err.Error()}}}
	}
	switch {
	case len(failed) > 0 && !cfg.Lenient:
		return nil, nil, errors.Join(failed...)
	case loaded == 0:
		return nil, nil, fmt.Errorf("no API loads: %w", errors.Join(failed...))
	}
	for _, err := range failed {
		logger.Error("an API does not load; its tools are not served (lenient mode), the others are", "error", err.Error())
	}
	if err := openapi.CheckPrefixes(set.docs); err != nil {
		return nil, nil, err
	}
	doc := set.merged()
	set.served = openapi.MergedNames(nil, doc)
	if cfg.ServerName != "" {
		doc.Title = cfg.ServerName // the banner's and client configurations' name
	}
	return set, doc, nil
}

// upstreamHint says where to set the upstream of the source named name.
func upstreamHint(name string) string {
	if name == "" {
		return "--upstream or RESTMCP_UPSTREAM (upstream in the config file)"
	}
	return fmt.Sprintf("--upstream %s=URL or upstream in its apis entry", name)
}

// merged merges the documents as served (caller holds mu or owns the set).
func (s *apiSet) merged() *openapi.Document {
	return openapi.Merge(s.docs, s.maxName, s.served, s.logger)
}

// several reports whether the set serves named APIs (federation).
func (s *apiSet) several() bool { return s.sources[0].name != "" }

// swap replaces the document of source i by doc and hands serve the
// document to serve: doc itself for a single document, else the merge of
// all, in which only source i's tools changed. When serve fails, the
// previous document stays, names included.
func (s *apiSet) swap(i int, doc *openapi.Document, serve func(*openapi.Document) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.several() {
		if err := serve(doc); err != nil {
			return err
		}
		s.docs[i] = doc
		return nil
	}
	old := s.docs[i]
	s.docs[i] = doc
	if err := openapi.CheckPrefixes(s.docs); err != nil {
		s.docs[i] = old
		return err
	}
	m := s.merged()
	if err := serve(m); err != nil {
		s.docs[i] = old
		return err
	}
	s.served = openapi.MergedNames(s.served, m)
	return nil
}

// apiColumn reports whether doc's tools belong to named APIs, so that
// `restmcp tools` shows each tool's API.
func apiColumn(doc *openapi.Document) bool {
	for _, t := range doc.Tools {
		if t.API != "" {
			return true
		}
	}
	return false
}

// joinNames lists the names of the sources: "checkout, transfers".
func (s *apiSet) joinNames() string {
	names := make([]string, len(s.sources))
	for i, src := range s.sources {
		names[i] = src.name
	}
	return strings.Join(names, ", ")
}
