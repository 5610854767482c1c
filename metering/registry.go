package metering

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	// ErrUnknownKey is returned by Registry.Lookup for a key that is
	// neither in the plans file nor in the registry (registry mode), and by
	// Show and Revoke for an unknown key id.
	ErrUnknownKey = errors.New("metering: unknown API key")
	// ErrRevokedKey is returned by Registry.Lookup for a revoked key, in
	// either key mode.
	ErrRevokedKey = errors.New("metering: revoked API key")
	// ErrUnknownPlan is returned for a plan name the plans file does not
	// define: by Create, and by Lookup for a key whose plan was removed
	// from the file since the key was created.
	ErrUnknownPlan = errors.New("metering: unknown plan")
	// ErrStaticKey is returned by Revoke for a key of the plans file's
	// keys section: remove it from the file instead.
	ErrStaticKey = errors.New("metering: key is defined in the plans file")
	// ErrNoRegistry is returned by Create and Revoke on a Registry without
	// Redis, which knows only the plans file's keys.
	ErrNoRegistry = errors.New("metering: no key registry (Redis) configured")
)

// Registry defaults.
const (
	// DefaultCacheTTL is how long Registry.Lookup remembers an answer.
	DefaultCacheTTL = 5 * time.Second
	// DefaultCacheSize is the most answers Registry.Lookup remembers.
	DefaultCacheSize = 100_000
	// DefaultIndexKey is the Redis set of every registry key id.
	DefaultIndexKey = KeyPrefix + "keys"
	// KeyTokenPrefix starts every key Registry.Create generates.
	KeyTokenPrefix = "rmk_"
)

// KeyStatus is the state of a registry key.
type KeyStatus string

const (
	// KeyActive keys are accepted.
	KeyActive KeyStatus = "active"
	// KeyRevoked keys are refused with ErrRevokedKey.
	KeyRevoked KeyStatus = "revoked"
)

// KeySource says where a key's record comes from.
type KeySource string

const (
	// SourceStatic: the plans file's keys section.
	SourceStatic KeySource = "static"
	// SourceRegistry: the Redis registry.
	SourceRegistry KeySource = "registry"
	// SourceOpen: an unregistered key accepted in key mode open, under the
	// default plan.
	SourceOpen KeySource = "open"
)

// KeyRecord describes one API key; it never holds the key.
type KeyRecord struct {
	// KeyID is the first 12 hex digits of the key's SHA-256 ([KeyID]).
	KeyID string `json:"key_id"`
	// Plan names the key's plan.
	Plan string `json:"plan"`
	// Status is KeyActive or KeyRevoked.
	Status KeyStatus `json:"status"`
	// Label is the operator's note (customer, purpose); may be empty.
	Label string `json:"label"`
	// Created is when the registry key was created (UTC, whole seconds);
	// zero for static and open keys.
	Created time.Time `json:"created,omitzero"`
	// Revoked is when the key was revoked; zero while active.
	Revoked time.Time `json:"revoked,omitzero"`
	// Source says where the record comes from.
	Source KeySource `json:"source"`
}

// RegistryOptions configures [NewRegistry]. The zero value is the default
// everywhere.
type RegistryOptions struct {
	// CacheTTL is how long Lookup remembers an answer (found, unknown or
	// revoked) per key, in this process. It is also the longest a revoked
	// key keeps working on a replica other than the one that revoked it
	// (the revoking Registry forgets its own cache entry at once). Zero
	// means DefaultCacheTTL (5 s); -1 (any negative value) disables the
	// cache, costing one more Redis round trip per call.
	CacheTTL time.Duration
	// CacheSize is the most answers remembered; when full, expired entries
	// are dropped and, if that is not enough, the whole cache. Zero or
	// negative means DefaultCacheSize (100,000).
	CacheSize int
	// IndexKey is the Redis set listing registry key ids (List reads it).
	// Empty means DefaultIndexKey ("restmcp:keys").
	IndexKey string
	// Now is the clock for Created, Revoked and the cache; nil means
	// time.Now.
	Now func() time.Time
	// Rand is the source of new keys; nil means crypto/rand.
	Rand io.Reader
}

