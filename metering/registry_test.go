package metering

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"
)

const registryPlans = `
default_plan: free
key_mode: %s
plans:
  free: {rate_limits: {per_minute: 10}}
  pro: {rate_limits: {per_minute: 1000}}
keys:
  - key: static-dev-key
    plan: pro
    label: dev
`

// newTestRegistry returns a registry in mode on the test Redis, with its
// own index set, and a function that registers created key ids for
// cleanup.
func newTestRegistry(t *testing.T, c *redis.Client, mode string, clk *fakeClock) (*Registry, func(KeyRecord)) {
	t.Helper()
	ps := mustParsePlans(t, strings.Replace(registryPlans, "%s", mode, 1))
	index := Key(newKeyID(t, c), "keys")
	r := NewRegistry(c, ps, RegistryOptions{IndexKey: index, Now: clk.Now})
	track := func(rec KeyRecord) {
		t.Cleanup(func() { deleteKeys(t, c, rec.KeyID) })
	}
	return r, track
}

func TestRegistryLifecycle(t *testing.T) {
	c := testRedis(t)
	clk := newFakeClock(testStart)
	r, track := newTestRegistry(t, c, "registry", clk)
	ctx := context.Background()

	key, rec, err := r.Create(ctx, "pro", "acme prod")
	if err != nil {
		t.Fatal(err)
	}
	track(rec)
	if !strings.HasPrefix(key, "rmk_") || len(key) != 52 {
		t.Errorf("key %q: want rmk_ and 48 hex digits", key)
	}
	want := KeyRecord{KeyID: sum(key)[:12], Plan: "pro", Status: KeyActive, Label: "acme prod", Created: testStart, Source: SourceRegistry}
	if diff := cmp.Diff(want, rec); diff != "" {
		t.Errorf("Create record (-want +got):\n%s", diff)
	}

	// Stored only hashed: the key appears nowhere in Redis.
	h := c.HGetAll(ctx, "restmcp:{"+rec.KeyID+"}:key").Val()
	wantHash := map[string]string{"sha256": sum(key), "key_id": rec.KeyID, "plan": "pro", "status": "active", "label": "acme prod", "created": "2026-11-15T12:00:00Z"}
	if diff := cmp.Diff(wantHash, h); diff != "" {
		t.Errorf("stored record (-want +got):\n%s", diff)
	}

	got, plan, err := r.Lookup(ctx, key)
	if err != nil || plan != r.Plans().Plan("pro") {
		t.Fatalf("Lookup = %+v, %v, %v; want the pro plan", got, plan, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Lookup record (-want +got):\n%s", diff)
	}
	if _, _, err := r.Lookup(ctx, "rmk_not-a-key"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("Lookup(unknown) error = %v, want ErrUnknownKey", err)
	}
	// A key whose 12-digit id matches but whose hash does not is unknown.
	if err := c.HSet(ctx, "restmcp:{"+sum("impostor")[:12]+"}:key", "sha256", strings.Repeat("0", 64), "plan", "pro", "status", "active").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteKeys(t, c, sum("impostor")[:12]) })
	if _, _, err := r.Lookup(ctx, "impostor"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("Lookup(id collision) error = %v, want ErrUnknownKey", err)
	}

	// Static keys come first and need no Redis record.
	st, plan, err := r.Lookup(ctx, "static-dev-key")
	if err != nil || plan.Name != "pro" || st.Source != SourceStatic || st.KeyID != sum("static-dev-key")[:12] {
		t.Errorf("Lookup(static) = %+v, %v, %v", st, plan, err)
	}

	clk.Advance(time.Hour)
	key2, rec2, err := r.Create(ctx, "", "")
	if err != nil {
		t.Fatal(err)
	}
	track(rec2)
	if rec2.Plan != "free" {
		t.Errorf("Create with no plan: plan %q, want the default free", rec2.Plan)
	}

	// List: static first, then by creation.
	list, err := r.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, k := range list {
		ids = append(ids, k.KeyID+"/"+string(k.Source))
	}
	if diff := cmp.Diff([]string{st.KeyID + "/static", rec.KeyID + "/registry", rec2.KeyID + "/registry"}, ids); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}

	// Revoke: effective at once on this registry.
	clk.Advance(time.Minute)
	rv, err := r.Revoke(ctx, rec.KeyID)
	if err != nil || rv.Status != KeyRevoked || !rv.Revoked.Equal(testStart.Add(61*time.Minute)) {
		t.Fatalf("Revoke = %+v, %v", rv, err)
	}
	if _, _, err := r.Lookup(ctx, key); !errors.Is(err, ErrRevokedKey) {
		t.Errorf("Lookup(revoked) error = %v, want ErrRevokedKey", err)
	}
	if shown, err := r.Show(ctx, rec.KeyID); err != nil || shown.Status != KeyRevoked {
		t.Errorf("Show(revoked) = %+v, %v", shown, err)
	}
	if _, err := r.Revoke(ctx, rec.KeyID); err != nil {
		t.Errorf("revoking twice: %v", err)
	}
	if _, err := r.Revoke(ctx, "000000000000"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("Revoke(unknown) error = %v, want ErrUnknownKey", err)
	}
	if _, err := r.Revoke(ctx, st.KeyID); !errors.Is(err, ErrStaticKey) {
		t.Errorf("Revoke(static) error = %v, want ErrStaticKey", err)
	}
	if _, err := r.Show(ctx, "000000000000"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("Show(unknown) error = %v, want ErrUnknownKey", err)
	}
	if _, _, err := r.Create(ctx, "gold", ""); !errors.Is(err, ErrUnknownPlan) || err.Error() != `metering: unknown plan "gold" (plans: free, pro)` {
		t.Errorf("Create(gold) error = %v, want ErrUnknownPlan naming the plans", err)
	}
	if _, _, err := r.Lookup(ctx, key2); err != nil {
		t.Errorf("the other key still works: %v", err)
	}
}

