package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/metering"
)

// Redis client options restmcp applies when the URL does not set them: a
// Redis that is down must cost a tools/call a fast 503 (or a fast
// fail-open), not go-redis's 5 s dial timeout, 5 dial attempts 100 ms apart
// and 3 command retries. Commands are not retried (-1): the admission
// script is not idempotent, and a retry after a lost reply would count a
// call twice; the outage policy decides what a failed call becomes.
const (
	redisDialTimeout   = time.Second
	redisReadTimeout   = time.Second
	redisWriteTimeout  = time.Second
	redisMaxRetries    = -1
	redisDialerRetries = 1
	// redisClusterRefresh is how old the cluster's slot map may grow
	// before the next command has it read again (CLUSTER SLOTS, in the
	// background): after a master dies and a replica takes its slots, its
	// keys are served again within this of the promotion, not go-redis's
	// default 60 s. MOVED answers reload it at once.
	redisClusterRefresh = time.Second
)

// redisTarget says which Redis a client reaches, for the startup log
// (never the password).
type redisTarget struct {
	mode  config.RedisMode
	addrs []string
	db    int
}

// newRedisClient connects to the Redis of redisURL, read as mode says: one
// server (go-redis ParseURL), a Cluster's seed nodes (ParseClusterURL) or a
// Sentinel master set (ParseFailoverURL). Each parser rejects unknown URL
// options. restmcp's short timeouts apply unless the URL sets its own, and
// every command also ends at its context's deadline (meter_timeout on the
// call path), which go-redis ignores unless ContextTimeoutEnabled is set:
// without it a Redis that accepts and never answers held a call for one
// read timeout per command, past meter_timeout.
func newRedisClient(mode config.RedisMode, redisURL config.Secret) (redis.UniversalClient, redisTarget, error) {
	t := redisTarget{mode: mode}
	switch mode {
	case config.RedisSingle, "":
		o, err := redis.ParseURL(string(redisURL))
		if err != nil {
			return nil, t, fmt.Errorf("RESTMCP_REDIS_URL: %w", err)
		}
		redisDefaults(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.MaxRetries, &o.DialerRetries)
		o.ContextTimeoutEnabled = true // meter_timeout bounds each command, not only the wait between them
		t.mode, t.addrs, t.db = config.RedisSingle, []string{o.Addr}, o.DB
		return redis.NewClient(o), t, nil
	case config.RedisCluster:
		o, err := redis.ParseClusterURL(string(redisURL))
		if err != nil {
			return nil, t, fmt.Errorf("RESTMCP_REDIS_URL (redis_mode cluster): %w", err)
		}
		redisDefaults(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.MaxRetries, &o.DialerRetries)
		o.ContextTimeoutEnabled = true // meter_timeout bounds each command, not only the wait between them
		if o.ClusterStateReloadInterval == 0 {
			o.ClusterStateReloadInterval = redisClusterRefresh
		}
		t.addrs = o.Addrs
		return redis.NewClusterClient(o), t, nil
	case config.RedisSentinel:
		o, err := redis.ParseFailoverURL(string(redisURL))
		if err != nil {
			return nil, t, fmt.Errorf("RESTMCP_REDIS_URL (redis_mode sentinel): %w", err)
		}
		redisDefaults(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, &o.MaxRetries, &o.DialerRetries)
		o.ContextTimeoutEnabled = true // meter_timeout bounds each command, not only the wait between them
		t.addrs, t.db = o.SentinelAddrs, o.DB
		return redis.NewFailoverClient(o), t, nil
	}
	return nil, t, fmt.Errorf("redis_mode: unknown mode %q", mode)
}

// redisDefaults sets each option the URL left at zero to restmcp's value.
func redisDefaults(dial, read, write *time.Duration, maxRetries, dialerRetries *int) {
	for p, v := range map[*time.Duration]time.Duration{dial: redisDialTimeout, read: redisReadTimeout, write: redisWriteTimeout} {
		if *p == 0 {
			*p = v
		}
	}
	if *maxRetries == 0 {
		*maxRetries = redisMaxRetries
	}
	if *dialerRetries == 0 {
		*dialerRetries = redisDialerRetries
	}
}

// loadPlans reads the plans file, or builds the implicit plan of a
// deployment without one from rate_limit and rate_window.
func loadPlans(cfg config.Config) (*metering.Plans, error) {
	if cfg.PlansFile == "" {
		return metering.PlansFromRateLimit(int64(cfg.RateLimit), cfg.RateWindow), nil
	}
	return metering.LoadPlans(cfg.PlansFile)
}

// meteringWiring is metering as the adapter sees it, plus what main must
// close.
type meteringWiring struct {
	plans    *metering.Plans
	registry *metering.Registry
	redis    redis.UniversalClient // nil without redis_url
	meter    metering.Meter
	ready    func(context.Context) error
	close    func(context.Context)
}