// registryRedis lists the Redis commands the registry uses.
type registryRedis interface {
	redis.Scripter
	HGetAll(ctx context.Context, key string) *redis.MapStringStringCmd
	HSet(ctx context.Context, key string, values ...any) *redis.IntCmd
	SAdd(ctx context.Context, key string, members ...any) *redis.IntCmd
	SMembers(ctx context.Context, key string) *redis.StringSliceCmd
}

// Registry maps API keys to plans: the plans file's static keys first,
// then the Redis registry, where each key is stored only as its SHA-256 in
// a hash
//
//	restmcp:{<key_id>}:key   sha256, key_id, plan, status, label, created, revoked
//
// sharing the {key_id} hash tag with the key's counters, and listed in the
// set IndexKey (restmcp:keys). Create it with [NewRegistry]; it is safe for
// concurrent use.
type Registry struct {
	rdb   registryRedis // nil: static keys only
	plans *Plans
	ttl   time.Duration
	size  int
	index string
	now   func() time.Time
	rand  io.Reader

	mu    sync.Mutex
	cache map[string]cacheEntry // by SHA-256 hex of the key
}

type cacheEntry struct {
	rec  KeyRecord
	plan *Plan
	err  error
	exp  time.Time
}

// NewRegistry returns the registry of plans' static keys and, when client
// is not nil, of the Redis registry in client. plans must not be nil.
func NewRegistry(client redis.UniversalClient, plans *Plans, opts RegistryOptions) *Registry {
	if plans == nil {
		panic("metering: NewRegistry with nil plans")
	}
	r := &Registry{plans: plans, ttl: opts.CacheTTL, size: opts.CacheSize, index: opts.IndexKey,
		now: opts.Now, rand: opts.Rand, cache: make(map[string]cacheEntry)}
	if client != nil {
		r.rdb = client
	}
	if r.ttl == 0 {
		r.ttl = DefaultCacheTTL
	}
	if r.size <= 0 {
		r.size = DefaultCacheSize
	}
	if r.index == "" {
		r.index = DefaultIndexKey
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.rand == nil {
		r.rand = rand.Reader
	}
	return r
}

// Plans returns the plans the registry resolves against.
func (r *Registry) Plans() *Plans { return r.plans }

// recordKey is the Redis key of a registry record.
func recordKey(keyID string) string { return Key(keyID, "key") }

var createKeyScript = redis.NewScript(`
if redis.call("EXISTS", KEYS[1]) == 1 then return 0 end
redis.call("HSET", KEYS[1], "sha256", ARGV[1], "key_id", ARGV[2], "plan", ARGV[3],
  "status", "active", "label", ARGV[4], "created", ARGV[5])
return 1
`)

var revokeKeyScript = redis.NewScript(`
if redis.call("EXISTS", KEYS[1]) == 0 then return 0 end
if redis.call("HGET", KEYS[1], "status") ~= "revoked" then
  redis.call("HSET", KEYS[1], "status", "revoked", "revoked", ARGV[1])
end
return 1
`)

// Create generates a new key on plan ("" means the default plan) with
// label, stores its SHA-256 and returns the key itself, which is shown
// once and never stored, with its record. A key is KeyTokenPrefix ("rmk_")
// and 48 hex digits (192 random bits). Errors: ErrUnknownPlan,
// ErrNoRegistry, or a Redis failure wrapped with ErrUnavailable.
func (r *Registry) Create(ctx context.Context, plan, label string) (string, KeyRecord, error) {
	if plan == "" {
		plan = r.plans.DefaultPlan
	}
	if r.plans.Plan(plan) == nil {
		return "", KeyRecord{}, fmt.Errorf("%w %q (plans: %s)", ErrUnknownPlan, plan, strings.Join(r.plans.Names(), ", "))
	}
	if r.rdb == nil {
		return "", KeyRecord{}, ErrNoRegistry
	}
	for range 3 { // a 48-bit key id collision is rare; draw again
		var b [24]byte
		if _, err := io.ReadFull(r.rand, b[:]); err != nil {
			return "", KeyRecord{}, fmt.Errorf("metering: generating a key: %w", err)
		}
		key := KeyTokenPrefix + hex.EncodeToString(b[:])
		s := sum(key)
		rec := KeyRecord{KeyID: keyIDOf(s), Plan: plan, Status: KeyActive, Label: label,
			Created: r.now().UTC().Truncate(time.Second), Source: SourceRegistry}
		if _, static := r.plans.staticKey(s); static {
			continue
		}
		if err := r.rdb.SAdd(ctx, r.index, rec.KeyID).Err(); err != nil {
			return "", KeyRecord{}, fmt.Errorf("%w: indexing key_id %s: %w", ErrUnavailable, rec.KeyID, err)
		}
		ok, err := createKeyScript.Run(ctx, r.rdb, []string{recordKey(rec.KeyID)},
			s, rec.KeyID, plan, label, rec.Created.Format(time.RFC3339)).Int()
		if err != nil {
			return "", KeyRecord{}, fmt.Errorf("%w: creating key_id %s: %w", ErrUnavailable, rec.KeyID, err)
		}
		if ok == 1 {
			return key, rec, nil
		}
	}
	return "", KeyRecord{}, errors.New("metering: could not draw an unused key id")
}

// Revoke marks the registry key keyID revoked and returns its record. It
// takes effect at once on this Registry and within CacheTTL on others.
// Revoking a revoked key is not an error. Errors: ErrUnknownKey,
// ErrStaticKey, ErrNoRegistry, or a Redis failure wrapped with
// ErrUnavailable.
func (r *Registry) Revoke(ctx context.Context, keyID string) (KeyRecord, error) {
	for _, k := range r.plans.static {
		if k.KeyID == keyID {
			return KeyRecord{}, fmt.Errorf("%w: key_id %s", ErrStaticKey, keyID)
		}
	}
	if !validKeyID(keyID) {
		return KeyRecord{}, fmt.Errorf("%w: %q", ErrInvalidKeyID, keyID)
	}
	if r.rdb == nil {
		return KeyRecord{}, ErrNoRegistry
	}
	ok, err := revokeKeyScript.Run(ctx, r.rdb, []string{recordKey(keyID)},
		r.now().UTC().Truncate(time.Second).Format(time.RFC3339)).Int()
	if err != nil {
		return KeyRecord{}, fmt.Errorf("%w: revoking key_id %s: %w", ErrUnavailable, keyID, err)
	}
	if ok == 0 {
		return KeyRecord{}, fmt.Errorf("%w: key_id %s", ErrUnknownKey, keyID)
	}
	r.mu.Lock()
	for s, e := range r.cache {
		if e.rec.KeyID == keyID {
			delete(r.cache, s)
		}
	}
	r.mu.Unlock()
	rec, _, err := r.get(ctx, keyID)
	return rec, err
}

// Show returns the record of keyID: a static key's, or the registry's.
// Errors: ErrUnknownKey, or a Redis failure wrapped with ErrUnavailable.
func (r *Registry) Show(ctx context.Context, keyID string) (KeyRecord, error) {
	for _, k := range r.plans.StaticKeys() {
		if k.KeyID == keyID {
			return staticRecord(k), nil
		}
	}
	if !validKeyID(keyID) {
		return KeyRecord{}, fmt.Errorf("%w: %q", ErrInvalidKeyID, keyID)
	}
	if r.rdb == nil {
		return KeyRecord{}, fmt.Errorf("%w: key_id %s", ErrUnknownKey, keyID)
	}
	rec, _, err := r.get(ctx, keyID)
	return rec, err
}

// List returns every key: the static keys (by key id), then the registry's
// (by creation time, then key id), revoked ones included. Redis failures
// are wrapped with ErrUnavailable.
func (r *Registry) List(ctx context.Context) ([]KeyRecord, error) {
	var out []KeyRecord
	for _, k := range r.plans.StaticKeys() {
		out = append(out, staticRecord(k))
	}
	if r.rdb == nil {
		return out, nil
	}
	ids, err := r.rdb.SMembers(ctx, r.index).Result()
	if err != nil {
		return nil, fmt.Errorf("%w: listing keys: %w", ErrUnavailable, err)
	}
	var reg []KeyRecord
	for _, id := range ids {
		rec, _, err := r.get(ctx, id)
		switch {
		case errors.Is(err, ErrUnknownKey):
			continue // indexed, but its creation failed
		case err != nil:
			return nil, err
		}
		reg = append(reg, rec)
	}
	slices.SortFunc(reg, func(a, b KeyRecord) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.KeyID, b.KeyID)
	})
	return append(out, reg...), nil
}

