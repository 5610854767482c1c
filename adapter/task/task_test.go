package task

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/restmcp/restmcp/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestStores runs both stores through tasks' lives: a task is found by its
// owner only; the per-owner and the total cap count working tasks and
// refuse with a LimitError naming the cap; an ended task frees its place
// and never changes again (Put reports false); an expired task is gone.
func TestStores(t *testing.T) {
	rdb := testenv.Redis(t)
	for name, store := range map[string]Store{"memory": NewMemoryStore(nil), "redis": NewRedisStore(rdb)} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			// Owners unique to the run: the Redis caps are per owner.
			a, b := "a-"+NewID(), "b-"+NewID()
			now := time.Now().Truncate(time.Millisecond).UTC()
			mk := func(owner string, ttl time.Duration) *Task {
				return &Task{ID: NewID(), Owner: owner, Tool: "start_job", Status: Working, StatusURL: "http://api.test/v1/status/1",
					CreatedAt: now, UpdatedAt: now, NextPoll: now.Add(time.Second), PollEvery: time.Second, ExpiresAt: now.Add(ttl)}
			}
			t1, t2, t3 := mk(a, time.Minute), mk(a, time.Minute), mk(b, time.Minute)
			if err := store.Create(ctx, t1, 2, 0); err != nil {
				t.Fatal(err)
			}
			if err := store.Create(ctx, t2, 2, 0); err != nil {
				t.Fatal(err)
			}
			var le *LimitError
			if err := store.Create(ctx, mk(a, time.Minute), 2, 0); !errors.As(err, &le) || !le.PerKey || le.Error() != "this key already has 2 jobs being watched (max_tasks_per_key)" {
				t.Fatalf("third task of a: %v, want the per-key cap", err)
			}
			if err := store.Create(ctx, t3, 2, 0); err != nil {
				t.Fatalf("b has its own places: %v", err)
			}
			got, err := store.Get(ctx, a, t1.ID)
			if err != nil || got == nil {
				t.Fatalf("Get(a, t1) = %v, %v", got, err)
			}
			if diff := cmp.Diff(t1, got); diff != "" {
				t.Errorf("Get(a, t1) (-stored +read):\n%s", diff)
			}
			if got, err := store.Get(ctx, b, t1.ID); got != nil || err != nil {
				t.Errorf("Get(b, a's task) = %v, %v; want nothing", got, err)
			}
			ended := *t1
			ended.Status, ended.Result = Completed, []byte(`{"content":[]}`)
			if ok, err := store.Put(ctx, &ended); !ok || err != nil {
				t.Fatalf("Put(ended) = %v, %v", ok, err)
			}
			again := ended
			again.Status = Cancelled
			if ok, err := store.Put(ctx, &again); ok || err != nil {
				t.Errorf("Put over an ended task = %v, %v; want false: an end is final", ok, err)
			}
			if got, _ := store.Get(ctx, a, t1.ID); got == nil || got.Status != Completed || string(got.Result) != `{"content":[]}` {
				t.Errorf("after the end: %+v", got)
			}
			// t1's place is free again.
			if err := store.Create(ctx, mk(a, time.Minute), 2, 0); err != nil {
				t.Errorf("a task after one ended: %v", err)
			}
			// Expiry.
			short := mk(b, 50*time.Millisecond)
			if err := store.Create(ctx, short, 0, 0); err != nil {
				t.Fatal(err)
			}
			// The store's own clock (or Redis's) applies the 50 ms expiry.
			testenv.Eventually(t, 5*time.Second, "the task's 50 ms expiry", func() bool {
				got, _ := store.Get(ctx, b, short.ID)
				return got == nil
			})
			if ok, _ := store.Put(ctx, short); ok {
				t.Errorf("Put brought an expired task back")
			}
		})
	}
}

// TestTotalCap: the server-wide cap counts every owner's working tasks;
// expired ones free their places (memory store, on its own clock).
func TestTotalCap(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	store := NewMemoryStore(func() time.Time { return now })
	for i, owner := range []string{"x", "y", "z"} {
		err := store.Create(ctx, &Task{ID: NewID(), Owner: owner, Status: Working, ExpiresAt: now.Add(time.Minute)}, 0, 2)
		var le *LimitError
		switch {
		case i < 2 && err != nil:
			t.Fatalf("task %d: %v", i, err)
		case i == 2 && (!errors.As(err, &le) || le.PerKey || le.Error() != "this server already watches 2 jobs (max_tasks)"):
			t.Fatalf("third task: %v, want the total cap", err)
		}
	}
	now = now.Add(2 * time.Minute)
	if err := store.Create(ctx, &Task{ID: NewID(), Owner: "z", Status: Working, ExpiresAt: now.Add(time.Minute)}, 0, 2); err != nil {
		t.Fatalf("after the first two expired: %v", err)
	}
	if store.nWork != 1 || len(store.tasks) != 1 {
		t.Errorf("%d working, %d kept; want 1 and 1", store.nWork, len(store.tasks))
	}
}
