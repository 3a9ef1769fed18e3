package app

import "testing"

// The card's gRPC interface: grpc_public_url when set, else public_url's
// host with the gRPC listener's port, and none without either.
func TestTheGRPCInterfaceURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ public, grpcPublic, listen, want string }{
		{"https://relay.example.com", "grpc.example.com:443", ":8081", "grpc.example.com:443"},
		{"https://relay.example.com", "grpc.example.com:443", "", "grpc.example.com:443"},
		{"https://relay.example.com/base", "", ":8081", "relay.example.com:8081"},
		{"http://[::1]:8080", "", "127.0.0.1:9090", "[::1]:9090"},
		{"https://relay.example.com", "", "", ""},
		{"https://relay.example.com", "", "127.0.0.1:0", ""},
	} {
		if got := grpcInterfaceURL(tc.public, tc.grpcPublic, tc.listen); got != tc.want {
			t.Errorf("grpcInterfaceURL(%q, %q, %q) = %q, want %q", tc.public, tc.grpcPublic, tc.listen, got, tc.want)
		}
	}
}
