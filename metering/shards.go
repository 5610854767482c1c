package metering

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Shards. On a Redis Cluster each key's counters live on the master that
// holds its hash slot (every counter of a key shares the hash tag {keyID},
// keys.go), so a dead master stops only the keys it holds. The outage
// policy (outage.go) keeps its state per shard: the address of the master
// a key's slot maps to, by the client's current slot map. When a replica
// takes a dead master's slots, the map names the new master and the
// key's calls reach Redis again; what was kept for the old one is replayed
// there. On one Redis or a Sentinel set there is one shard, "".

// shardOf is the shard of keyID's counters: the address of its master in
// the current slot map, or "" when not on a cluster. It asks the network
// only when the client has no slot map yet.
func (m *RedisMeter) shardOf(keyID string) string {
	return m.shardOfKey(Key(keyID, "day"))
}

// shardOfKey is the shard of one Redis key.
func (m *RedisMeter) shardOfKey(key string) string {
	cc, ok := m.rdb.(*redis.ClusterClient)
	if !ok {
		return ""
	}
	c, err := cc.MasterForKey(context.Background(), key)
	if err != nil {
		return "?" // no slot map: every key is in the one unknown shard
	}
	return c.Options().Addr
}

// refreshTopology asks a cluster client to read the slot map again, in the
// background (at most one read at a time); elsewhere it does nothing.
func (m *RedisMeter) refreshTopology() {
	if cc, ok := m.rdb.(*redis.ClusterClient); ok {
		cc.ReloadState(context.Background())
	}
}

// pingShardOf pings the master that holds keyID's counters now, or the
// one Redis; the error wraps ErrUnavailable.
func (m *RedisMeter) pingShardOf(ctx context.Context, keyID string) error {
	var err error
	if cc, ok := m.rdb.(*redis.ClusterClient); ok {
		var c *redis.Client
		if c, err = cc.MasterForKey(ctx, Key(keyID, "day")); err == nil {
			err = c.Ping(ctx).Err()
		}
	} else {
		err = m.rdb.Ping(ctx).Err()
	}
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}
