// Package auth holds relay's credentials: the keys that sign every webhook
// notification as a JWT and the JWKS that receivers verify them against,
// and the verification of client credentials (API keys, JWTs) and the
// principals they map to.
//
// Signing keys are generated once and kept in Redis, so every instance and
// every restart signs with the same keys and publishes the same JWKS. A
// rotated-out key stays published for a grace period, so notifications
// signed just before a rotation still verify. With KeyConfig.Sealer the
// private keys are encrypted in Redis (the public keys and the JWKS are not).
package auth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/redis/go-redis/v9"
)

// Errors of the package; match them with errors.Is.
var (
	// ErrAlgorithm: the algorithm is not one of ES256, EdDSA, RS256.
	ErrAlgorithm = errors.New("unsupported signing algorithm")
	// ErrKeyType: a key cannot be used, or not with the configured algorithm.
	ErrKeyType = errors.New("unusable key")
	// ErrUnknownKey: a token names a kid that is not (or no longer) published.
	ErrUnknownKey = errors.New("unknown key id")
	// ErrFileKey: the signing key comes from KeyConfig.KeyFile, so relay
	// cannot rotate it; replace the file instead.
	ErrFileKey = errors.New("signing key is read from a file")
)

// Defaults of KeyConfig.
const (
	DefaultAlgorithm = ES256
	DefaultGrace     = 48 * time.Hour
	DefaultPrefix    = "relay"
	// DefaultRefresh is Run's interval when it is given none.
	DefaultRefresh = 30 * time.Second
)

// rotateAttempts bounds Rotate's retries when other instances rotate at
// the same moment.
const rotateAttempts = 3

// KeyConfig configures Keys. Zero values take the documented defaults.
type KeyConfig struct {
	// Algorithm of generated keys: "ES256" (default), "EdDSA" or "RS256".
	Algorithm string
	// KeyFile, when set, is a PEM private key (PKCS#8, SEC1 EC or PKCS#1
	// RSA) that signs everything; it must be a key for Algorithm. Keys held
	// in Redis are still published until their grace ends.
	KeyFile string
	// Grace is how long a rotated-out key stays published (default 48h).
	Grace time.Duration
	// Prefix is prepended to the Redis keys (default "relay").
	Prefix string
	// Logger receives Run's errors (default slog.Default()).
	Logger *slog.Logger
	// Sealer, when set (a *secrets.Ring), encrypts the private keys kept in
	// Redis, each sealed for its kid; nil keeps them in plaintext. A key read
	// in plaintext, or sealed with a secret key that is no longer current,
	// is sealed again and written back at the next load or refresh. Every
	// instance needs every secret key that sealed a stored private key.
	Sealer Sealer
	// StandardWebhooks makes these relay's Standard Webhooks v1a keys
	// (standard.go): ed25519 (Algorithm must be EdDSA or empty), kept in
	// Redis apart from the JWT keys, never read from a KeyFile.
	StandardWebhooks bool
}

// Sealer encrypts a value for a place (aad) and opens it again; Open
// reports a value that should be sealed again (stale). *secrets.Ring is one.
type Sealer interface {
	Seal(plain []byte, aad string) (string, error)
	Open(s, aad string) (plain []byte, stale bool, err error)
}

// sealedPrefix begins a sealed value (the format of package secrets).
const sealedPrefix = "enc:"

// Keys signs tokens with the current key and publishes the JWKS. It is safe
// for concurrent use.
type Keys struct {
	st    *store // nil only with KeyFile and no Redis
	alg   string
	grace time.Duration
	file  *signingKey // the key from KeyFile, or nil
	now   func() time.Time
	log   *slog.Logger
	seal  Sealer // nil: private keys stored in plaintext

	mu     sync.Mutex            // serializes syncs; guards cache and warned
	cache  map[string]*cachedKey // parsed keys by kid, so a refresh parses only new ones
	warned map[string]bool       // unusable stored kids already logged
	state  atomic.Pointer[state] // what Sign, JWKS and VerifyKeyFunc read
}

// cachedKey is a parsed key, the PEM it was parsed from, and the value it
// was read from in Redis (the sealed PEM, or the PEM itself in plaintext).
type cachedKey struct {
	stored string
	pem    string
	stale  bool // stored is plaintext or sealed with an old secret key
	key    *signingKey
}

