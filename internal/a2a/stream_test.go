package a2a

import "testing"

func TestStreamIDLess(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want bool
	}{{"1-0", "2-0", true}, {"2-0", "1-0", false}, {"9-5", "10-0", true}, {"10-2", "10-10", true}, {"10-10", "10-10", false}} {
		if got := streamIDLess(tc.a, tc.b); got != tc.want {
			t.Errorf("streamIDLess(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}
