package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/restmcp/restmcp/adapter"
	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/internal/seal"
	"github.com/restmcp/restmcp/metering"
)

const keysUsage = `usage:
  restmcp keys create [--plan PLAN] [--label LABEL] [--identity VALUE]
                                                      create a key; prints the key (once) and its key id;
                                                      with --identity, the key is what the upstream gets for
                                                      the identity provider's caller whose identity claim
                                                      is VALUE (idp_upstream key; sealed with
                                                      oauth_encryption_key)
  restmcp keys list                                   list every key (plans file keys, then the registry)
  restmcp keys show KEY_ID                            print one key's record (JSON)
  restmcp keys revoke KEY_ID                          revoke a registry key
  restmcp usage KEY_ID [--plan PLAN]                  print a key's usage report (JSON)

Every command also takes --config FILE, --plans-file FILE, --redis-url URL
and --redis-mode MODE, and reads RESTMCP_REDIS_URL, RESTMCP_PLANS_FILE (and
the other settings) like restmcp serve: give it the plans restmcp serve
uses, so that a key lands on a plan the server knows.
`

// opFlags are the flags of the keys and usage commands.
type opFlags struct {
	plan, label, config string
	identity            string // keys create --identity: the identity claim's value the key is bound to
	// serve's settings that decide the plans and the Redis the commands
	// work on, passed on as the same flags
	plansFile, redisURL, redisMode string
}

// parseOpArgs parses flags anywhere among args ("usage KEY --plan pro" as
// well as "usage --plan pro KEY") and returns the positional arguments.
func parseOpArgs(args []string, stderr io.Writer) (opFlags, []string, error) {
	var f opFlags
	fs := flag.NewFlagSet("restmcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.plan, "plan", "", "plan name")
	fs.StringVar(&f.label, "label", "", "label")
	fs.StringVar(&f.identity, "identity", "", "the identity claim value the key is bound to (idp_upstream key)")
	fs.StringVar(&f.config, config.FlagConfig, "", "config file")
	fs.StringVar(&f.plansFile, "plans-file", "", "plans file (plans_file)")
	fs.StringVar(&f.redisURL, "redis-url", "", "Redis URL (redis_url)")
	fs.StringVar(&f.redisMode, "redis-mode", "", "single, cluster or sentinel (redis_mode)")
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if !errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(stderr, "restmcp: %v\n", err)
			}
			fmt.Fprint(stderr, keysUsage)
			return f, nil, errUsage
		}
		if fs.NArg() == 0 {
			return f, pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// opsEnv opens what the keys and usage commands need: the configuration,
// the plans and, required, Redis.
type opsEnv struct {
	cfg      config.Config
	plans    *metering.Plans
	registry *metering.Registry
	meter    *metering.RedisMeter
	close    func()
}

func openOps(f opFlags, getenv func(string) string) (*opsEnv, error) {
	var args []string
	for _, a := range []struct{ flag, value string }{{config.FlagConfig, f.config}, {"plans-file", f.plansFile},
		{"redis-url", f.redisURL}, {"redis-mode", f.redisMode}} {
		if a.value != "" {
			args = append(args, "--"+a.flag, a.value)
		}
	}
	cfg, err := config.Load(args, getenv)
	if err != nil {
		return nil, err
	}
	if cfg.RedisURL == "" {
		return nil, errors.New("the key registry and usage counters live in Redis: set RESTMCP_REDIS_URL (or redis_url in the config file) to the Redis that restmcp serve uses")
	}
	plans, err := loadPlans(cfg)
	if err != nil {
		return nil, err
	}
	client, _, err := newRedisClient(cfg.RedisMode, cfg.RedisURL)
	if err != nil {
		return nil, err
	}
	return &opsEnv{
		cfg:      cfg,
		plans:    plans,
		registry: metering.NewRegistry(client, plans, metering.RegistryOptions{CacheTTL: -1}),
		meter:    metering.NewRedis(client, metering.Options{EventMaxLen: cfg.EventMaxLen}),
		close:    func() { _ = client.Close() },
	}, nil
}

// startOps is openOps for one operator command: ctx bounded by
// opTimeout, and done, which ends it and closes the Redis client.
func startOps(ctx context.Context, f opFlags, getenv func(string) string) (*opsEnv, context.Context, func(), error) {
	env, err := openOps(f, getenv)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	return env, ctx, func() { cancel(); env.close() }, nil
}

// opTimeout bounds one operator command's Redis work.
const opTimeout = 10 * time.Second

// runKeys runs `restmcp keys create|list|show|revoke`.
func runKeys(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, keysUsage)
		return errUsage
	}
	sub := args[0]
	f, pos, err := parseOpArgs(args[1:], stderr)
	if err != nil {
		return err
	}
	want := map[string]int{"create": 0, "list": 0, "show": 1, "revoke": 1}
	n, ok := want[sub]
	if !ok || len(pos) != n {
		if !ok {
			fmt.Fprintf(stderr, "restmcp: unknown keys command %q\n", sub)
		} else {
			fmt.Fprintf(stderr, "restmcp: keys %s takes %d argument(s), got %d\n", sub, n, len(pos))
		}
		fmt.Fprint(stderr, keysUsage)
		return errUsage
	}
	if (f.plan != "" || f.label != "") && sub != "create" {
		fmt.Fprintf(stderr, "restmcp: --plan and --label are for keys create\n")
		return errUsage
	}
	env, ctx, done, err := startOps(ctx, f, getenv)
	if err != nil {
		return err
	}
	defer done()

	switch sub {
	case "create":
		var sealer *seal.Sealer
		if f.identity != "" {
			if sealer, err = identitySealer(env.cfg, "--identity"); err != nil {
				return err
			}
		}
		key, rec, err := env.registry.Create(ctx, f.plan, f.label)
		if err != nil {
			return fmt.Errorf("creating a key: %w", err)
		}
		note := "the key above is shown only now: store it, restmcp keeps only its SHA-256"
		if sealer != nil {
			identity := adapter.IdentityKeyID(f.identity)
			if err := env.registry.BindIdentity(ctx, identity, rec.KeyID, sealer.Seal(identity, key)); err != nil {
				return fmt.Errorf("binding key_id %s to the identity %q: %w", rec.KeyID, f.identity, err)
			}
			note = fmt.Sprintf("the upstream key of the identity %q (key id %s); restmcp keeps the key sealed with oauth_encryption_key", f.identity, identity)
		}
		fmt.Fprintf(stdout, "%s\n%s\n", key, rec.KeyID)
		fmt.Fprintf(stderr, "created key_id %s on plan %q; %s\n", rec.KeyID, rec.Plan, note)
		return nil
	case "list":
		recs, err := env.registry.List(ctx)
		if err != nil {
			return fmt.Errorf("listing keys: %w", err)
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY_ID\tPLAN\tSTATUS\tSOURCE\tCREATED\tLABEL")
		for _, r := range recs {
			created := "-"
			if !r.Created.IsZero() {
				created = r.Created.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.KeyID, r.Plan, r.Status, r.Source, created, r.Label)
		}
		return tw.Flush()
	case "show":
		rec, err := env.registry.Show(ctx, pos[0])
		if err != nil {
			return fmt.Errorf("showing key_id %s: %w", pos[0], err)
		}
		return writeJSON(stdout, rec)
	default: // revoke
		rec, err := env.registry.Revoke(ctx, pos[0])
		if err != nil {
			return fmt.Errorf("revoking key_id %s: %w", pos[0], err)
		}
		return writeJSON(stdout, rec)
	}
}

