package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/internal/outbox"
)

// A push config stored by an older relay, before the checks of
// a2a.PushConfig.Validate, that fails them is not sent on: its notification
// is dead-lettered at the first attempt, with class config and the field
// named (and the URL's password hidden), on both delivery paths; nothing is
// POSTed. The config itself stays stored, for the client to set again.
func TestInvalidStoredConfigIsDeadLetteredAtOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   func(hookURL string) a2a.PushConfig
		field string
	}{
		{"token with a line break", func(u string) a2a.PushConfig {
			return a2a.PushConfig{URL: u, Token: "tok\r\nX-Injected: 1"}
		}, "pushNotificationConfig.token"},
		{"URL with a password", func(u string) a2a.PushConfig {
			return a2a.PushConfig{URL: strings.Replace(u, "http://", "http://user:secret@", 1)}
		}, "pushNotificationConfig.url"},
		{"URL not http", func(u string) a2a.PushConfig {
			return a2a.PushConfig{URL: strings.Replace(u, "http://", "ftp://", 1)}
		}, "pushNotificationConfig.url"},
	}
	for _, onOutbox := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(map[bool]string{false: "lanes", true: "outbox"}[onOutbox]+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				var posts atomic.Int32
				hook := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) { posts.Add(1) })
				fx := newFixtureWith(t, storeConfig{Partitions: 1, Outbox: onOutbox}, a2a.V10, "legacy", hook)
				old := tt.cfg(fx.hookURL)
				old.ID, old.TaskID, old.Dialect = "hook", "legacy", a2a.V10
				if old.Validate() == nil {
					t.Fatalf("config %+v passes validation", old)
				}
				raw, err := json.Marshal(old)
				if err != nil {
					t.Fatal(err)
				}
				if err := fx.store.SetPushConfig(ctx, "", "legacy", "hook", raw, "", 16); err != nil { // as an older relay stored it
					t.Fatal(err)
				}
				stop := runWorkers(mustNew(t, fx.deps(fx.store.consumer(t, outbox.ConsumerConfig{})), Config{Outbox: onOutbox}))
				defer stop()
				r, a := fx.deadAfterOneAttempt(t, ctx, "legacy")
				if a.ErrorClass != classConfig || !strings.Contains(a.Error, tt.field) || a.URL == "" || bytes.Contains(r.AttemptLog[0], []byte("secret")) {
					t.Fatalf("attempt %s: want class %s naming %s, no password", r.AttemptLog[0], classConfig, tt.field)
				}
				if n := posts.Load(); n != 0 {
					t.Fatalf("%d POSTs were sent with the invalid config", n)
				}
				if stored, err := fx.store.PushConfig(ctx, "legacy", "hook"); err != nil || string(stored) != string(raw) {
					t.Fatalf("stored config %s (%v), want it kept as it was", stored, err)
				}
			})
		}
	}
}
