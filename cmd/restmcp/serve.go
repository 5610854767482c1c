package main

import (
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/net/netutil"

	"github.com/restmcp/restmcp/adapter"
	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/adapter/oauth"
	"github.com/restmcp/restmcp/adapter/session"
	"github.com/restmcp/restmcp/adapter/task"
	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/examples"
	"github.com/restmcp/restmcp/internal/seal"
	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// runServe loads the document, wires metering and the adapter, and serves
// until ctx is cancelled, then shuts down gracefully.
func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	start := time.Now()
	cfg, err := loadConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	logs := newLogBuffer(stderr) // the access log writes a record per request
	defer logs.Close()
	logger := newLogger(logs, cfg.LogLevel, cfg.LogFormat)
	if cfg.Watch && (strings.HasPrefix(cfg.Spec, "http://") || strings.HasPrefix(cfg.Spec, "https://")) { // apis: config.checkAPIs
		return errWatchURL
	}
	logger.Info("starting", "config", cfg)
	// Listen first: a port in use is one clear error before anything
	// claims to serve (requests queue until the document is loaded).
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return listenError(cfg.Addr, err)
	}
	defer ln.Close()

	specLocation, upstream := cfg.Spec, cfg.Upstream
	demoMode := specLocation == "" && len(cfg.APIs) == 0
	if demoMode {
		demo, err := startDemo(logger)
		if err != nil {
			return err
		}
		defer demo.Close()
		specLocation = demo.URL + "/openapi.yaml"
		if upstream == "" {
			upstream = demo.URL
		}
		logger.Info("serving the bundled demo finance API", "demo_upstream", demo.URL)
	}

	sources := apiSources(cfg, specLocation, upstream, logger)
	apis, doc, err := loadAPIs(ctx, cfg, sources, true, logger)
	if err != nil {
		return err // it names the document, and the API
	}
	servedSpec := redactURL(specLocation)
	if apis.several() {
		servedSpec = "apis " + apis.joinNames()
	}
	logReport(logger, fitOutputSchemas(cfg, doc, logger))
	logCredentials(cfg, doc, logger)

	tp, stopTracing, err := setupTracing(ctx, getenv, logger)
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		if err := stopTracing(sctx); err != nil {
			logger.Warn("tracing: spans not exported before shutdown", "error", err)
		}
	}()
	srv, mw, err := newServer(ctx, cfg, doc, logger, ln.Addr().String(), tp)
	if err != nil {
		return err
	}
	// Runs after the HTTP server has drained (defers run last-in first-out):
	// the outage meter replays what it buffered, within the shutdown timeout.
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
		defer cancel()
		mw.close(cctx)
	}()

	ln = netutil.LimitListener(ln, cfg.MaxConnections)
	httpSrv := newHTTPServer(cfg, srv.Handler(), logger)
	httpSrv.RegisterOnShutdown(srv.EndStreams) // session streams would hold Shutdown
	// On an unspecified address (0.0.0.0, ::; a container's), the URL
	// shown is the one a client on this machine reaches.
	mcpURL := "http://" + localHostPort(ln.Addr().String()) + cfg.MCPPath
	logger.Info("ready",
		"mcp_url", mcpURL,
		"oauth_mcp_url", srv.OAuthURL(),
		"tools", len(doc.Tools),
		"spec", servedSpec,
		"startup_ms", time.Since(start).Milliseconds(),
	)
	// The startup lines are out at once, not at the buffer's next flush:
	// scripts and supervisors wait for "ready".
	_ = logs.Flush()
	// The demo upstream takes any key; restmcp does too unless a plans file
	// keeps a registry.
	printBanner(stdout, mcpURL, cfg.PublicURL, srv.OAuthURL(), doc, demoMode, mw.plans.KeyMode != metering.KeyModeRegistry)

	rctx, stopReload := context.WithCancel(ctx)
	defer stopReload()
	startReloads(rctx, cfg, sources, apis, srv, logger)

	return serveUntilDone(ctx, cfg, httpSrv, ln, srv, logger)
}

