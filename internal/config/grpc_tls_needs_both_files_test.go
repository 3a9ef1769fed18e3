package config

import (
	"errors"
	"testing"
)

// The gRPC server's TLS takes a certificate and a key: one without the
// other is refused, naming the one missing; both, or neither, load.
func TestGRPCTLSNeedsBothFiles(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string) (Config, error) {
		return Load(nil, func(k string) string { return env[k] })
	}
	for _, tc := range []struct {
		env map[string]string
		key string
	}{
		{map[string]string{"RELAY_GRPC_TLS_CERT": "cert.pem"}, "grpc_tls_key"},
		{map[string]string{"RELAY_GRPC_TLS_KEY": "key.pem"}, "grpc_tls_cert"},
	} {
		_, err := load(tc.env)
		var se *SettingError
		if !errors.As(err, &se) || se.Key != tc.key {
			t.Errorf("%v: %v; want a SettingError for %s", tc.env, err, tc.key)
		}
	}
	c, err := load(map[string]string{"RELAY_GRPC_ADDR": "127.0.0.1:8081", "RELAY_GRPC_TLS_CERT": "c.pem", "RELAY_GRPC_TLS_KEY": "k.pem"})
	if err != nil || c.GRPCAddr != "127.0.0.1:8081" || c.GRPCTLSCert != "c.pem" || c.GRPCTLSKey != "k.pem" {
		t.Fatalf("both: %+v, %v", c, err)
	}
	if _, err := load(map[string]string{"RELAY_GRPC_ADDR": "8081"}); err == nil {
		t.Error("a gRPC address without a port is accepted")
	}
}
