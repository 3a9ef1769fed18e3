package a2a

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEncodePushLeavesConfigAlone: masking works on copies; the config
// handed to encodePush (which may be the stored one, used for delivery)
// keeps its secrets.
func TestEncodePushLeavesConfigAlone(t *testing.T) {
	t.Parallel()
	const token, cred = "tok-0123456789-WXYZ", "s3cr"
	for _, c := range []codec{v01{}, v03{}, v10{}} {
		cfg := PushConfig{ID: "with", TaskID: "t1", URL: "https://hook.example/a", Token: token,
			Auth: &PushAuth{Schemes: []string{"Bearer"}, Credentials: cred}}
		out, err := json.Marshal(c.encodePushList([]PushConfig{cfg}))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Token != token || cfg.Auth.Credentials != cred || !strings.Contains(string(out), "****WXYZ") {
			t.Fatalf("%T: config after encoding %+v %+v; output %s", c, cfg, cfg.Auth, out)
		}
	}
}
