package session

import (
	"context"
	"testing"
	"time"

	"github.com/restmcp/restmcp/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestStoresKeepOwners runs both stores through a session's life: created
// with or without an owner, touched, claimed once (a second claim keeps the
// first owner), deleted; an ended session is neither touched nor claimed.
func TestStoresKeepOwners(t *testing.T) {
	for name, store := range map[string]Store{"memory": NewMemoryStore(nil), "redis": NewRedisStore(testenv.Redis(t))} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			owned, open := NewID(), NewID()
			t.Cleanup(func() { _ = store.Delete(ctx, owned); _ = store.Delete(ctx, open) })
			if err := store.Create(ctx, owned, "k:a", time.Minute); err != nil {
				t.Fatal(err)
			}
			if err := store.Create(ctx, open, "", time.Minute); err != nil {
				t.Fatal(err)
			}
			check := func(what string, gotOwner string, gotAlive bool, err error, owner string, alive bool) {
				t.Helper()
				if err != nil || gotOwner != owner || gotAlive != alive {
					t.Errorf("%s = %q, %v, %v; want %q, %v", what, gotOwner, gotAlive, err, owner, alive)
				}
			}
			o, ok, err := store.Touch(ctx, owned, time.Minute)
			check("Touch(owned)", o, ok, err, "k:a", true)
			o, ok, err = store.Claim(ctx, owned, "k:b")
			check("Claim(owned, b)", o, ok, err, "k:a", true)
			o, ok, err = store.Touch(ctx, open, time.Minute)
			check("Touch(open)", o, ok, err, "", true)
			o, ok, err = store.Claim(ctx, open, "k:b")
			check("Claim(open, b)", o, ok, err, "k:b", true)
			o, ok, err = store.Claim(ctx, open, "k:c")
			check("Claim(open, c)", o, ok, err, "k:b", true)
			if err := store.Delete(ctx, open); err != nil {
				t.Fatal(err)
			}
			o, ok, err = store.Touch(ctx, open, time.Minute)
			check("Touch(deleted)", o, ok, err, "", false)
			o, ok, err = store.Claim(ctx, open, "k:c")
			check("Claim(deleted)", o, ok, err, "", false)
		})
	}
}
