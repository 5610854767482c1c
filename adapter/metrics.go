package adapter

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/restmcp/restmcp/metering"
)

// metrics are the adapter's Prometheus series. They are registered on
// Options.Metrics when it is set (GET /metrics then serves that registry)
// and kept, unregistered, otherwise, so the hot path never checks.
//
// Label values are bounded: tool is always a tool of the table (calls
// naming unknown tools are not counted), outcome, decision, reason and op
// are fixed sets.
type metrics struct {
	calls     *prometheus.CounterVec   // tool, outcome
	decisions *prometheus.CounterVec   // decision, reason
	meterDur  *prometheus.HistogramVec // op
	meterErrs *prometheus.CounterVec   // op
	upstream  *prometheus.HistogramVec // outcome
	refunds   prometheus.Counter
	events    *prometheus.CounterVec // result
}

// Metric names, for docs/operations.md and tests.
const (
	MetricToolCalls        = "restmcp_tool_calls_total"
	MetricMeterDecisions   = "restmcp_meter_decisions_total"
	MetricMeterDuration    = "restmcp_meter_duration_seconds"
	MetricMeterErrors      = "restmcp_meter_errors_total"
	MetricUpstreamDuration = "restmcp_upstream_duration_seconds"
	MetricMeterRefunds     = "restmcp_meter_refunds_total"
	MetricUsageEvents      = "restmcp_usage_events_total"
	MetricToolInfo         = "restmcp_tool_info"
)

// toolInfo is the restmcp_tool_info series: 1 for each tool served, with
// its API, when several documents are served on one endpoint (none for
// one document). Joined on tool, it splits any per-tool series by API:
// sum by (api) (restmcp_tool_calls_total * on(tool) group_left(api)
// restmcp_tool_info). It reads the table served at each scrape, so a
// reload shows at once.
type toolInfo struct {
	desc  *prometheus.Desc
	table func() *toolTable
}

func (c toolInfo) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c toolInfo) Collect(ch chan<- prometheus.Metric) {
	tbl := c.table()
	if tbl == nil || !tbl.apis {
		return
	}
	for name, t := range tbl.tools {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, 1, t.API, name)
	}
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricToolCalls,
			Help: "tools/call requests for tools of the table, by tool and outcome (ok, upstream_error, upstream_failed, refused, not_in_plan, invalid_arguments, unavailable, unauthorized).",
		}, []string{"tool", "outcome"}),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricMeterDecisions,
			Help: "Meter admissions by decision (allowed, refused, degraded, error) and, for refusals, the refusing limit (per_second, per_minute, per_hour, day, month, rate).",
		}, []string{"decision", "reason"}),
		meterDur: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    MetricMeterDuration,
			Help:    "Time spent in the metering store (Redis) per operation: resolve (key lookup), admit, refund, event, report.",
			Buckets: []float64{.0002, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"op"}),
		meterErrs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricMeterErrors,
			Help: "Metering store (Redis) operations that failed, by operation.",
		}, []string{"op"}),
		upstream: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    MetricUpstreamDuration,
			Help:    "Upstream REST request duration, including reading the body, by outcome (ok, upstream_error, upstream_failed).",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"outcome"}),
		refunds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: MetricMeterRefunds,
			Help: "Admitted calls refunded under counting policy success (upstream 5xx or failure).",
		}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: MetricUsageEvents,
			Help: "Usage events by result: written to the metering store, or lost (the write failed). Events are written in batches, so this counts events where meter_duration_seconds{op=\"event\"} counts writes.",
		}, []string{"result"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.calls, m.decisions, m.meterDur, m.meterErrs, m.upstream, m.refunds, m.events} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) callDone(tool string, o metering.Outcome) {
	m.calls.WithLabelValues(tool, string(o)).Inc()
}

func (m *metrics) meterOp(op string, d time.Duration, err error) {
	m.meterDur.WithLabelValues(op).Observe(d.Seconds())
	if err != nil {
		m.meterErrs.WithLabelValues(op).Inc()
	}
}

// eventsDone counts n usage events as written, or as lost when err is set.
func (m *metrics) eventsDone(n int, err error) {
	result := "written"
	if err != nil {
		result = "lost"
	}
	m.events.WithLabelValues(result).Add(float64(n))
}

func (m *metrics) decision(d metering.Decision, err error) {
	name, reason := decisionName(d, err), ""
	if name == "refused" {
		reason = d.RefusedBy
	}
	m.decisions.WithLabelValues(name, reason).Inc()
}