// state is one immutable view of the keys.
type state struct {
	current *signingKey
	byKid   map[string]*signingKey // every published key
	ordered []*signingKey          // the same, current first, then newest first
	jwks    []byte
}

// NewKeys returns Keys backed by rdb. Without cfg.KeyFile it loads the
// current key from Redis, or, on first start, generates one and stores it
// (when several instances start at once, one key wins and all use it). If
// the stored key is not for cfg.Algorithm, it rotates to a new key that is.
// now is the clock (nil: time.Now). rdb may be nil only with a KeyFile.
func NewKeys(ctx context.Context, rdb redis.UniversalClient, cfg KeyConfig, now func() time.Time) (*Keys, error) {
	k := &Keys{
		alg:   cmp.Or(cfg.Algorithm, DefaultAlgorithm),
		grace: cmp.Or(cfg.Grace, DefaultGrace),
		now:   now,
		log:   cmp.Or(cfg.Logger, slog.Default()),
		seal:  cfg.Sealer,
		cache: map[string]*cachedKey{},
	}
	if k.now == nil {
		k.now = time.Now
	}
	if cfg.StandardWebhooks {
		if cfg.Algorithm != "" && cfg.Algorithm != EdDSA {
			return nil, fmt.Errorf("auth: KeyConfig.Algorithm: Standard Webhooks keys are %s, not %s", EdDSA, cfg.Algorithm)
		}
		if cfg.KeyFile != "" {
			return nil, errors.New("auth: KeyConfig.KeyFile: Standard Webhooks keys are kept in Redis only")
		}
		k.alg = EdDSA
	}
	if _, err := methodFor(k.alg); err != nil {
		return nil, fmt.Errorf("auth: KeyConfig.Algorithm: %w", err)
	}
	if k.grace < 0 {
		return nil, fmt.Errorf("auth: KeyConfig.Grace: %v is negative", cfg.Grace)
	}
	if rdb != nil {
		k.st = newStore(rdb, cmp.Or(cfg.Prefix, DefaultPrefix), cfg.StandardWebhooks)
	}
	if cfg.KeyFile != "" {
		key, err := loadFile(cfg.KeyFile, k.alg)
		if err != nil {
			return nil, fmt.Errorf("auth: KeyConfig.KeyFile: %w", err)
		}
		k.file = key
	} else if rdb == nil {
		return nil, errors.New("auth: NewKeys: a Redis client is required without KeyConfig.KeyFile")
	}
	if err := k.sync(ctx, true, false); err != nil {
		return nil, err
	}
	return k, nil
}

// loadFile reads a PEM private key for alg.
func loadFile(path, alg string) (*signingKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := parsePEM(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sk, err := newSigningKey(key, alg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return sk, nil
}

// VerifyKeyFunc returns a jwt.Keyfunc that finds a token's public key by its
// kid among the published keys, and refuses a token whose alg is not its
// key's.
func (k *Keys) VerifyKeyFunc() jwt.Keyfunc {
	return func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		sk := k.state.Load().byKid[kid]
		if sk == nil {
			return nil, fmt.Errorf("auth: %w %q", ErrUnknownKey, kid)
		}
		if t.Method == nil || t.Method.Alg() != sk.alg {
			return nil, fmt.Errorf("auth: %w: token alg %v, key %s is %s", ErrKeyType, t.Header["alg"], kid, sk.alg)
		}
		return sk.public, nil
	}
}

// Rotate makes a new key of the configured algorithm current. The previous
// key stays published until now + Grace; keys whose grace is over are
// deleted. Other instances pick the new key up on their next Refresh.
func (k *Keys) Rotate(ctx context.Context) error {
	if k.file != nil {
		return fmt.Errorf("auth: rotate: %w", ErrFileKey)
	}
	if err := k.rotate(ctx); err != nil {
		return err
	}
	return k.sync(ctx, false, true)
}

func (k *Keys) rotate(ctx context.Context) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	for range rotateAttempts {
		cur, entries, _, err := k.st.fetch(ctx)
		if err != nil {
			return err
		}
		var prev *entry
		if e, ok := entries[cur]; ok {
			prev = &e
		}
		won, err := k.swapToNew(ctx, cur, prev)
		if err != nil || won {
			return err
		}
	}
	return fmt.Errorf("auth: rotate: other instances kept rotating; gave up after %d attempts", rotateAttempts)
}

