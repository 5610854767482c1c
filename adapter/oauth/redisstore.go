package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisKeyPrefix starts every Redis key of the OAuth store: clients at
// restmcp:oauth:client:<client_id> (a JSON string), grants at
// restmcp:oauth:grant:<grant_id> (a hash) and identity assertions used at
// restmcp:oauth:used:<hash> (until they expire). Each operation touches one key,
// so the store works on a Redis Cluster unchanged.
const RedisKeyPrefix = "restmcp:oauth:"

// rediser lists the Redis commands the store uses; *redis.Client,
// *redis.ClusterClient and redis.UniversalClient satisfy it.
type rediser interface {
	redis.Scripter
	Set(ctx context.Context, key string, value any, expiration time.Duration) *redis.StatusCmd
	Get(ctx context.Context, key string) *redis.StringCmd
	HGetAll(ctx context.Context, key string) *redis.MapStringStringCmd
	Del(ctx context.Context, keys ...string) *redis.IntCmd
	PExpire(ctx context.Context, key string, expiration time.Duration) *redis.BoolCmd
	ZAdd(ctx context.Context, key string, members ...redis.Z) *redis.IntCmd
	ZAddXX(ctx context.Context, key string, members ...redis.Z) *redis.IntCmd
	ZRemRangeByScore(ctx context.Context, key, min, max string) *redis.IntCmd
	ZCard(ctx context.Context, key string) *redis.IntCmd
	ZPopMin(ctx context.Context, key string, count ...int64) *redis.ZSliceCmd
	SetNX(ctx context.Context, key string, value any, expiration time.Duration) *redis.BoolCmd
}

// RedisStore is a Store in Redis, shared by every replica. Grants are
// Redis hashes whose TTL is their remaining life; codes and tokens appear
// only as SHA-256 hashes and the API key only sealed (AES-256-GCM, see
// Options.EncryptionKey).
type RedisStore struct {
	rdb rediser
}

// NewRedisStore returns a Store over rdb.
func NewRedisStore(rdb redis.UniversalClient) *RedisStore { return &RedisStore{rdb: rdb} }

func clientKey(id string) string { return RedisKeyPrefix + "client:" + id }
func grantKey(id string) string  { return RedisKeyPrefix + "grant:" + id }

// clientIndexKey is a sorted set of every stored client id, scored by its
// expiry (unix ms): what PutClient counts and evicts by.
const clientIndexKey = RedisKeyPrefix + "clients"

