package examples

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// checkingAccount is one business checking account of the
// business-checking demo (invented).
type checkingAccount struct {
	ID              string   `json:"id"`
	Bank            string   `json:"bank"`
	Name            string   `json:"name"`
	MonthlyFee      float64  `json:"monthly_fee"`
	OverdraftFee    float64  `json:"overdraft_fee"`
	WireFee         float64  `json:"wire_fee"`
	OpeningDeposit  float64  `json:"opening_deposit"`
	EntityTypes     []string `json:"entity_types"`
	States          []string `json:"states"`
	Insurance       string   `json:"insurance_type"`
	APY             float64  `json:"apy"`
	OnlineOpening   bool     `json:"online_opening"`
	FreeATM         bool     `json:"free_atm"`
	CashDeposits    bool     `json:"cash_deposits"`
	MobileDeposit   bool     `json:"mobile_deposit"`
	Accounting      bool     `json:"accounting_integration"`
	NoMinimumBalace bool     `json:"no_minimum_balance"`
}

var demoAccounts = []checkingAccount{
	{"acc-101", "Empire Harbor Bank", "Harbor Business Essentials", 0, 30, 25, 100, []string{"llc", "sole_proprietor", "corporation"}, []string{"NY", "NJ", "CT"}, "fdic", 0.10, true, true, true, true, true, true},
	{"acc-102", "Cascade Mutual Trust", "Cascade Commerce Plus", 15, 35, 20, 500, []string{"llc", "corporation", "partnership"}, []string{"WA", "OR"}, "fdic", 0.85, true, false, true, true, true, false},
	{"acc-103", "Front Range Community Bank", "Small Business Free", 0, 25, 30, 50, []string{"llc", "sole_proprietor", "nonprofit"}, []string{"CO"}, "fdic", 0, false, true, true, false, false, true},
	{"acc-104", "Keystone Ledger Bank", "Ledger Analyzed Checking", 25, 36, 15, 1000, []string{"llc", "corporation", "partnership", "nonprofit"}, []string{"PA", "NY", "OH"}, "extended", 1.25, true, true, false, true, true, false},
	{"acc-105", "Iron Range Credit Union", "Member Business Checking", 5, 20, 18, 25, []string{"llc", "sole_proprietor"}, []string{"MN", "WI"}, "ncua", 0.25, true, false, true, true, false, true},
}

// NewBusinessCheckingUpstream is the in-process upstream of
// examples/business-checking: a registry of business checking accounts
// searched with compound filters (every filter given must hold; list
// filters match as "all of"). It needs a bearer token, any non-empty one.
func NewBusinessCheckingUpstream() http.Handler {
	mux := http.NewServeMux()
	authed := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "bearer token required"})
				return
			}
			h(w, r)
		}
	}
	mux.HandleFunc("GET /v2/accounts/search", authed(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		num := func(k string) (float64, bool) {
			v, err := strconv.ParseFloat(q.Get(k), 64)
			return v, err == nil
		}
		flag := func(k string) (bool, bool) {
			v, err := strconv.ParseBool(q.Get(k))
			return v, err == nil
		}
		all := func(have []string, k string) bool {
			for _, want := range strings.Split(q.Get(k), ",") {
				if want != "" && !slices.Contains(have, want) {
					return false
				}
			}
			return true
		}
		var out []checkingAccount
		for _, a := range demoAccounts {
			ok := all(a.EntityTypes, "entity_types") && all(a.States, "states")
			for k, v := range map[string]float64{"max_monthly_fee": a.MonthlyFee, "max_overdraft_fee": a.OverdraftFee, "max_wire_fee": a.WireFee, "max_opening_deposit": a.OpeningDeposit} {
				if m, set := num(k); set && v > m {
					ok = false
				}
			}
			if m, set := num("min_apy"); set && a.APY < m {
				ok = false
			}
			if it := q.Get("insurance_type"); it != "" && a.Insurance != it {
				ok = false
			}
			for k, v := range map[string]bool{"online_opening": a.OnlineOpening, "free_atm": a.FreeATM, "cash_deposits": a.CashDeposits, "mobile_deposit": a.MobileDeposit, "accounting_integration": a.Accounting, "no_minimum_balance": a.NoMinimumBalace} {
				if want, set := flag(k); set && want && !v {
					ok = false
				}
			}
			if ok {
				out = append(out, a)
			}
		}
		if out == nil {
			out = []checkingAccount{}
		}
		writeJSON(w, http.StatusOK, map[string]any{"accounts": out, "count": len(out)})
	}))
	mux.HandleFunc("GET /v2/accounts/{id}", authed(func(w http.ResponseWriter, r *http.Request) {
		for _, a := range demoAccounts {
			if a.ID == r.PathValue("id") {
				writeJSON(w, http.StatusOK, a)
				return
			}
		}
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no account " + r.PathValue("id")})
	}))
	return mux
}
