package examples

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func do(t *testing.T, h http.Handler, method, target, key, contentType, body string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if key != "" {
		r.Header.Set(APIKeyHeader, key)
	}
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestDemoUpstream(t *testing.T) {
	const key = "k-123"
	const known = "known symbols: AAPL, MSFT, NVDA, QQQ, SPY"
	tests := []struct {
		name        string
		method      string
		target      string
		key         string
		contentType string
		body        string
		wantStatus  int
		wantBody    string
		wantHeader  map[string]string
	}{
		// status.get: public.
		{
			name: "status without key", method: "GET", target: "/v1/status",
			wantStatus: 200,
			wantBody:   `{"status":"ok","service":"Demo Finance Data API","version":"1.0.0"}`,
		},

		// equities.profile
		{
			name: "profile", method: "GET", target: "/v1/equities/MSFT/profile", key: key,
			wantStatus: 200,
			wantBody:   `{"symbol":"MSFT","name":"Microsoft Corp.","exchange":"NASDAQ","currency":"USD","sector":"Technology","industry":"Software - Infrastructure","country":"US","headquarters":"Redmond, Washington","employees":228000,"marketCap":3650000000000,"description":"Develops operating systems, productivity software and cloud computing services."}`,
			wantHeader: map[string]string{"Content-Type": "application/json"},
		},
		{
			name: "profile lower-case symbol", method: "GET", target: "/v1/equities/nvda/profile", key: key,
			wantStatus: 200,
			wantBody:   `{"symbol":"NVDA","name":"NVIDIA Corp.","exchange":"NASDAQ","currency":"USD","sector":"Technology","industry":"Semiconductors","country":"US","headquarters":"Santa Clara, California","employees":36000,"marketCap":3860000000000,"description":"Designs graphics processors and accelerated computing platforms for gaming, data centres and AI."}`,
		},
		{
			name: "profile of an ETF", method: "GET", target: "/v1/equities/SPY/profile", key: key,
			wantStatus: 404,
			wantBody:   `{"code":"not_found","message":"SPY is an ETF, not a company: see /v1/etfs/SPY/holdings for its holdings"}`,
		},
		{
			name: "profile unknown", method: "GET", target: "/v1/equities/ZZZZ/profile", key: key,
			wantStatus: 404,
			wantBody:   `{"code":"not_found","message":"unknown symbol \"ZZZZ\"; ` + known + `"}`,
		},
		{
			name: "profile malformed symbol", method: "GET", target: "/v1/equities/%24AAPL/profile", key: key,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"invalid symbol \"$AAPL\": use a ticker of 1 to 10 letters, digits or dots, starting with a letter"}`,
		},
		{
			name: "profile without key", method: "GET", target: "/v1/equities/AAPL/profile",
			wantStatus: 401,
			wantBody:   `{"code":"unauthorized","message":"missing API key: send it in the x-api-key header"}`,
		},
		{
			name: "profile with blank key", method: "GET", target: "/v1/equities/AAPL/profile", key: "   ",
			wantStatus: 401,
			wantBody:   `{"code":"unauthorized","message":"missing API key: send it in the x-api-key header"}`,
		},

		// equities.quote
		{
			name: "quote of a stock", method: "GET", target: "/v1/equities/NVDA/quote", key: key,
			wantStatus: 200,
			wantBody:   `{"symbol":"NVDA","price":154.31,"change":-3.44,"changePercent":-2.18,"open":157.5,"high":158,"low":153.9,"previousClose":157.75,"volume":261004500,"currency":"USD","asOf":"2025-06-30T20:00:00Z"}`,
		},
		{
			name: "quote of an ETF", method: "GET", target: "/v1/equities/qqq/quote", key: key,
			wantStatus: 200,
			wantBody:   `{"symbol":"QQQ","price":551.64,"change":3.55,"changePercent":0.65,"open":549,"high":552.3,"low":547.9,"previousClose":548.09,"volume":39820000,"currency":"USD","asOf":"2025-06-30T20:00:00Z"}`,
		},
		{
			name: "quote unknown", method: "GET", target: "/v1/equities/GME/quote", key: key,
			wantStatus: 404,
			wantBody:   `{"code":"not_found","message":"unknown symbol \"GME\"; ` + known + `"}`,
		},
		{
			name: "quote without key", method: "GET", target: "/v1/equities/AAPL/quote",
			wantStatus: 401,
			wantBody:   `{"code":"unauthorized","message":"missing API key: send it in the x-api-key header"}`,
		},

		// etfs.topHoldings
		{
			name: "holdings with limit", method: "GET", target: "/v1/etfs/SPY/holdings?limit=3", key: key,
			wantStatus: 200,
			wantBody:   `{"symbol":"SPY","name":"SPDR S&P 500 ETF Trust","asOf":"2025-06-30","totalHoldings":503,"holdings":[{"rank":1,"symbol":"MSFT","name":"Microsoft Corp.","weightPercent":7.04},{"rank":2,"symbol":"NVDA","name":"NVIDIA Corp.","weightPercent":6.95},{"rank":3,"symbol":"AAPL","name":"Apple Inc.","weightPercent":5.83}]}`,
		},
		{
			name: "holdings default limit 10", method: "GET", target: "/v1/etfs/SPY/holdings", key: key,
			wantStatus: 200,
			wantBody:   `{"symbol":"SPY","name":"SPDR S&P 500 ETF Trust","asOf":"2025-06-30","totalHoldings":503,"holdings":[{"rank":1,"symbol":"MSFT","name":"Microsoft Corp.","weightPercent":7.04},{"rank":2,"symbol":"NVDA","name":"NVIDIA Corp.","weightPercent":6.95},{"rank":3,"symbol":"AAPL","name":"Apple Inc.","weightPercent":5.83},{"rank":4,"symbol":"AMZN","name":"Amazon.com Inc.","weightPercent":3.91},{"rank":5,"symbol":"META","name":"Meta Platforms Inc.","weightPercent":3.06},{"rank":6,"symbol":"AVGO","name":"Broadcom Inc.","weightPercent":2.44},{"rank":7,"symbol":"GOOGL","name":"Alphabet Inc. Class A","weightPercent":1.98},{"rank":8,"symbol":"BRK.B","name":"Berkshire Hathaway Inc. Class B","weightPercent":1.72},{"rank":9,"symbol":"TSLA","name":"Tesla Inc.","weightPercent":1.67},{"rank":10,"symbol":"GOOG","name":"Alphabet Inc. Class C","weightPercent":1.61}]}`,
		},
		{
			name: "holdings limit above the fund size", method: "GET", target: "/v1/etfs/qqq/holdings?limit=50", key: key,
			wantStatus: 200,
			wantBody:   `{"symbol":"QQQ","name":"Invesco QQQ Trust, Series 1","asOf":"2025-06-30","totalHoldings":101,"holdings":[{"rank":1,"symbol":"NVDA","name":"NVIDIA Corp.","weightPercent":9.21},{"rank":2,"symbol":"MSFT","name":"Microsoft Corp.","weightPercent":8.87},{"rank":3,"symbol":"AAPL","name":"Apple Inc.","weightPercent":7.35},{"rank":4,"symbol":"AMZN","name":"Amazon.com Inc.","weightPercent":5.62},{"rank":5,"symbol":"AVGO","name":"Broadcom Inc.","weightPercent":5.01},{"rank":6,"symbol":"META","name":"Meta Platforms Inc.","weightPercent":3.74},{"rank":7,"symbol":"NFLX","name":"Netflix Inc.","weightPercent":3.12},{"rank":8,"symbol":"TSLA","name":"Tesla Inc.","weightPercent":2.88},{"rank":9,"symbol":"COST","name":"Costco Wholesale Corp.","weightPercent":2.61},{"rank":10,"symbol":"GOOGL","name":"Alphabet Inc. Class A","weightPercent":2.47},{"rank":11,"symbol":"GOOG","name":"Alphabet Inc. Class C","weightPercent":2.36}]}`,
		},
		{
			name: "holdings limit 0", method: "GET", target: "/v1/etfs/SPY/holdings?limit=0", key: key,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"limit must be an integer from 1 to 50; got \"0\""}`,
		},
		{
			name: "holdings limit 51", method: "GET", target: "/v1/etfs/SPY/holdings?limit=51", key: key,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"limit must be an integer from 1 to 50; got \"51\""}`,
		},
		{
			name: "holdings limit not an integer", method: "GET", target: "/v1/etfs/SPY/holdings?limit=2.5", key: key,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"limit must be an integer from 1 to 50; got \"2.5\""}`,
		},
		{
			name: "holdings of a stock", method: "GET", target: "/v1/etfs/AAPL/holdings", key: key,
			wantStatus: 404,
			wantBody:   `{"code":"not_found","message":"AAPL is not an ETF; known ETFs: QQQ, SPY"}`,
		},
		{
			name: "holdings unknown", method: "GET", target: "/v1/etfs/VOO/holdings", key: key,
			wantStatus: 404,
			wantBody:   `{"code":"not_found","message":"unknown symbol \"VOO\"; ` + known + `"}`,
		},
		{
			name: "holdings without key", method: "GET", target: "/v1/etfs/SPY/holdings",
			wantStatus: 401,
			wantBody:   `{"code":"unauthorized","message":"missing API key: send it in the x-api-key header"}`,
		},

		// fx.rates
		{
			name: "rates default base, all symbols", method: "GET", target: "/v1/fx/rates", key: key,
			wantStatus: 200,
			wantBody:   `{"base":"USD","date":"2025-06-30","rates":{"CAD":1.3675,"CHF":0.8961,"EUR":0.9215,"GBP":0.7872,"JPY":157.42}}`,
		},
		{
			name: "rates form explode=false", method: "GET", target: "/v1/fx/rates?base=GBP&symbols=JPY,EUR", key: key,
			wantStatus: 200,
			wantBody:   `{"base":"GBP","date":"2025-06-30","rates":{"EUR":1.1706,"JPY":199.975}}`,
		},
		{
			name: "rates repeated symbols, lower case", method: "GET", target: "/v1/fx/rates?base=eur&symbols=usd&symbols=chf", key: key,
			wantStatus: 200,
			wantBody:   `{"base":"EUR","date":"2025-06-30","rates":{"CHF":0.972436,"USD":1.08519}}`,
		},
		{
			name: "rates unknown base", method: "GET", target: "/v1/fx/rates?base=BTC", key: key,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"unsupported base currency \"BTC\"; supported: CAD, CHF, EUR, GBP, JPY, USD"}`,
		},
		{
			name: "rates unknown symbols", method: "GET", target: "/v1/fx/rates?symbols=EUR,XYZ,ABC", key: key,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"unsupported currency \"XYZ\", \"ABC\" in symbols; supported: CAD, CHF, EUR, GBP, JPY, USD"}`,
		},
		{
			name: "rates without key", method: "GET", target: "/v1/fx/rates",
			wantStatus: 401,
			wantBody:   `{"code":"unauthorized","message":"missing API key: send it in the x-api-key header"}`,
		},

		// watchlists.create
		{
			name: "create watchlist", method: "POST", target: "/v1/watchlists", key: key, contentType: "application/json",
			body:       `{"name":"Tech leaders","symbols":["AAPL","msft","NVDA","aapl"]}`,
			wantStatus: 201,
			wantBody:   `{"id":"wl_c0cb1c7b3df0","name":"Tech leaders","symbols":["AAPL","MSFT","NVDA"],"createdAt":"2025-06-30T20:00:00Z"}`,
			wantHeader: map[string]string{"Location": "/v1/watchlists/wl_c0cb1c7b3df0", "Content-Type": "application/json"},
		},
		{
			name: "create watchlist, charset and no Content-Type both fine", method: "POST", target: "/v1/watchlists", key: key, contentType: "application/json; charset=utf-8",
			body:       `{"name":"Funds","symbols":["SPY","QQQ"]}`,
			wantStatus: 201,
			wantBody:   `{"id":"wl_8f85601caf6a","name":"Funds","symbols":["SPY","QQQ"],"createdAt":"2025-06-30T20:00:00Z"}`,
		},
		{
			name: "create watchlist, every problem", method: "POST", target: "/v1/watchlists", key: key, contentType: "application/json",
			body:       `{"name":" ","symbols":["AAPL","ZZ","bad"]}`,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"name must not be empty; unknown symbols \"ZZ\", \"bad\"; ` + known + `"}`,
		},
		{
			name: "create watchlist, missing fields", method: "POST", target: "/v1/watchlists", key: key, contentType: "application/json",
			body:       `{}`,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"name is required; symbols is required"}`,
		},
		{
			name: "create watchlist, empty symbols", method: "POST", target: "/v1/watchlists", key: key,
			body:       `{"name":"x","symbols":[]}`,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"symbols must list at least one symbol"}`,
		},
		{
			name: "create watchlist, name too long", method: "POST", target: "/v1/watchlists", key: key,
			body:       `{"name":"` + strings.Repeat("é", 101) + `","symbols":["AAPL"]}`,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"name must be at most 100 characters; got 101"}`,
		},
		{
			name: "create watchlist, wrong type", method: "POST", target: "/v1/watchlists", key: key,
			body:       `{"name":"x","symbols":"AAPL"}`,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"symbols must be an array"}`,
		},
		{
			name: "create watchlist, unknown field", method: "POST", target: "/v1/watchlists", key: key,
			body:       `{"name":"x","symbols":["AAPL"],"color":"red"}`,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"unknown field \"color\"; the body takes name and symbols"}`,
		},
		{
			name: "create watchlist, array body", method: "POST", target: "/v1/watchlists", key: key,
			body:       `["AAPL"]`,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"the body must be a JSON object"}`,
		},
		{
			name: "create watchlist, empty body", method: "POST", target: "/v1/watchlists", key: key, contentType: "application/json",
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"the body is empty; send a JSON object"}`,
		},
		{
			name: "create watchlist, two objects", method: "POST", target: "/v1/watchlists", key: key,
			body:       `{"name":"x","symbols":["AAPL"]}{}`,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"the body must hold a single JSON object"}`,
		},
		{
			name: "create watchlist, not JSON", method: "POST", target: "/v1/watchlists", key: key, contentType: "text/plain",
			body:       `name=x`,
			wantStatus: 400,
			wantBody:   `{"code":"bad_request","message":"the body must be JSON (Content-Type: application/json); got Content-Type \"text/plain\""}`,
		},
		{
			name: "create watchlist without key", method: "POST", target: "/v1/watchlists", contentType: "application/json",
			body:       `{"name":"x","symbols":["AAPL"]}`,
			wantStatus: 401,
			wantBody:   `{"code":"unauthorized","message":"missing API key: send it in the x-api-key header"}`,
		},

		// Routing.
		{
			name: "wrong method", method: "DELETE", target: "/v1/fx/rates", key: key,
			wantStatus: 405,
			wantBody:   `{"code":"method_not_allowed","message":"DELETE is not supported on /v1/fx/rates; use GET"}`,
			wantHeader: map[string]string{"Allow": "GET, HEAD"},
		},
		{
			name: "GET on a POST route", method: "GET", target: "/v1/watchlists", key: key,
			wantStatus: 405,
			wantBody:   `{"code":"method_not_allowed","message":"GET is not supported on /v1/watchlists; use POST"}`,
			wantHeader: map[string]string{"Allow": "POST"},
		},
		{
			name: "unknown route", method: "GET", target: "/v1/bonds/US10Y/quote", key: key,
			wantStatus: 404,
			wantBody:   `{"code":"not_found","message":"no such endpoint: GET /v1/bonds/US10Y/quote; the API is described at /openapi.yaml"}`,
		},
		{
			name: "route without the base path", method: "GET", target: "/equities/AAPL/quote", key: key,
			wantStatus: 404,
			wantBody:   `{"code":"not_found","message":"no such endpoint: GET /equities/AAPL/quote; the API is described at /openapi.yaml"}`,
		},
	}
	h := NewDemoUpstream(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := do(t, h, tt.method, tt.target, tt.key, tt.contentType, tt.body)
			got := readBody(t, resp)
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("%s %s: status %d, want %d (body %s)", tt.method, tt.target, resp.StatusCode, tt.wantStatus, got)
			}
			if want := tt.wantBody + "\n"; got != want {
				t.Errorf("%s %s body:\n got %s\nwant %s", tt.method, tt.target, got, want)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s %s: Content-Type %q, want application/json", tt.method, tt.target, ct)
			}
			for k, want := range tt.wantHeader {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("%s %s: header %s = %q, want %q", tt.method, tt.target, k, got, want)
				}
			}
		})
	}
}

func TestDemoUpstreamServesSpec(t *testing.T) {
	h := NewDemoUpstream(nil)
	resp := do(t, h, "GET", "/openapi.yaml", "", "", "")
	body := readBody(t, resp)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/yaml" {
		t.Errorf("Content-Type %q, want application/yaml", ct)
	}
	if body != string(DemoSpec()) {
		t.Errorf("GET /openapi.yaml differs from DemoSpec()")
	}

	resp = do(t, h, "HEAD", "/openapi.yaml", "", "", "")
	if resp.StatusCode != 200 {
		t.Errorf("HEAD /openapi.yaml: status %d, want 200", resp.StatusCode)
	}
	resp.Body.Close()
}

func TestDemoSpecIsACopy(t *testing.T) {
	a := DemoSpec()
	a[0] = 'X'
	if b := DemoSpec(); b[0] == 'X' {
		t.Fatal("DemoSpec() returned shared memory")
	}
}

func TestDemoUpstreamDeterministic(t *testing.T) {
	// Two handlers, same requests, same bytes.
	var out [2]string
	for i := range out {
		h := NewDemoUpstream(nil)
		for _, target := range []string{"/v1/fx/rates", "/v1/fx/rates?base=JPY", "/v1/etfs/QQQ/holdings?limit=50"} {
			out[i] += readBody(t, do(t, h, "GET", target, "k", "", ""))
		}
	}
	if out[0] != out[1] {
		t.Errorf("responses differ between handlers:\n%s\n%s", out[0], out[1])
	}
}

func TestDemoUpstreamLogsNoKey(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := NewDemoUpstream(logger)
	readBody(t, do(t, h, "GET", "/v1/equities/AAPL/quote?x=1", "k-123", "", ""))
	out := buf.String()
	if strings.Contains(out, "k-123") {
		t.Errorf("log leaks the key: %s", out)
	}
	for _, want := range []string{`msg="demo upstream request"`, "method=GET", "path=/v1/equities/AAPL/quote", "status=200"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s: %s", want, out)
		}
	}
}

func TestDemoUpstreamBodyLimit(t *testing.T) {
	h := NewDemoUpstream(nil)
	big := `{"name":"` + strings.Repeat("x", maxWatchlistBody) + `","symbols":["AAPL"]}`
	resp := do(t, h, "POST", "/v1/watchlists", "k", "application/json", big)
	got := readBody(t, resp)
	want := `{"code":"bad_request","message":"the body is larger than 65536 bytes"}` + "\n"
	if resp.StatusCode != 400 || got != want {
		t.Errorf("got %d %s, want 400 %s", resp.StatusCode, got, want)
	}
}