// TestRegistryCacheDelay checks the documented revocation delay: another
// replica's registry keeps accepting a revoked key until its cache entry
// expires (CacheTTL), then refuses it.
func TestRegistryCacheDelay(t *testing.T) {
	c := testRedis(t)
	clk := newFakeClock(testStart)
	admin, track := newTestRegistry(t, c, "registry", clk)
	replica := NewRegistry(c, admin.Plans(), RegistryOptions{IndexKey: admin.index, Now: clk.Now, CacheTTL: 5 * time.Second})
	ctx := context.Background()
	key, rec, err := admin.Create(ctx, "pro", "")
	if err != nil {
		t.Fatal(err)
	}
	track(rec)
	if _, _, err := replica.Lookup(ctx, key); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Revoke(ctx, rec.KeyID); err != nil {
		t.Fatal(err)
	}
	clk.Advance(5*time.Second - time.Millisecond)
	if _, _, err := replica.Lookup(ctx, key); err != nil {
		t.Errorf("within CacheTTL: %v, want still accepted (cached)", err)
	}
	clk.Advance(time.Millisecond)
	if _, _, err := replica.Lookup(ctx, key); !errors.Is(err, ErrRevokedKey) {
		t.Errorf("after CacheTTL: %v, want ErrRevokedKey", err)
	}
	// Unknown answers are cached too: a key created afterwards is unknown
	// to a replica that just looked it up, for at most CacheTTL.
	noCache := NewRegistry(c, admin.Plans(), RegistryOptions{IndexKey: admin.index, Now: clk.Now, CacheTTL: -1})
	if _, _, err := noCache.Lookup(ctx, key); !errors.Is(err, ErrRevokedKey) {
		t.Errorf("without cache: %v, want ErrRevokedKey", err)
	}
}

// TestRegistryOpenMode checks key mode open: unknown keys get the default
// plan, registered and static keys their own, revoked keys are refused.
func TestRegistryOpenMode(t *testing.T) {
	c := testRedis(t)
	clk := newFakeClock(testStart)
	r, track := newTestRegistry(t, c, "open", clk)
	ctx := context.Background()

	rec, plan, err := r.Lookup(ctx, "any-key-at-all")
	want := KeyRecord{KeyID: sum("any-key-at-all")[:12], Plan: "free", Status: KeyActive, Source: SourceOpen}
	if err != nil || plan.Name != "free" {
		t.Fatalf("Lookup(unknown) = %+v, %v, %v; want the default plan", rec, plan, err)
	}
	if diff := cmp.Diff(want, rec); diff != "" {
		t.Errorf("open record (-want +got):\n%s", diff)
	}
	key, created, err := r.Create(ctx, "pro", "")
	if err != nil {
		t.Fatal(err)
	}
	track(created)
	if _, plan, err := r.Lookup(ctx, key); err != nil || plan.Name != "pro" {
		t.Errorf("registered key in open mode: %v, %v; want pro", plan, err)
	}
	if _, plan, err := r.Lookup(ctx, "static-dev-key"); err != nil || plan.Name != "pro" {
		t.Errorf("static key in open mode: %v, %v; want pro", plan, err)
	}
	if _, err := r.Revoke(ctx, created.KeyID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Lookup(ctx, key); !errors.Is(err, ErrRevokedKey) {
		t.Errorf("revoked key in open mode: %v, want ErrRevokedKey", err)
	}
}

// TestRegistryWithoutRedis checks a registry of static keys only, and that
// open mode survives a Redis outage.
func TestRegistryWithoutRedis(t *testing.T) {
	ctx := context.Background()
	ps := mustParsePlans(t, strings.Replace(registryPlans, "%s", "registry", 1))
	r := NewRegistry(nil, ps, RegistryOptions{})
	if _, plan, err := r.Lookup(ctx, "static-dev-key"); err != nil || plan.Name != "pro" {
		t.Errorf("static key: %v, %v", plan, err)
	}
	if _, _, err := r.Lookup(ctx, "other"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("unknown key: %v, want ErrUnknownKey", err)
	}
	if _, _, err := r.Create(ctx, "pro", ""); !errors.Is(err, ErrNoRegistry) {
		t.Errorf("Create: %v, want ErrNoRegistry", err)
	}
	if list, err := r.List(ctx); err != nil || len(list) != 1 {
		t.Errorf("List = %v, %v; want the static key", list, err)
	}

	down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 100 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = down.Close() })
	if _, _, err := NewRegistry(down, ps, RegistryOptions{}).Lookup(ctx, "other"); !errors.Is(err, ErrUnavailable) {
		t.Errorf("registry mode, Redis down: %v, want ErrUnavailable", err)
	}
	open := mustParsePlans(t, strings.Replace(registryPlans, "%s", "open", 1))
	if rec, plan, err := NewRegistry(down, open, RegistryOptions{}).Lookup(ctx, "other"); err != nil || plan.Name != "free" || rec.Source != SourceOpen {
		t.Errorf("open mode, Redis down: %+v, %v, %v; want the default plan", rec, plan, err)
	}
}