// logCredentials says where callers' keys go: the hosts that receive
// them, each placement, and a warning when no operation takes one.
func logCredentials(cfg config.Config, doc *openapi.Document, logger *slog.Logger) {
	logger.Info("hosts that receive callers' API keys", "hosts", strings.Join(doc.KeyHosts(), ","))
	placements, noKey := doc.CredentialSummary()
	for _, p := range placements {
		logger.Info("credential placement", "placement", p)
	}
	if noKey && !cfg.PublicMode {
		logger.Warn("callers' API keys reach no upstream operation: the document declares no security; name the placement with default_security (e.g. header:X-Api-Key) or credential_parameters")
	}
}

// startReloads starts one reloader per document (reloadInterval) and
// hands each a SIGHUP, until rctx ends.
func startReloads(rctx context.Context, cfg config.Config, sources []apiSource, apis *apiSet, srv *adapter.Server, logger *slog.Logger) {
	// Reloads: watch (the spec file), reload_interval (the spec URL), and
	// SIGHUP at any time, each document on its own (reloading one API swaps
	// only its tools).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	context.AfterFunc(rctx, func() { signal.Stop(hup) })
	hups := make([]chan os.Signal, len(sources))
	for i, src := range sources {
		interval := reloadInterval(cfg, src.location)
		if interval > 0 {
			logger.Info("reloading the document when it changes", "spec", src.label(), "interval", interval.String())
		}
		apply := func(d *openapi.Document) error {
			return apis.swap(i, d, func(served *openapi.Document) error {
				fitOutputSchemas(cfg, served, logger)
				if err := srv.Reload(served.Tools); err != nil {
					return err
				}
				if !apis.several() {
					if b, jerr := served.JSON(); jerr == nil {
						srv.SetDocument(b)
					}
				}
				return nil
			})
		}
		hups[i] = make(chan os.Signal, 1)
		go newReloader(src, apis.docs[i], apply, logger).run(rctx, interval, hups[i])
	}
	go func() {
		for {
			select {
			case <-rctx.Done():
				return
			case sig := <-hup:
				for _, h := range hups {
					select {
					case h <- sig:
					default: // a reload is already pending there
					}
				}
			}
		}
	}()
}

// serveUntilDone serves ln until ctx ends, then shuts down within
// shutdown_timeout: calls still running then are stopped and refunded.
func serveUntilDone(ctx context.Context, cfg config.Config, httpSrv *http.Server, ln net.Listener, srv *adapter.Server, logger *slog.Logger) error {
	errc := make(chan error, 1)
	go func() { errc <- httpSrv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down", "timeout", cfg.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := httpSrv.Shutdown(sctx); err != nil {
		// Calls still running past the shutdown timeout are stopped and
		// refunded, never left counted but not served.
		logger.Warn("calls still running at the end of the shutdown timeout; stopping and refunding them", "error", err)
		srv.HaltCalls()
		hctx, hcancel := context.WithTimeout(context.Background(), haltGrace)
		defer hcancel()
		if err := srv.Close(hctx); err != nil {
			logger.Warn("usage events or refunds not written before shutdown", "error", err)
		}
		return fmt.Errorf("shutting down: %w", err)
	}
	if err := srv.Close(sctx); err != nil {
		logger.Warn("usage events or refunds not written before shutdown", "error", err)
	}
	return nil
}

// reloadInterval is how often the document at location is checked for
// changes: reload_interval, or the watch interval for a watched file when
// it is 0; 0 (never by time) for a file that is not watched.
func reloadInterval(cfg config.Config, location string) time.Duration {
	interval := cfg.ReloadInterval
	switch isURL := strings.HasPrefix(location, "http"); {
	case cfg.Watch && interval == 0:
		interval = defaultWatchInterval
	case !cfg.Watch && !isURL:
		interval = 0
	}
	return interval
}

// haltGrace is how long the calls HaltCalls stops have to write their
// refunds after the shutdown timeout.
const haltGrace = 5 * time.Second

