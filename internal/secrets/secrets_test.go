package secrets

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

// keyB64 returns a deterministic 32-byte key in standard padded base64.
func keyB64(seed byte) string {
	return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{seed}, KeySize))
}

func mustRing(t testing.TB, specs ...string) *Ring {
	t.Helper()
	r, err := ParseKeys(specs)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseKeys(t *testing.T) {
	t.Parallel()
	std := keyB64(1)
	key := bytes.Repeat([]byte{0xfb}, KeySize) // encodes with + and / in std, - and _ in URL
	for _, tt := range []struct {
		name    string
		specs   []string
		current string // "" with an error
		err     string // part of the error
	}{
		{"std padded", []string{"k1:" + std}, "k1", ""},
		{"std raw", []string{"k1:" + strings.TrimRight(std, "=")}, "k1", ""},
		{"url padded", []string{"k1:" + base64.URLEncoding.EncodeToString(key)}, "k1", ""},
		{"url raw", []string{"k1:" + base64.RawURLEncoding.EncodeToString(key)}, "k1", ""},
		{"two, first current", []string{"new:" + keyB64(2), " old-1_A:" + keyB64(3) + " "}, "new", ""},
		{"blank entries skipped", []string{"", "k1:" + std, "  "}, "k1", ""},
		{"no colon", []string{std}, "", "key 1: invalid secret key: want <kid>:<base64 key>"},
		{"empty kid", []string{":" + std}, "", "key 1: invalid secret key: the key id"},
		{"bad kid charset", []string{"k1:" + std, "a.b:" + std}, "", "key 2: invalid secret key: the key id"},
		{"kid too long", []string{strings.Repeat("k", 33) + ":" + std}, "", "key 1: invalid secret key: the key id"},
		{"duplicate kid", []string{"k1:" + std, "k1:" + keyB64(2)}, "", `key 2 ("k1"): invalid secret key: the key id appears twice`},
		{"not base64", []string{"k1:" + std[:20] + "!!" + std[22:]}, "", `key 1 ("k1"): invalid secret key: the key is not valid base64`},
		{"short key", []string{"k1:" + base64.StdEncoding.EncodeToString(make([]byte, 16))}, "", "the key is 16 bytes, want 32"},
		{"empty key", []string{"k1:"}, "", "the key is 0 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := ParseKeys(tt.specs)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, ErrKeySpec) {
					t.Fatalf("err = %v, want ErrKeySpec containing %q", err, tt.err)
				}
				for _, s := range tt.specs {
					if _, k, ok := strings.Cut(s, ":"); ok && len(k) > 8 && strings.Contains(err.Error(), strings.TrimSpace(k)) {
						t.Fatalf("error echoes key material: %v", err)
					}
				}
				if strings.Contains(err.Error(), std[:16]) {
					t.Fatalf("error echoes key material: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.CurrentKID() != tt.current {
				t.Fatalf("current = %q, want %q", r.CurrentKID(), tt.current)
			}
		})
	}
	if r, err := ParseKeys(nil); r != nil || err != nil {
		t.Fatalf("ParseKeys(nil) = %v, %v; want nil ring (encryption off)", r, err)
	}
}

func TestSealOpenRoundTrip(t *testing.T) {
	t.Parallel()
	r := mustRing(t, "k1:"+keyB64(1))
	for _, plain := range []string{"", "x", "Bearer abc.def.ghi", strings.Repeat("é", 1000), "enc:v1:looks:sealed"} {
		s, err := r.Seal([]byte(plain), "task-1/cfg-1")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(s, "enc:v1:k1:") || (len(plain) >= 8 && strings.Contains(s, plain)) {
			t.Fatalf("sealed %q = %q", plain, s)
		}
		got, stale, err := r.Open(s, "task-1/cfg-1")
		if err != nil || stale || string(got) != plain {
			t.Fatalf("Open = %q, %v, %v; want %q, false, nil", got, stale, err, plain)
		}
	}
	a, _ := r.Seal([]byte("same"), "p")
	b, _ := r.Seal([]byte("same"), "p")
	if a == b {
		t.Fatal("two seals of the same value are equal: the nonce is not random")
	}
}

// TestRotation: a value sealed with k1 opens with a ring where k2 is current
// and k1 old, reported stale; sealed again, it opens with k2 alone.
func TestRotation(t *testing.T) {
	t.Parallel()
	a := mustRing(t, "k1:"+keyB64(1))
	b := mustRing(t, "k2:"+keyB64(2), "k1:"+keyB64(1))
	c := mustRing(t, "k2:"+keyB64(2))
	old, err := a.Seal([]byte("secret"), "here")
	if err != nil {
		t.Fatal(err)
	}
	got, stale, err := b.Open(old, "here")
	if err != nil || !stale || string(got) != "secret" {
		t.Fatalf("B.Open(k1 value) = %q, %v, %v; want secret, stale", got, stale, err)
	}
	resealed, err := b.Seal(got, "here")
	if err != nil || !strings.HasPrefix(resealed, "enc:v1:k2:") {
		t.Fatalf("reseal = %q, %v", resealed, err)
	}
	if got, stale, err := c.Open(resealed, "here"); err != nil || stale || string(got) != "secret" {
		t.Fatalf("C.Open(resealed) = %q, %v, %v", got, stale, err)
	}
	_, _, err = c.Open(old, "here")
	if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), `"k1"`) {
		t.Fatalf("C.Open(k1 value) err = %v, want ErrUnknownKey naming k1", err)
	}
}

