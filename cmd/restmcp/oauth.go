package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"

	"github.com/restmcp/restmcp/adapter"
	"github.com/restmcp/restmcp/adapter/idp"
	"github.com/restmcp/restmcp/adapter/oauth"
	"github.com/restmcp/restmcp/config"
	"github.com/restmcp/restmcp/metering"
	"github.com/restmcp/restmcp/openapi"
)

// newOAuthFront builds the OAuth front when cfg.OAuth is set (nil
// otherwise): the issuer is public_url's origin, or the listen address
// when that is loopback; grants live in Redis when metering does, in
// memory otherwise. A key is checked at sign-in by the key registry and,
// with oauth_verify_operation, by one upstream call through srv().
func newOAuthFront(ctx context.Context, cfg config.Config, doc *openapi.Document, mw *meteringWiring, listenAddr string, logger *slog.Logger, srv func() *adapter.Server) (*oauth.Server, error) {
	if !cfg.OAuth {
		return nil, nil
	}
	issuer, err := oauthIssuer(cfg.PublicURL, listenAddr)
	if err != nil {
		return nil, err
	}
	enterprises, err := enterpriseIdPs(ctx, cfg, issuer, logger)
	if err != nil {
		return nil, err
	}
	key, err := cfg.OAuthKey()
	if err != nil {
		return nil, fmt.Errorf("oauth_encryption_key %w", err)
	}
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
		logger.Warn("oauth: no oauth_encryption_key; using a random one, so every token ends when this process does")
	}
	var store oauth.Store = oauth.NewMemoryStore(nil)
	storeName := "memory"
	if mw.redis != nil {
		store, storeName = oauth.NewRedisStore(mw.redis), "redis"
	}
	verify := cfg.OAuthVerifyOperation
	if mw.plans.KeyMode != metering.KeyModeRegistry && verify == "" {
		logger.Warn("oauth: key_mode open and no oauth_verify_operation: the sign-in page accepts any key; the upstream API judges it on each call")
	}
	front, err := oauth.New(oauth.Options{
		Issuer:        issuer,
		ResourcePath:  cfg.OAuthMCPPath,
		ResourceName:  doc.Title,
		KeysURL:       cfg.OAuthKeysURL,
		Store:         store,
		EncryptionKey: key,
		CheckKey: func(ctx context.Context, key string) error {
			if _, err := mw.registry.ResolveKey(ctx, key); err != nil {
				return err
			}
			if verify != "" {
				return srv().VerifyKey(ctx, verify, key)
			}
			return nil
		},
		KeyPath: cfg.MCPPath,
		// mcp_path takes the vendor's provider's tokens too (idp_issuer).
		KeyPathAuthorizationServers: nonEmpty(cfg.IdPIssuer),
		RedirectURIs:                cfg.OAuthRedirectURIs,
		RedirectSchemes:             cfg.OAuthRedirectSchemes,
		RegisterLimit:               noneIfZero(cfg.OAuthRegisterLimit),
		SignInLimit:                 noneIfZero(cfg.OAuthSignInLimit),
		ClientTTL:                   cfg.OAuthClientTTL,
		MaxClients:                  cfg.OAuthMaxClients,
		EnterpriseIdPs:              enterprises,
		Logger:                      logger,
	})
	if err != nil {
		return nil, fmt.Errorf("oauth: %w", err)
	}
	logger.Info("oauth front", "issuer", issuer, "store", storeName, "verify_operation", verify, "key_mode", string(mw.plans.KeyMode),
		"enterprise_idps", len(enterprises))
	return front, nil
}

// enterpriseIdPs makes the verifiers of oauth_enterprise_idps (their
// assertions' audience is the authorization server's issuer) and reads
// each one's API key from the environment variable the setting names.
// Each provider's discovery document and keys are read in the background
// from now on (idp.Config.Deferred): an enterprise whose provider is down
// does not stop the start, its assertions get 503 temporarily_unavailable
// until it answers, retried at most every idp.DiscoveryRetry.
func enterpriseIdPs(ctx context.Context, cfg config.Config, issuer string, logger *slog.Logger) ([]oauth.EnterpriseIdP, error) {
	var out []oauth.EnterpriseIdP
	for _, iss := range slices.Sorted(maps.Keys(cfg.OAuthEnterpriseIdPs)) {
		name := cfg.OAuthEnterpriseIdPs[iss]
		key := os.Getenv(name)
		if key == "" {
			return nil, fmt.Errorf("oauth_enterprise_idps: the environment variable %s, the API key for %s, is not set", name, iss)
		}
		v, err := idp.New(ctx, idp.Config{Issuer: iss, Audience: issuer, Upstream: idp.UpstreamNone, Algorithms: cfg.IdPAlgorithms, Deferred: true})
		if err != nil {
			return nil, fmt.Errorf("oauth_enterprise_idps: %w", err)
		}
		go func() {
			if err := v.Discover(ctx); err != nil {
				logger.Warn("oauth_enterprise_idps: the enterprise identity provider cannot be read; its assertions are refused with 503 until it answers",
					"issuer", iss, "error", err.Error())
			}
		}()
		out = append(out, oauth.EnterpriseIdP{Verifier: v, Key: key})
	}
	return out, nil
}

// noneIfZero maps a limit setting (0: no limit) to oauth.Options (negative:
// no limit, zero: the default).
func noneIfZero(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// oauthIssuer is the authorization server's issuer: the origin of
// publicURL, or http://<listen address> when publicURL is empty and the
// address is loopback (local use; remote clients need https).
func oauthIssuer(publicURL, listenAddr string) (string, error) {
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil {
			return "", fmt.Errorf("public_url: %w", err)
		}
		return u.Scheme + "://" + u.Host, nil
	}
	host, _, err := net.SplitHostPort(listenAddr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		return "", fmt.Errorf("oauth needs public_url: the https origin clients reach (e.g. https://mcp.example.com, behind your TLS proxy); the listen address %s is not loopback", listenAddr)
	}
	return "http://" + listenAddr, nil
}

// nonEmpty is []string{s}, or nil for "".
func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
