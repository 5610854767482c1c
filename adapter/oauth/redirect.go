package oauth

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/restmcp/restmcp/internal/clip"
	"github.com/restmcp/restmcp/internal/loopback"
)

// DefaultRedirectURIs are the https redirect URIs clients may register
// without configuration (O8): the callbacks of the hosted connectors as
// they call back today. Claude's (claude.ai and claude.com); ChatGPT's
// per-connector callback, one path segment per connector under
// /connector/oauth/, and its older fixed one; Cursor's hosted agents'.
// An entry ending in "/*" is a pattern: that host and path followed by one
// path segment. Loopback http and private-use scheme redirect URIs need no
// entry.
var DefaultRedirectURIs = []string{
	"https://claude.ai/api/mcp/auth_callback",
	"https://claude.com/api/mcp/auth_callback",
	"https://chatgpt.com/connector/oauth/*",
	"https://chatgpt.com/connector_platform_oauth_redirect",
	"https://www.cursor.com/agents/mcp/oauth/callback",
}

// DefaultRedirectSchemes are the private-use URI schemes (RFC 8252 §7.1)
// accepted without a dot in them (O4): the native apps' callbacks, e.g.
// Cursor's cursor://anysphere.cursor-mcp/oauth/callback. A scheme with a
// dot (reverse domain name, com.example.app:/callback) is always accepted.
var DefaultRedirectSchemes = []string{"cursor", "vscode", "vscode-insiders", "windsurf", "claude"}

// refusedSchemes can never be redirect URIs: a browser runs or reads
// something of its own with them instead of handing the code to an app.
var refusedSchemes = map[string]bool{"javascript": true, "data": true, "file": true, "blob": true, "about": true, "vbscript": true}

// Bounds of one registration's redirect URIs.
const (
	maxRedirectURIs      = 20
	maxRedirectURIBytes  = 2000
	maxRedirectURIsShown = 200 // characters of a refused URI quoted in an error
)

// redirectPolicy decides which redirect URIs a client may register and
// whether an authorization request's redirect_uri is one of a client's.
type redirectPolicy struct {
	exact    map[string]bool // https URIs allowed as they are
	patterns []redirectPattern
	schemes  map[string]bool // private-use schemes without a dot
}

// redirectPattern is an https host and a path prefix ending in "/": it
// allows that prefix followed by one non-empty path segment, no query.
type redirectPattern struct{ host, prefix string }

// newRedirectPolicy checks the configured URIs and patterns and schemes.
// A pattern is https://host/path/* with a path of at least one segment
// before the "*": never a bare host, never "*" alone.
func newRedirectPolicy(uris, schemes []string) (*redirectPolicy, error) {
	p := &redirectPolicy{exact: map[string]bool{}, schemes: map[string]bool{}}
	var errs []error
	for _, r := range uris {
		pattern, isPattern := strings.CutSuffix(r, "/*")
		u, err := url.Parse(pattern)
		switch {
		case r == "*":
			errs = append(errs, errors.New(`RedirectURIs: "*" (any https URI) is not allowed: list each callback, or a host and path prefix as https://host/path/*`))
		case err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.Contains(r, "#"):
			errs = append(errs, fmt.Errorf("RedirectURIs: %q is not an https URL without user, query or fragment", r))
		case strings.Contains(pattern, "*"):
			errs = append(errs, fmt.Errorf("RedirectURIs: %q: a pattern has one *, as its last path segment (https://host/path/*)", r))
		case isPattern && strings.Trim(u.Path, "/") == "":
			errs = append(errs, fmt.Errorf("RedirectURIs: %q allows a whole host: a pattern needs a path before the * (https://host/path/*)", r))
		case isPattern:
			p.patterns = append(p.patterns, redirectPattern{host: strings.ToLower(u.Host), prefix: u.Path + "/"})
		default:
			p.exact[r] = true
		}
	}
	for _, s := range schemes {
		s = strings.ToLower(s)
		if !validScheme(s) || refusedSchemes[s] || s == "http" || s == "https" {
			errs = append(errs, fmt.Errorf("RedirectSchemes: %q is not a private-use URI scheme (RFC 3986 §3.1 letters, digits, + - .; not http, https or %s)", s, "javascript, data, file, blob, about, vbscript"))
			continue
		}
		p.schemes[s] = true
	}
	return p, errors.Join(errs...)
}

