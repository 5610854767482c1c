package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/restmcp/restmcp/openapi"
)

// defaultWatchInterval is how often watch checks the spec file when
// reload_interval is 0.
const defaultWatchInterval = 2 * time.Second

// maxReloadBytes caps a spec fetched again from its URL (as a first load
// caps it).
const maxReloadBytes = 64 << 20

// reloader reloads the document into srv: when the spec file changes
// (watch), when the spec URL answers with a new version (reload_interval),
// and on every signal from hup. A document that does not load keeps the
// current tools, and so does one that loads only leniently (problems
// dropped) when the one served loaded as published, or that has no tools
// at all: an edit that breaks the document does not empty the server. The
// log says why.
type reloader struct {
	location string
	label    string // the source in log lines: its location, or the API and its location
	isURL    bool
	opts     openapi.LoadOptions
	// apply serves a reloaded document (apiSet.swap: alone, or merged
	// with the other APIs); on error the current tools stay.
	apply  func(*openapi.Document) error
	logger *slog.Logger
	client *http.Client

	// clean reports whether the document served loaded as published (no
	// problems).
	clean bool
	// What the last load saw: the file's modification time and size, or
	// the URL's validators.
	modTime      time.Time
	size         int64
	etag         string
	lastModified string
}

func newReloader(src apiSource, served *openapi.Document, apply func(*openapi.Document) error, logger *slog.Logger) *reloader {
	location := src.location
	r := &reloader{location: location, label: src.label(), opts: src.opts, apply: apply, logger: logger, clean: len(served.Problems) == 0,
		isURL:  strings.HasPrefix(location, "http://") || strings.HasPrefix(location, "https://"),
		client: &http.Client{Timeout: 30 * time.Second}}
	// N6 across reloads: the names served now stay with their operations.
	r.opts.Served = openapi.ServedNames(nil, served)
	if fi := src.loadedStat; !r.isURL && fi != nil {
		// As the file was before it loaded: a change made since is
		// reloaded at the first check.
		r.modTime, r.size = fi.ModTime(), fi.Size()
	}
	return r
}

// run reloads until ctx ends: every interval (0: never by time) when the
// document changed, and at once on each hup.
func (r *reloader) run(ctx context.Context, interval time.Duration, hup <-chan os.Signal) {
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			r.logger.Info("SIGHUP: reloading the document", "spec", r.label)
			r.reload(ctx, nil)
		case <-tick:
			changed, data, err := r.changed(ctx)
			if err != nil {
				r.logger.Warn("checking the document for changes failed; the current tools stay", "spec", r.label, "error", err.Error())
				continue
			}
			if changed {
				r.reload(ctx, data)
			}
		}
	}
}

// changed reports whether the document differs from the last load: for a
// file by modification time and size, for a URL by a conditional GET whose
// body (when it changed) is returned.
func (r *reloader) changed(ctx context.Context) (bool, []byte, error) {
	if !r.isURL {
		fi, err := os.Stat(r.location)
		if err != nil {
			return false, nil, err
		}
		if fi.ModTime().Equal(r.modTime) && fi.Size() == r.size {
			return false, nil, nil
		}
		r.modTime, r.size = fi.ModTime(), fi.Size()
		return true, nil, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.location, nil)
	if err != nil {
		return false, nil, err
	}
	if r.etag != "" {
		req.Header.Set("If-None-Match", r.etag)
	}
	if r.lastModified != "" {
		req.Header.Set("If-Modified-Since", r.lastModified)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return false, nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotModified:
		return false, nil, nil
	case http.StatusOK:
	default:
		return false, nil, fmt.Errorf("GET %s: HTTP %d", redactURL(r.location), resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxReloadBytes+1))
	if err != nil {
		return false, nil, err
	}
	if len(data) > maxReloadBytes {
		return false, nil, fmt.Errorf("the document is larger than %d bytes", maxReloadBytes)
	}
	r.etag, r.lastModified = resp.Header.Get("ETag"), resp.Header.Get("Last-Modified")
	return true, data, nil
}

// reload loads the document (data when the URL's body was just fetched,
// else from its location) and serves its tools.
func (r *reloader) reload(ctx context.Context, data []byte) {
	start := time.Now()
	var doc *openapi.Document
	var err error
	if data != nil {
		doc, err = openapi.LoadData(ctx, data, r.location, r.opts)
	} else {
		doc, err = openapi.Load(ctx, r.location, r.opts)
	}
	if err == nil {
		switch rel := doc.RelativeServer(); {
		case rel != "":
			err = fmt.Errorf("the document's server URL %q is relative and no upstream is set", rel)
		case len(doc.Tools) == 0:
			err = errors.New("the document has no operations to serve")
		case r.clean && len(doc.Problems) > 0:
			err = fmt.Errorf("the document does not load as published (%d problems, the first: %s), while the one served did", len(doc.Problems), doc.Problems[0])
		}
	}
	if err == nil {
		err = r.apply(doc)
	}
	if err != nil {
		r.logger.Error("reloading the document failed; the current tools stay", "spec", r.label, "error", err.Error())
		return
	}
	r.clean = len(doc.Problems) == 0
	r.opts.Served = openapi.ServedNames(r.opts.Served, doc)
	r.logger.Info("document reloaded", "spec", r.label, "tools", len(doc.Tools), "problems", len(doc.Problems), "reload_ms", time.Since(start).Milliseconds())
}

// errWatchURL is the error for watch on a spec URL.
var errWatchURL = errors.New("watch watches a spec file; for a spec URL set reload_interval (e.g. 1m) instead")