// get reads a registry record and its SHA-256.
func (r *Registry) get(ctx context.Context, keyID string) (KeyRecord, string, error) {
	h, err := r.rdb.HGetAll(ctx, recordKey(keyID)).Result()
	if err != nil {
		return KeyRecord{}, "", fmt.Errorf("%w: reading key_id %s: %w", ErrUnavailable, keyID, err)
	}
	if len(h) == 0 {
		return KeyRecord{}, "", fmt.Errorf("%w: key_id %s", ErrUnknownKey, keyID)
	}
	rec := KeyRecord{KeyID: keyID, Plan: h["plan"], Status: KeyStatus(h["status"]), Label: h["label"], Source: SourceRegistry}
	rec.Created, _ = time.Parse(time.RFC3339, h["created"])
	rec.Revoked, _ = time.Parse(time.RFC3339, h["revoked"])
	return rec, h["sha256"], nil
}

// identityKey is the Redis hash of the key bound to an identity provider's
// caller: restmcp:{<identity>}:upstream-key (key_id, sealed).
func identityKey(identity string) string { return Key(identity, "upstream-key") }

// BindIdentity makes the registry key keyID the upstream key of identity
// (an identity provider's caller's key id, idp-…): sealed is the key
// itself, sealed for identity with the deployment's encryption key
// (internal/seal), the only form in which the registry holds a key. A
// later binding replaces an earlier one. Errors: ErrNoRegistry, or a Redis
// failure wrapped with ErrUnavailable.
func (r *Registry) BindIdentity(ctx context.Context, identity, keyID string, sealed []byte) error {
	if r.rdb == nil {
		return ErrNoRegistry
	}
	if err := r.rdb.HSet(ctx, identityKey(identity), "key_id", keyID, "sealed", string(sealed)).Err(); err != nil {
		return fmt.Errorf("%w: binding %s: %w", ErrUnavailable, identity, err)
	}
	return nil
}