// validScheme reports whether s is an RFC 3986 §3.1 scheme.
func validScheme(s string) bool {
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// check accepts a redirect URI a client may register (RFC 6749 §3.1.2, RFC
// 8252 §7): absolute, no fragment, no user information, at most 2,000
// bytes, and one of
//   - http on a loopback host (RFC 8252 §7.3);
//   - https listed exactly or matching a pattern, or on the origin of the
//     Client ID Metadata Document documentURL ("" for a registration);
//   - a private-use scheme (RFC 8252 §7.1): one with a dot, or listed.
//
// The error names the URI and why it is refused.
func (p *redirectPolicy) check(r, documentURL string) error {
	q := clip.String(r, maxRedirectURIsShown)
	if len(r) > maxRedirectURIBytes {
		return fmt.Errorf("redirect URI %q is longer than %d bytes", q, maxRedirectURIBytes)
	}
	if strings.Contains(r, "#") {
		return fmt.Errorf("redirect URI %q has a fragment (#), which RFC 6749 §3.1.2 forbids", q)
	}
	u, err := url.Parse(r)
	if err != nil || u.Scheme == "" {
		return fmt.Errorf("redirect URI %q is not an absolute URI", q)
	}
	scheme := strings.ToLower(u.Scheme)
	if refusedSchemes[scheme] {
		return fmt.Errorf("redirect URI %q: the %s: scheme is never a redirect URI", q, scheme)
	}
	if u.User != nil {
		return fmt.Errorf("redirect URI %q has user information (user@host), which a redirect URI must not", q)
	}
	switch scheme {
	case "http":
		if u.Host != "" && loopback.Host(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("redirect URI %q: http is allowed on loopback only (127.0.0.1, [::1], localhost); use https", q)
	case "https":
		if u.Host == "" {
			return fmt.Errorf("redirect URI %q has no host", q)
		}
		if p.exact[r] || p.matchesPattern(u) {
			return nil
		}
		if documentURL != "" {
			if d, err := url.Parse(documentURL); err == nil && strings.EqualFold(d.Host, u.Host) {
				return nil
			}
		}
		return fmt.Errorf("redirect URI %q is not allowed by this server (oauth_redirect_uris); loopback http URIs and private-use schemes always are", q)
	}
	if strings.Contains(scheme, ".") || p.schemes[scheme] {
		return nil
	}
	return fmt.Errorf("redirect URI %q: scheme %q is not accepted: use https, http on loopback, a reverse-domain private-use scheme (com.example.app:/callback) or one of oauth_redirect_schemes", q, scheme)
}

// matchesPattern reports whether an https u is a pattern's prefix followed
// by one path segment, with no query.
func (p *redirectPolicy) matchesPattern(u *url.URL) bool {
	if u.RawQuery != "" || u.ForceQuery || u.RawPath != "" {
		return false // an escaped "/" or "." could hide a second segment
	}
	host := strings.ToLower(u.Host)
	for _, pt := range p.patterns {
		seg, ok := strings.CutPrefix(u.Path, pt.prefix)
		if ok && host == pt.host && seg != "" && seg != "." && seg != ".." && !strings.Contains(seg, "/") {
			return true
		}
	}
	return false
}

// matchRedirect returns the redirect URI an authorization request's
// redirect_uri arg selects among a client's registered ones: one equal to
// it, or, for a loopback http URI, one that differs only in the port (RFC
// 8252 §7.3: a native app takes whatever port is free when it authorizes).
// The answer goes to arg itself.
func matchRedirect(registered []string, arg string) (string, bool) {
	for _, r := range registered {
		if r == arg {
			return arg, true
		}
	}
	a, err := url.Parse(arg)
	if err != nil || a.Scheme != "http" || !loopback.Host(a.Hostname()) || a.User != nil || a.Fragment != "" || strings.Contains(arg, "#") {
		return "", false
	}
	for _, r := range registered {
		u, err := url.Parse(r)
		if err == nil && u.Scheme == "http" && strings.EqualFold(u.Hostname(), a.Hostname()) &&
			u.EscapedPath() == a.EscapedPath() && u.RawQuery == a.RawQuery {
			return arg, true
		}
	}
	return "", false
}
