package secrets

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzOpen: Open never panics, whatever it is given, and fails only with the
// package's errors; and whatever Seal produces, Open returns unchanged for
// the same place and refuses for another.
func FuzzOpen(f *testing.F) {
	old := mustRing(f, "k1:"+keyB64(1))
	r := mustRing(f, "k2:"+keyB64(2), "k1:"+keyB64(1))
	sealed, err := old.Seal([]byte("secret"), "task/cfg")
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{"", "plain", "enc:", "enc:v1:", "enc:v1:k1:", "enc:v1:k1:AAAA", "enc:v2:k1:AAAA",
		"enc:v1:k9:" + strings.Repeat("A", 40), sealed, sealed[:len(sealed)-1], sealed + "A"} {
		f.Add(s, "task/cfg", []byte("value"))
	}
	f.Fuzz(func(t *testing.T, s, aad string, plain []byte) {
		for _, ring := range []*Ring{r, nil} {
			got, stale, err := ring.Open(s, aad)
			switch {
			case err != nil:
				if got != nil || !(errors.Is(err, ErrMalformed) || errors.Is(err, ErrUnknownKey) ||
					errors.Is(err, ErrDecrypt) || errors.Is(err, ErrNoKeys)) {
					t.Fatalf("Open(%q) = %q, %v", s, got, err)
				}
			case !Sealed(s):
				if string(got) != s || stale != (ring != nil) {
					t.Fatalf("plaintext Open(%q) = %q, stale %v", s, got, stale)
				}
			}
		}

		out, err := r.Seal(plain, aad)
		if err != nil {
			t.Fatal(err)
		}
		got, stale, err := r.Open(out, aad)
		if err != nil || stale || !bytes.Equal(got, plain) {
			t.Fatalf("round trip of %q: %q, %v, %v", plain, got, stale, err)
		}
		if _, _, err := r.Open(out, aad+"x"); !errors.Is(err, ErrDecrypt) {
			t.Fatalf("opened under another place: %v", err)
		}
	})
}
