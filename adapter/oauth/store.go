package oauth

import (
	"context"
	"errors"
	"sync"
	"time"
)

var (
	// ErrNotFound is returned by a Store for a client or grant it does not
	// hold (never stored, expired or deleted).
	ErrNotFound = errors.New("oauth: not found")
	// ErrReused is returned by Store.Redeem for an authorization code that
	// was already exchanged and by Store.Rotate for a refresh token that was
	// already rotated. The Store has deleted the grant when it returns it
	// (RFC 6749 §4.1.2, https://www.rfc-editor.org/rfc/rfc6749#section-4.1.2;
	// OAuth 2.0 Security BCP, RFC 9700 §4.14.2).
	ErrReused = errors.New("oauth: authorization code or refresh token reused")
)

// Client is a registered OAuth client: by Dynamic Client Registration
// (RFC 7591) or from its Client ID Metadata Document.
type Client struct {
	ID           string    `json:"client_id"`
	Name         string    `json:"client_name,omitempty"`
	URI          string    `json:"client_uri,omitempty"`
	RedirectURIs []string  `json:"redirect_uris"`
	Created      time.Time `json:"created"`
}

// Grant is one user's authorization of one client: the API key it stands
// for (sealed), the authorization code it was created with, and the hashes
// of its current access and refresh tokens. Tokens and codes are never
// stored, only their SHA-256 (hex).
type Grant struct {
	ID          string
	ClientID    string
	RedirectURI string
	Resource    string // the protected resource (RFC 8707), the OAuth MCP endpoint's URL
	Scope       string
	KeyID       string // metering.KeyID of the API key
	SealedKey   []byte // the API key, sealed with the server's encryption key (see sealer)
	Created     time.Time

	// The authorization code and its PKCE challenge (RFC 7636 §4.2,
	// S256). Until Redeem, the grant is pending.
	CodeHash      string
	CodeChallenge string
	Active        bool // the code has been exchanged

	AccessHash    string
	AccessExpires time.Time
	RefreshHash   string
}

// Tokens are the token hashes Redeem and Rotate put on a grant, and how
// long the grant lives from then on (the refresh token's lifetime).
type Tokens struct {
	AccessHash    string
	AccessExpires time.Time
	RefreshHash   string
	TTL           time.Duration
}

// Store holds clients and grants. A Redis store lets every replica serve
// every token; the memory store serves one process. Implementations are
// safe for concurrent use, and Redeem and Rotate are atomic.
type Store interface {
	// PutClient stores c for ttl. When the store then holds more than max
	// clients (max > 0), it drops those that would expire first (the
	// longest unused) until it holds max.
	PutClient(ctx context.Context, c *Client, ttl time.Duration, max int) error
	// TouchClient makes client id live ttl from now (it is in use); a
	// missing client is not an error.
	TouchClient(ctx context.Context, id string, ttl time.Duration) error
	// Client returns the client of that id, or ErrNotFound.
	Client(ctx context.Context, id string) (*Client, error)
	// CreateGrant stores a pending grant that lives for ttl (the
	// authorization code's lifetime) unless redeemed.
	CreateGrant(ctx context.Context, g *Grant, ttl time.Duration) error
	// Grant returns the grant of that id, or ErrNotFound.
	Grant(ctx context.Context, id string) (*Grant, error)
	// Redeem activates a pending grant whose code hash is codeHash, gives
	// it t and returns it. A grant already active under that code is
	// deleted and ErrReused returned; no grant with that code, ErrNotFound.
	Redeem(ctx context.Context, id, codeHash string, t Tokens) (*Grant, error)
	// Rotate replaces the tokens of an active grant whose current refresh
	// token hash is refreshHash with t, and returns it. A grant whose
	// refresh token is another one (refreshHash was rotated before) is
	// deleted and ErrReused returned; no such grant, ErrNotFound.
	Rotate(ctx context.Context, id, refreshHash string, t Tokens) (*Grant, error)
	// Delete removes the grant; deleting a missing grant is not an error.
	Delete(ctx context.Context, id string) error
	// UseOnce records id (an identity assertion's issuer and jti) as used
	// for ttl; ErrReused when it was recorded already and has not expired.
	UseOnce(ctx context.Context, id string, ttl time.Duration) error
}

// MemoryStore is a Store in process memory, for one replica: a restart
// forgets every client and grant. Expired entries are dropped as they are
// met and by a sweep every thousand writes.
type MemoryStore struct {
	mu      sync.Mutex
	clients map[string]memoryEntry[Client]
	grants  map[string]memoryEntry[Grant]
	used    map[string]time.Time // UseOnce: id → when it may be used again
	writes  int
	now     func() time.Time
}

type memoryEntry[T any] struct {
	v       T
	expires time.Time
}

