// Package task keeps the jobs restmcp watches for its callers: a REST call
// that answered 202 Accepted and named a status resource, handed to the
// client as an MCP task (the io.modelcontextprotocol/tasks extension,
// SEP-2663: https://modelcontextprotocol.io/seps/2663-tasks-extension) or,
// to a client without the extension, as a job handle its companion tool
// resumes. A task belongs to the caller that started it (its key id): a
// read by anyone else finds nothing. The memory store serves one process;
// the Redis store lets any replica answer for a task another created.
package task

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The states of a task (SEP-2663 "Task Status"). restmcp never asks the
// client for input, so a task is never input_required.
const (
	Working   = "working"
	Completed = "completed"
	Failed    = "failed"
	Cancelled = "cancelled"
)

// Task is one watched job.
type Task struct {
	ID    string `json:"id"`
	Owner string `json:"owner"` // the key id of the caller that started it
	API   string `json:"api,omitempty"`
	Plan  string `json:"plan,omitempty"` // the owner's plan when it started the job
	Tool  string `json:"tool"`           // the tool whose call started it
	// Status is Working until the job ends: Completed (Result holds the
	// tool result, an error result included), Failed (Error holds the
	// JSON-RPC error) or Cancelled.
	Status  string `json:"status"`
	Message string `json:"message,omitempty"` // what the last poll learned, for people
	// StatusURL is the resource the job is watched at (absolute URL).
	StatusURL string    `json:"statusUrl"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// NextPoll is the earliest time of the next poll; PollEvery the
	// interval the API last asked for (Retry-After, bounded).
	NextPoll  time.Time     `json:"nextPoll"`
	PollEvery time.Duration `json:"pollEvery"`
	Polls     int           `json:"polls"`
	// ExpiresAt is CreatedAt plus the task lifetime: the store forgets the
	// task then.
	ExpiresAt time.Time       `json:"expiresAt"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
}

// Ended reports whether t is in a terminal state.
func (t *Task) Ended() bool { return t.Status != Working }

// NewID returns a new task id: 128 random bits in base64url.
func NewID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// LimitError is the refusal of Create: the owner's working tasks, or all
// owners', are at their cap.
type LimitError struct {
	PerKey bool // true: the owner's cap; false: the server-wide cap
	Limit  int
}

func (e *LimitError) Error() string {
	if e.PerKey {
		return fmt.Sprintf("this key already has %d jobs being watched (max_tasks_per_key)", e.Limit)
	}
	return fmt.Sprintf("this server already watches %d jobs (max_tasks)", e.Limit)
}

// Store holds tasks. Implementations are safe for concurrent use.
type Store interface {
	// Create records t until t.ExpiresAt if its owner has fewer than
	// perKey working tasks and all owners fewer than total (a cap <= 0 is
	// no cap); otherwise it returns a *LimitError and records nothing. A
	// task counts toward the caps while it is working and unexpired.
	Create(ctx context.Context, t *Task, perKey, total int) error
	// Get returns the task id if owner owns it and it has not expired;
	// nil, nil otherwise: another caller's task is not found either.
	Get(ctx context.Context, owner, id string) (*Task, error)
	// Put saves t over the task Create recorded, if that one is still
	// working (an ended task never changes: its end is recorded once), and
	// reports whether it did; the expiry stays. A task that has ended stops
	// counting toward the caps.
	Put(ctx context.Context, t *Task) (bool, error)
}

// MemoryStore is a Store in process memory. Expired tasks are dropped as
// they are met and by a sweep every sweepEvery creations; the caps count
// the working tasks not yet expired, in O(tasks of the owner).
type MemoryStore struct {
	mu      sync.Mutex
	tasks   map[string]Task
	working map[string]map[string]time.Time // owner → id → expiry
	nWork   int                             // tasks in working
	creates int
	now     func() time.Time
}

const sweepEvery = 256

// NewMemoryStore returns an empty store; now is its clock (nil: time.Now).
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{tasks: map[string]Task{}, working: map[string]map[string]time.Time{}, now: now}
}

// sweep drops expired tasks; the caller holds m.mu.
func (m *MemoryStore) sweep(now time.Time) {
	for id, t := range m.tasks {
		if !now.Before(t.ExpiresAt) {
			delete(m.tasks, id)
			m.unwork(t.Owner, id)
		}
	}
}

// sweepOwner drops owner's expired working tasks; the caller holds m.mu.
func (m *MemoryStore) sweepOwner(owner string, now time.Time) {
	for id, exp := range m.working[owner] {
		if !now.Before(exp) {
			delete(m.tasks, id)
			m.unwork(owner, id)
		}
	}
}

func (m *MemoryStore) unwork(owner, id string) {
	if w := m.working[owner]; w != nil {
		if _, ok := w[id]; ok {
			delete(w, id)
			m.nWork--
		}
		if len(w) == 0 {
			delete(m.working, owner)
		}
	}
}