// newHTTPServer is the HTTP server in front of the handler, with the
// deadlines and limits a public deployment needs (net/http Server fields):
// a client must send its headers within ReadHeaderTimeout and its whole
// request within ReadTimeout, an idle keep-alive connection is closed after
// IdleTimeout, and headers are capped at MaxHeaderBytes. There is no
// WriteTimeout: a response lasts as long as its upstream call, which
// UpstreamTimeout bounds. The listener caps concurrent connections
// (MaxConnections).
func newHTTPServer(cfg config.Config, h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

func loadConfig(args []string, getenv func(string) string, stderr io.Writer) (config.Config, error) {
	cfg, err := config.Load(args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		_ = writeHelp(stderr)
		return cfg, errUsage
	}
	if err != nil {
		return cfg, err
	}
	return cfg, nil
}

// demoServer is the bundled demo upstream on a loopback port.
type demoServer struct {
	URL string
	srv *http.Server
}

func (d *demoServer) Close() { _ = d.srv.Close() }

func startDemo(logger *slog.Logger) (*demoServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("starting the demo upstream: %w", err)
	}
	srv := &http.Server{Handler: examples.NewDemoUpstream(logger), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &demoServer{URL: "http://" + ln.Addr().String(), srv: srv}, nil
}

// newServer wires plans, keys, metering, metrics, the OAuth front and
// tracing (tp; nil: off) into the adapter for doc's tools; listenAddr is
// the address listened on (the OAuth issuer without public_url). The
// caller closes the returned metering when done.
func newServer(ctx context.Context, cfg config.Config, doc *openapi.Document, logger *slog.Logger, listenAddr string, tp trace.TracerProvider) (*adapter.Server, *meteringWiring, error) {
	var reg *prometheus.Registry
	if cfg.Metrics {
		reg = prometheus.NewRegistry()
		for _, c := range []prometheus.Collector{
			collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		} {
			if err := reg.Register(c); err != nil {
				return nil, nil, fmt.Errorf("registering metrics: %w", err)
			}
		}
	}
	mw, err := newMetering(ctx, cfg, logger, reg)
	if err != nil {
		return nil, nil, err
	}
	p, err := newServerParts(ctx, cfg, doc, logger, listenAddr, mw)
	if err != nil {
		mw.close(ctx)
		return nil, nil, err
	}
	var srv *adapter.Server // set below; the OAuth key check calls it
	front, err := newOAuthFront(ctx, cfg, doc, mw, listenAddr, logger, func() *adapter.Server { return srv })
	if err != nil {
		mw.close(ctx)
		return nil, nil, err
	}
	srv, err = adapter.New(adapterOptions(cfg, doc, mw, p, reg, front, tp, logger))
	if err != nil {
		mw.close(ctx)
		return nil, nil, err
	}
	if op := cfg.OAuthVerifyOperation; front != nil && op != "" && !srv.HasTool(op) {
		mw.close(ctx)
		return nil, nil, fmt.Errorf("oauth_verify_operation: no tool %q in %s", op, doc.Title)
	}
	return srv, mw, nil
}

// serverParts are what the adapter's options need beyond the settings:
// the public global plan, the document served at /openapi.json, the
// session and task stores, the identity provider's verifier and the
// audience of its tokens, the jq worker executable.
type serverParts struct {
	global   *metering.Plan
	docJSON  []byte
	sessions session.Store
	tasks    task.Store
	verifier *idp.Verifier
	audience string
	// identityKey is the key bound to an identity (idp_upstream key); nil
	// otherwise.
	identityKey func(ctx context.Context, identity string) (string, error)
	jqWorker    string
}

// newServerParts builds the serverParts of cfg; an error names the
// setting that could not be served.
func newServerParts(ctx context.Context, cfg config.Config, doc *openapi.Document, logger *slog.Logger, listenAddr string, mw *meteringWiring) (serverParts, error) {
	var p serverParts
	var err error
	if cfg.PublicGlobalPlan != "" {
		if p.global = mw.plans.Plan(cfg.PublicGlobalPlan); p.global == nil {
			return p, fmt.Errorf("public_global_plan: no plan %q in %s (plans: %s)", cfg.PublicGlobalPlan, cfg.PlansFile, strings.Join(mw.plans.Names(), ", "))
		}
	}
	if cfg.PublicMode {
		logger.Info("public mode: callers are metered by client address; presented credentials are ignored",
			"public_global_plan", cfg.PublicGlobalPlan, "trusted_proxies", strings.Join(cfg.TrustedProxies, ","))
	}
	if cfg.ServeOpenAPI && len(cfg.APIs) > 0 {
		logger.Warn("serve_openapi serves one document; with several APIs GET /openapi.json is not served")
	} else if cfg.ServeOpenAPI {
		if p.docJSON, err = doc.JSON(); err != nil {
			return p, fmt.Errorf("serve_openapi: encoding the document: %w", err)
		}
	}
	switch cfg.Sessions {
	case config.SessionsMemory:
		p.sessions = session.NewMemoryStore(nil)
	case config.SessionsRedis:
		p.sessions = session.NewRedisStore(mw.redis)
	}
	if p.verifier, p.audience, err = newIdP(ctx, cfg, listenAddr); err != nil {
		return p, err
	}
	if p.verifier != nil {
		logger.Info("identity provider: its access tokens are accepted beside API keys", "issuer", cfg.IdPIssuer, "audience", p.audience,
			"identity_claim", cfg.IdPIdentityClaim, "plan_claim", cfg.IdPPlanClaim, "upstream", cfg.IdPUpstream)
		if cfg.IdPUpstream == "key" {
			if p.identityKey, err = identityKeys(cfg, mw); err != nil {
				return p, err
			}
		}
	}
	switch {
	case cfg.Tasks == config.TasksRedis, cfg.Tasks == config.TasksAuto && mw.redis != nil:
		p.tasks = task.NewRedisStore(mw.redis)
	case cfg.Tasks == config.TasksMemory, cfg.Tasks == config.TasksAuto:
		p.tasks = task.NewMemoryStore(nil)
	}
	if cfg.JQFilter { // jq filters run in processes of this executable
		if p.jqWorker, err = os.Executable(); err != nil {
			return p, fmt.Errorf("jq_filter: finding restmcp's executable to run filters in: %w", err)
		}
	}
	return p, nil
}

// adapterOptions is every setting of cfg as the adapter takes it.
func adapterOptions(cfg config.Config, doc *openapi.Document, mw *meteringWiring, p serverParts, reg *prometheus.Registry, front *oauth.Server, tp trace.TracerProvider, logger *slog.Logger) adapter.Options {
	return adapter.Options{
		Tools:                      doc.Tools,
		Name:                       cmp.Or(cfg.ServerName, "restmcp"),
		Version:                    cmp.Or(cfg.ServerVersion, version),
		PublicURL:                  cfg.PublicURL,
		LLMsTxt:                    cfg.LLMsTxt,
		TimingMeta:                 cfg.TimingMeta,
		Messages:                   adapter.Messages{Unauthorized: cfg.UnauthorizedMessage, RateLimited: cfg.RateLimitedMessage},
		UnknownToolNotFound:        cfg.UnknownToolNotFound,
		UnknownMethodNotFound:      cfg.UnknownMethodNotFound,
		JQFilter:                   cfg.JQFilter,
		JQWorker:                   p.jqWorker,
		JQMaxMemoryBytes:           cfg.JQMaxMemoryBytes,
		AcceptRequestsWithoutID:    cfg.AcceptRequestsWithoutID,
		StreamAcceptStrict:         cfg.StreamAcceptStrict,
		OriginRefusalText:          cfg.OriginRefusalText,
		ResponseMeta:               cfg.ResponseMeta,
		MarkdownPage:               cfg.MarkdownPage,
		Watched:                    cfg.Watch || cfg.ReloadInterval > 0,
		ForwardHeaders:             cfg.ForwardHeaders,
		TextReceipt:                cfg.TextContent == config.TextReceipt,
		MaxConcurrentCalls:         cfg.MaxConcurrentCalls,
		ProtocolVersions:           cfg.ProtocolVersions,
		Resources:                  resourcesOf(cfg.Resources),
		LegacySSEPath:              cfg.LegacySSEPath,
		ErrorStructuredContent:     cfg.ErrorStructuredContent,
		UpstreamErrorsEmpty:        cfg.UpstreamErrors == config.UpstreamErrorsEmptyArray,
		MaxConcurrentCallsPerHost:  cfg.MaxConcurrentCallsPerHost,
		Document:                   p.docJSON,
		Instructions:               doc.Description,
		MCPPath:                    cfg.MCPPath,
		Keys:                       mw.registry,
		Meter:                      mw.meter,
		Counting:                   mw.plans.Counting,
		ListByPlan:                 cfg.ListByPlan,
		Metrics:                    reg,
		Ready:                      mw.ready,
		UpstreamTimeout:            cfg.UpstreamTimeout,
		MeterTimeout:               cfg.MeterTimeout,
		MaxBodyBytes:               cfg.MaxBodyBytes,
		MaxResponseBytes:           int(cfg.MaxResponseBytes),
		BinaryLinkBytes:            cfg.BinaryLinkBytes,
		MaxDownloadBytes:           cfg.MaxDownloadBytes,
		AsyncWait:                  cfg.AsyncWait,
		AsyncPollInterval:          cfg.AsyncPollInterval,
		Tasks:                      p.tasks,
		TaskTTL:                    cfg.TaskTTL,
		MaxTasksPerKey:             cfg.MaxTasksPerKey,
		MaxTasks:                   cfg.MaxTasks,
		LinkSecret:                 linkSecret(cfg),
		AllowedOrigins:             cfg.AllowedOrigins,
		AllowAnonymous:             !cfg.RequireKey,
		ErrorCodes:                 errorCodes(cfg.ErrorCodes),
		PublicMode:                 cfg.PublicMode,
		PublicGlobalPlan:           p.global,
		TrustedProxies:             cfg.TrustedProxies,
		OAuth:                      front,
		IdP:                        p.verifier,
		IdPResource:                p.audience,
		IdPIssuer:                  cfg.IdPIssuer,
		IdPIdentityKey:             p.identityKey,
		Compact:                    cfg.ToolMode == config.ToolModeCompact,
		TracerProvider:             tp,
		Sessions:                   p.sessions,
		SessionIdleTimeout:         cfg.SessionIdleTimeout,
		MaxSessions:                noCap(cfg.MaxSessions),
		MaxSessionsPerAddress:      noCap(cfg.MaxSessionsPerAddress),
		MaxStreamsPerSession:       noCap(cfg.MaxStreamsPerSession),
		MaxLegacyStreamsPerAddress: noCap(cfg.MaxLegacyStreamsPerAddress),
		Logger:                     logger,
	}
}

// printBanner writes the MCP URL, the tool count and ready-to-paste client
// configurations to w, for public_url when it is set.
func printBanner(w io.Writer, mcpURL, publicURL, oauthURL string, doc *openapi.Document, demo, anyKey bool) {
	key := "YOUR_API_KEY"
	if demo {
		key = "demo-key"
	}
	var b strings.Builder
	if publicURL != "" {
		fmt.Fprintf(&b, "\nrestmcp is serving %q (%d tools) at %s\non this machine at %s\n", doc.Title, len(doc.Tools), publicURL, mcpURL)
	} else {
		fmt.Fprintf(&b, "\nrestmcp is serving %q (%d tools) at %s\n", doc.Title, len(doc.Tools), mcpURL)
	}
	if demo && anyKey {
		b.WriteString("(bundled demo API: any non-empty key is accepted)\n")
	}
	if oauthURL != "" {
		fmt.Fprintf(&b, "\nClaude and ChatGPT custom connectors (sign in with your API key): %s\n", oauthURL)
		fmt.Fprintf(&b, "Clients that send the key in a header or as ?api_key=: %s\n", mcpURL)
	}
	b.WriteString("\n")
	_, _ = io.WriteString(w, b.String())
	if publicURL != "" {
		mcpURL = publicURL
	}
	writeClientConfigs(w, mcpURL, oauthURL, doc.Title, key)
	_, _ = io.WriteString(w, "\n")
}

// redactURL drops user info and the query from a URL-shaped location, so
// that credentials in a spec URL never reach the logs.
func redactURL(loc string) string {
	u, err := url.Parse(loc)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return loc
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}

// errorCodes turns the error_codes setting (validated by config) into
// adapter.ErrorCodes; absent names keep the adapter's defaults.
func errorCodes(m map[string]string) adapter.ErrorCodes {
	var c adapter.ErrorCodes
	for name, dst := range map[string]*int{"unauthorized": &c.Unauthorized, "rate_limited": &c.RateLimited, "unavailable": &c.Unavailable} {
		if v, ok := m[name]; ok {
			*dst, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return c
}

// listenError explains a failed listen: an address in use names the
// setting that moves it.
func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("listening on %s: the address is already in use (another process, or another restmcp, has the port); choose another with --addr (RESTMCP_ADDR, addr in the config file)", addr)
	}
	return fmt.Errorf("listening on %s (--addr): %w", addr, err)
}

// resourcesOf is the resources setting as adapter resources, by URI.
func resourcesOf(m map[string]string) []adapter.Resource {
	var rs []adapter.Resource
	for uri, tool := range m {
		rs = append(rs, adapter.Resource{URI: uri, Tool: strings.TrimSpace(tool)})
	}
	slices.SortFunc(rs, func(a, b adapter.Resource) int { return strings.Compare(a.URI, b.URI) })
	return rs
}

// noCap maps a config cap, where 0 means none, to adapter.Options, where 0
// means the default and a negative value none.
func noCap(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// linkSecret signs download links (binary_link_bytes): derived from
// oauth_encryption_key when it is set, so that replicas sharing it read
// each other's links; else nil, a random secret per process.
func linkSecret(cfg config.Config) []byte {
	key, err := cfg.OAuthKey()
	if err != nil || key == nil {
		return nil
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte("restmcp download links"))
	return mac.Sum(nil)
}

// identitySealer seals and opens the keys bound to identities (restmcp
// keys create --identity, idp_upstream key) with oauth_encryption_key;
// the error names what needs it (who) when the key is unset or unusable.
func identitySealer(cfg config.Config, who string) (*seal.Sealer, error) {
	secret, err := cfg.OAuthKey()
	if err == nil && secret == nil {
		err = errors.New("it is not set")
	}
	if err == nil {
		var s *seal.Sealer
		if s, err = seal.New(secret); err == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("%s needs oauth_encryption_key (RESTMCP_OAUTH_ENCRYPTION_KEY), which seals the keys bound to identities: %w", who, err)
}

// identityKeys is idp_upstream key's lookup: the key registry's sealed key
// of an identity (restmcp keys create --identity), opened with
// oauth_encryption_key.
func identityKeys(cfg config.Config, mw *meteringWiring) (func(ctx context.Context, identity string) (string, error), error) {
	sealer, err := identitySealer(cfg, "idp_upstream key")
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, identity string) (string, error) {
		_, sealed, err := mw.registry.IdentityKey(ctx, identity)
		if err != nil {
			return "", err
		}
		return sealer.Open(identity, sealed)
	}, nil
}

// newIdP builds the verifier of resource-server mode (idp_issuer; nil
// when off) and the audience its tokens must carry: idp_audience, or the
// MCP URL (public_url + mcp_path, or the listen address's).
func newIdP(ctx context.Context, cfg config.Config, listenAddr string) (*idp.Verifier, string, error) {
	if cfg.IdPIssuer == "" {
		return nil, "", nil
	}
	audience := cfg.IdPAudience
	if audience == "" {
		if cfg.PublicURL != "" {
			audience = strings.TrimSuffix(cfg.PublicURL, "/") + cfg.MCPPath
		} else {
			audience = "http://" + localHostPort(listenAddr) + cfg.MCPPath
		}
	}
	v, err := idp.New(ctx, idp.Config{
		Issuer: cfg.IdPIssuer, Audience: audience, Algorithms: cfg.IdPAlgorithms,
		IdentityClaim: cfg.IdPIdentityClaim, PlanClaim: cfg.IdPPlanClaim, Upstream: cfg.IdPUpstream,
		ClientID: cfg.IdPClientID, ClientSecret: cfg.IdPClientSecret, ExchangeAudience: cfg.IdPExchangeAudience,
	})
	if err != nil {
		return nil, "", fmt.Errorf("idp_issuer: %w", err)
	}
	return v, audience, nil
}
