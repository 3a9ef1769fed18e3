package delivery

import (
	"strconv"
	"testing"
)

// A stored push config is decoded once per distinct stored value: a
// rewritten record is decoded anew, and the cache stays bounded.
func TestConfigCacheDecodesEachStoredValueOnce(t *testing.T) {
	t.Parallel()
	var c configCache
	a, err := c.open(nil, []byte(`{"id":"c","url":"https://a.example/hook","dialect":"1.0"}`))
	if err != nil || a.URL != "https://a.example/hook" {
		t.Fatalf("open = %+v, %v", a, err)
	}
	b, err := c.open(nil, []byte(`{"id":"c","url":"https://b.example/hook","dialect":"1.0"}`))
	if err != nil || b.URL != "https://b.example/hook" {
		t.Fatalf("a rewritten config = %+v, %v", b, err)
	}
	if _, err := c.open(nil, []byte(`{"id":`)); err == nil {
		t.Fatal("a broken record decoded")
	}
	for i := range configCacheSize + 10 {
		if _, err := c.open(nil, []byte(`{"id":"c`+strconv.Itoa(i)+`"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n > configCacheSize {
		t.Fatalf("%d configs cached, want at most %d", n, configCacheSize)
	}
}