// swapToNew generates a key and makes it current if cur still is, retiring
// prev (cur's entry, if any). It reports whether the swap happened.
func (k *Keys) swapToNew(ctx context.Context, cur string, prev *entry) (bool, error) {
	key, err := generate(k.alg)
	if err != nil {
		return false, fmt.Errorf("auth: generate %s key: %w", k.alg, err)
	}
	sk, err := newSigningKey(key, k.alg)
	if err != nil {
		return false, err
	}
	pemText, err := encodePEM(key)
	if err != nil {
		return false, err
	}
	stored, err := k.sealPEM(sk.kid, pemText)
	if err != nil {
		return false, err
	}
	now := k.now()
	if prev != nil {
		prev.RetireAt = now.Add(k.grace).Unix()
	}
	next := entry{Alg: k.alg, PEM: stored, Created: now.Unix()}
	return k.st.swapTo(ctx, cur, prev, sk.kid, next)
}

// Refresh reloads the keys from Redis, to pick up another instance's
// rotation and drop keys whose grace is over. If Redis lost the keys, this
// instance's current key is stored again (or, if another instance got
// there first, that one's is used).
func (k *Keys) Refresh(ctx context.Context) error { return k.sync(ctx, false, false) }

// Run refreshes the keys every interval (DefaultRefresh if every <= 0) and
// deletes keys whose grace is over, until ctx is done. Errors are logged,
// at most once a minute while they last; the keys in memory stay in use.
func (k *Keys) Run(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultRefresh
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var lastLog time.Time
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := k.runOnce(ctx)
		switch {
		case err != nil && ctx.Err() != nil:
			return
		case err != nil && (!failing || k.now().Sub(lastLog) >= time.Minute):
			k.log.WarnContext(ctx, "signing keys refresh failed", "error", err)
			failing, lastLog = true, k.now()
		case err == nil && failing:
			k.log.InfoContext(ctx, "signing keys refresh recovered")
			failing = false
		}
	}
}

// runOnce is one round of Run: delete keys whose grace is over, reload.
func (k *Keys) runOnce(ctx context.Context) error { return k.sync(ctx, false, true) }

// sync reads Redis and installs what it holds as the new state. Without a
// KeyFile it also makes sure a current key exists, and with checkAlg that it
// is for the configured algorithm (rotating once if not: when several
// instances do so at once, one rotation wins). With prune it deletes keys
// whose grace is over.
func (k *Keys) sync(ctx context.Context, checkAlg, prune bool) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.st == nil { // KeyFile and no Redis: only the file key
		return k.install(ctx, "", nil, nil)
	}
	cur, entries, bad, err := k.st.fetch(ctx)
	if err != nil {
		return err
	}
	if k.file == nil {
		changed, err := k.ensureCurrent(ctx, cur, entries, checkAlg)
		if err != nil {
			return err
		}
		if changed {
			if cur, entries, bad, err = k.st.fetch(ctx); err != nil {
				return err
			}
		}
	}
	if prune {
		if err := k.st.prune(ctx, entries, k.now().Unix()); err != nil {
			return err
		}
	}
	if err := k.install(ctx, cur, entries, bad); err != nil {
		return err
	}
	return k.resealStale(ctx, entries)
}

// ensureCurrent stores a current key if Redis has none, or rotates away from
// a current key of another algorithm when checkAlg is set. It reports
// whether it wrote (successfully or losing a race), so the caller rereads.
func (k *Keys) ensureCurrent(ctx context.Context, cur string, entries map[string]entry, checkAlg bool) (bool, error) {
	e, ok := entries[cur]
	switch {
	case !ok:
		if old := k.state.Load(); old != nil && old.current != nil {
			if c := k.cache[old.current.kid]; c != nil { // Redis lost our key: store it again
				stored, err := k.sealPEM(old.current.kid, c.pem)
				if err != nil {
					return false, err
				}
				next := entry{Alg: old.current.alg, PEM: stored, Created: k.now().Unix()}
				_, err = k.st.swapTo(ctx, cur, nil, old.current.kid, next)
				return true, err
			}
		}
		_, err := k.swapToNew(ctx, cur, nil)
		return true, err
	case checkAlg && e.Alg != k.alg:
		_, err := k.swapToNew(ctx, cur, &e)
		return true, err
	}
	return false, nil
}

