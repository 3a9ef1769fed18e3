package delivery

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The URL a POST goes to is kept per webhook URL: POSTs to several URLs of
// one host, one after another and again, each reach their own path and
// query, and no URL's credentials are sent (the Authorization is relay's).
func TestEachWebhookURLIsPostedToAsItsOwn(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.RequestURI()+" "+r.Header.Get("Authorization")[:7])
		mu.Unlock()
		rw.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	w := clientWorkers(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	urls := []string{"http://" + host + "/a", "http://user:secret@" + host + "/b?x=1", "http://" + host + "/a%20b", "http://other:pw@" + host + "/c"}
	want := []string{"/a Bearer ", "/b?x=1 Bearer ", "/a%20b Bearer ", "/c Bearer "}
	for round := range 2 {
		for i, u := range urls {
			if a, r := postOnce(t, w, u, 5*time.Second); r.err != nil || r.status != http.StatusNoContent {
				t.Fatalf("round %d: POST to %s: %d, %v (%+v)", round, u, r.status, r.err, a)
			}
			mu.Lock()
			last := got[len(got)-1]
			mu.Unlock()
			if last != want[i] {
				t.Errorf("round %d: POST to %s reached %q, want %q", round, u, last, want[i])
			}
		}
	}
	if _, r := postOnce(t, w, "ftp://"+host+"/a", 5*time.Second); r.err == nil {
		t.Error("a URL that is not http(s) was posted to")
	}
}
