package auth

import (
	"bytes"
	"encoding/base64"
	"errors"
	"maps"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/a2arelay/relay/internal/redistest"
	"github.com/a2arelay/relay/internal/secrets"
)

// ring returns a secrets ring of kid:seed pairs (first current), each key
// being 32 bytes of its seed.
func ring(t *testing.T, kidSeeds ...any) *secrets.Ring {
	t.Helper()
	var specs []string
	for i := 0; i < len(kidSeeds); i += 2 {
		key := bytes.Repeat([]byte{kidSeeds[i+1].(byte)}, secrets.KeySize)
		specs = append(specs, kidSeeds[i].(string)+":"+base64.StdEncoding.EncodeToString(key))
	}
	r, err := secrets.ParseKeys(specs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// wantSealed checks that every stored private key is sealed with secret
// key kid and holds no PEM.
func wantSealed(t *testing.T, rdb redis.UniversalClient, prefix, kid string) map[string]entry {
	t.Helper()
	stored := storedEntries(t, rdb, prefix)
	if len(stored) == 0 {
		t.Fatal("no stored keys")
	}
	for signKid, e := range stored {
		if !strings.HasPrefix(e.PEM, "enc:v1:"+kid+":") || strings.Contains(e.PEM, "PRIVATE KEY") {
			t.Fatalf("stored key %s = %.40q…, want sealed with %s", signKid, e.PEM, kid)
		}
	}
	return stored
}

// TestSealedKeysShared: private keys are stored sealed; another instance
// with the same ring loads the same key, and a token of one verifies with
// the other.
func TestSealedKeysShared(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	cfg := KeyConfig{Prefix: prefix + "relay", Sealer: ring(t, "s1", byte(1))}
	a := newKeys(t, rdb, cfg, nil)
	if err := a.Rotate(t.Context()); err != nil { // the retired entry stays sealed too
		t.Fatal(err)
	}
	if stored := wantSealed(t, rdb, cfg.Prefix, "s1"); len(stored) != 2 {
		t.Fatalf("%d stored keys, want 2", len(stored))
	}
	if jwks := string(a.JWKS()); strings.Contains(jwks, "enc:") || !strings.Contains(jwks, a.CurrentKID()) {
		t.Fatalf("JWKS = %s", jwks)
	}

	cfg.Sealer = ring(t, "s1", byte(1)) // the same keys, parsed by another instance
	b := newKeys(t, rdb, cfg, nil)
	if b.CurrentKID() != a.CurrentKID() {
		t.Fatalf("b signs with %s, a with %s", b.CurrentKID(), a.CurrentKID())
	}
	tok, err := a.Sign(sampleClaims())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify(t, tok, b.VerifyKeyFunc(), ES256); err != nil {
		t.Fatalf("a's token with b's keys: %v", err)
	}
	tok, err = b.Sign(sampleClaims())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify(t, tok, jwksKeyfunc(t, a.JWKS()), ES256); err != nil {
		t.Fatalf("b's token against a's JWKS: %v", err)
	}
	// If Redis loses the keys, the key stored again is sealed too.
	if err := rdb.Del(t.Context(), cfg.Prefix+":{jwks}", cfg.Prefix+":{jwks}:current").Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Refresh(t.Context()); err != nil || b.CurrentKID() != a.CurrentKID() {
		t.Fatalf("Refresh after loss: %v, kid %s", err, b.CurrentKID())
	}
	wantSealed(t, rdb, cfg.Prefix, "s1")
}

// TestPlaintextKeysMigrated: keys stored before encryption was turned on
// (current and retired) are sealed at the first load with a ring, and keep
// their kids.
func TestPlaintextKeysMigrated(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	cfg := KeyConfig{Prefix: prefix + "relay", Algorithm: EdDSA}
	plain := newKeys(t, rdb, cfg, nil)
	oldTok, err := plain.Sign(sampleClaims())
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Rotate(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := storedEntries(t, rdb, cfg.Prefix)
	for kid, e := range before {
		if !strings.Contains(e.PEM, "PRIVATE KEY") {
			t.Fatalf("without a Sealer key %s is stored as %.20q", kid, e.PEM)
		}
	}

	cfg.Sealer = ring(t, "s1", byte(1))
	sealed := newKeys(t, rdb, cfg, nil)
	if sealed.CurrentKID() != plain.CurrentKID() {
		t.Fatalf("after migration kid = %s, want %s", sealed.CurrentKID(), plain.CurrentKID())
	}
	after := wantSealed(t, rdb, cfg.Prefix, "s1")
	for kid, e := range before {
		if a := after[kid]; a.Alg != e.Alg || a.Created != e.Created || a.RetireAt != e.RetireAt {
			t.Fatalf("key %s: %+v after migration, was %+v", kid, a, e)
		}
	}
	if _, err := verify(t, oldTok, sealed.VerifyKeyFunc(), EdDSA); err != nil {
		t.Fatalf("token of the retired key after migration: %v", err)
	}
	// Loading again writes nothing: the values are not stale any more.
	again := newKeys(t, rdb, cfg, nil)
	if got := storedEntries(t, rdb, cfg.Prefix); !maps.Equal(got, after) || again.CurrentKID() != sealed.CurrentKID() {
		t.Fatal("a load of current values rewrote them")
	}
}

// TestSecretKeyRotation: with a new secret key current and the old one
// still in the ring, keys sealed with the old one are sealed again with the
// new one (by one instance, while many start at once); after that a ring
// with only the new key works.
func TestSecretKeyRotation(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	cfg := KeyConfig{Prefix: prefix + "relay", Sealer: ring(t, "s1", byte(1))}
	first := newKeys(t, rdb, cfg, nil)
	wantSealed(t, rdb, cfg.Prefix, "s1")

	cfg.Sealer = ring(t, "s2", byte(2), "s1", byte(1))
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			k, err := NewKeys(t.Context(), rdb, cfg, nil)
			if err != nil {
				t.Error(err)
				return
			}
			if k.CurrentKID() != first.CurrentKID() {
				t.Errorf("kid %s, want %s", k.CurrentKID(), first.CurrentKID())
			}
		})
	}
	wg.Wait()
	wantSealed(t, rdb, cfg.Prefix, "s2")

	cfg.Sealer = ring(t, "s2", byte(2))
	if k := newKeys(t, rdb, cfg, nil); k.CurrentKID() != first.CurrentKID() {
		t.Fatalf("with only s2: kid %s, want %s", k.CurrentKID(), first.CurrentKID())
	}
	// The first instance, whose ring lacks s2, keeps its keys in memory but
	// cannot reload them.
	if err := first.Refresh(t.Context()); !errors.Is(err, secrets.ErrUnknownKey) {
		t.Fatalf("Refresh without s2: err = %v, want ErrUnknownKey", err)
	}
	if _, err := first.Sign(sampleClaims()); err != nil {
		t.Fatal(err)
	}
}