// NewMemoryStore returns an empty MemoryStore. now is its clock; nil
// means time.Now.
func NewMemoryStore(now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{clients: map[string]memoryEntry[Client]{}, grants: map[string]memoryEntry[Grant]{}, used: map[string]time.Time{}, now: now}
}

// PutClient implements Store.
func (m *MemoryStore) PutClient(_ context.Context, c *Client, ttl time.Duration, max int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wrote()
	m.clients[c.ID] = memoryEntry[Client]{v: cloneClient(*c), expires: m.now().Add(ttl)}
	if max > 0 && len(m.clients) > max {
		now := m.now()
		for id, e := range m.clients {
			if !now.Before(e.expires) {
				delete(m.clients, id)
			}
		}
		for len(m.clients) > max {
			var oldest string
			var at time.Time
			for id, e := range m.clients {
				if oldest == "" || e.expires.Before(at) {
					oldest, at = id, e.expires
				}
			}
			delete(m.clients, oldest)
		}
	}
	return nil
}

// TouchClient implements Store.
func (m *MemoryStore) TouchClient(_ context.Context, id string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.clients[id]; ok && m.now().Before(e.expires) {
		e.expires = m.now().Add(ttl)
		m.clients[id] = e
	}
	return nil
}

// Client implements Store.
func (m *MemoryStore) Client(_ context.Context, id string) (*Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.clients[id]
	if !ok || !m.now().Before(e.expires) {
		delete(m.clients, id)
		return nil, ErrNotFound
	}
	c := cloneClient(e.v)
	return &c, nil
}

// CreateGrant implements Store.
func (m *MemoryStore) CreateGrant(_ context.Context, g *Grant, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wrote()
	m.grants[g.ID] = memoryEntry[Grant]{v: cloneGrant(*g), expires: m.now().Add(ttl)}
	return nil
}

// Grant implements Store.
func (m *MemoryStore) Grant(_ context.Context, id string) (*Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.grant(id)
	if !ok {
		return nil, ErrNotFound
	}
	return &g, nil
}

// grant returns a copy of a live grant; m.mu is held.
func (m *MemoryStore) grant(id string) (Grant, bool) {
	e, ok := m.grants[id]
	if !ok || !m.now().Before(e.expires) {
		delete(m.grants, id)
		return Grant{}, false
	}
	return cloneGrant(e.v), true
}

// Redeem implements Store.
func (m *MemoryStore) Redeem(_ context.Context, id, codeHash string, t Tokens) (*Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.grant(id)
	switch {
	case !ok || g.CodeHash != codeHash:
		return nil, ErrNotFound
	case g.Active:
		delete(m.grants, id)
		return nil, ErrReused
	}
	g.Active = true
	g.setTokens(t)
	m.grants[id] = memoryEntry[Grant]{v: g, expires: m.now().Add(t.TTL)}
	out := cloneGrant(g)
	return &out, nil
}

// Rotate implements Store.
func (m *MemoryStore) Rotate(_ context.Context, id, refreshHash string, t Tokens) (*Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.grant(id)
	switch {
	case !ok || !g.Active:
		return nil, ErrNotFound
	case g.RefreshHash != refreshHash:
		delete(m.grants, id)
		return nil, ErrReused
	}
	g.setTokens(t)
	m.grants[id] = memoryEntry[Grant]{v: g, expires: m.now().Add(t.TTL)}
	out := cloneGrant(g)
	return &out, nil
}

// Delete implements Store.
func (m *MemoryStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.grants, id)
	return nil
}

// UseOnce implements Store.
func (m *MemoryStore) UseOnce(_ context.Context, id string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if until, ok := m.used[id]; ok && now.Before(until) {
		return ErrReused
	}
	m.wrote()
	m.used[id] = now.Add(ttl)
	return nil
}

// wrote counts a write and sweeps expired entries every 1,000 writes, so
// that abandoned registrations and codes do not pile up; m.mu is held.
func (m *MemoryStore) wrote() {
	if m.writes++; m.writes%1000 != 0 {
		return
	}
	now := m.now()
	for id, e := range m.clients {
		if !now.Before(e.expires) {
			delete(m.clients, id)
		}
	}
	for id, e := range m.grants {
		if !now.Before(e.expires) {
			delete(m.grants, id)
		}
	}
	for id, until := range m.used {
		if !now.Before(until) {
			delete(m.used, id)
		}
	}
}

func (g *Grant) setTokens(t Tokens) {
	g.AccessHash, g.AccessExpires, g.RefreshHash = t.AccessHash, t.AccessExpires, t.RefreshHash
}

func cloneClient(c Client) Client {
	c.RedirectURIs = append([]string(nil), c.RedirectURIs...)
	return c
}

func cloneGrant(g Grant) Grant {
	g.SealedKey = append([]byte(nil), g.SealedKey...)
	return g
}
