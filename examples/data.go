package examples

import (
	"maps"
	"slices"
)

// The demo's fixed data. Built by functions rather than held in package
// variables, so nothing can change it between requests.

const (
	demoDate = "2025-06-30"           // the date of every figure
	demoTime = "2025-06-30T20:00:00Z" // last trade and watchlist creation time
)

type company struct {
	Symbol       string `json:"symbol"`
	Name         string `json:"name"`
	Exchange     string `json:"exchange"`
	Currency     string `json:"currency"`
	Sector       string `json:"sector"`
	Industry     string `json:"industry"`
	Country      string `json:"country"`
	Headquarters string `json:"headquarters"`
	Employees    int64  `json:"employees"`
	MarketCap    int64  `json:"marketCap"`
	Description  string `json:"description"`
}

type quote struct {
	Symbol        string  `json:"symbol"`
	Price         float64 `json:"price"`
	Change        float64 `json:"change"`
	ChangePercent float64 `json:"changePercent"`
	Open          float64 `json:"open"`
	High          float64 `json:"high"`
	Low           float64 `json:"low"`
	PreviousClose float64 `json:"previousClose"`
	Volume        int64   `json:"volume"`
	Currency      string  `json:"currency"`
	AsOf          string  `json:"asOf"`
}

type holding struct {
	Rank          int     `json:"rank"`
	Symbol        string  `json:"symbol"`
	Name          string  `json:"name"`
	WeightPercent float64 `json:"weightPercent"`
}

type fund struct {
	Symbol        string
	Name          string
	TotalHoldings int
	Holdings      []holding // largest first, ranks 1…n
}

type market struct {
	companies map[string]company
	funds     map[string]fund
	quotes    map[string]quote
	usdRates  map[string]float64 // units of the currency per 1 USD
}

func newMarket() *market {
	m := &market{
		companies: map[string]company{},
		funds:     map[string]fund{},
		quotes:    map[string]quote{},
		usdRates: map[string]float64{
			"USD": 1,
			"EUR": 0.9215,
			"GBP": 0.7872,
			"JPY": 157.42,
			"CHF": 0.8961,
			"CAD": 1.3675,
		},
	}
	for _, c := range []company{
		{"AAPL", "Apple Inc.", "NASDAQ", "USD", "Technology", "Consumer Electronics", "US", "Cupertino, California", 164000, 3180000000000,
			"Designs and sells smartphones, personal computers, tablets, wearables and related services."},
		{"MSFT", "Microsoft Corp.", "NASDAQ", "USD", "Technology", "Software - Infrastructure", "US", "Redmond, Washington", 228000, 3650000000000,
			"Develops operating systems, productivity software and cloud computing services."},
		{"NVDA", "NVIDIA Corp.", "NASDAQ", "USD", "Technology", "Semiconductors", "US", "Santa Clara, California", 36000, 3860000000000,
			"Designs graphics processors and accelerated computing platforms for gaming, data centres and AI."},
	} {
		m.companies[c.Symbol] = c
	}
	for _, q := range []quote{
		{"AAPL", 212.49, 1.27, 0.6, 211.1, 213.34, 210.58, 211.22, 48213000, "USD", demoTime},
		{"MSFT", 497.41, 1.47, 0.3, 496.2, 499.3, 494.15, 495.94, 19872300, "USD", demoTime},
		{"NVDA", 154.31, -3.44, -2.18, 157.5, 158, 153.9, 157.75, 261004500, "USD", demoTime},
		{"SPY", 620.45, 2.6, 0.42, 618.2, 621.1, 617.4, 617.85, 71310000, "USD", demoTime},
		{"QQQ", 551.64, 3.55, 0.65, 549, 552.3, 547.9, 548.09, 39820000, "USD", demoTime},
	} {
		m.quotes[q.Symbol] = q
	}
	for _, f := range []fund{
		{"SPY", "SPDR S&P 500 ETF Trust", 503, ranked([]holding{
			{Symbol: "MSFT", Name: "Microsoft Corp.", WeightPercent: 7.04},
			{Symbol: "NVDA", Name: "NVIDIA Corp.", WeightPercent: 6.95},
			{Symbol: "AAPL", Name: "Apple Inc.", WeightPercent: 5.83},
			{Symbol: "AMZN", Name: "Amazon.com Inc.", WeightPercent: 3.91},
			{Symbol: "META", Name: "Meta Platforms Inc.", WeightPercent: 3.06},
			{Symbol: "AVGO", Name: "Broadcom Inc.", WeightPercent: 2.44},
			{Symbol: "GOOGL", Name: "Alphabet Inc. Class A", WeightPercent: 1.98},
			{Symbol: "BRK.B", Name: "Berkshire Hathaway Inc. Class B", WeightPercent: 1.72},
			{Symbol: "TSLA", Name: "Tesla Inc.", WeightPercent: 1.67},
			{Symbol: "GOOG", Name: "Alphabet Inc. Class C", WeightPercent: 1.61},
			{Symbol: "JPM", Name: "JPMorgan Chase & Co.", WeightPercent: 1.48},
			{Symbol: "LLY", Name: "Eli Lilly and Co.", WeightPercent: 1.22},
		})},
		{"QQQ", "Invesco QQQ Trust, Series 1", 101, ranked([]holding{
			{Symbol: "NVDA", Name: "NVIDIA Corp.", WeightPercent: 9.21},
			{Symbol: "MSFT", Name: "Microsoft Corp.", WeightPercent: 8.87},
			{Symbol: "AAPL", Name: "Apple Inc.", WeightPercent: 7.35},
			{Symbol: "AMZN", Name: "Amazon.com Inc.", WeightPercent: 5.62},
			{Symbol: "AVGO", Name: "Broadcom Inc.", WeightPercent: 5.01},
			{Symbol: "META", Name: "Meta Platforms Inc.", WeightPercent: 3.74},
			{Symbol: "NFLX", Name: "Netflix Inc.", WeightPercent: 3.12},
			{Symbol: "TSLA", Name: "Tesla Inc.", WeightPercent: 2.88},
			{Symbol: "COST", Name: "Costco Wholesale Corp.", WeightPercent: 2.61},
			{Symbol: "GOOGL", Name: "Alphabet Inc. Class A", WeightPercent: 2.47},
			{Symbol: "GOOG", Name: "Alphabet Inc. Class C", WeightPercent: 2.36},
		})},
	} {
		m.funds[f.Symbol] = f
	}
	return m
}

func ranked(hs []holding) []holding {
	for i := range hs {
		hs[i].Rank = i + 1
	}
	return hs
}

// symbols lists every symbol that has a quote, sorted.
func (m *market) symbols() []string { return slices.Sorted(maps.Keys(m.quotes)) }

// currencies lists the supported currencies, sorted.
func (m *market) currencies() []string { return slices.Sorted(maps.Keys(m.usdRates)) }