// TestSealedKeysWrongRing: an instance whose ring lacks the secret key of
// the current private key, or that has no ring, does not start, and says why.
func TestSealedKeysWrongRing(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	cfg := KeyConfig{Prefix: prefix + "relay", Sealer: ring(t, "s1", byte(1))}
	k := newKeys(t, rdb, cfg, nil)
	for _, tt := range []struct {
		name   string
		sealer Sealer
		want   error
		text   []string
	}{
		{"other kid", ring(t, "s2", byte(2)), secrets.ErrUnknownKey, []string{k.CurrentKID(), `"s1"`, "s2"}},
		{"same kid, other key", ring(t, "s1", byte(9)), secrets.ErrDecrypt, []string{k.CurrentKID(), `"s1"`}},
		{"no ring", nil, nil, []string{k.CurrentKID(), "encrypted, but no secret keys are configured"}},
		{"nil ring", (*secrets.Ring)(nil), secrets.ErrNoKeys, []string{k.CurrentKID()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewKeys(t.Context(), rdb, KeyConfig{Prefix: cfg.Prefix, Sealer: tt.sealer}, nil)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Fatalf("NewKeys err = %v, want %v", err, tt.want)
			}
			for _, s := range tt.text {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %s", err, s)
				}
			}
		})
	}
}

// TestReplaceIsCompareAndSet: a rewrite of an entry that changed since it
// was read writes nothing.
func TestReplaceIsCompareAndSet(t *testing.T) {
	t.Parallel()
	rdb, prefix := redistest.New(t)
	s := newStore(rdb, prefix+"relay", false)
	ctx := t.Context()
	read := entry{Alg: ES256, PEM: "plain", Created: 1}
	if won, err := s.swapTo(ctx, "", nil, "a", read); err != nil || !won {
		t.Fatal(won, err)
	}
	retired := read
	retired.RetireAt = 99 // another instance rotated meanwhile
	if won, err := s.swapTo(ctx, "a", &retired, "b", entry{Alg: ES256}); err != nil || !won {
		t.Fatal(won, err)
	}
	resealed := read
	resealed.PEM = "enc:v1:s1:x"
	for _, step := range []struct {
		kid   string
		prev  entry
		wrote bool
	}{
		{"a", read, false},    // stale read: the retireAt must survive
		{"gone", read, false}, // no such entry: nothing is created
		{"a", retired, true},
	} {
		next := step.prev
		next.PEM = resealed.PEM
		wrote, err := s.replace(ctx, step.kid, step.prev, next)
		if err != nil || wrote != step.wrote {
			t.Fatalf("replace %s from %+v: wrote = %v, %v; want %v", step.kid, step.prev, wrote, err, step.wrote)
		}
	}
	_, entries, _, err := s.fetch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if a := entries["a"]; a.PEM != resealed.PEM || a.RetireAt != 99 || len(entries) != 2 {
		t.Fatalf("entries %+v", entries)
	}
}
