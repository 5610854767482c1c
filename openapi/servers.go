package openapi

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// server returns the base URL of an operation (C20): servers are taken
// from the operation, else the path item, else the document, else the
// implicit "/". Variables take LoadOptions.ServerVariables or their
// default. A relative URL is resolved against LoadOptions.Upstream when
// set, else against the document's http(s) location; otherwise it is an
// error. LoadOptions.Upstream replaces the document-level server: an
// origin-only override keeps the document server's path, an override with
// a path replaces the URL. A path- or operation-level server with a
// document-level server's URL is replaced the same way; one on a
// document-level server's host (another path) keeps its path on the
// upstream's origin; one on another host needs LoadOptions.UpstreamHosts.
// The result has no trailing "/".
func (b *builder) server(item *openapi3.PathItem, op *openapi3.Operation) (string, error) {
	var servers openapi3.Servers
	docLevel := false
	switch {
	case op.Servers != nil && len(*op.Servers) > 0:
		servers = *op.Servers
	case len(item.Servers) > 0:
		servers = item.Servers
	default:
		servers = b.doc.Servers
		docLevel = true
	}
	raw := "/"
	var chosen *openapi3.Server
	if len(servers) > 0 {
		chosen = servers[0]
		if b.swagger2 {
			if i := slices.IndexFunc(servers, func(s *openapi3.Server) bool { return s != nil && strings.HasPrefix(s.URL, "https:") }); i >= 0 {
				chosen = servers[i]
			}
		}
	}
	if chosen != nil {
		var err error
		raw, err = b.expand(chosen)
		if err != nil {
			return "", err
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("server URL %q: %w", raw, err)
	}
	var ov *url.URL
	if b.opts.Upstream != "" {
		ov, err = url.Parse(b.opts.Upstream)
		if err != nil || ov.Scheme == "" || ov.Host == "" {
			return "", fmt.Errorf("upstream override %q is not an absolute URL", b.opts.Upstream)
		}
	}
	sameHost := false
	if !docLevel && ov != nil && u.Scheme != "" && u.Host != "" {
		// A path- or operation-level server identical to a document-level
		// one (Twilio repeats https://api.twilio.com on every path) is
		// the document's server: it follows the upstream too. One on the
		// same host with a path of its own keeps that path on the
		// upstream's origin.
		switch b.docServer(u) {
		case docServerSame:
			docLevel = true
		case docServerHost:
			sameHost = true
		}
	}
	switch {
	case sameHost:
		v := *ov
		v.Path, v.RawPath = u.Path, u.RawPath
		u = &v
	case docLevel && ov != nil && strings.Trim(ov.Path, "/") != "":
		u = ov
	case docLevel && ov != nil:
		v := *ov
		v.Path, v.RawPath = u.Path, u.RawPath
		u = &v
	case u.Scheme != "" && u.Host == "":
		// "https://" (a placeholder for a URL the API hands out, say):
		// nothing to send the request to; the upstream stands in only
		// for the document's own servers.
		return "", fmt.Errorf("server URL %q has a scheme but no host", raw)
	case u.Scheme != "" && u.Host != "":
		if ov != nil && !b.hostAllowed(u, ov) {
			return "", &UpstreamHostError{Server: u.Redacted(), Host: u.Host, Upstream: ov.Host}
		}
	case ov != nil:
		u = ov.ResolveReference(&url.URL{Path: "/"}).ResolveReference(u)
	case b.src.url != nil && b.src.url.Scheme != "":
		u = b.src.url.ResolveReference(u)
	case b.opts.RelativeServers:
		return strings.TrimRight(u.String(), "/"), nil
	default:
		return "", fmt.Errorf("server URL %q is relative; configure the upstream base URL", raw)
	}
	u.Fragment = ""
	return strings.TrimRight(u.String(), "/"), nil
}

// How an absolute server URL stands to the document-level servers.
const (
	docServerOther = iota // another host
	docServerHost         // the host of a document-level server, another path
	docServerSame         // a document-level server's URL (as expanded)
)

// docServer compares u with every document-level server, each expanded as
// server() expands it.
func (b *builder) docServer(u *url.URL) int {
	rel := docServerOther
	for _, ds := range b.doc.Servers {
		if ds == nil {
			continue
		}
		raw, err := b.expand(ds)
		if err != nil {
			continue
		}
		d, err := url.Parse(raw)
		if err != nil || d.Host == "" || hostPort(d) != hostPort(u) || !strings.EqualFold(d.Scheme, u.Scheme) {
			continue
		}
		if strings.TrimRight(d.Path, "/") == strings.TrimRight(u.Path, "/") {
			return docServerSame
		}
		rel = docServerHost
	}
	return rel
}

// UpstreamHostError is the error for an operation- or path-level server on
// a host other than the configured upstream's, not listed in
// LoadOptions.UpstreamHosts: the caller's key would be sent there, so the
// operation is not served.
type UpstreamHostError struct {
	Server   string // the server URL, as resolved
	Host     string // its host[:port]
	Upstream string // the upstream's host[:port]
}

func (e *UpstreamHostError) Error() string {
	return fmt.Sprintf("server %q is on host %q, not the upstream's host %q: callers' API keys would be sent there; "+
		"add %q to upstream_hosts (--upstream-hosts, RESTMCP_UPSTREAM_HOSTS) if that host may receive them", e.Server, e.Host, e.Upstream, e.Host)
}

// hostAllowed reports whether u may receive callers' keys when the
// upstream is ov: same host and port as ov, or listed in
// LoadOptions.UpstreamHosts.
func (b *builder) hostAllowed(u, ov *url.URL) bool {
	if hostPort(u) == hostPort(ov) {
		return true
	}
	for _, h := range b.opts.UpstreamHosts {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "*" || h == hostPort(u) || h == strings.ToLower(u.Hostname()) {
			return true
		}
	}
	return false
}

// hostPort is u's lower-case host:port, with the scheme's default port made
// explicit.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}

// RelativeServer returns the first relative ServerURL among the tools (kept
// by LoadOptions.RelativeServers), or "" when every tool has an absolute
// one.
func (d *Document) RelativeServer() string {
	for _, t := range d.Tools {
		if u, err := url.Parse(t.ServerURL); err != nil || u.Scheme == "" || u.Host == "" {
			if t.ServerURL == "" {
				return "/"
			}
			return t.ServerURL
		}
	}
	return ""
}

// CredentialSummary counts the tools per CredentialPlacement, most tools
// first (then by placement): "apiKey header X-Api-Key: 412 tools".
// NoKeyReaches reports whether no tool sends the caller's key anywhere.
func (d *Document) CredentialSummary() (lines []string, noKeyReaches bool) {
	counts := map[string]int{}
	for _, t := range d.Tools {
		counts[t.CredentialPlacement]++
	}
	keys := slices.Sorted(maps.Keys(counts))
	slices.SortStableFunc(keys, func(a, b string) int { return counts[b] - counts[a] })
	noKeyReaches = len(d.Tools) > 0
	for _, k := range keys {
		n := "tools"
		if counts[k] == 1 {
			n = "tool"
		}
		lines = append(lines, fmt.Sprintf("%s: %d %s", k, counts[k], n))
		if !strings.HasPrefix(k, "none") {
			noKeyReaches = false
		}
	}
	return lines, noKeyReaches
}

// KeyHosts returns, sorted and without repeats, the host[:port] of every
// tool's server: the hosts that receive callers' API keys.
func (d *Document) KeyHosts() []string {
	var hosts []string
	for _, t := range d.Tools {
		if u, err := url.Parse(t.ServerURL); err == nil && !slices.Contains(hosts, u.Host) {
			hosts = append(hosts, u.Host)
		}
	}
	slices.Sort(hosts)
	return hosts
}

// checkServerVariables checks LoadOptions.ServerVariables against every
// server of the document (document, path and operation level) before any
// tool is built, so that a wrong setting fails the load in every mode: a
// name no server URL has, or a value outside a variable's enum (with the
// allowed values).
func (b *builder) checkServerVariables() error {
	if len(b.opts.ServerVariables) == 0 {
		return nil
	}
	vars := map[string]*openapi3.ServerVariable{}
	add := func(ss openapi3.Servers) {
		for _, s := range ss {
			if s == nil {
				continue
			}
			for name, v := range s.Variables {
				if prev, ok := vars[name]; !ok || prev == nil {
					vars[name] = v
				}
			}
		}
	}
	add(b.doc.Servers)
	if b.doc.Paths != nil {
		for _, p := range b.doc.Paths.Keys() {
			item := b.doc.Paths.Value(p)
			if item == nil {
				continue
			}
			add(item.Servers)
			for _, op := range item.Operations() {
				if op != nil && op.Servers != nil {
					add(*op.Servers)
				}
			}
		}
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(b.opts.ServerVariables)) {
		val := b.opts.ServerVariables[name]
		v, ok := vars[name]
		switch {
		case !ok:
			known := slices.Sorted(maps.Keys(vars))
			errs = append(errs, fmt.Errorf("server_variables: no server URL of the document has a variable %q (variables: %s)", name, strings.Join(known, ", ")))
		case v != nil && len(v.Enum) > 0 && !slices.Contains(v.Enum, val):
			errs = append(errs, fmt.Errorf("server variable %q: value %q is not allowed; allowed values: %s", name, val, strings.Join(v.Enum, ", ")))
		}
	}
	return errors.Join(errs...)
}

// expand substitutes server variables.
func (b *builder) expand(s *openapi3.Server) (string, error) {
	out := s.URL
	for {
		i := strings.IndexByte(out, '{')
		if i < 0 {
			return out, nil
		}
		j := strings.IndexByte(out[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("server URL %q: unclosed variable", s.URL)
		}
		name := out[i+1 : i+j]
		v := s.Variables[name]
		val, set := b.opts.ServerVariables[name]
		switch {
		case set:
		case v != nil:
			val = v.Default
		default:
			return "", fmt.Errorf("server URL %q: variable %q is not defined", s.URL, name)
		}
		if v != nil && len(v.Enum) > 0 && !slices.Contains(v.Enum, val) {
			return "", fmt.Errorf("server variable %q: value %q is not allowed; allowed values: %s", name, val, strings.Join(v.Enum, ", "))
		}
		out = out[:i] + val + out[i+j+1:]
	}
}
