package webhook_test

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/a2arelay/relay/webhook"
)

func standardHeaders(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sig)
	return h
}

func TestVerifyStandardChecksV1AndV1a(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	body := []byte(`{"a":1}`)
	content := []byte("n1." + strconv.FormatInt(now.Unix(), 10) + "." + string(body))
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	whsec := "whsec_" + base64.StdEncoding.EncodeToString(secret)
	mac := hmac.New(sha256.New, secret)
	mac.Write(content)
	v1 := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	otherPub, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	whpk := "whpk_" + base64.StdEncoding.EncodeToString(pub)
	v1a := "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(priv, content))
	v1aOther := "v1a," + base64.StdEncoding.EncodeToString(ed25519.Sign(otherPriv, content))
	for _, tc := range []struct {
		name string
		h    http.Header
		key  string
		want error
	}{
		{"v1", standardHeaders("n1", now.Unix(), v1), whsec, nil},
		{"v1 among others", standardHeaders("n1", now.Unix(), "v1,bm9wZQ== "+v1+" "+v1a), whsec, nil},
		{"v1a", standardHeaders("n1", now.Unix(), v1a), whpk, nil},
		{"v1a after a rotated key's", standardHeaders("n1", now.Unix(), v1aOther+" "+v1a), whpk, nil},
		{"v1a under another key", standardHeaders("n1", now.Unix(), v1a), "whpk_" + base64.StdEncoding.EncodeToString(otherPub), webhook.ErrStandardSignature},
		{"v1 does not pass for v1a", standardHeaders("n1", now.Unix(), v1), whpk, webhook.ErrStandardSignature},
		{"another id", standardHeaders("n2", now.Unix(), v1), whsec, webhook.ErrStandardSignature},
		{"too old", standardHeaders("n1", now.Add(-6*time.Minute).Unix(), v1), whsec, webhook.ErrStandardTimestamp},
		{"too new", standardHeaders("n1", now.Add(6*time.Minute).Unix(), v1), whsec, webhook.ErrStandardTimestamp},
		{"no signature", standardHeaders("n1", now.Unix(), ""), whsec, webhook.ErrStandardHeaders},
		{"bad key", standardHeaders("n1", now.Unix(), v1), "secret", webhook.ErrStandardKey},
		{"short public key", standardHeaders("n1", now.Unix(), v1a), "whpk_AAAA", webhook.ErrStandardKey},
	} {
		if err := webhook.VerifyStandard(tc.h, body, tc.key, 0, now); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func FuzzVerifyStandard(f *testing.F) {
	f.Add("n1", "1800000000", "v1,AAAA v1a,BBBB", "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", []byte("{}"))
	f.Add("n1", "x", ",,, v1a", "whpk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", []byte(""))
	f.Fuzz(func(t *testing.T, id, ts, sig, key string, body []byte) {
		h := http.Header{}
		h.Set("webhook-id", id)
		h.Set("webhook-timestamp", ts)
		h.Set("webhook-signature", sig)
		if webhook.VerifyStandard(h, body, key, 0, time.Unix(1_800_000_000, 0)) == nil && len(sig) < 10 {
			t.Fatalf("a signature of %d bytes verifies", len(sig))
		}
	})
}