// newMetering builds the plans, the key registry and the plan meter: in
// Redis (under the plans' outage policy) when a Redis URL is configured, in
// memory otherwise. It registers the outage series on reg (when not nil)
// and logs the setup, the outage policy included.
func newMetering(ctx context.Context, cfg config.Config, logger *slog.Logger, reg prometheus.Registerer) (*meteringWiring, error) {
	plans, err := loadPlans(cfg)
	if err != nil {
		return nil, err
	}
	w := &meteringWiring{plans: plans}
	source := "rate_limit and rate_window"
	if cfg.PlansFile != "" {
		source = cfg.PlansFile
	}
	attrs := []any{"plans", plans.Names(), "plans_from", source, "default_plan", plans.DefaultPlan,
		"key_mode", string(plans.KeyMode), "counting", string(plans.Counting), "static_keys", len(plans.StaticKeys())}

	if cfg.RedisURL == "" {
		m := metering.NewMemory(metering.Options{EventMaxLen: cfg.EventMaxLen})
		w.registry = metering.NewRegistry(nil, plans, metering.RegistryOptions{})
		w.meter, w.ready, w.close = m, m.Ping, func(context.Context) {}
		logger.Info("metering in memory; set RESTMCP_REDIS_URL to share counters across replicas", attrs...)
		if plans.KeyMode == metering.KeyModeRegistry && len(plans.StaticKeys()) == 0 {
			logger.Warn("key_mode registry without Redis and without static keys: every key is refused")
		}
		logger.Info("metering outage policy", "policy", string(plans.Outage), "store", "memory (never down)")
	} else {
		client, target, err := newRedisClient(cfg.RedisMode, cfg.RedisURL)
		if err != nil {
			return nil, err
		}
		rm := metering.NewRedis(client, metering.Options{EventMaxLen: cfg.EventMaxLen})
		om := metering.NewOutageMeter(ctx, rm, metering.OutageOptions{Policy: plans.Outage, Logger: logger})
		w.registry = metering.NewRegistry(client, plans, metering.RegistryOptions{})
		w.redis = client
		w.meter, w.ready = om, rm.Ping
		w.close = func(ctx context.Context) {
			if err := om.Close(ctx); err != nil {
				logger.Error("metering: buffered counts lost at shutdown", "error", err)
			}
			_ = client.Close()
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		perr := rm.Ping(pctx)
		cancel()
		if perr != nil {
			logger.Warn("redis not answering", "redis_mode", string(target.mode), "redis_addrs", target.addrs, "outage_policy", string(plans.Outage), "error", perr)
		}
		logger.Info("metering in redis", append(attrs, "redis_mode", string(target.mode), "redis_addrs", target.addrs, "redis_db", target.db, "event_max_len", cfg.EventMaxLen)...)
		logger.Info("metering outage policy", "policy", string(om.Policy()))
		if reg != nil {
			if err := registerOutageMetrics(reg, om); err != nil {
				w.close(ctx)
				return nil, err
			}
		}
	}
	return w, nil
}

// registerOutageMetrics exposes the OutageMeter's counters.
func registerOutageMetrics(reg prometheus.Registerer, om *metering.OutageMeter) error {
	stat := func(f func(metering.OutageStats) float64) func() float64 {
		return func() float64 { return f(om.Stats()) }
	}
	var collectors []prometheus.Collector
	for _, m := range []struct {
		name, help string
		counter    bool // else a gauge
		f          func(metering.OutageStats) int64
	}{
		{"restmcp_meter_outage_down", "Shards of the metering store considered down under fail_open: 1 for the one Redis, or the number of Redis Cluster masters; 0 when all answer.", false, func(s metering.OutageStats) int64 { return int64(s.DownShards) }},
		{"restmcp_meter_outage_buffered", "Calls and refunds counted locally, waiting to be replayed into Redis.", false, func(s metering.OutageStats) int64 { return int64(s.Buffered) }},
		{"restmcp_meter_unsettled", "Calls whose admission or refund got no answer from Redis, waiting to be settled by their id.", false, func(s metering.OutageStats) int64 { return int64(s.Unsettled) }},
		{"restmcp_meter_events_kept", "Usage events waiting for Redis to take them.", false, func(s metering.OutageStats) int64 { return int64(s.EventsKept) }},
		{"restmcp_meter_outage_degraded_total", "Calls admitted without Redis under fail_open (no limits checked).", true, func(s metering.OutageStats) int64 { return s.Degraded }},
		{"restmcp_meter_outage_dropped_total", "Calls and refunds dropped because the outage buffer was full.", true, func(s metering.OutageStats) int64 { return s.Dropped }},
		{"restmcp_meter_outage_replayed_total", "Calls and refunds replayed into Redis after an outage.", true, func(s metering.OutageStats) int64 { return s.Replayed }},
		{"restmcp_meter_outage_dropped_events_total", "Usage events lost because Redis could not take them and more than the buffer's size were waiting.", true, func(s metering.OutageStats) int64 { return s.DroppedEvents }},
		{"restmcp_meter_events_replayed_total", "Kept usage events written once Redis answered.", true, func(s metering.OutageStats) int64 { return s.EventsReplayed }},
		{"restmcp_meter_settled_total", "Calls settled by their id once Redis answered again (given back if not served, counted once if served).", true, func(s metering.OutageStats) int64 { return s.Settled }},
		{"restmcp_meter_unsettled_dropped_total", "Calls dropped unsettled because the queue was full.", true, func(s metering.OutageStats) int64 { return s.UnsettledDropped }},
		{"restmcp_meter_resent_total", "Counter writes sent again to a Redis Cluster master that replaced one which may not have replicated them.", true, func(s metering.OutageStats) int64 { return s.Resent }},
		{"restmcp_meter_journal_dropped_total", "Counter writes dropped from a Redis Cluster master's journal past its bound before its replicas had them.", true, func(s metering.OutageStats) int64 { return s.JournalDropped }},
	} {
		f := m.f
		value := stat(func(s metering.OutageStats) float64 { return float64(f(s)) })
		if m.counter {
			collectors = append(collectors, prometheus.NewCounterFunc(prometheus.CounterOpts{Name: m.name, Help: m.help}, value))
		} else {
			collectors = append(collectors, prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: m.name, Help: m.help}, value))
		}
	}
	for _, c := range collectors {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("registering outage metrics: %w", err)
		}
	}
	return nil
}
