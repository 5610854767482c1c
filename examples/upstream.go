package examples

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of the demo API, as documented in the spec.
const (
	defaultHoldingsLimit = 10
	maxHoldingsLimit     = 50
	maxWatchlistName     = 100 // characters
	maxWatchlistSymbols  = 50
	maxWatchlistBody     = 64 << 10 // bytes
)

// APIKeyHeader is the header the demo API reads the caller's key from.
const APIKeyHeader = "x-api-key"

// NewDemoUpstream returns the demo finance API as an http.Handler:
//
//   - GET /openapi.yaml serves [DemoSpec] (no key needed);
//   - GET /v1/status needs no key;
//   - every other /v1 route of the spec needs a non-empty x-api-key header
//     (any value; 401 otherwise) and answers from a fixed table: the stocks
//     AAPL, MSFT, NVDA, the ETFs SPY, QQQ and the currencies USD, EUR, GBP,
//     JPY, CHF, CAD.
//
// Errors are JSON objects {"code":…,"message":…}: 400 for invalid
// parameters or bodies, 401 without a key, 404 for unknown symbols and
// routes, 405 (with Allow) for a known path with another method. Nothing is
// stored: POST /v1/watchlists echoes the list with an id derived from it.
//
// Each request is logged at debug level (method, path, status; never the
// key). A nil logger discards the log.
func NewDemoUpstream(logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	d := &demo{
		market:        newMarket(),
		symbolPattern: regexp.MustCompile(`^[A-Za-z][A-Za-z0-9.]{0,9}$`),
	}
	mux := http.NewServeMux()
	route := func(method, path string, h http.HandlerFunc) {
		mux.HandleFunc(method+" "+path, h)
		allow := method
		if method == http.MethodGet {
			allow = "GET, HEAD"
		}
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed",
				fmt.Sprintf("%s is not supported on %s; use %s", r.Method, r.URL.Path, method))
		})
	}
	route(http.MethodGet, DemoSpecPath, d.spec)
	route(http.MethodGet, DemoBasePath+"/status", d.status)
	route(http.MethodGet, DemoBasePath+"/equities/{symbol}/profile", requireKey(d.profile))
	route(http.MethodGet, DemoBasePath+"/equities/{symbol}/quote", requireKey(d.quote))
	route(http.MethodGet, DemoBasePath+"/etfs/{symbol}/holdings", requireKey(d.holdings))
	route(http.MethodGet, DemoBasePath+"/fx/rates", requireKey(d.fxRates))
	route(http.MethodPost, DemoBasePath+"/watchlists", requireKey(d.createWatchlist))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found",
			fmt.Sprintf("no such endpoint: %s %s; the API is described at %s", r.Method, r.URL.Path, DemoSpecPath))
	})
	return logRequests(logger, mux)
}

type demo struct {
	market *market
	// symbolPattern is the spec's pattern for the symbol path parameter.
	symbolPattern *regexp.Regexp
}

func (d *demo) spec(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(demoSpec)
}

func (d *demo) status(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Status  string `json:"status"`
		Service string `json:"service"`
		Version string `json:"version"`
	}{"ok", "Demo Finance Data API", "1.0.0"})
}

func (d *demo) profile(w http.ResponseWriter, r *http.Request) {
	sym, ok := d.symbolParam(w, r)
	if !ok {
		return
	}
	c, found := d.market.companies[sym]
	switch {
	case found:
		writeJSON(w, http.StatusOK, c)
	case d.isFund(sym):
		writeError(w, http.StatusNotFound, "not_found",
			fmt.Sprintf("%s is an ETF, not a company: see %s/etfs/%s/holdings for its holdings", sym, DemoBasePath, sym))
	default:
		d.unknownSymbol(w, sym)
	}
}

func (d *demo) quote(w http.ResponseWriter, r *http.Request) {
	sym, ok := d.symbolParam(w, r)
	if !ok {
		return
	}
	q, found := d.market.quotes[sym]
	if !found {
		d.unknownSymbol(w, sym)
		return
	}
	writeJSON(w, http.StatusOK, q)
}