// IdentityKey returns the key id and the sealed key bound to identity
// (BindIdentity). Errors: ErrUnknownKey when none is, ErrNoRegistry, or a
// Redis failure wrapped with ErrUnavailable.
func (r *Registry) IdentityKey(ctx context.Context, identity string) (keyID string, sealed []byte, err error) {
	if r.rdb == nil {
		return "", nil, ErrNoRegistry
	}
	h, err := r.rdb.HGetAll(ctx, identityKey(identity)).Result()
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("%w: reading the key of %s: %w", ErrUnavailable, identity, err)
	case h["key_id"] == "":
		return "", nil, fmt.Errorf("%w: no key is bound to %s", ErrUnknownKey, identity)
	}
	return h["key_id"], []byte(h["sealed"]), nil
}

func staticRecord(k StaticKey) KeyRecord {
	return KeyRecord{KeyID: k.KeyID, Plan: k.Plan, Status: KeyActive, Label: k.Label, Source: SourceStatic}
}

// Lookup resolves an API key (as presented by the caller) to its record
// and plan: the plans file's keys first, then the registry. A registry key
// must be active (else ErrRevokedKey, in either key mode) and its plan
// must still exist (else ErrUnknownPlan). Any other key is ErrUnknownKey
// in registry mode, and in open mode resolves to the default plan with
// Source SourceOpen. Answers are cached for CacheTTL per process, so the
// hot path usually makes no Redis round trip here; a Redis failure is not
// cached and is returned wrapped with ErrUnavailable, except in open mode,
// where the key falls back to the default plan.
func (r *Registry) Lookup(ctx context.Context, key string) (KeyRecord, *Plan, error) {
	s := sum(key)
	if k, ok := r.plans.staticKey(s); ok {
		return staticRecord(k), r.plans.Plan(k.Plan), nil
	}
	now := r.now()
	if r.ttl > 0 {
		r.mu.Lock()
		e, ok := r.cache[s]
		r.mu.Unlock()
		if ok && now.Before(e.exp) {
			return e.rec, e.plan, e.err
		}
	}
	rec, plan, err := r.resolve(ctx, s)
	if errors.Is(err, ErrUnavailable) {
		if r.plans.KeyMode == KeyModeOpen {
			return r.open(s), r.plans.Default(), nil
		}
		return KeyRecord{}, nil, err
	}
	if r.ttl > 0 {
		r.mu.Lock()
		if len(r.cache) >= r.size {
			for k, e := range r.cache {
				if !now.Before(e.exp) {
					delete(r.cache, k)
				}
			}
			if len(r.cache) >= r.size {
				clear(r.cache)
			}
		}
		r.cache[s] = cacheEntry{rec: rec, plan: plan, err: err, exp: now.Add(r.ttl)}
		r.mu.Unlock()
	}
	return rec, plan, err
}

