package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewHTTPClient returns the upstream client New uses when Options.HTTPClient
// is nil: net/http's Transport, one per caller's key (callerPools: no
// connection ever carries two callers' requests), each tuned to keep
// connections to the upstream open (every tools/call goes to the same few
// hosts: up to 32 idle ones per host, each closed after 90 s unused), with
// HTTP/2 where an https upstream offers it; no cookie jar (one client
// serves every caller, so cookies would leak between them); and redirects
// followed only within the same scheme and host, because the caller's key
// travels in headers or the query, and Go forwards custom headers such as
// X-API-Key to any host a redirect names. A refused redirect is returned
// to the tool as the 3xx response itself. Per-call deadlines come from the
// request context (Options.UpstreamTimeout), not from Client.Timeout.
// TestAnswerIntegrity holds it to giving each caller only answers to its
// own key's requests against a hostile upstream. docs/requests.md#connections.
func NewHTTPClient() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{
		Transport: newCallerPools(maxCallerPools, func() *http.Transport {
			return &http.Transport{
				Proxy:                 http.ProxyFromEnvironment,
				DialContext:           dialer.DialContext,
				ForceAttemptHTTP2:     true,
				MaxIdleConns:          2 * upstreamIdlePerCaller,
				MaxIdleConnsPerHost:   upstreamIdlePerCaller,
				IdleConnTimeout:       90 * time.Second,
				TLSHandshakeTimeout:   10 * time.Second,
				ExpectContinueTimeout: 1 * time.Second,
			}
		}),
		CheckRedirect: sameHostRedirects,
	}
}

// maxRedirects is the most same-host redirects one upstream call follows.
const maxRedirects = 5

func sameHostRedirects(req *http.Request, via []*http.Request) error {
	if len(via) == 0 {
		return nil
	}
	first := via[0].URL
	if len(via) > maxRedirects || req.URL.Host != first.Host || req.URL.Scheme != first.Scheme {
		return http.ErrUseLastResponse
	}
	return nil
}

// sent is the outcome of one upstream request.
type sent struct {
	res    *mcp.CallToolResult
	status int       // upstream HTTP status; 0 when no response arrived
	bytes  int64     // response body bytes read
	failed bool      // no usable answer: transport failure or unreadable body
	async  *asyncJob // a 202 that names its job's status resource (async.go)
}

// send performs one upstream request and maps the response to a tool
// result with mapResp (s.mapResponse, or a jq filter's mapping); an error
// from it means the body could not be read (R6).
func (s *Server) send(ctx context.Context, req *http.Request, key string, mapResp func(*http.Response) (*mcp.CallToolResult, error)) sent {
	resp, err := s.client.Do(req)
	if err != nil {
		return sent{res: errorResult(transportFailure(ctx, err, s.opts.UpstreamTimeout, key)), failed: true}
	}
	defer resp.Body.Close()
	body := &byteCounter{r: resp.Body}
	resp.Body = body
	res, err := mapResp(resp)
	if err != nil {
		return sent{res: errorResult(transportFailure(ctx, err, s.opts.UpstreamTimeout, key)), status: resp.StatusCode, bytes: body.n, failed: true}
	}
	if res.IsError || len(res.Content) > 1 {
		// An error body or a refused redirect's Location may echo the
		// request URL or the key itself, wherever the operation put it
		// (a query parameter of any name, a header, a cookie); so may a
		// response header or a Link (addResponseHeaders' item).
		redactResult(res, key)
	}
	out := sent{res: res, status: resp.StatusCode, bytes: body.n}
	if resp.StatusCode == http.StatusAccepted && s.opts.AsyncWait > 0 {
		out.async = readAsyncJob(resp)
	}
	return out
}

// byteCounter counts the bytes read through it; Close closes the
// original body.
type byteCounter struct {
	r io.ReadCloser
	n int64
}

func (c *byteCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *byteCounter) Close() error { return c.r.Close() }

// transportFailure describes a failed upstream call (R6) in words a model can
// act on: what kind of failure, whether retrying may help, and the error,
// with the caller's key removed (a *url.Error prints the request URL,
// query included).
func transportFailure(ctx context.Context, err error, timeout time.Duration, key string) string {
	var kind string
	var netErr net.Error
	var dnsErr *net.DNSError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		kind = "timed out"
		if timeout > 0 {
			kind += " after " + timeout.String()
		}
		kind += " (the upstream API did not answer in time; retrying later may help)"
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		kind = "cancelled"
	case errors.As(err, &dnsErr):
		kind = "upstream host not found"
	case errors.Is(err, syscall.ECONNREFUSED):
		kind = "connection refused (the upstream API is not reachable)"
	case errors.Is(err, syscall.ECONNRESET):
		kind = "connection reset by the upstream API"
	default:
		kind = "error"
	}
	return "upstream request failed: " + kind + ": " + redact(err.Error(), key)
}

// redactResult removes the caller's key from every text item of res.
func redactResult(res *mcp.CallToolResult, key string) {
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			tc.Text = redact(tc.Text, key)
		}
	}
	if obj, ok := res.StructuredContent.(map[string]any); ok {
		// An upstream error object (Options.ErrorStructuredContent): the
		// same redaction, through its JSON.
		if b, err := json.Marshal(obj); err == nil {
			if r := redact(string(b), key); r != string(b) {
				var clean map[string]any
				if json.Unmarshal([]byte(r), &clean) == nil {
					res.StructuredContent = clean
				} else {
					res.StructuredContent = nil
				}
			}
		}
	}
}

// apiKeyParam matches an api_key-like query parameter value in a URL.
var apiKeyParam = regexp.MustCompile(`(?i)((?:^|[?&;])(?:api_key|apikey|api-key|key|access_token|token)=)[^&;#"\s<>]*`)

// redact removes the caller's key from s: any occurrence of the key itself,
// raw or URL-escaped, and the value of any api_key-like query parameter.
func redact(s, key string) string {
	if key != "" {
		s = strings.ReplaceAll(s, key, "REDACTED")
		if q := url.QueryEscape(key); q != key {
			s = strings.ReplaceAll(s, q, "REDACTED")
		}
		if p := url.PathEscape(key); p != key {
			s = strings.ReplaceAll(s, p, "REDACTED")
		}
	}
	return apiKeyParam.ReplaceAllString(s, "${1}REDACTED")
}