func (d *demo) holdings(w http.ResponseWriter, r *http.Request) {
	sym, ok := d.symbolParam(w, r)
	if !ok {
		return
	}
	limit := defaultHoldingsLimit
	if vs, present := r.URL.Query()["limit"]; present {
		n, err := strconv.Atoi(vs[0])
		if err != nil || n < 1 || n > maxHoldingsLimit {
			writeError(w, http.StatusBadRequest, "bad_request",
				fmt.Sprintf("limit must be an integer from 1 to %d; got %q", maxHoldingsLimit, vs[0]))
			return
		}
		limit = n
	}
	f, found := d.market.funds[sym]
	switch {
	case found:
	case d.market.quotes[sym].Symbol != "":
		writeError(w, http.StatusNotFound, "not_found",
			fmt.Sprintf("%s is not an ETF; known ETFs: %s", sym, strings.Join(slices.Sorted(maps.Keys(d.market.funds)), ", ")))
		return
	default:
		d.unknownSymbol(w, sym)
		return
	}
	hs := f.Holdings[:min(limit, len(f.Holdings))]
	writeJSON(w, http.StatusOK, struct {
		Symbol        string    `json:"symbol"`
		Name          string    `json:"name"`
		AsOf          string    `json:"asOf"`
		TotalHoldings int       `json:"totalHoldings"`
		Holdings      []holding `json:"holdings"`
	}{f.Symbol, f.Name, demoDate, f.TotalHoldings, hs})
}

func (d *demo) fxRates(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	base := "USD"
	if v := strings.TrimSpace(q.Get("base")); v != "" {
		base = strings.ToUpper(v)
	}
	baseRate, ok := d.market.usdRates[base]
	if !ok {
		writeError(w, http.StatusBadRequest, "bad_request",
			fmt.Sprintf("unsupported base currency %q; supported: %s", base, strings.Join(d.market.currencies(), ", ")))
		return
	}
	// symbols is form/explode=false (EUR,GBP); repeated symbols= are
	// accepted too.
	var want []string
	for _, v := range q["symbols"] {
		for _, s := range strings.Split(v, ",") {
			if s = strings.ToUpper(strings.TrimSpace(s)); s != "" {
				want = append(want, s)
			}
		}
	}
	var unknown []string
	for _, s := range want {
		if _, ok := d.market.usdRates[s]; !ok {
			unknown = append(unknown, strconv.Quote(s))
		}
	}
	if len(unknown) > 0 {
		writeError(w, http.StatusBadRequest, "bad_request",
			fmt.Sprintf("unsupported currency %s in symbols; supported: %s", strings.Join(unknown, ", "), strings.Join(d.market.currencies(), ", ")))
		return
	}
	if len(want) == 0 {
		for _, s := range d.market.currencies() {
			if s != base {
				want = append(want, s)
			}
		}
	}
	rates := make(map[string]float64, len(want))
	for _, s := range want {
		rates[s] = round6(d.market.usdRates[s] / baseRate)
	}
	writeJSON(w, http.StatusOK, struct {
		Base  string             `json:"base"`
		Date  string             `json:"date"`
		Rates map[string]float64 `json:"rates"`
	}{base, demoDate, rates})
}

// round6 rounds to six significant digits, so cross rates print cleanly.
func round6(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return r
}

type watchlistInput struct {
	Name    *string  `json:"name"`
	Symbols []string `json:"symbols"`
}

func (d *demo) createWatchlist(w http.ResponseWriter, r *http.Request) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			writeError(w, http.StatusBadRequest, "bad_request",
				fmt.Sprintf("the body must be JSON (Content-Type: application/json); got Content-Type %q", ct))
			return
		}
	}
	var in watchlistInput
	if msg := decodeJSONObject(http.MaxBytesReader(w, r.Body, maxWatchlistBody), &in); msg != "" {
		writeError(w, http.StatusBadRequest, "bad_request", msg)
		return
	}
	var problems []string
	name := ""
	if in.Name != nil {
		name = strings.TrimSpace(*in.Name)
	}
	switch n := utf8.RuneCountInString(name); {
	case in.Name == nil:
		problems = append(problems, "name is required")
	case n == 0:
		problems = append(problems, "name must not be empty")
	case n > maxWatchlistName:
		problems = append(problems, fmt.Sprintf("name must be at most %d characters; got %d", maxWatchlistName, n))
	}
	var symbols, unknown []string
	seen := map[string]bool{}
	for _, s := range in.Symbols {
		u := strings.ToUpper(strings.TrimSpace(s))
		if _, ok := d.market.quotes[u]; !ok {
			unknown = append(unknown, strconv.Quote(s))
			continue
		}
		if !seen[u] {
			seen[u] = true
			symbols = append(symbols, u)
		}
	}
	switch {
	case in.Symbols == nil:
		problems = append(problems, "symbols is required")
	case len(in.Symbols) == 0:
		problems = append(problems, "symbols must list at least one symbol")
	case len(in.Symbols) > maxWatchlistSymbols:
		problems = append(problems, fmt.Sprintf("symbols must list at most %d symbols; got %d", maxWatchlistSymbols, len(in.Symbols)))
	case len(unknown) > 0:
		problems = append(problems, fmt.Sprintf("unknown symbols %s; known symbols: %s", strings.Join(unknown, ", "), strings.Join(d.market.symbols(), ", ")))
	}
	if len(problems) > 0 {
		writeError(w, http.StatusBadRequest, "bad_request", strings.Join(problems, "; "))
		return
	}
	id := watchlistID(name, symbols)
	w.Header().Set("Location", DemoBasePath+"/watchlists/"+id)
	writeJSON(w, http.StatusCreated, struct {
		ID        string   `json:"id"`
		Name      string   `json:"name"`
		Symbols   []string `json:"symbols"`
		CreatedAt string   `json:"createdAt"`
	}{id, name, symbols, demoTime})
}

