package auth

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/a2arelay/relay/internal/layout"
	"github.com/redis/go-redis/v9"
)

//go:embed lua/swap.lua
var swapLua string

// entry is one stored signing key, the value of a field (its kid) of the key
// hash. Only RetireAt ever changes, once, when the key stops being current.
type entry struct {
	Alg      string `json:"alg"`
	PEM      string `json:"pem"`      // PKCS#8 private key PEM, sealed when a Sealer is configured
	Created  int64  `json:"created"`  // unix seconds
	RetireAt int64  `json:"retireAt"` // unix seconds; 0 while current (or never rotated out)
}

// expired reports whether e was rotated out and its grace is over at now (unix).
func (e entry) expired(now int64) bool { return e.RetireAt != 0 && e.RetireAt <= now }

// store is the Redis side of Keys: two keys sharing the hash tag {jwks}
// ({swhkeys} for the Standard Webhooks keys), so
// that swap.lua touches them atomically on Redis Cluster too.
type store struct {
	rdb     redis.UniversalClient
	hash    string // <prefix>:{jwks}: kid -> entry JSON
	current string // <prefix>:{jwks}:current: the current kid
}

func newStore(rdb redis.UniversalClient, prefix string, standard bool) *store {
	hash, current := layout.New(prefix, 0).Signing()
	if standard {
		hash, current = layout.New(prefix, 0).StandardSigning()
	}
	return &store{rdb: rdb, hash: hash, current: current}
}

// fetch reads the current kid ("" if none) and every stored entry, in one
// MULTI so the two agree. Entries that do not decode are returned in bad.
func (s *store) fetch(ctx context.Context) (cur string, entries map[string]entry, bad map[string]error, err error) {
	var get *redis.StringCmd
	var all *redis.MapStringStringCmd
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		get = p.Get(ctx, s.current)
		all = p.HGetAll(ctx, s.hash)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", nil, nil, fmt.Errorf("auth: read keys: %w", err)
	}
	cur, err = get.Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return "", nil, nil, fmt.Errorf("auth: read current key: %w", err)
	}
	raw, err := all.Result()
	if err != nil {
		return "", nil, nil, fmt.Errorf("auth: read keys: %w", err)
	}
	entries = make(map[string]entry, len(raw))
	for kid, v := range raw {
		var e entry
		if err := json.Unmarshal([]byte(v), &e); err != nil {
			if bad == nil {
				bad = map[string]error{}
			}
			bad[kid] = fmt.Errorf("decode stored key %s: %w", kid, err)
			continue
		}
		entries[kid] = e
	}
	return cur, entries, bad, nil
}

// swapArgs are lua/swap.lua's arguments, each read there by its lua name
// (layout.Named), where each is described.
type swapArgs struct {
	Expected  string `lua:"expected"`
	NewKid    string `lua:"newKid"`
	NewEntry  []byte `lua:"newEntry"`
	PrevEntry []byte `lua:"prevEntry"`
}

var swapScript = layout.BareScriptOf[swapArgs](swapLua)

// swapTo makes newKid (stored as next) current if expected is still current.
// prev, when not nil, is expected's entry with its retireAt already set. It
// reports whether the swap happened.
func (s *store) swapTo(ctx context.Context, expected string, prev *entry, newKid string, next entry) (bool, error) {
	nextJSON, err := json.Marshal(next)
	if err != nil {
		return false, fmt.Errorf("auth: encode key: %w", err)
	}
	var prevJSON []byte
	if prev != nil {
		if prevJSON, err = json.Marshal(prev); err != nil {
			return false, fmt.Errorf("auth: encode key: %w", err)
		}
	}
	got, err := swapScript.Run(ctx, s.rdb, []string{s.hash, s.current},
		swapScript.Args(&swapArgs{Expected: expected, NewKid: newKid, NewEntry: nextJSON, PrevEntry: prevJSON})...).Text()
	if err != nil {
		return false, fmt.Errorf("auth: store key: %w", err)
	}
	return got == newKid, nil
}

// prune deletes the entries whose grace is over at now (unix) from Redis and
// from entries. Several instances may prune at once: HDEL is idempotent, and
// an expired key never becomes valid again.
func (s *store) prune(ctx context.Context, entries map[string]entry, now int64) error {
	var dead []string
	for kid, e := range entries {
		if e.expired(now) {
			dead = append(dead, kid)
		}
	}
	if len(dead) == 0 {
		return nil
	}
	if err := s.rdb.HDel(ctx, s.hash, dead...).Err(); err != nil {
		return fmt.Errorf("auth: delete retired keys: %w", err)
	}
	for _, kid := range dead {
		delete(entries, kid)
	}
	return nil
}

// replace writes next as kid's entry if Redis still holds prev there
// (compare and set under WATCH), so that it never overwrites a newer value:
// a rotation's retireAt, another instance's reseal. It reports whether it
// wrote.
func (s *store) replace(ctx context.Context, kid string, prev, next entry) (bool, error) {
	nextJSON, err := json.Marshal(next)
	if err != nil {
		return false, fmt.Errorf("auth: encode key: %w", err)
	}
	wrote := false
	err = s.rdb.Watch(ctx, func(tx *redis.Tx) error {
		raw, err := tx.HGet(ctx, s.hash, kid).Result()
		if errors.Is(err, redis.Nil) {
			return nil
		}
		if err != nil {
			return err
		}
		var got entry
		if json.Unmarshal([]byte(raw), &got) != nil || got != prev {
			return nil
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, s.hash, kid, nextJSON)
			return nil
		})
		wrote = err == nil
		return err
	}, s.hash)
	if errors.Is(err, redis.TxFailedErr) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("auth: rewrite key %s: %w", kid, err)
	}
	return wrote, nil
}
