package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/restmcp/restmcp/config"
)

// healthTimeout bounds restmcp health's request.
const healthTimeout = 5 * time.Second

// runHealth runs `restmcp health [--url URL]`: GET the running server's
// /health, and exit 0 when it answers 200, 1 otherwise, saying why. With
// no --url it asks the address restmcp serve would listen on (--addr,
// RESTMCP_ADDR, the config file; an unspecified host as 127.0.0.1): a
// container's HEALTHCHECK, where the image has no shell or curl.
func runHealth(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("restmcp health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("url", "", "the /health URL to ask (default: http://<addr>/health)")
	addr := fs.String("addr", "", "the address restmcp serve listens on (default: --addr's setting)")
	cfgFile := fs.String(config.FlagConfig, "", "config file")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if *target == "" {
		a := *addr
		if a == "" {
			var cargs []string
			if *cfgFile != "" {
				cargs = []string{"--" + config.FlagConfig, *cfgFile}
			}
			cfg, err := config.Load(cargs, getenv)
			if err != nil {
				return err
			}
			a = cfg.Addr
		}
		*target = "http://" + localHostPort(a) + "/health"
	}
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, *target, nil)
	if err != nil {
		return fmt.Errorf("health: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("health: %s: %w", *target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("health: %s answered %s", *target, resp.Status)
	}
	_, err = fmt.Fprintf(stdout, "ok: %s answered %s\n", *target, resp.Status)
	return err
}

// localHostPort is addr, a host:port to listen on or listened on, as a
// client on this machine reaches it: an unspecified host (0.0.0.0, ::, or
// none) becomes 127.0.0.1.
func localHostPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