// install parses the entries (reusing keys parsed before), drops those whose
// grace is over, and publishes the result. An entry that cannot be used is
// skipped with a warning (once), unless it is the current key.
func (k *Keys) install(ctx context.Context, cur string, entries map[string]entry, bad map[string]error) error {
	now := k.now().Unix()
	cache := make(map[string]*cachedKey, len(entries))
	created := make(map[string]int64, len(entries)+1)
	byKid := make(map[string]*signingKey, len(entries)+1)
	for kid, e := range entries {
		if e.expired(now) {
			continue
		}
		c, err := k.parse(kid, e)
		if err != nil {
			bad = addBad(bad, kid, err)
			continue
		}
		cache[kid], byKid[kid], created[kid] = c, c.key, e.Created
	}
	var current *signingKey
	if k.file != nil {
		current = k.file
		byKid[current.kid] = current
	} else if current = byKid[cur]; current == nil {
		err := bad[cur]
		if err == nil {
			err = errors.New("missing or expired")
		}
		return fmt.Errorf("auth: current key %q: %w", cur, err)
	}
	warned := make(map[string]bool, len(bad))
	for kid, err := range bad {
		if !k.warned[kid] { // once per kid, not on every refresh
			k.log.WarnContext(ctx, "skipping unusable stored signing key", "kid", kid, "error", err)
		}
		warned[kid] = true
	}
	k.warned = warned
	ordered := orderKeys(current, byKid, created)
	jwks, err := buildJWKS(ordered)
	if err != nil {
		return err
	}
	k.cache = cache
	k.state.Store(&state{current: current, byKid: byKid, ordered: ordered, jwks: jwks})
	return nil
}

// parse returns the parsed key of an entry, from the cache when its PEM is
// unchanged, and checks that the PEM really is the key kid names.
func (k *Keys) parse(kid string, e entry) (*cachedKey, error) {
	if c := k.cache[kid]; c != nil && c.stored == e.PEM {
		return c, nil
	}
	pemText, stale, err := k.openPEM(kid, e.PEM)
	if err != nil {
		return nil, err
	}
	key, err := parsePEM([]byte(pemText))
	if err != nil {
		return nil, err
	}
	sk, err := newSigningKey(key, e.Alg)
	if err != nil {
		return nil, err
	}
	if sk.kid != kid {
		return nil, fmt.Errorf("stored under kid %q but its kid is %q", kid, sk.kid)
	}
	return &cachedKey{stored: e.PEM, pem: pemText, stale: stale, key: sk}, nil
}

func addBad(bad map[string]error, kid string, err error) map[string]error {
	if bad == nil {
		bad = map[string]error{}
	}
	bad[kid] = err
	return bad
}

// sealPEM returns the value that stores pemText, the private key of kid:
// sealed for kid, or pemText itself without a Sealer.
func (k *Keys) sealPEM(kid, pemText string) (string, error) {
	if k.seal == nil {
		return pemText, nil
	}
	s, err := k.seal.Seal([]byte(pemText), kid)
	if err != nil {
		return "", fmt.Errorf("auth: encrypt private key %s: %w", kid, err)
	}
	return s, nil
}

// openPEM returns the PEM of a stored value and whether it should be sealed
// again (stored in plaintext, or sealed with a secret key no longer current).
func (k *Keys) openPEM(kid, stored string) (string, bool, error) {
	if k.seal == nil {
		if strings.HasPrefix(stored, sealedPrefix) {
			return "", false, errors.New("the private key is encrypted, but no secret keys are configured")
		}
		return stored, false, nil
	}
	plain, stale, err := k.seal.Open(stored, kid)
	if err != nil {
		return "", false, fmt.Errorf("decrypt private key: %w", err)
	}
	return string(plain), stale, nil
}

// resealStale seals again, with the current secret key, every live entry
// that install found stale, and writes it back if Redis still holds what was
// read (another instance may have resealed it or retired it meanwhile; then
// the next sync looks again).
func (k *Keys) resealStale(ctx context.Context, entries map[string]entry) error {
	now := k.now().Unix()
	for kid, e := range entries {
		c := k.cache[kid]
		if c == nil || !c.stale || c.stored != e.PEM || e.expired(now) {
			continue
		}
		stored, err := k.sealPEM(kid, c.pem)
		if err != nil {
			return err
		}
		next := e
		next.PEM = stored
		if _, err := k.st.replace(ctx, kid, e, next); err != nil {
			return err
		}
	}
	return nil
}