// runUsage runs `restmcp usage KEY_ID [--plan PLAN]`: the key's usage
// report under --plan, else under the key's own plan (plans file or
// registry), else under the default plan (a key of key_mode open).
func runUsage(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	f, pos, err := parseOpArgs(args, stderr)
	if err != nil {
		return err
	}
	if len(pos) != 1 || f.label != "" {
		fmt.Fprint(stderr, keysUsage)
		return errUsage
	}
	keyID := strings.TrimSpace(pos[0])
	env, ctx, done, err := startOps(ctx, f, getenv)
	if err != nil {
		return err
	}
	defer done()

	planName := f.plan
	if planName == "" {
		rec, err := env.registry.Show(ctx, keyID)
		switch {
		case err == nil:
			planName = rec.Plan
		case errors.Is(err, metering.ErrUnknownKey):
			planName = env.plans.DefaultPlan
		default:
			return fmt.Errorf("reading key_id %s: %w", keyID, err)
		}
	}
	plan := env.plans.Plan(planName)
	if plan == nil {
		return fmt.Errorf("%w %q (plans: %s)", metering.ErrUnknownPlan, planName, strings.Join(env.plans.Names(), ", "))
	}
	report, err := env.meter.Report(ctx, keyID, plan)
	if err != nil {
		return fmt.Errorf("reading usage of key_id %s: %w", keyID, err)
	}
	if len(env.cfg.APIs) > 0 {
		// Several APIs: the month's usage by API, from the documents'
		// tools as serve names them.
		logger := newLogger(stderr, slog.LevelWarn, env.cfg.LogFormat)
		_, doc, err := loadAPIs(ctx, env.cfg, apiSources(env.cfg, "", "", logger), false, logger)
		if err != nil {
			return fmt.Errorf("loading the APIs to split usage by API: %w", err)
		}
		apiOf := make(map[string]string, len(doc.Tools))
		for _, t := range doc.Tools {
			apiOf[t.Name] = t.API
		}
		report.SplitByAPI(func(tool string) string { return apiOf[tool] })
	}
	return writeJSON(stdout, report)
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