// InMemory reports whether r has no Redis (static keys only), so that
// ResolveKey never waits on a store and a caller needs no deadline on it.
func (r *Registry) InMemory() bool { return r.rdb == nil }

// ResolveKey returns the plan of an API key as presented by the caller,
// for the adapter: the default plan for "" (a call without a key, where
// the deployment allows one), else Lookup's plan. Its errors are Lookup's:
// ErrUnknownKey and ErrRevokedKey (answered 401), anything else (the store
// is down, ErrUnknownPlan) is answered 503.
func (r *Registry) ResolveKey(ctx context.Context, key string) (*Plan, error) {
	if key == "" {
		return r.plans.Default(), nil
	}
	_, plan, err := r.Lookup(ctx, key)
	return plan, err
}

// resolve is Lookup without the cache, for a key whose SHA-256 is s.
func (r *Registry) resolve(ctx context.Context, s string) (KeyRecord, *Plan, error) {
	keyID := keyIDOf(s)
	if r.rdb == nil {
		if r.plans.KeyMode == KeyModeOpen {
			return r.open(s), r.plans.Default(), nil
		}
		return KeyRecord{}, nil, fmt.Errorf("%w: key_id %s", ErrUnknownKey, keyID)
	}
	rec, stored, err := r.get(ctx, keyID)
	if err == nil && stored != s { // another key with the same 48-bit id
		err = fmt.Errorf("%w: key_id %s", ErrUnknownKey, keyID)
	}
	switch {
	case errors.Is(err, ErrUnknownKey) && r.plans.KeyMode == KeyModeOpen:
		return r.open(s), r.plans.Default(), nil
	case err != nil:
		return KeyRecord{}, nil, err
	case rec.Status != KeyActive:
		return rec, nil, fmt.Errorf("%w: key_id %s", ErrRevokedKey, keyID)
	}
	plan := r.plans.Plan(rec.Plan)
	if plan == nil {
		return rec, nil, fmt.Errorf("%w: key_id %s is on plan %q, which the plans file does not define", ErrUnknownPlan, keyID, rec.Plan)
	}
	return rec, plan, nil
}

func (r *Registry) open(s string) KeyRecord {
	return KeyRecord{KeyID: keyIDOf(s), Plan: r.plans.DefaultPlan, Status: KeyActive, Source: SourceOpen}
}
