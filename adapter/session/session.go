// Package session keeps the MCP sessions of restmcp's sessions mode: an
// id issued by initialize (the Mcp-Session-Id header, MCP 2025-11-25
// §Transports "Session Management",
// https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#session-management)
// that every later request must carry, alive while it is used (a sliding
// idle expiry). The memory store serves one process; the Redis store lets
// any replica serve a session another created.
package session

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Store holds live session ids, each with its owner: the caller it serves
// (an opaque string the adapter derives from the caller's key; "" while
// the session has none). Implementations are safe for concurrent use.
type Store interface {
	// Create records a new session id, owned by owner ("" for none), that
	// lives for idle unless touched.
	Create(ctx context.Context, id, owner string, idle time.Duration) error
	// Touch reports whether the session id is alive and its owner and, if
	// alive, extends its life to idle from now.
	Touch(ctx context.Context, id string, idle time.Duration) (owner string, alive bool, err error)
	// Claim gives a live session without an owner to owner, atomically, and
	// returns the owner the session has after it: owner when the claim
	// took, the earlier owner when another caller was first; alive is false
	// for a session that has ended.
	Claim(ctx context.Context, id, owner string) (now string, alive bool, err error)
	// Delete ends the session; a missing one is not an error.
	Delete(ctx context.Context, id string) error
}

// NewID returns a new session id: 128 random bits in base64url (visible
// ASCII, as the transport requires).
func NewID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// MemoryStore is a Store in process memory; expired sessions are dropped
// as they are met and by a sweep every thousand creations.
type MemoryStore struct {
	mu       sync.Mutex
	sessions map[string]memorySession
	creates  int
	now      func() time.Time
}

type memorySession struct {
	expires time.Time
	owner   string
}

// NewMemoryStore returns an empty store; now is its clock (nil: time.Now).
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{sessions: map[string]memorySession{}, now: now}
}

// Create implements Store.
func (m *MemoryStore) Create(_ context.Context, id, owner string, idle time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if m.creates++; m.creates%1000 == 0 {
		for k, ms := range m.sessions {
			if !now.Before(ms.expires) {
				delete(m.sessions, k)
			}
		}
	}
	m.sessions[id] = memorySession{expires: now.Add(idle), owner: owner}
	return nil
}

// live returns the session id if it has not expired; the caller holds m.mu.
func (m *MemoryStore) live(id string) (memorySession, bool) {
	ms, ok := m.sessions[id]
	if !ok || !m.now().Before(ms.expires) {
		delete(m.sessions, id)
		return memorySession{}, false
	}
	return ms, true
}

// Touch implements Store.
func (m *MemoryStore) Touch(_ context.Context, id string, idle time.Duration) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, ok := m.live(id)
	if !ok {
		return "", false, nil
	}
	ms.expires = m.now().Add(idle)
	m.sessions[id] = ms
	return ms.owner, true, nil
}

// Claim implements Store.
func (m *MemoryStore) Claim(_ context.Context, id, owner string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms, ok := m.live(id)
	if !ok {
		return "", false, nil
	}
	if ms.owner == "" {
		ms.owner = owner
		m.sessions[id] = ms
	}
	return ms.owner, true, nil
}

// Delete implements Store.
func (m *MemoryStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
	return nil
}

// RedisKeyPrefix starts the Redis key of each session:
// restmcp:session:<id>, whose value is its owner ("" for none) and whose
// TTL is the session's remaining idle time.
const RedisKeyPrefix = "restmcp:session:"

// RedisStore is a Store in Redis: one key per session; each Touch and
// Claim is one round trip (a script reads the owner and extends or sets it
// atomically).
type RedisStore struct{ rdb redis.UniversalClient }

// NewRedisStore returns a Store over rdb.
func NewRedisStore(rdb redis.UniversalClient) *RedisStore { return &RedisStore{rdb: rdb} }

// Create implements Store.
func (r *RedisStore) Create(ctx context.Context, id, owner string, idle time.Duration) error {
	return r.rdb.Set(ctx, RedisKeyPrefix+id, owner, idle).Err()
}

// touchScript returns the session's owner after extending its TTL to
// ARGV[1] ms, or false when it has ended.
var touchScript = redis.NewScript(`
local v = redis.call("GET", KEYS[1])
if not v then return false end
redis.call("PEXPIRE", KEYS[1], ARGV[1])
return v
`)

// claimScript sets the owner of a session without one to ARGV[1] and
// returns the owner it then has, or false when it has ended.
var claimScript = redis.NewScript(`
local v = redis.call("GET", KEYS[1])
if not v then return false end
if v == "" then redis.call("SET", KEYS[1], ARGV[1], "KEEPTTL"); return ARGV[1] end
return v
`)

// Touch implements Store.
func (r *RedisStore) Touch(ctx context.Context, id string, idle time.Duration) (string, bool, error) {
	return ownerReply(touchScript.Run(ctx, r.rdb, []string{RedisKeyPrefix + id}, idle.Milliseconds()).Text())
}

// Claim implements Store.
func (r *RedisStore) Claim(ctx context.Context, id, owner string) (string, bool, error) {
	return ownerReply(claimScript.Run(ctx, r.rdb, []string{RedisKeyPrefix + id}, owner).Text())
}

// ownerReply reads a script's owner reply: nil (redis.Nil) means ended.
func ownerReply(owner string, err error) (string, bool, error) {
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return owner, true, nil
}

// Delete implements Store.
func (r *RedisStore) Delete(ctx context.Context, id string) error {
	return r.rdb.Del(ctx, RedisKeyPrefix+id).Err()
}