// PutClient implements Store. The client's key and the index are separate
// commands (they are in different Cluster slots); a client evicted from
// the index is deleted after it.
func (r *RedisStore) PutClient(ctx context.Context, c *Client, ttl time.Duration, max int) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := r.rdb.Set(ctx, clientKey(c.ID), b, ttl).Err(); err != nil {
		return err
	}
	now := time.Now()
	if err := r.rdb.ZAdd(ctx, clientIndexKey, redis.Z{Score: float64(now.Add(ttl).UnixMilli()), Member: c.ID}).Err(); err != nil {
		return err
	}
	if err := r.rdb.ZRemRangeByScore(ctx, clientIndexKey, "-inf", strconv.FormatInt(now.UnixMilli(), 10)).Err(); err != nil {
		return err
	}
	n, err := r.rdb.ZCard(ctx, clientIndexKey).Result()
	if err != nil || max <= 0 || n <= int64(max) {
		return err
	}
	evicted, err := r.rdb.ZPopMin(ctx, clientIndexKey, n-int64(max)).Result()
	if err != nil {
		return err
	}
	for _, z := range evicted {
		if id, ok := z.Member.(string); ok {
			if err := r.rdb.Del(ctx, clientKey(id)).Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// TouchClient implements Store.
func (r *RedisStore) TouchClient(ctx context.Context, id string, ttl time.Duration) error {
	ok, err := r.rdb.PExpire(ctx, clientKey(id), ttl).Result()
	if err != nil || !ok {
		return err
	}
	return r.rdb.ZAddXX(ctx, clientIndexKey, redis.Z{Score: float64(time.Now().Add(ttl).UnixMilli()), Member: id}).Err()
}

// Client implements Store.
func (r *RedisStore) Client(ctx context.Context, id string) (*Client, error) {
	b, err := r.rdb.Get(ctx, clientKey(id)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	var c Client
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("oauth: client %s in Redis: %w", id, err)
	}
	return &c, nil
}

// createScript writes a pending grant's fields and its TTL at once.
// KEYS[1] grant key; ARGV[1] TTL in ms; ARGV[2…] field, value pairs.
var createScript = redis.NewScript(`
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`)

// redeemScript activates a pending grant under its code (see Store.Redeem).
// KEYS[1] grant key; ARGV code hash, access hash, access expiry (unix ms),
// refresh hash, TTL (ms). Returns 0 (no such code), -1 (reused: deleted)
// or the grant's fields.
var redeemScript = redis.NewScript(`
local code = redis.call('HGET', KEYS[1], 'code')
if not code or code ~= ARGV[1] then return 0 end
if redis.call('HGET', KEYS[1], 'active') == '1' then
  redis.call('DEL', KEYS[1])
  return -1
end
redis.call('HSET', KEYS[1], 'active', '1', 'access', ARGV[2], 'access_exp', ARGV[3], 'refresh', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return redis.call('HGETALL', KEYS[1])`)

// rotateScript replaces an active grant's tokens under its current refresh
// token (see Store.Rotate). KEYS[1] grant key; ARGV refresh hash, new
// access hash, access expiry (unix ms), new refresh hash, TTL (ms).
// Returns 0 (no such grant), -1 (reused: deleted) or the grant's fields.
var rotateScript = redis.NewScript(`
local refresh = redis.call('HGET', KEYS[1], 'refresh')
if not refresh or redis.call('HGET', KEYS[1], 'active') ~= '1' then return 0 end
if refresh ~= ARGV[1] then
  redis.call('DEL', KEYS[1])
  return -1
end
redis.call('HSET', KEYS[1], 'access', ARGV[2], 'access_exp', ARGV[3], 'refresh', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return redis.call('HGETALL', KEYS[1])`)

// CreateGrant implements Store.
func (r *RedisStore) CreateGrant(ctx context.Context, g *Grant, ttl time.Duration) error {
	args := []any{ttl.Milliseconds()}
	for k, v := range grantFields(g) {
		args = append(args, k, v)
	}
	return createScript.Run(ctx, r.rdb, []string{grantKey(g.ID)}, args...).Err()
}

// Grant implements Store.
func (r *RedisStore) Grant(ctx context.Context, id string) (*Grant, error) {
	m, err := r.rdb.HGetAll(ctx, grantKey(id)).Result()
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, ErrNotFound
	}
	return parseGrant(id, m)
}

// Redeem implements Store.
func (r *RedisStore) Redeem(ctx context.Context, id, codeHash string, t Tokens) (*Grant, error) {
	return r.swap(ctx, redeemScript, id, codeHash, t)
}

// Rotate implements Store.
func (r *RedisStore) Rotate(ctx context.Context, id, refreshHash string, t Tokens) (*Grant, error) {
	return r.swap(ctx, rotateScript, id, refreshHash, t)
}

func (r *RedisStore) swap(ctx context.Context, s *redis.Script, id, hash string, t Tokens) (*Grant, error) {
	v, err := s.Run(ctx, r.rdb, []string{grantKey(id)},
		hash, t.AccessHash, t.AccessExpires.UnixMilli(), t.RefreshHash, t.TTL.Milliseconds()).Result()
	if err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case int64:
		if v == -1 {
			return nil, ErrReused
		}
		return nil, ErrNotFound
	case []any:
		m := make(map[string]string, len(v)/2)
		for i := 0; i+1 < len(v); i += 2 {
			k, _ := v[i].(string)
			val, _ := v[i+1].(string)
			m[k] = val
		}
		return parseGrant(id, m)
	}
	return nil, fmt.Errorf("oauth: unexpected script result %T", v)
}

// Delete implements Store.
func (r *RedisStore) Delete(ctx context.Context, id string) error {
	return r.rdb.Del(ctx, grantKey(id)).Err()
}

// UseOnce implements Store: SET NX with the TTL, one key per id at
// restmcp:oauth:used:<id>.
func (r *RedisStore) UseOnce(ctx context.Context, id string, ttl time.Duration) error {
	ok, err := r.rdb.SetNX(ctx, RedisKeyPrefix+"used:"+id, 1, ttl).Result()
	switch {
	case err != nil:
		return err
	case !ok:
		return ErrReused
	}
	return nil
}

// grantFields is g as the fields of its Redis hash.
func grantFields(g *Grant) map[string]string {
	active := "0"
	if g.Active {
		active = "1"
	}
	return map[string]string{
		"client":     g.ClientID,
		"redirect":   g.RedirectURI,
		"resource":   g.Resource,
		"scope":      g.Scope,
		"key_id":     g.KeyID,
		"key":        string(g.SealedKey),
		"created":    strconv.FormatInt(g.Created.UnixMilli(), 10),
		"code":       g.CodeHash,
		"challenge":  g.CodeChallenge,
		"active":     active,
		"access":     g.AccessHash,
		"access_exp": strconv.FormatInt(g.AccessExpires.UnixMilli(), 10),
		"refresh":    g.RefreshHash,
	}
}

// parseGrant is the inverse of grantFields.
func parseGrant(id string, m map[string]string) (*Grant, error) {
	ms := func(field string) (time.Time, error) {
		n, err := strconv.ParseInt(m[field], 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("oauth: grant %s in Redis: field %s: %w", id, field, err)
		}
		return time.UnixMilli(n), nil
	}
	created, err := ms("created")
	if err != nil {
		return nil, err
	}
	accessExp, err := ms("access_exp")
	if err != nil {
		return nil, err
	}
	return &Grant{
		ID: id, ClientID: m["client"], RedirectURI: m["redirect"], Resource: m["resource"], Scope: m["scope"],
		KeyID: m["key_id"], SealedKey: []byte(m["key"]), Created: created,
		CodeHash: m["code"], CodeChallenge: m["challenge"], Active: m["active"] == "1",
		AccessHash: m["access"], AccessExpires: accessExp, RefreshHash: m["refresh"],
	}, nil
}
