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
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Store holds live session ids. Implementations are safe for concurrent
// use.
type Store interface {
	// Create records a new session id that lives for idle unless touched.
	Create(ctx context.Context, id string, idle time.Duration) error
	// Touch reports whether the session id is alive and, if so, extends its
	// life to idle from now.
	Touch(ctx context.Context, id string, idle time.Duration) (bool, error)
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
	mu      sync.Mutex
	expires map[string]time.Time
	creates int
	now     func() time.Time
}

// NewMemoryStore returns an empty store; now is its clock (nil: time.Now).
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{expires: map[string]time.Time{}, now: now}
}

// Create implements Store.
func (m *MemoryStore) Create(_ context.Context, id string, idle time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if m.creates++; m.creates%1000 == 0 {
		for k, exp := range m.expires {
			if !now.Before(exp) {
				delete(m.expires, k)
			}
		}
	}
	m.expires[id] = now.Add(idle)
	return nil
}

// Touch implements Store.
func (m *MemoryStore) Touch(_ context.Context, id string, idle time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	exp, ok := m.expires[id]
	if !ok || !now.Before(exp) {
		delete(m.expires, id)
		return false, nil
	}
	m.expires[id] = now.Add(idle)
	return true, nil
}

// Delete implements Store.
func (m *MemoryStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.expires, id)
	return nil
}

// RedisKeyPrefix starts the Redis key of each session:
// restmcp:session:<id>, whose TTL is the session's remaining idle time.
const RedisKeyPrefix = "restmcp:session:"

// RedisStore is a Store in Redis: one key per session; each Touch is one
// PEXPIRE round trip.
type RedisStore struct{ rdb redis.UniversalClient }

// NewRedisStore returns a Store over rdb.
func NewRedisStore(rdb redis.UniversalClient) *RedisStore { return &RedisStore{rdb: rdb} }

// Create implements Store.
func (r *RedisStore) Create(ctx context.Context, id string, idle time.Duration) error {
	return r.rdb.Set(ctx, RedisKeyPrefix+id, 1, idle).Err()
}

// Touch implements Store.
func (r *RedisStore) Touch(ctx context.Context, id string, idle time.Duration) (bool, error) {
	return r.rdb.PExpire(ctx, RedisKeyPrefix+id, idle).Result()
}

// Delete implements Store.
func (r *RedisStore) Delete(ctx context.Context, id string) error {
	return r.rdb.Del(ctx, RedisKeyPrefix+id).Err()
}
