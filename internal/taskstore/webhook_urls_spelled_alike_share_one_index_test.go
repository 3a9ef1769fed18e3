package taskstore

import (
	"testing"
)

// URLs that send to the same place share one index key however they are
// spelled (scheme and host case, the default port, an empty path, a
// fragment); others do not.
func TestWebhookURLsSpelledAlikeShareOneIndex(t *testing.T) {
	t.Parallel()
	same := []string{"http://Example.com:80", "HTTP://example.COM/", "http://example.com/#frag", " http://example.com "}
	want, err := urlHash(same[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range same[1:] {
		if got, err := urlHash(u); err != nil || got != want {
			t.Errorf("urlHash(%q) = %q, %v; want %q (as %q)", u, got, err, want, same[0])
		}
	}
	for _, u := range []string{"https://example.com/", "http://example.com:8080/", "http://example.com/x", "http://example.com/?a=1", "http://[::1]/"} {
		if got, err := urlHash(u); err != nil || got == want {
			t.Errorf("urlHash(%q) = %q, %v; want another index", u, got, err)
		}
	}
	for _, u := range []string{"", "ftp://example.com/", "/relative", "http://", "::"} {
		if _, err := NormalizeURL(u); err == nil {
			t.Errorf("NormalizeURL(%q) took it", u)
		}
	}
}

// NormalizeURL takes any text without panicking, and what it answers is
// its own normal form.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{"http://a/", "HTTPS://[::1]:443/x?y#z", "http://%zz", "http://a:b:c/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := NormalizeURL(s)
		if err != nil {
			return
		}
		if again, err := NormalizeURL(n); err != nil || again != n {
			t.Fatalf("NormalizeURL(%q) = %q, whose form is %q, %v", s, n, again, err)
		}
	})
}
