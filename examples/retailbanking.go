package examples

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// RetailBankingJWTSecret signs the retail-banking demo's JWTs (HS256).
// It is a demo value, published on purpose.
const RetailBankingJWTSecret = "bancony-demo-secret"

// RetailBankingToken is a JWT for customer sub (HS256 over
// RetailBankingJWTSecret, RFC 7519), as the retail-banking demo's identity
// provider would issue it: the bearer credential its API expects.
func RetailBankingToken(sub string) string {
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]string{"sub": sub, "iss": "https://id.bancony.example"})
	signing := head + "." + enc.EncodeToString(claims)
	return signing + "." + enc.EncodeToString(jwtMAC(signing))
}

func jwtMAC(signing string) []byte {
	m := hmac.New(sha256.New, []byte(RetailBankingJWTSecret))
	m.Write([]byte(signing))
	return m.Sum(nil)
}

// jwtSubject is the sub claim of a valid demo JWT, or "".
func jwtSubject(token string) string {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return ""
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || !hmac.Equal(sig, jwtMAC(parts[0]+"."+parts[1])) {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	var claims struct {
		Sub string `json:"sub"`
	}
	if err != nil || json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	return claims.Sub
}

// retailAccount is one account of the retail-banking demo (invented).
type retailAccount struct {
	ID       string  `json:"id"`
	Type     string  `json:"type"`
	Name     string  `json:"name"`
	IBAN     string  `json:"iban"`
	Currency string  `json:"currency"`
	Balance  float64 `json:"balance"`
}

// retailTransaction is one booked transaction of the demo.
type retailTransaction struct {
	ID     string  `json:"id"`
	Date   string  `json:"date"`
	Amount float64 `json:"amount"`
	Text   string  `json:"text"`
}

// retailRecipient is one saved transfer recipient of the demo.
type retailRecipient struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	IBAN string `json:"iban"`
}

// accountNames are the account type labels per X-Bancony-Culture.
var accountNames = map[string]map[string]string{
	"en-GB": {"current": "Current account", "savings": "Savings account", "credit_card": "Credit card"},
	"de-DE": {"current": "Girokonto", "savings": "Sparkonto", "credit_card": "Kreditkarte"},
}

// retailCustomers are the demo's customers by JWT subject.
var retailCustomers = map[string]struct {
	accounts     []retailAccount
	transactions map[string][]retailTransaction
	recipients   []retailRecipient
}{
	"cust-17": {
		accounts: []retailAccount{
			{"acc-1", "current", "", "DE44500105175407324931", "EUR", 2140.55},
			{"acc-2", "savings", "", "DE12500105170648489890", "EUR", 15000},
			{"acc-3", "credit_card", "", "DE89370400440532013000", "EUR", -312.4},
		},
		transactions: map[string][]retailTransaction{
			"acc-1": {
				{"tx-9", "2026-11-28", -54.9, "Stadtwerke Köln"},
				{"tx-8", "2026-11-27", 2900, "Salary November"},
				{"tx-7", "2026-11-25", -12.5, "Bakery Schmitz"},
				{"tx-6", "2026-11-24", -800, "Rent December"},
				{"tx-5", "2026-11-20", 25, "Refund Bookshop"},
			},
		},
		recipients: []retailRecipient{
			{"rcp-1", "Anna Schmidt", "DE02120300000000202051"},
			{"rcp-2", "Jonas Schmidt-Weber", "DE02500105170137075030"},
			{"rcp-3", "Hausverwaltung Müller", "DE88100900001234567892"},
		},
	},
	"cust-42": {
		accounts: []retailAccount{{"acc-7", "current", "", "DE75512108001245126199", "EUR", 88.1}},
	},
}

// NewRetailBankingUpstream is the in-process upstream of
// examples/retail-banking: a customer's accounts, transactions and saved
// recipients behind a JWT (Authorization: Bearer, HS256 over
// RetailBankingJWTSecret; 401 without a valid one). Every request must
// name its integration (X-Bancony-Integration; 400 without it), and
// X-Bancony-Culture (en-GB or de-DE) chooses the account labels.
func NewRetailBankingUpstream() http.Handler {
	mux := http.NewServeMux()
	type handler func(w http.ResponseWriter, r *http.Request, sub, culture string)
	authed := func(h handler) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			sub := jwtSubject(token)
			if _, known := retailCustomers[sub]; !ok || !known {
				writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_token"})
				return
			}
			if r.Header.Get("X-Bancony-Integration") == "" {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "X-Bancony-Integration is required"})
				return
			}
			culture := r.Header.Get("X-Bancony-Culture")
			if accountNames[culture] == nil {
				culture = "en-GB"
			}
			h(w, r, sub, culture)
		}
	}
	limit := func(r *http.Request, def int) int {
		if n, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil {
			return n
		}
		return def
	}
	mux.HandleFunc("GET /api/v3/accounts", authed(func(w http.ResponseWriter, r *http.Request, sub, culture string) {
		out := []retailAccount{}
		for _, a := range retailCustomers[sub].accounts {
			if t := r.URL.Query().Get("type"); t == "" || t == a.Type {
				a.Name = accountNames[culture][a.Type]
				out = append(out, a)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"accounts": out})
	}))
	mux.HandleFunc("GET /api/v3/accounts/{id}/transactions", authed(func(w http.ResponseWriter, r *http.Request, sub, _ string) {
		c := retailCustomers[sub]
		if !slices.ContainsFunc(c.accounts, func(a retailAccount) bool { return a.ID == r.PathValue("id") }) {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such account"})
			return
		}
		out := []retailTransaction{}
		dir := r.URL.Query().Get("direction")
		for _, tx := range c.transactions[r.PathValue("id")] {
			if len(out) < limit(r, 20) && (dir == "" || dir == "all" || dir == "in" && tx.Amount > 0 || dir == "out" && tx.Amount < 0) {
				out = append(out, tx)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"transactions": out})
	}))
	mux.HandleFunc("GET /api/v3/recipients", authed(func(w http.ResponseWriter, r *http.Request, sub, _ string) {
		out := []retailRecipient{}
		name := strings.ToLower(r.URL.Query().Get("name"))
		for _, p := range retailCustomers[sub].recipients {
			if strings.Contains(strings.ToLower(p.Name), name) && len(out) < limit(r, 5) {
				out = append(out, p)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"recipients": out})
	}))
	mux.HandleFunc("GET /api/v3/exchange-rates", authed(func(w http.ResponseWriter, r *http.Request, _, _ string) {
		rates := map[string]map[string]float64{
			"EUR": {"USD": 1.0512, "GBP": 0.8321, "CHF": 0.9307},
			"USD": {"EUR": 0.9513, "GBP": 0.7916, "CHF": 0.8854},
		}
		base := r.URL.Query().Get("currency")
		if base == "" {
			base = "EUR"
		}
		writeJSON(w, http.StatusOK, map[string]any{"base": base, "date": "2026-11-30", "rates": rates[base]})
	}))
	return mux
}