func TestOpenFailures(t *testing.T) {
	t.Parallel()
	r := mustRing(t, "k1:"+keyB64(1))
	other := mustRing(t, "k1:"+keyB64(9)) // same kid, another key
	s, err := r.Seal([]byte("top secret"), "task-1/cfg-1")
	if err != nil {
		t.Fatal(err)
	}
	tampered := []byte(s) // one base64 character of the nonce changed
	if i := len("enc:v1:k1:") + 3; tampered[i] == 'A' {
		tampered[i] = 'B'
	} else {
		tampered[i] = 'A'
	}
	kid, payload, _ := split(s)
	flipped := append([]byte(nil), payload...)
	flipped[nonceSize] ^= 0x80
	for _, tt := range []struct {
		name string
		ring *Ring
		s    string
		aad  string
		want error
	}{
		{"aad mismatch", r, s, "task-2/cfg-1", ErrDecrypt},
		{"wrong key, same kid", other, s, "task-1/cfg-1", ErrDecrypt},
		{"tampered ciphertext", r, "enc:v1:" + kid + ":" + base64.RawURLEncoding.EncodeToString(flipped), "task-1/cfg-1", ErrDecrypt},
		{"tampered text", r, string(tampered), "task-1/cfg-1", ErrDecrypt},
		{"kid relabelled", mustRing(t, "k1:"+keyB64(1), "k2:"+keyB64(1)), strings.Replace(s, ":k1:", ":k2:", 1), "task-1/cfg-1", ErrDecrypt},
		{"unknown kid", mustRing(t, "k3:"+keyB64(1)), s, "task-1/cfg-1", ErrUnknownKey},
		{"nil ring", nil, s, "task-1/cfg-1", ErrNoKeys},
		{"version", r, "enc:v2:k1:AAAA", "", ErrMalformed},
		{"no kid", r, "enc:v1:", "", ErrMalformed},
		{"bad kid", r, "enc:v1:a b:AAAA", "", ErrMalformed},
		{"bad base64", r, "enc:v1:k1:***", "", ErrMalformed},
		{"padded base64", r, s + "==", "", ErrMalformed},
		{"too short", r, "enc:v1:k1:AAAA", "", ErrMalformed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, _, err := tt.ring.Open(tt.s, tt.aad)
			if !errors.Is(err, tt.want) || got != nil {
				t.Fatalf("Open = %q, %v; want %v", got, err, tt.want)
			}
			if strings.Contains(err.Error(), "top secret") || strings.Contains(err.Error(), keyB64(1)[:16]) {
				t.Fatalf("error leaks: %v", err)
			}
		})
	}
}

func TestLegacyPlaintextAndNilRing(t *testing.T) {
	t.Parallel()
	r := mustRing(t, "k1:"+keyB64(1))
	for _, tt := range []struct {
		name      string
		ring      *Ring
		wantStale bool
	}{
		{"ring: legacy plaintext is stale", r, true},
		{"nil ring: plaintext as is", nil, false},
	} {
		got, stale, err := tt.ring.Open("legacy-token", "anywhere")
		if err != nil || stale != tt.wantStale || string(got) != "legacy-token" {
			t.Errorf("%s: Open = %q, %v, %v", tt.name, got, stale, err)
		}
	}
	var off *Ring
	s, err := off.Seal([]byte("plain"), "x")
	if err != nil || s != "plain" {
		t.Fatalf("nil Seal = %q, %v; want the plaintext", s, err)
	}
	if _, err := off.Seal([]byte("enc:not-really"), "x"); err == nil {
		t.Fatal("nil Seal of a value beginning with enc: succeeded; it could not be read back")
	}
	if off.CurrentKID() != "" || off.KIDs() != nil {
		t.Fatal("nil ring has kids")
	}
}

func TestGenerate(t *testing.T) {
	t.Parallel()
	a, err := Generate("mem")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate("mem")
	if err != nil {
		t.Fatal(err)
	}
	s, err := a.Seal([]byte("v"), "p")
	if err != nil || !strings.HasPrefix(s, "enc:v1:mem:") {
		t.Fatalf("Seal = %q, %v", s, err)
	}
	if _, _, err := b.Open(s, "p"); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("another generated ring opened the value: %v", err)
	}
	if _, err := Generate("bad kid"); !errors.Is(err, ErrKeySpec) {
		t.Fatalf("Generate(bad kid) err = %v", err)
	}
}

// TestRingNeverPrintsKeys: printing or logging a ring shows kids only.
func TestRingNeverPrintsKeys(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{0x5a}, KeySize)
	r := mustRing(t, "k1:"+base64.StdEncoding.EncodeToString(key), "k0:"+keyB64(7))
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	log.Info("ring", "ring", r)
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("ring", "ring", r)
	out := buf.String() + fmt.Sprintf("%v %+v %#v %s", r, r, r, r)
	if strings.Contains(out, "ZZZZ") || strings.Contains(out, base64.StdEncoding.EncodeToString(key)[:8]) ||
		strings.Contains(out, string(key[:4])) {
		t.Fatalf("ring printed key material: %s", out)
	}
	if !strings.Contains(fmt.Sprint(r), "current=k1") {
		t.Fatalf("String = %s", r)
	}
}

func TestMask(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"a", "****"},
		{"tk", "****"},
		{"12345678901", "****"},      // 11 characters
		{"123456789012", "****9012"}, // 12
		{"Bearer eyJhbGciOi.xyz", "****.xyz"},
		{"ééééééééééééabcé", "****abcé"}, // characters, not bytes
		{"éééééééééé", "****"},           // 10 characters, 20 bytes
	} {
		if got := Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