// TestRegistryPlanRemoved checks that a key whose plan left the plans file
// is refused with ErrUnknownPlan rather than silently moved.
func TestRegistryPlanRemoved(t *testing.T) {
	c := testRedis(t)
	clk := newFakeClock(testStart)
	r, track := newTestRegistry(t, c, "registry", clk)
	ctx := context.Background()
	key, rec, err := r.Create(ctx, "pro", "")
	if err != nil {
		t.Fatal(err)
	}
	track(rec)
	fewer := NewRegistry(c, mustParsePlans(t, "default_plan: free\nplans: {free: {}}\n"), RegistryOptions{})
	if _, _, err := fewer.Lookup(ctx, key); !errors.Is(err, ErrUnknownPlan) {
		t.Errorf("Lookup = %v, want ErrUnknownPlan", err)
	}
}

// TestInMemory: a MemoryMeter and a Registry without Redis never wait on
// a store; a Registry on Redis may.
func TestInMemory(t *testing.T) {
	ps := mustParsePlans(t, strings.Replace(registryPlans, "%s", "registry", 1))
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialed
	t.Cleanup(func() { _ = client.Close() })
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"MemoryMeter", NewMemory(Options{}).InMemory(), true},
		{"Registry without Redis", NewRegistry(nil, ps, RegistryOptions{}).InMemory(), true},
		{"Registry on Redis", NewRegistry(client, ps, RegistryOptions{}).InMemory(), false},
	} {
		if c.got != c.want {
			t.Errorf("%s: InMemory() = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestBindIdentity: a registry key bound to an identity is found by the
// identity, sealed as given (the registry never sees the key); a later
// binding replaces it; an identity without one is ErrUnknownKey.
func TestBindIdentity(t *testing.T) {
	rdb := testRedis(t)
	r := NewRegistry(rdb, mustParsePlans(t, "default_plan: p\nplans:\n  p: {}\n"), RegistryOptions{})
	ctx := context.Background()
	identity := "idp-test-" + newKeyID(t, nil)
	t.Cleanup(func() { rdb.Del(ctx, identityKey(identity)) })
	if _, _, err := r.IdentityKey(ctx, identity); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("before binding: %v, want ErrUnknownKey", err)
	}
	for _, b := range []struct{ keyID, sealed string }{{"aaaaaaaaaaaa", "sealed-1"}, {"bbbbbbbbbbbb", "sealed-2\x00\xff"}} {
		if err := r.BindIdentity(ctx, identity, b.keyID, []byte(b.sealed)); err != nil {
			t.Fatal(err)
		}
		keyID, sealed, err := r.IdentityKey(ctx, identity)
		if err != nil || keyID != b.keyID || string(sealed) != b.sealed {
			t.Fatalf("IdentityKey = %q, %q, %v; want %q, %q", keyID, sealed, err, b.keyID, b.sealed)
		}
	}
	static := NewRegistry(nil, mustParsePlans(t, "default_plan: p\nplans:\n  p: {}\n"), RegistryOptions{})
	if err := static.BindIdentity(ctx, identity, "k", nil); !errors.Is(err, ErrNoRegistry) {
		t.Errorf("without Redis: %v", err)
	}
}