// Create implements Store.
func (m *MemoryStore) Create(_ context.Context, t *Task, perKey, total int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if m.creates++; m.creates%sweepEvery == 0 || total > 0 && m.nWork >= total {
		m.sweep(now)
	} else {
		m.sweepOwner(t.Owner, now)
	}
	if perKey > 0 && len(m.working[t.Owner]) >= perKey {
		return &LimitError{PerKey: true, Limit: perKey}
	}
	if total > 0 && m.nWork >= total {
		return &LimitError{Limit: total}
	}
	m.tasks[t.ID] = *t
	if !t.Ended() {
		if m.working[t.Owner] == nil {
			m.working[t.Owner] = map[string]time.Time{}
		}
		m.working[t.Owner][t.ID] = t.ExpiresAt
		m.nWork++
	}
	return nil
}

// Get implements Store.
func (m *MemoryStore) Get(_ context.Context, owner, id string) (*Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok || t.Owner != owner || !m.now().Before(t.ExpiresAt) {
		return nil, nil
	}
	return &t, nil
}

// Put implements Store.
func (m *MemoryStore) Put(_ context.Context, t *Task) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.tasks[t.ID]; !ok || old.Ended() || !m.now().Before(old.ExpiresAt) {
		return false, nil // expired or ended meanwhile: nothing to change
	}
	m.tasks[t.ID] = *t
	if t.Ended() {
		m.unwork(t.Owner, t.ID)
	}
	return true, nil
}

// RedisKeyPrefix starts restmcp's task keys: restmcp:task:<id> holds the
// task (JSON) until it expires; restmcp:tasks:working:<owner> and
// restmcp:tasks:working are sorted sets of working task ids scored by
// their expiry (Unix ms), which the caps count.
const RedisKeyPrefix = "restmcp:task:"

const (
	workingPrefix = "restmcp:tasks:working:"
	workingAll    = "restmcp:tasks:working"
)

// RedisStore is a Store in Redis. Each cap is a sorted set reserved by one
// script (expired members dropped, counted, the new one added), so two
// replicas never both take the last place; each script touches one key,
// so the store works on a Redis Cluster too.
type RedisStore struct {
	rdb redis.UniversalClient
	now func() time.Time
}

// NewRedisStore returns a Store over rdb.
func NewRedisStore(rdb redis.UniversalClient) *RedisStore {
	return &RedisStore{rdb: rdb, now: time.Now}
}

// reserveScript adds ARGV[3] scored ARGV[2] (its expiry, Unix ms) to the
// sorted set KEYS[1] unless it holds ARGV[4] or more members unexpired at
// ARGV[1]; 1 when added, 0 when full. The set lives as long as its last
// member.
var reserveScript = redis.NewScript(`
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", ARGV[1])
if tonumber(ARGV[4]) > 0 and redis.call("ZCARD", KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
redis.call("ZADD", KEYS[1], ARGV[2], ARGV[3])
local last = redis.call("ZRANGE", KEYS[1], -1, -1, "WITHSCORES")
redis.call("PEXPIREAT", KEYS[1], last[2])
return 1
`)

func (r *RedisStore) reserve(ctx context.Context, key string, t *Task, limit int) (bool, error) {
	n, err := reserveScript.Run(ctx, r.rdb, []string{key}, r.now().UnixMilli(), t.ExpiresAt.UnixMilli(), t.ID, limit).Int()
	return n == 1, err
}

// Create implements Store.
func (r *RedisStore) Create(ctx context.Context, t *Task, perKey, total int) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	own := workingPrefix + t.Owner
	if !t.Ended() {
		ok, err := r.reserve(ctx, own, t, perKey)
		if err != nil {
			return err
		}
		if !ok {
			return &LimitError{PerKey: true, Limit: perKey}
		}
		ok, err = r.reserve(ctx, workingAll, t, total)
		if err != nil || !ok {
			r.rdb.ZRem(context.WithoutCancel(ctx), own, t.ID)
			if err != nil {
				return err
			}
			return &LimitError{Limit: total}
		}
	}
	if err := r.rdb.Set(ctx, RedisKeyPrefix+t.ID, b, time.Until(t.ExpiresAt)).Err(); err != nil {
		r.release(context.WithoutCancel(ctx), t)
		return err
	}
	return nil
}

// release takes t off the caps.
func (r *RedisStore) release(ctx context.Context, t *Task) {
	r.rdb.ZRem(ctx, workingPrefix+t.Owner, t.ID)
	r.rdb.ZRem(ctx, workingAll, t.ID)
}

// Get implements Store.
func (r *RedisStore) Get(ctx context.Context, owner, id string) (*Task, error) {
	b, err := r.rdb.Get(ctx, RedisKeyPrefix+id).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var t Task
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("task %s: stored value unreadable: %w", id, err)
	}
	if t.Owner != owner {
		return nil, nil
	}
	return &t, nil
}

// putScript replaces the task KEYS[1] by ARGV[1] if it exists and is
// still working, keeping its TTL; 1 when replaced.
var putScript = redis.NewScript(`
local v = redis.call("GET", KEYS[1])
if not v or cjson.decode(v).status ~= "working" then return 0 end
redis.call("SET", KEYS[1], ARGV[1], "KEEPTTL")
return 1
`)

// Put implements Store.
func (r *RedisStore) Put(ctx context.Context, t *Task) (bool, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return false, err
	}
	n, err := putScript.Run(ctx, r.rdb, []string{RedisKeyPrefix + t.ID}, b).Int()
	if err != nil {
		return false, err
	}
	if n == 1 && t.Ended() {
		r.release(ctx, t)
	}
	return n == 1, nil
}
