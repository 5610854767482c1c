package examples

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// bank is one institution of the bank-research demo.
type bank struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	State       string `json:"state"`
	City        string `json:"city"`
	AssetsUSD   int64  `json:"assets_usd"`
	Established int    `json:"established"`
}

// demoBanks are the bank-research demo's institutions (invented).
var demoBanks = []bank{
	{"b-1001", "Adirondack Savings Bank", "NY", "Saranac Lake", 1_240_000_000, 1891},
	{"b-1002", "Bayou Federal Credit Bank", "LA", "Lafayette", 860_000_000, 1934},
	{"b-1003", "Cascade Mutual Trust", "WA", "Wenatchee", 2_310_000_000, 1907},
	{"b-1004", "Delta Plains National Bank", "MS", "Greenville", 540_000_000, 1921},
	{"b-1005", "Empire Harbor Bank", "NY", "Buffalo", 18_900_000_000, 1852},
	{"b-1006", "Front Range Community Bank", "CO", "Loveland", 730_000_000, 1978},
	{"b-1007", "Granite State Savings", "NH", "Concord", 1_020_000_000, 1868},
	{"b-1008", "Hudson Valley Trust Company", "NY", "Kingston", 3_450_000_000, 1899},
	{"b-1009", "Iron Range State Bank", "MN", "Hibbing", 410_000_000, 1913},
	{"b-1010", "Juniper Canyon Bank", "AZ", "Sedona", 290_000_000, 1999},
	{"b-1011", "Keystone Ledger Bank", "PA", "Altoona", 2_760_000_000, 1883},
	{"b-1012", "Lakeshore Farmers Bank", "MI", "Traverse City", 680_000_000, 1902},
}

// NewBankResearchUpstream is the in-process upstream of
// examples/bank-research: a public research API over demoBanks with cursor
// pagination, errors that carry code, retryable and request_id, and a bank
// ("b-9999") that is down for maintenance (503 with Retry-After).
func NewBankResearchUpstream() http.Handler {
	mux := http.NewServeMux()
	addBankRoutes(mux)
	addBankReferenceRoutes(mux)
	mux.HandleFunc("POST /v1/admin/reindex", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	return mux
}

// bankFail writes the API's error object.
func bankFail(w http.ResponseWriter, r *http.Request, status int, code, msg string, retryable bool) {
	writeJSON(w, status, map[string]any{"code": code, "message": msg, "retryable": retryable, "request_id": "req-" + strings.TrimPrefix(r.URL.Path, "/v1/")})
}

// bankPage writes one page of items, after the request's cursor and up to
// its limit (10), with the next page's cursor.
func bankPage(w http.ResponseWriter, r *http.Request, items []bank) {
	limit := 10
	if v := r.URL.Query().Get("limit"); v != "" {
		limit, _ = strconv.Atoi(v)
	}
	start := 0
	if c := r.URL.Query().Get("cursor"); c != "" {
		n, err := strconv.Atoi(strings.TrimPrefix(c, "c"))
		if err != nil || n < 0 || n > len(items) {
			bankFail(w, r, http.StatusBadRequest, "bad_cursor", "cursor is not one this API issued", false)
			return
		}
		start = n
	}
	end := min(start+limit, len(items))
	var next any
	if end < len(items) {
		next = "c" + strconv.Itoa(end)
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items[start:end], "next_cursor": next})
}

// addBankRoutes serves the banks: the list, one bank, its branches and
// the search.
func addBankRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/banks", func(w http.ResponseWriter, r *http.Request) {
		var items []bank
		for _, b := range demoBanks {
			if s := r.URL.Query().Get("state"); s == "" || b.State == s {
				items = append(items, b)
			}
		}
		bankPage(w, r, append([]bank{}, items...))
	})
	mux.HandleFunc("GET /v1/banks/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if id == "b-9999" {
			w.Header().Set("Retry-After", "30")
			bankFail(w, r, http.StatusServiceUnavailable, "maintenance", "this bank's records are being updated", true)
			return
		}
		for _, b := range demoBanks {
			if b.ID == id {
				writeJSON(w, http.StatusOK, b)
				return
			}
		}
		bankFail(w, r, http.StatusNotFound, "not_found", "no bank "+id, false)
	})
	mux.HandleFunc("GET /v1/banks/{id}/branches", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"items": []map[string]any{{"id": r.PathValue("id") + "-main", "city": "Main office"}}, "next_cursor": nil})
	})
	mux.HandleFunc("GET /v1/search", func(w http.ResponseWriter, r *http.Request) {
		q := strings.ToLower(r.URL.Query().Get("q"))
		var items []bank
		for _, b := range demoBanks {
			if strings.Contains(strings.ToLower(b.Name), q) {
				items = append(items, b)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"items": items})
	})
}

// addBankReferenceRoutes serves the reference data: failures, metrics,
// states, the glossary, rates and holding companies.
func addBankReferenceRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/failures", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"year": r.URL.Query().Get("year"), "failures": []map[string]any{{"name": "Prairie Trust (failed)", "state": "KS", "assets_usd": 120_000_000}}})
	})
	mux.HandleFunc("GET /v1/metrics", func(w http.ResponseWriter, r *http.Request) {
		var assets int64
		for _, b := range demoBanks {
			assets += b.AssetsUSD
		}
		writeJSON(w, http.StatusOK, map[string]any{"banks": len(demoBanks), "total_assets_usd": assets, "as_of": "2025-06-30"})
	})
	mux.HandleFunc("GET /v1/states", func(w http.ResponseWriter, r *http.Request) {
		counts := map[string]int{}
		for _, b := range demoBanks {
			counts[b.State]++
		}
		states := make([]string, 0, len(counts))
		for s := range counts {
			states = append(states, s)
		}
		sort.Strings(states)
		out := []map[string]any{}
		for _, s := range states {
			out = append(out, map[string]any{"state": s, "banks": counts[s]})
		}
		writeJSON(w, http.StatusOK, map[string]any{"states": out})
	})
	mux.HandleFunc("GET /v1/glossary", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"terms": map[string]string{
			"assets_usd": "Total assets in US dollars at the last quarterly report.",
			"failure":    "A bank closed by its regulator.",
		}})
	})
	mux.HandleFunc("GET /v1/rates/summary", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"savings_apy": 0.41, "cd_12m_apy": 1.74, "as_of": "2025-06-30"})
	})
	mux.HandleFunc("GET /v1/holding-companies/{id}", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"id": r.PathValue("id"), "banks": []string{"b-1005", "b-1008"}})
	})
}
