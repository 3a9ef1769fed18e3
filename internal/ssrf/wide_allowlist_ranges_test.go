package ssrf

import (
	"net/netip"
	"slices"
	"testing"
)

func TestWideAllowlistRanges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		allow string
		wide  bool
	}{
		{"0.0.0.0/0", true},
		{"::/0", true},
		{"128.0.0.0/1", true},
		{"8.0.0.0/7", true},
		{"::/8", true},               // holds ::ffff:0:0/96 and ::/96: all of IPv4
		{"::ffff:0:0/96", true},      // every IPv4 address, mapped
		{"::ffff:0.0.0.0/100", true}, // 0.0.0.0/4, mapped
		{"64:ff9b::/96", true},       // NAT64: all of IPv4 through the gateway
		{"2002::/16", true},          // 6to4: all of IPv4
		{"2002:a00::/24", false},     // 6to4 of 10.0.0.0/8
		{"fc00::/6", true},
		{"2000::/3", true}, // wider than fc00::/7, and holds 2002::/16
		{"10.0.0.0/8", false},
		{"172.16.0.0/12", false},
		{"127.0.0.0/8", false},
		{"127.0.0.1", false},
		{"fc00::/7", false},
		{"::1", false},
		{"::ffff:10.0.0.0/104", false}, // 10.0.0.0/8, mapped
		{"fe80::/10", false},
		{"2001:db8::/32", false},
	}
	for _, tt := range tests {
		t.Run(tt.allow, func(t *testing.T) {
			t.Parallel()
			g := mustGuard(t, "127.0.0.0/8", tt.allow)
			got := g.Wide()
			want := []netip.Prefix{}
			if tt.wide {
				p, err := parseAllow(tt.allow)
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, p)
			}
			if !slices.Equal(got, want) {
				t.Errorf("Wide() with %s allowed = %v, want %v", tt.allow, got, want)
			}
		})
	}
}