// watchlistID derives the id from the content, so the demo needs no storage
// and answers the same request the same way.
func watchlistID(name string, symbols []string) string {
	sum := sha256.Sum256([]byte(name + "\n" + strings.Join(symbols, ",")))
	return "wl_" + hex.EncodeToString(sum[:6])
}

// decodeJSONObject decodes exactly one JSON object with only known fields
// into v. It returns a message for the client, or "" on success.
func decodeJSONObject(body io.Reader, v any) string {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		var ute *json.UnmarshalTypeError
		switch {
		case errors.Is(err, io.EOF):
			return "the body is empty; send a JSON object"
		case errors.As(err, &mbe):
			return fmt.Sprintf("the body is larger than %d bytes", mbe.Limit)
		case errors.As(err, &ute) && ute.Field == "":
			return "the body must be a JSON object"
		case errors.As(err, &ute):
			return fmt.Sprintf("%s must be %s", ute.Field, jsonTypeName(ute.Type.Kind().String()))
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			// encoding/json has no typed error for this one.
			return strings.TrimPrefix(err.Error(), "json: ") + "; the body takes name and symbols"
		default:
			return "the body is not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return "the body must hold a single JSON object"
	}
	return ""
}

func jsonTypeName(kind string) string {
	switch kind {
	case "slice":
		return "an array"
	case "ptr", "string":
		return "a string"
	}
	return "a " + kind
}

// symbolParam reads the {symbol} path value, upper-cased. It answers 400
// itself and returns false when the value is malformed.
func (d *demo) symbolParam(w http.ResponseWriter, r *http.Request) (string, bool) {
	s := r.PathValue("symbol")
	if !d.symbolPattern.MatchString(s) {
		writeError(w, http.StatusBadRequest, "bad_request",
			fmt.Sprintf("invalid symbol %q: use a ticker of 1 to 10 letters, digits or dots, starting with a letter", s))
		return "", false
	}
	return strings.ToUpper(s), true
}

func (d *demo) isFund(sym string) bool {
	_, ok := d.market.funds[sym]
	return ok
}

func (d *demo) unknownSymbol(w http.ResponseWriter, sym string) {
	writeError(w, http.StatusNotFound, "not_found",
		fmt.Sprintf("unknown symbol %q; known symbols: %s", sym, strings.Join(d.market.symbols(), ", ")))
}

// requireKey answers 401 unless the request carries a non-empty x-api-key.
// Any value is accepted: the demo has no accounts.
func requireKey(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if strings.TrimSpace(r.Header.Get(APIKeyHeader)) == "" {
			writeError(w, http.StatusUnauthorized, "unauthorized",
				"missing API key: send it in the "+APIKeyHeader+" header")
			return
		}
		next(w, r)
	}
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{code, msg})
}

// writeJSON writes v as JSON followed by a newline, without HTML escaping
// ("S&P", not "S\u0026P"): tool results show the body verbatim.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		http.Error(w, "encoding response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// logRequests logs each request at debug level, without headers (the key
// is in one) or query.
func logRequests(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		logger.LogAttrs(r.Context(), slog.LevelDebug, "demo upstream request",
			slog.String("method", r.Method),
			slog.String("path", r.URL.Path),
			slog.Int("status", sw.status),
			slog.Int64("duration_ms", time.Since(start).Milliseconds()),
		)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
