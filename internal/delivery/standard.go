package delivery

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/a2arelay/relay/internal/a2a"
	"github.com/a2arelay/relay/webhook"
)

// StandardKeys signs Standard Webhooks v1a content with relay's published
// ed25519 keys, one signature per key, the current key's first
// (*auth.Keys made with KeyConfig.StandardWebhooks).
type StandardKeys interface {
	SignEd25519(msg []byte) [][]byte
}

// The operator's default Standard Webhooks signature (Config.StandardSignature).
const (
	StandardOff = "off"
	StandardV1a = webhook.StandardV1a
)

// errNoStandardKeys: a config asks for v1a and the workers have no keys.
var errNoStandardKeys = errors.New("standard webhooks v1a: relay has no ed25519 keys (Deps.StandardKeys)")

// standardScheme is the Standard Webhooks scheme a notification to cfg is
// signed with: the config's own choice, else the operator's default ("" for
// none).
func (w *Workers) standardScheme(cfg *a2a.PushConfig) string {
	if o := cfg.Options; o != nil && o.Signing != nil {
		return o.Signing.Scheme
	}
	if w.cfg.StandardSignature == StandardV1a {
		return StandardV1a
	}
	return ""
}

// setStandardHeaders adds the Standard Webhooks headers when cfg (or the
// operator's default) asks for them: webhook-id is the notification id,
// webhook-timestamp the attempt's time (each retry signs again),
// webhook-signature v1 (HMAC-SHA256 under the config's secret) or v1a
// (ed25519 under each of relay's published keys).
func (w *Workers) setStandardHeaders(h *fasthttp.RequestHeader, cfg *a2a.PushConfig, body []byte, nid string, now time.Time) error {
	scheme := w.standardScheme(cfg)
	if scheme == "" {
		return nil
	}
	ts := now.Unix()
	content := webhook.AppendStandardContent(make([]byte, 0, len(nid)+24+len(body)), nid, ts, body)
	sig := make([]byte, 0, 128)
	switch scheme {
	case webhook.StandardV1:
		key := cfg.Options.SigningKey()
		if len(key) == 0 {
			return errors.New("standard webhooks v1: the push config has no usable secret")
		}
		mac := hmac.New(sha256.New, key)
		mac.Write(content)
		sig = base64.StdEncoding.AppendEncode(append(sig, webhook.StandardV1+","...), mac.Sum(nil))
	case webhook.StandardV1a:
		if w.standard == nil {
			return errNoStandardKeys
		}
		for i, s := range w.standard.SignEd25519(content) {
			if i > 0 {
				sig = append(sig, ' ')
			}
			sig = base64.StdEncoding.AppendEncode(append(sig, webhook.StandardV1a+","...), s)
		}
		if len(sig) == 0 {
			return errNoStandardKeys
		}
	default:
		return fmt.Errorf("standard webhooks: unknown scheme %q", scheme)
	}
	h.Set(webhook.HeaderWebhookID, nid)
	h.Set(webhook.HeaderWebhookTimestamp, strconv.FormatInt(ts, 10))
	h.SetBytesV(webhook.HeaderWebhookSignature, sig)
	return nil
}
